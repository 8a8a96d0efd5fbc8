//! Tiers: each decides a segment alone, the strictest wins, a wrapper abstains, unknown falls
//! back to the default, and who decided is named.

use agentsh_bash_policy::{
    ABSTAIN_REASON, DEFAULT_REASON, DecidedBy, Decision, SessionMemory, TierKind, UNKNOWN_REASON,
};

use crate::support::{policy, render};

const MANAGED_DENIES_RM: &str = r#"
[policy]
[[policy.rules]]
prefix = ["rm"]
decision = "deny"
reason = "the administrator forbids rm"
"#;

const USER_ALLOWS_EVERYTHING: &str = r#"
[policy]
default = "allow"
[[policy.rules]]
prefix = ["rm"]
decision = "allow"
"#;

#[test]
fn managed_deny_beats_user_allow() {
    let policy = policy(&[
        (TierKind::Managed, MANAGED_DENIES_RM),
        (TierKind::User, USER_ALLOWS_EVERYTHING),
    ]);
    let judgement = policy.judge("ls && rm -rf x", &SessionMemory::new());
    assert_eq!(render(&judgement), "deny: ls=allow; rm -rf x=deny");
    let denied = judgement.first_denied().expect("a denied segment");
    assert_eq!(denied.text, "rm -rf x");
    assert_eq!(denied.reason, "the administrator forbids rm");
    assert_eq!(
        denied.decided_by,
        Some(DecidedBy {
            tier: TierKind::Managed,
            origin: "managed.toml".into(),
            rule: Some(0),
        })
    );
    // `ls`: the managed tier has no default and abstains; the user's default decides.
    assert_eq!(
        judgement.segments[0].decided_by,
        Some(DecidedBy {
            tier: TierKind::User,
            origin: "user.toml".into(),
            rule: None,
        })
    );
}

#[test]
fn a_project_tier_tightens() {
    let project = r#"
[policy]
default = "ask"
[[policy.rules]]
prefix = ["git", "push"]
decision = "deny"
"#;
    let policy = policy(&[
        (TierKind::User, USER_ALLOWS_EVERYTHING),
        (TierKind::Project, project),
    ]);
    let memory = SessionMemory::new();
    let judgement = policy.judge("git push", &memory);
    assert_eq!(render(&judgement), "deny: git push=deny");
    assert_eq!(
        judgement.segments[0].reason,
        "matches rule 1 of the project policy"
    );
    // The user allows rm by a rule; the project's default asks: the stricter wins.
    assert_eq!(render(&policy.judge("rm x", &memory)), "ask: rm x=ask");
    assert_eq!(
        policy.judge("rm x", &memory).segments[0].reason,
        DEFAULT_REASON
    );
}

#[test]
fn the_strictest_rule_of_a_tier_decides() {
    let policy = policy(&[(
        TierKind::User,
        r#"
[policy]
[[policy.rules]]
prefix = ["git", "*"]
decision = "allow"
[[policy.rules]]
prefix = ["git", "push", "--force*"]
decision = "deny"
[[policy.rules]]
regex = 'git push( |$)'
decision = "ask"
"#,
    )]);
    let memory = SessionMemory::new();
    assert_eq!(
        render(&policy.judge("git log", &memory)),
        "allow: git log=allow"
    );
    assert_eq!(
        render(&policy.judge("git push", &memory)),
        "ask: git push=ask"
    );
    assert_eq!(
        render(&policy.judge("git push --force-with-lease", &memory)),
        "deny: git push --force-with-lease=deny"
    );
    let judgement = policy.judge("git push origin", &memory);
    assert_eq!(
        judgement.segments[0]
            .decided_by
            .as_ref()
            .and_then(|d| d.rule),
        Some(2)
    );
    assert_eq!(
        judgement.segments[0].reason,
        "matches rule 3 of the user policy"
    );
    // No default: an unmatched segment abstains everywhere and is allowed.
    let judgement = policy.judge("make", &memory);
    assert_eq!(render(&judgement), "allow: make=allow");
    assert_eq!(judgement.segments[0].reason, ABSTAIN_REASON);
    assert_eq!(judgement.segments[0].decided_by, None);
}

#[test]
fn a_wrapper_abstains_unless_a_rule_matches_it() {
    let user = r#"
[policy]
default = "deny"
[[policy.rules]]
prefix = ["make"]
decision = "allow"
"#;
    let policy = policy(&[(TierKind::User, user)]);
    let memory = SessionMemory::new();
    assert_eq!(
        render(&policy.judge("sudo make", &memory)),
        "allow: sudo make=allow; make=allow"
    );
    assert_eq!(
        render(&policy.judge("nice -n 5 make", &memory)),
        "allow: nice -n 5 make=allow; make=allow"
    );
    assert_eq!(
        render(&policy.judge("sudo rm x", &memory)),
        "deny: sudo rm x=allow; rm x=deny"
    );
    // A rule written for the wrapper judges it.
    let strict = format!("{user}\n[[policy.rules]]\nprefix = [\"sudo\"]\ndecision = \"deny\"\n");
    let policy = crate::support::policy(&[(TierKind::User, &strict)]);
    assert_eq!(
        render(&policy.judge("sudo make", &memory)),
        "deny: sudo make=deny; make=allow"
    );
}

#[test]
fn unknown_falls_back_to_the_default() {
    let policy = policy(&[(TierKind::User, "[policy]\ndefault = \"deny\"\n")]);
    let judgement = policy.judge("$X y", &SessionMemory::new());
    assert_eq!(render(&judgement), "deny: $X y?=deny");
    assert_eq!(judgement.segments[0].reason, UNKNOWN_REASON);

    let policy = crate::support::policy(&[(
        TierKind::User,
        "[policy]\ndefault = \"deny\"\nunknown = \"ask\"\n",
    )]);
    let judgement = policy.judge("$X y", &SessionMemory::new());
    assert_eq!(render(&judgement), "ask: $X y?=ask");
}

#[test]
fn an_allow_rule_never_allows_an_unknown_segment() {
    let policy = policy(&[(
        TierKind::User,
        r#"
[policy]
unknown = "ask"
[[policy.rules]]
prefix = ["*"]
decision = "allow"
[[policy.rules]]
prefix = ["git"]
decision = "allow"
"#,
    )]);
    let memory = SessionMemory::new();
    assert_eq!(render(&policy.judge("$X y", &memory)), "ask: $X y?=ask");
    assert_eq!(
        render(&policy.judge("PATH=. git status", &memory)),
        "ask: git status?=ask"
    );
    assert_eq!(
        render(&policy.judge("git status", &memory)),
        "allow: git status=allow"
    );
}

#[test]
fn deny_and_unknown_reason_texts() {
    let policy = policy(&[(
        TierKind::User,
        r#"
[policy]
default = "deny"
[[policy.rules]]
prefix = ["rm"]
decision = "deny"
reason = "Deleting files is not allowed."
[[policy.rules]]
prefix = ["ls"]
decision = "allow"
"#,
    )]);
    let memory = SessionMemory::new();
    let reason = |line: &str| {
        let judgement = policy.judge(line, &memory);
        assert_eq!(judgement.decision, Decision::Deny, "{line}");
        let denied = judgement.first_denied().expect("denied");
        (denied.text.clone(), denied.reason.clone())
    };
    assert_eq!(
        reason("ls; sudo rm -rf /"),
        ("rm -rf /".into(), "Deleting files is not allowed.".into())
    );
    assert_eq!(
        reason("ls | wc -l"),
        ("wc -l".into(), DEFAULT_REASON.into())
    );
    // As written: with its assignments and redirections.
    assert_eq!(
        reason("ls; X=1 rm -rf / 2>/dev/null"),
        (
            "X=1 rm -rf / 2>/dev/null".into(),
            "Deleting files is not allowed.".into()
        )
    );
    assert_eq!(reason("ls; $cmd"), ("$cmd".into(), UNKNOWN_REASON.into()));
    assert_eq!(
        reason("ls; 'unterminated"),
        ("ls; 'unterminated".into(), UNKNOWN_REASON.into())
    );
}

#[test]
fn an_empty_policy_allows_everything() {
    let policy = agentsh_bash_policy::Policy::empty();
    assert!(policy.is_empty());
    let judgement = policy.judge("rm -rf / && $X", &SessionMemory::new());
    assert_eq!(judgement.decision, Decision::Allow);
    assert_eq!(judgement.segments.len(), 2);
    assert_eq!(
        policy.ask_timeout(),
        agentsh_bash_policy::DEFAULT_ASK_TIMEOUT
    );
}

#[test]
fn the_first_of_equally_strict_rules_decides() {
    let policy = policy(&[(
        TierKind::User,
        r#"
[policy]
[[policy.rules]]
prefix = ["git", "push"]
decision = "ask"
reason = "first"
[[policy.rules]]
regex = 'git push'
decision = "ask"
reason = "second"
[[policy.rules]]
prefix = ["g*", "push"]
decision = "ask"
reason = "third"
[[policy.rules]]
prefix = ["/usr/bin/git"]
decision = "ask"
reason = "fourth"
"#,
    )]);
    let memory = SessionMemory::new();
    let reason = |line: &str| policy.judge(line, &memory).segments[0].reason.clone();
    assert_eq!(reason("git push"), "first");
    assert_eq!(reason("/usr/bin/git push"), "first");
    assert_eq!(reason("/usr/bin/git pull"), "fourth");
    assert_eq!(reason("gh push"), "third");
}
