//! The NL2Bash corpus, judged line by line.

use agentsh_bash_normalize::syntax::{self, Kind, WordRole};
use agentsh_bash_policy::{Decision, SessionMemory, TierKind};

use crate::support::policy;

#[test]
fn every_corpus_line_is_judged() {
    let policy = policy(&[(
        TierKind::User,
        "[policy]\ndefault = \"ask\"\n[[policy.rules]]\nprefix = [\"rm\"]\ndecision = \"deny\"\n",
    )]);
    let memory = SessionMemory::new();
    let corpus = agentsh_test_support::nl2bash_corpus();
    let (mut judged, mut assigning) = (0, 0);
    for line in corpus.lines() {
        let judgement = policy.judge(line, &memory);
        let strictest = judgement.segments.iter().map(|s| s.decision).max();
        assert_eq!(
            judgement.decision,
            strictest.unwrap_or(Decision::Allow),
            "{line:?}"
        );
        // Every line of the corpus runs something.
        // A line that runs nothing only assigns variables (`PS4='+$(date) '`).
        if judgement.segments.is_empty() {
            let tokens = syntax::tokenize(line).expect("a line without segments parses");
            assert!(
                tokens
                    .iter()
                    .all(|t| t.kind == Kind::Word(WordRole::Assignment)),
                "no segment in {line:?}"
            );
            assigning += 1;
        }
        judged += 1;
    }
    assert!(judged > 12_000, "{judged} lines");
    assert!(assigning < 10, "{assigning} lines only assign");
}
