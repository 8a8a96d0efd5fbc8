//! Loading: the checks a policy passes before anything is judged, and their messages.

use std::time::Duration;

use agentsh_bash_policy::{PolicyError, TierKind};

use crate::support::load;

/// Checks that loading `tiers` fails with `key` and `reason`, naming the failing tier's file.
#[track_caller]
fn check_error(tiers: &[(TierKind, &str)], origin: &str, key: &str, reason: &str) {
    let err = load(tiers).expect_err("the policy must not load");
    assert_eq!(
        err,
        PolicyError {
            origin: origin.into(),
            key: key.into(),
            reason: reason.into(),
        }
    );
    assert_eq!(err.to_string(), format!("{key}: {reason}"));
}

const GIT_PUSH: &str = r#"
[policy]
[[policy.rules]]
prefix = ["ls"]
decision = "allow"

[[policy.rules]]
prefix = ["git", "push"]
decision = "ask"
reason = "Pushing publishes work."
match = ["git push origin main", "git push --force", "cd repo && git push", "sudo git push"]
not_match = ["git pushy", "git status", "echo git push"]
"#;

#[test]
fn good_examples_load() {
    let policy = load(&[(TierKind::User, GIT_PUSH)]).expect("loads");
    assert_eq!(policy.tiers().len(), 1);
    assert_eq!(policy.ask_timeout(), Duration::from_secs(300));
}

#[test]
fn a_failing_match_example_names_the_rule_and_what_it_got() {
    let text = GIT_PUSH.replace("\"git push --force\"", "\"git pushy\"");
    check_error(
        &[(TierKind::User, &text)],
        "user.toml",
        "policy.rules[1].match[1]",
        "rule 2 (prefix [\"git\", \"push\"]) should match `git pushy` but matched none of its \
         segments (`git pushy`)",
    );
    let text = GIT_PUSH.replace("\"git push --force\"", "\"a; git pull | b\"");
    check_error(
        &[(TierKind::User, &text)],
        "user.toml",
        "policy.rules[1].match[1]",
        "rule 2 (prefix [\"git\", \"push\"]) should match `a; git pull | b` but matched none of \
         its segments (`a`, `git pull`, `b`)",
    );
    let text = GIT_PUSH.replace("\"git push --force\"", "\"# git push\"");
    check_error(
        &[(TierKind::User, &text)],
        "user.toml",
        "policy.rules[1].match[1]",
        "rule 2 (prefix [\"git\", \"push\"]) should match `# git push` but it runs no command",
    );
}

#[test]
fn a_failing_not_match_example_names_the_segment() {
    let text = GIT_PUSH.replace("\"echo git push\"", "\"echo $(git push)\"");
    check_error(
        &[(TierKind::User, &text)],
        "user.toml",
        "policy.rules[1].not_match[2]",
        "rule 2 (prefix [\"git\", \"push\"]) should not match `echo $(git push)` but matched its \
         segment `git push`",
    );
    let regex = r#"
[policy]
[[policy.rules]]
regex = 'curl .*\| *(ba)?sh'
decision = "deny"
match = ["curl x | sh"]
"#;
    check_error(
        &[(TierKind::Managed, regex)],
        "managed.toml",
        "policy.rules[0].match[0]",
        "rule 1 (regex \"curl .*\\\\| *(ba)?sh\") should match `curl x | sh` but matched none of \
         its segments (`curl x`, `sh`)",
    );
}

#[test]
fn an_allow_rule_example_is_checked_as_judged() {
    // `./ls` is not allowed by an `ls` allow rule, `/bin/ls` is.
    let text = r#"
[policy]
[[policy.rules]]
prefix = ["ls"]
decision = "allow"
match = ["/bin/ls -l"]
not_match = ["./ls", "$X ls"]
"#;
    load(&[(TierKind::User, text)]).expect("loads");
}

#[test]
fn a_project_tier_may_only_tighten() {
    let reason = "a project policy may only tighten: allow is not allowed here";
    check_error(
        &[(
            TierKind::Project,
            "[policy]\n[[policy.rules]]\nprefix = [\"ls\"]\ndecision = \"allow\"\n",
        )],
        "project.toml",
        "policy.rules[0].decision",
        reason,
    );
    check_error(
        &[(TierKind::Project, "[policy]\ndefault = \"allow\"\n")],
        "project.toml",
        "policy.default",
        reason,
    );
    check_error(
        &[
            (TierKind::User, "[policy]\ndefault = \"allow\"\n"),
            (TierKind::Project, "[policy]\nunknown = \"allow\"\n"),
        ],
        "project.toml",
        "policy.unknown",
        reason,
    );
    load(&[(
        TierKind::Project,
        "[policy]\ndefault = \"ask\"\nunknown = \"deny\"\n",
    )])
    .expect("ask and deny are allowed");
}

#[test]
fn malformed_rules() {
    let rule = |body: &str| format!("[policy]\n[[policy.rules]]\ndecision = \"deny\"\n{body}\n");
    for (body, key, reason) in [
        (
            "prefix = [\"a\"]\nregex = \"a\"",
            "policy.rules[0]",
            "a rule has prefix or regex, not both",
        ),
        ("", "policy.rules[0]", "a rule needs prefix or regex"),
        (
            "prefix = []",
            "policy.rules[0].prefix",
            "must hold at least one word",
        ),
    ] {
        check_error(&[(TierKind::User, &rule(body))], "user.toml", key, reason);
    }
    let err = load(&[(TierKind::User, &rule("regex = \"(\""))]).expect_err("bad regex");
    assert_eq!(err.key, "policy.rules[0].regex");
    assert!(err.reason.starts_with("invalid regex: "), "{}", err.reason);
}

#[test]
fn ask_timeout_bounds_and_the_shortest_wins() {
    for seconds in [0, 86_401] {
        check_error(
            &[(
                TierKind::User,
                &format!("[policy]\nask_timeout = {seconds}\n"),
            )],
            "user.toml",
            "policy.ask_timeout",
            &format!("must be between 1 and 86400 seconds, not {seconds}"),
        );
    }
    let policy = load(&[
        (TierKind::Managed, "[policy]\nask_timeout = 600\n"),
        (TierKind::User, "[policy]\nask_timeout = 30\n"),
        (TierKind::Project, "[policy]\n"),
    ])
    .expect("loads");
    assert_eq!(policy.ask_timeout(), Duration::from_secs(30));
}

#[test]
fn the_first_broken_tier_is_named() {
    check_error(
        &[
            (TierKind::Managed, "[policy]\ndefault = \"ask\"\n"),
            (
                TierKind::User,
                "[policy]\n[[policy.rules]]\nregex = \"x\"\ndecision = \"deny\"\nmatch = [\"y\"]\n",
            ),
        ],
        "user.toml",
        "policy.rules[0].match[0]",
        "rule 1 (regex \"x\") should match `y` but matched none of its segments (`y`)",
    );
}
