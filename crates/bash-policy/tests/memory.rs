//! What a session remembers: segments allowed for the session, and functions and aliases whose
//! bodies were unknown or asked.

use std::sync::LazyLock;

use agentsh_bash_policy::{Decision, Policy, SESSION_REASON, SessionMemory, TierKind};

use crate::support::{policy, render};

static POLICY: LazyLock<Policy> = LazyLock::new(|| {
    policy(&[(
        TierKind::User,
        r#"
[policy]
default = "ask"
unknown = "ask"
[[policy.rules]]
prefix = ["ls"]
decision = "allow"
[[policy.rules]]
prefix = ["git", "push"]
decision = "ask"
"#,
    )])
});

#[test]
fn allow_for_the_session_covers_the_same_segment_text() {
    let mut memory = SessionMemory::new();
    let judgement = POLICY.judge("ls && git push origin main", &memory);
    assert_eq!(judgement.decision, Decision::Ask);
    let asked: Vec<&str> = judgement.asked().map(|s| s.text.as_str()).collect();
    assert_eq!(asked, ["git push origin main"]);
    memory.allow_for_session(&judgement);

    let again = POLICY.judge("git push origin main; ls", &memory);
    assert_eq!(
        render(&again),
        "allow: git push origin main=allow; ls=allow"
    );
    assert_eq!(again.segments[0].reason, SESSION_REASON);
    // Another text is asked again.
    assert_eq!(
        render(&POLICY.judge("git push origin main --force", &memory)),
        "ask: git push origin main --force=ask"
    );
}

#[test]
fn allow_for_the_session_never_covers_unknown_segments() {
    let mut memory = SessionMemory::new();
    let judgement = POLICY.judge("$EDITOR x", &memory);
    assert_eq!(render(&judgement), "ask: $EDITOR x?=ask");
    memory.allow_for_session(&judgement);
    assert_eq!(
        render(&POLICY.judge("$EDITOR x", &memory)),
        "ask: $EDITOR x?=ask"
    );
}

#[test]
fn a_function_defined_with_an_unknown_body_is_unknown_when_called() {
    let mut memory = SessionMemory::new();
    let definition = POLICY.judge("f() { $X; }", &memory);
    assert_eq!(render(&definition), "ask: $X?=ask");
    assert_eq!(definition.definitions, [("f".to_owned(), true)]);
    memory.record(&definition);
    assert!(memory.is_tainted("f"));
    assert_eq!(render(&POLICY.judge("f", &memory)), "ask: f?=ask");
    assert_eq!(
        render(&POLICY.judge("ls | f -l", &memory)),
        "ask: ls=allow; f -l?=ask"
    );

    // Defined again with an allowed body: no longer tainted.
    let clean = POLICY.judge("f() { ls; }", &memory);
    assert_eq!(clean.definitions, [("f".to_owned(), false)]);
    memory.record(&clean);
    assert!(!memory.is_tainted("f"));
    assert_eq!(render(&POLICY.judge("f", &memory)), "ask: f=ask");
}

#[test]
fn aliases_and_asked_bodies_taint_too() {
    let mut memory = SessionMemory::new();
    let definition = POLICY.judge("alias p='git push'; function q { ls; }", &memory);
    assert_eq!(
        definition.definitions,
        [("p".to_owned(), true), ("q".to_owned(), false)]
    );
    memory.record(&definition);
    assert_eq!(
        render(&POLICY.judge("p origin", &memory)),
        "ask: p origin?=ask"
    );
    assert_eq!(render(&POLICY.judge("q", &memory)), "ask: q=ask");
}

#[test]
fn a_call_later_in_the_same_line_is_judged_by_the_new_definition() {
    let memory = SessionMemory::new();
    assert_eq!(
        render(&POLICY.judge("f() { $X; }; f", &memory)),
        "ask: $X?=ask; f?=ask"
    );
}
