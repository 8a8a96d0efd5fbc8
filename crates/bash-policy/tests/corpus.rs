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

/// The policy of the user guide (`docs/policy.md`): pushing asked, wiping the root denied,
/// everything else allowed, what is only known when it runs asked.
const GUIDE_POLICY: &str = include_str!("../../../fixtures/policy/guide.toml");

/// Why an unknown segment is unknown, for the report: the assignment that made it so, a
/// command name from an expansion, or its program.
fn unknown_kind(segment: &agentsh_bash_policy::Segment) -> String {
    let first = segment.text.split_whitespace().next().unwrap_or("");
    if let Some((name, _)) = first.split_once('=')
        && !name.is_empty()
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return format!("assignment to {name}");
    }
    let word = segment.words.split(' ').next().unwrap_or("");
    if word.contains(['$', '`']) {
        return "a command name from an expansion".to_owned();
    }
    format!("`{word}`")
}

/// Under the guide's policy, the share of corpus lines asked only because something in them is
/// unknown, and the most common kinds of unknown segment left in them. Printed for the record
/// (`cargo test -p agentsh-bash-policy corpus -- --nocapture`); bounded so a change that makes
/// more everyday lines unknown fails.
#[test]
fn corpus_lines_asked_only_because_of_unknown() {
    let policy = policy(&[(TierKind::User, GUIDE_POLICY)]);
    let memory = SessionMemory::new();
    let corpus = agentsh_test_support::nl2bash_corpus();
    let (mut lines, mut only_unknown) = (0usize, 0usize);
    let mut kinds: std::collections::HashMap<String, (usize, String)> =
        std::collections::HashMap::new();
    for line in corpus.lines() {
        lines += 1;
        let judgement = policy.judge(line, &memory);
        if judgement.decision != Decision::Ask || judgement.asked().any(|s| !s.unknown) {
            continue;
        }
        only_unknown += 1;
        let mut seen: Vec<String> = judgement.asked().map(unknown_kind).collect();
        seen.sort();
        seen.dedup();
        for kind in seen {
            let entry = kinds.entry(kind).or_insert_with(|| (0, line.to_owned()));
            entry.0 += 1;
        }
    }
    let mut kinds: Vec<(String, (usize, String))> = kinds.into_iter().collect();
    kinds.sort_by(|a, b| b.1.0.cmp(&a.1.0).then_with(|| a.0.cmp(&b.0)));
    let share = only_unknown as f64 / lines as f64 * 100.0;
    println!("{only_unknown} of {lines} lines ({share:.2} %) asked only because of `unknown`");
    for (kind, (count, example)) in kinds.iter().take(10) {
        println!("  {count:5}  {kind}  (e.g. {example})");
    }
    assert!(lines > 12_000, "{lines} lines");
    assert!(
        share < 5.0,
        "{share:.2} % of the corpus asked only because of unknown"
    );
}
