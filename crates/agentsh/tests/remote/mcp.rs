//! `agentsh mcp` forwarding to a far side: the Python MCP SDK's scenarios of the
//! local server, passed by a server whose `[remote] command` is a far-side `agentsh rpc` (tools,
//! jobs, progress, cancellation and artifact resources all live there).

use super::setup::unshare_command;
use crate::mcp::scenario_with;
use crate::util::TestEnv;

/// A test environment whose MCP server forwards everything to `agentsh rpc` under `unshare`
/// (new mount and PID namespaces, [`unshare_command`]), plus `extra` config.
fn remote_env(extra: &str) -> TestEnv {
    let env = TestEnv::with_config(extra);
    let command = serde_json::to_string(&unshare_command(&env)).expect("json");
    env.append_config(&format!("[remote]\ncommand = {command}\n"));
    env
}

#[test]
fn mcp_over_a_remote_runs_calls_and_errors_there() {
    for name in ["call_success", "nonzero_exit", "timeout"] {
        scenario_with(&remote_env(""), "calls.py", name, &[]);
    }
}

#[test]
fn mcp_over_a_remote_cancels_and_streams_progress() {
    for name in ["cancel", "progress"] {
        scenario_with(&remote_env(""), "live.py", name, &[]);
    }
}

#[test]
fn mcp_over_a_remote_yields_to_a_far_side_job() {
    scenario_with(
        &remote_env("[mcp]\nyield_after = 2\n"),
        "live.py",
        "yield_to_job",
        &[],
    );
}

#[test]
fn mcp_over_a_remote_lists_and_reads_far_side_artifacts() {
    for name in ["list_and_read", "big_artifact"] {
        scenario_with(&remote_env(""), "resources.py", name, &[]);
    }
}

#[test]
fn mcp_over_a_remote_asks_the_far_sides_questions_through_elicitation() {
    let policy = "[[policy.rules]]\nprefix = [\"touch\"]\ndecision = \"ask\"\nreason = \"Creating files needs a yes.\"\n";
    for name in ["allow", "deny", "no_elicitation"] {
        scenario_with(&remote_env(policy), "approvals.py", name, &[]);
    }
}
