//! Integration tests of the interceptor: the default rule table, availability, list elements,
//! diagnostics, and the real-world corpus.

use agentsh_bash_interceptor::{Interceptor, Rule, default_rules};
use agentsh_protocol::InterceptionDetails;

const ALL_TOOLS: [&str; 5] = ["read", "grep", "find", "edit", "write"];

/// Asserts what the default rules make of `command` with every tool available:
/// `Some(tool)` = blocked in favour of `tool`, `None` = allowed.
#[track_caller]
fn check(command: &str, expect: Option<&str>) {
    let interceptor = Interceptor::with_default_rules();
    let got = interceptor
        .check(command, &ALL_TOOLS)
        .map(|blocked| blocked.suggested_tool);
    assert_eq!(got.as_deref(), expect, "command: {command:?}");
}

#[test]
fn default_rules_block_their_positive_examples() {
    // cat/head/tail/less/more → read
    check("cat main.rs", Some("read"));
    check("  cat -n main.rs", Some("read"));
    check("head -20 log.txt", Some("read"));
    check("tail -n 5 log.txt", Some("read"));
    check("less README.md", Some("read"));
    check("more README.md", Some("read"));
    check("cat file | grep x", Some("read"));
    // grep/rg/ripgrep/ag/ack → grep
    check("grep -rn TODO src", Some("grep"));
    check("rg foo", Some("grep"));
    check("ripgrep foo", Some("grep"));
    check("ag foo", Some("grep"));
    check("ack foo", Some("grep"));
    // find/fd/locate with a name/type filter → find
    check("find . -name '*.rs'", Some("find"));
    check("find src -iname readme", Some("find"));
    check("find . -type f", Some("find"));
    check("fd --type f rs", Some("find"));
    check("fd -glob '*.md'", Some("find"));
    check("locate x -name y", Some("find"));
    // sed -i / perl -i / awk -i inplace → edit
    check("sed -i 's/a/b/' f.txt", Some("edit"));
    check("sed --in-place 's/a/b/' f.txt", Some("edit"));
    check("perl -pi -e 's/a/b/' f.txt", Some("edit"));
    check("perl -i -pe 's/a/b/' f.txt", Some("edit"));
    check("awk -i inplace '{print}' f.txt", Some("edit"));
    // echo/printf/cat heredoc redirection → write
    check("echo hello > out.txt", Some("write"));
    check("printf '%s\\n' x >> out.txt", Some("write"));
    // `cat << EOF > f` also starts like `cat <file>`: the earlier read rule wins when `read`
    // is available, the write rule otherwise.
    check("cat << EOF > out.txt\nhi\nEOF", Some("read"));
    let interceptor = Interceptor::with_default_rules();
    let blocked = interceptor
        .check("cat << EOF > out.txt\nhi\nEOF", &["write"])
        .expect("blocked");
    assert_eq!(
        (blocked.rule, blocked.suggested_tool.as_str()),
        (6, "write")
    );
}

#[test]
fn default_rules_leave_their_negative_examples_alone() {
    check("echo \"cat x\"", None);
    check("ls | grep x", None);
    check("catalog --x", None);
    check("cat", None);
    check("concatenate a b", None);
    check("grepx foo", None);
    check("find .", None);
    check("find . -maxdepth 1", None);
    check("sed 's/a/b/' f.txt", None);
    check("perl -e 'print 1'", None);
    check("awk '{print $1}' f.txt", None);
    check("echo hello", None);
    check("echo a | tee out.txt", None);
    check("cargo build", None);
    check("git status && git diff", None);
    check("# cat x", None);
}

#[test]
fn list_elements_are_checked_one_by_one() {
    check("cd src && cat main.rs", Some("read"));
    check("cd src; grep -n x main.rs", Some("grep"));
    check("false || tail -f log", Some("read"));
    check("make &\nfind . -name x", Some("find"));
    check("cd src && ls | grep x", None);
    check("(cat x)", None);
    check("echo $(cat x)", None);
    check("echo 'a && cat b'", None);
}

/// Regression: normalising `cat f | head -50` wraps the producer in a subshell, which the
/// interceptor does not look into; callers pass `Normalized::unwrapped()` so it is still caught.
#[test]
fn normalised_producer_is_still_intercepted() {
    let normalized = agentsh_bash_normalize::normalize("cat src/main.rs | head -50");
    assert_eq!(normalized.command, "( cat src/main.rs )");
    let interceptor = Interceptor::with_default_rules();
    assert!(interceptor.check(&normalized.command, &ALL_TOOLS).is_none());
    let blocked = interceptor.check(&normalized.unwrapped(), &ALL_TOOLS);
    assert_eq!(blocked.map(|b| b.suggested_tool).as_deref(), Some("read"));
}

#[test]
fn blocks_only_when_the_suggested_tool_is_available() {
    let interceptor = Interceptor::with_default_rules();
    assert!(interceptor.check("cat x", &["read"]).is_some());
    assert!(interceptor.check("cat x", &["grep", "edit"]).is_none());
    assert!(interceptor.check("cat x", &[] as &[&str]).is_none());
    // The first rule whose tool is available wins: `cat x | grep y` → read; without read, the
    // grep rule does not match the first stage, so nothing blocks.
    assert!(interceptor.check("cat x | grep y", &["grep"]).is_none());
}

#[test]
fn blocked_text_and_details() {
    let interceptor = Interceptor::with_default_rules();
    let command = "cd src && cat main.rs";
    let blocked = interceptor.check(command, &ALL_TOOLS).expect("blocked");
    assert_eq!(
        blocked.text(command),
        "Blocked: Use the `read` tool instead of cat/head/tail. It provides better context and \
         handles binary files.\n\nOriginal command: cd src && cat main.rs"
    );
    assert_eq!(
        blocked.details(),
        InterceptionDetails {
            rule: 0,
            pattern: r"^\s*(cat|head|tail|less|more)\s+".into(),
            suggested_tool: "read".into(),
        }
    );
    let sed = interceptor
        .check("sed -i s/a/b/ f", &ALL_TOOLS)
        .expect("blocked");
    assert_eq!(sed.rule, 3);
}

#[test]
fn user_rules_replace_the_defaults() {
    let rules = [Rule::new(r"^\s*npm\s+install", "pkg", "Use the pkg tool.")];
    let (interceptor, diagnostics) = Interceptor::new(&rules);
    assert!(diagnostics.is_empty());
    assert!(interceptor.check("cat x", &["read", "pkg"]).is_none());
    let blocked = interceptor
        .check("npm install left-pad", &["pkg"])
        .expect("blocked");
    assert_eq!((blocked.rule, blocked.suggested_tool.as_str()), (0, "pkg"));
}

#[test]
fn no_user_rules_means_the_seven_defaults() {
    let (interceptor, diagnostics) = Interceptor::new(&[]);
    assert!(diagnostics.is_empty());
    assert_eq!(default_rules().len(), 7);
    assert!(interceptor.check("rg x", &["grep"]).is_some());
}

#[test]
fn case_insensitive_flag() {
    let mut rule = Rule::new("^docker", "containers", "Use containers.");
    let (plain, _) = Interceptor::new(std::slice::from_ref(&rule));
    assert!(plain.check("DOCKER ps", &["containers"]).is_none());
    rule.flags = Some("i".into());
    let (folded, diagnostics) = Interceptor::new(&[rule]);
    assert!(diagnostics.is_empty());
    assert!(folded.check("DOCKER ps", &["containers"]).is_some());
}

#[test]
fn each_kind_of_invalid_rule_is_reported_and_skipped() {
    let mut bad_flag = Rule::new("^x", "t", "m");
    bad_flag.flags = Some("ig".into());
    let rules = [
        Rule::new("^(unclosed", "t", "m"),
        Rule::new(r"^(?=lookahead)", "t", "m"),
        bad_flag,
        Rule::new("^y", "  ", "m"),
        Rule::new("^ok", "t", "fine"),
    ];
    let (interceptor, diagnostics) = Interceptor::new(&rules);
    let summary: Vec<(usize, &str)> = diagnostics
        .iter()
        .map(|d| (d.index, d.pattern.as_str()))
        .collect();
    assert_eq!(
        summary,
        [
            (0, "^(unclosed"),
            (1, "^(?=lookahead)"),
            (2, "^x"),
            (3, "^y")
        ]
    );
    assert!(diagnostics[0].error.starts_with("invalid regex"));
    assert!(diagnostics[1].error.starts_with("invalid regex"));
    assert_eq!(
        diagnostics[2].error,
        "unknown flag `g` (only `i` is supported)"
    );
    assert_eq!(diagnostics[3].error, "empty tool name");
    let shown = diagnostics[3].to_string();
    assert_eq!(
        shown,
        "bash_interceptor.rules[3] (pattern `^y`) skipped: empty tool name"
    );
    // The valid rule keeps its configured index.
    let blocked = interceptor.check("ok go", &["t"]).expect("blocked");
    assert_eq!(blocked.rule, 4);
}

#[test]
fn rules_deserialize_from_config_shape() {
    let rule: Rule = serde_json::from_value(serde_json::json!({
        "pattern": "^x", "tool": "t", "message": "m", "flags": "i"
    }))
    .expect("valid rule");
    assert_eq!(rule.flags.as_deref(), Some("i"));
    let unknown = serde_json::from_value::<Rule>(serde_json::json!({
        "pattern": "^x", "tool": "t", "message": "m", "flag": "i"
    }));
    assert!(unknown.is_err());
}

#[test]
fn corpus_commands_intercept_without_panic() {
    let corpus = agentsh_test_support::nl2bash_corpus();
    let interceptor = Interceptor::with_default_rules();
    let mut blocked = 0;
    let mut total = 0;
    for line in corpus.lines() {
        total += 1;
        let normalized = agentsh_bash_normalize::normalize(line);
        if interceptor
            .check(&normalized.unwrapped(), &ALL_TOOLS)
            .is_some()
        {
            blocked += 1;
        }
    }
    assert_eq!(total, 12_607);
    println!("blocked {blocked} of {total} corpus commands");
    // People reach for find/grep/cat a lot: a good share of the corpus must be caught, and
    // far from all of it.
    assert!(
        (1_000..10_000).contains(&blocked),
        "blocked {blocked} of {total}"
    );
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn never_panics(command in "\\PC{0,80}") {
            let interceptor = Interceptor::with_default_rules();
            let _ = interceptor.check(&command, &ALL_TOOLS);
        }

        #[test]
        fn quoted_text_never_blocks(word in "(cat|grep|rg|head|tail) [a-z]{1,8}") {
            let interceptor = Interceptor::with_default_rules();
            let quoted_single = format!("echo '{word}'");
            let quoted_double = format!("echo \"{word}\"");
            prop_assert!(interceptor.check(&quoted_single, &ALL_TOOLS).is_none());
            prop_assert!(interceptor.check(&quoted_double, &ALL_TOOLS).is_none());
        }
    }
}
