//! `agentsh mcp` end to end with MCP clients nobody here wrote: the official Python
//! SDK (scenarios in `tests/mcp/*.py`, one test each), the official TypeScript SDK
//! (`tests/mcp/client.mjs`), and a raw JSON-RPC driver for what an SDK never sends
//! (`tests/mcp/raw.rs`). Approval requests answered through elicitation: `tests/mcp/approvals.rs`.
//! Lines fuzzing found read wrong, each answered exactly: `tests/mcp/lines.rs`.
//!
//! The SDKs are installed, pinned, by `scripts/install-test-deps` into `<target>/test-deps`.
//! Where they are missing, a test skips with a message, unless `CI` is set: then it fails.

mod approvals;
mod lines;
mod raw;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::util::{AGENTSH, TestEnv, assert_no_survivor, unique_marker, wait_output};

/// Bound of one client process: a scenario takes seconds; its own limit (90 s) fires first.
const CLIENT_LIMIT: Duration = Duration::from_secs(120);

/// The scripts of this module.
fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp")
}

/// Where `scripts/install-test-deps` put the SDKs: `$AGENTSH_TEST_DEPS`, else `test-deps` in the
/// nearest folder above the binary under test that has one (the target dir, wherever
/// `CARGO_TARGET_DIR` or a `--target` put it), else where it would be by default.
pub(crate) fn test_deps() -> PathBuf {
    if let Some(dir) = std::env::var_os("AGENTSH_TEST_DEPS") {
        return dir.into();
    }
    let binary = Path::new(AGENTSH);
    binary
        .ancestors()
        .map(|dir| dir.join("test-deps"))
        .find(|dir| dir.is_dir())
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-deps"))
}

/// Skips the test (the caller returns) with `message`, or fails under `CI`: CI must run these
/// tests.
fn skip_or_fail(message: &str) {
    assert!(
        std::env::var_os("CI").is_none(),
        "{message} (CI is set: the MCP client tests must run there)"
    );
    eprintln!("SKIPPED: {message}");
}

/// `Some(path)` when `path` exists; otherwise [`skip_or_fail`].
fn required(path: PathBuf, what: &str) -> Option<PathBuf> {
    if path.exists() {
        return Some(path);
    }
    skip_or_fail(&format!(
        "{what} not found at {}: run scripts/install-test-deps",
        path.display()
    ));
    None
}

/// The virtualenv's python with the pinned `mcp` SDK, if installed.
fn python() -> Option<PathBuf> {
    required(
        test_deps().join("venv/bin/python"),
        "the Python MCP SDK's virtualenv",
    )
}

/// Runs `python tests/mcp/<file> <name>` against `agentsh mcp --config <env's config> <args>`;
/// fails with its output unless it passes, and when a process it marked is left.
pub(crate) fn scenario_with(env: &TestEnv, file: &str, name: &str, args: &[&str]) {
    let Some(python) = python() else { return };
    let marker = unique_marker();
    let script = scripts().join(file);
    let mut command = env.program(python, &[script.to_str().expect("utf-8 path"), name]);
    command
        .env("AGENTSH_BIN", AGENTSH)
        .env("AGENTSH_TEST_CONFIG", env.config_path())
        .env("AGENTSH_TEST_MARKER", &marker)
        .env("AGENTSH_TEST_ARGS", args.join(" "))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PYTHONUNBUFFERED", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = command.spawn().expect("spawn the Python MCP client");
    let finished = wait_output(child, CLIENT_LIMIT);
    assert!(
        finished.status.success(),
        "scenario {file} {name} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        finished.status,
        finished.stdout,
        finished.stderr
    );
    assert_no_survivor(&marker);
}

/// A scenario against a server with the default test config.
fn scenario(file: &str, name: &str) {
    scenario_with(&TestEnv::new(), file, name, &[]);
}

#[test]
fn python_sdk_initializes_with_tools_resources_logging_and_instructions() {
    scenario("calls.py", "initialize");
}

#[test]
fn python_sdk_lists_the_five_tools_with_valid_schemas() {
    scenario("calls.py", "list_tools");
}

#[test]
fn python_sdk_call_succeeds_in_a_persistent_shell_with_cwd_per_call() {
    scenario("calls.py", "call_success");
}

#[test]
fn python_sdk_non_zero_exit_is_a_tool_error() {
    scenario("calls.py", "nonzero_exit");
}

#[test]
fn python_sdk_timeout_is_a_tool_error_and_the_session_goes_on() {
    scenario("calls.py", "timeout");
}

#[test]
fn python_sdk_blocked_command_with_interceptor_and_tools_read() {
    let env = TestEnv::with_config("[bash_interceptor]\nenabled = true\n");
    scenario_with(&env, "calls.py", "blocked", &["--tools", "read"]);
}

#[test]
fn python_sdk_structured_content_carries_the_text_and_matches_the_output_schema() {
    scenario("calls.py", "structured_content");
}

#[test]
fn python_sdk_unknown_tool_is_a_json_rpc_error_and_the_server_keeps_answering() {
    scenario("calls.py", "unknown_tool");
}

#[test]
fn python_sdk_warning_arrives_once_as_a_logging_notification() {
    let env = TestEnv::with_config(
        "[bash_interceptor]\nenabled = true\n[[bash_interceptor.rules]]\npattern = \"(\"\ntool = \"read\"\nmessage = \"m\"\n",
    );
    scenario_with(&env, "calls.py", "warning_as_log", &[]);
}

#[test]
fn python_sdk_cancel_kills_the_tree_sends_no_response_and_the_session_goes_on() {
    scenario("live.py", "cancel");
}

#[test]
fn python_sdk_progress_brings_output_before_the_result() {
    scenario("live.py", "progress");
}

#[test]
fn python_sdk_a_jobs_end_arrives_as_a_logging_notification_and_a_notice() {
    scenario("live.py", "job_end");
}

#[test]
fn python_sdk_a_password_prompt_sends_the_user_to_a_terminal() {
    scenario("live.py", "hidden_prompt");
}

#[test]
fn python_sdk_call_past_yield_after_becomes_a_job_that_job_output_finishes() {
    let env = TestEnv::with_config("[mcp]\nyield_after = 2\n");
    scenario_with(&env, "live.py", "yield_to_job", &[]);
}

#[test]
fn python_sdk_lists_artifacts_and_reads_them_whole_and_by_range() {
    scenario("resources.py", "list_and_read");
}

#[test]
fn python_sdk_20_mib_artifact_is_refused_whole_but_read_by_range() {
    scenario("resources.py", "big_artifact");
}

#[test]
fn python_sdk_bad_uri_is_a_json_rpc_error_and_the_server_keeps_answering() {
    scenario("resources.py", "bad_uri");
}

/// Whether `node` is on PATH.
fn has_node() -> bool {
    std::process::Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

#[test]
fn typescript_sdk_lists_tools_calls_bash_and_reads_a_resource() {
    if !has_node() {
        skip_or_fail("node not found on PATH: run scripts/install-test-deps");
        return;
    }
    let Some(node_dir) = required(test_deps().join("node"), "the TypeScript MCP SDK's folder")
    else {
        return;
    };
    let env = TestEnv::new();
    let script = scripts().join("client.mjs");
    let mut command = env.program("node", &[script.to_str().expect("utf-8 path")]);
    command
        .env("AGENTSH_BIN", AGENTSH)
        .env("AGENTSH_TEST_CONFIG", env.config_path())
        .env("AGENTSH_TEST_NODE_DIR", node_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let finished = wait_output(command.spawn().expect("spawn node"), CLIENT_LIMIT);
    assert!(
        finished.status.success(),
        "client.mjs failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        finished.status,
        finished.stdout,
        finished.stderr
    );
}
