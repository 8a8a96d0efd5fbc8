//! The approval policy through `agentsh mcp`: the Python SDK's elicitation callback answers
//! the server's approval requests (scenarios in `tests/mcp/approvals.py`); a client without
//! elicitation is denied at once.

use super::scenario_with;
use crate::util::TestEnv;

/// A policy that asks before `touch`, with the reason the scenarios look for.
const ASK_TOUCH: &str = r#"
[policy]
[[policy.rules]]
prefix = ["touch"]
decision = "ask"
reason = "Creating files needs a yes."
match = ["touch marker"]
not_match = ["echo touch"]
"#;

/// A scenario of `approvals.py` against a server whose config holds `policy`.
fn scenario(policy: &str, name: &str) {
    scenario_with(&TestEnv::with_config(policy), "approvals.py", name, &[]);
}

#[test]
fn python_sdk_allow_runs_the_command_and_asks_again_next_time() {
    scenario(ASK_TOUCH, "allow");
}

#[test]
fn python_sdk_allow_session_runs_the_same_command_again_without_asking() {
    scenario(ASK_TOUCH, "allow_session");
}

#[test]
fn python_sdk_deny_declines_the_command_and_nothing_runs() {
    scenario(ASK_TOUCH, "deny");
}

#[test]
fn python_sdk_decline_and_cancel_of_the_form_deny() {
    scenario(ASK_TOUCH, "decline_and_cancel");
}

#[test]
fn python_sdk_an_elicitation_error_means_the_client_cannot_ask() {
    scenario(ASK_TOUCH, "client_error");
}

#[test]
fn python_sdk_without_elicitation_an_ask_is_denied_at_once() {
    scenario(ASK_TOUCH, "no_elicitation");
}

#[test]
fn python_sdk_a_deny_rule_denies_without_asking() {
    scenario(
        "[policy]\n[[policy.rules]]\nprefix = [\"touch\"]\ndecision = \"deny\"\nreason = \"No new files here.\"\n",
        "deny_rule",
    );
}

#[test]
fn python_sdk_an_unanswered_request_times_out_and_is_withdrawn() {
    let policy = ASK_TOUCH.replace("[policy]\n", "[policy]\nask_timeout = 1\n");
    scenario(&policy, "timeout");
}

#[test]
fn python_sdk_the_progress_heartbeat_goes_on_while_the_question_waits() {
    scenario(ASK_TOUCH, "heartbeat");
}
