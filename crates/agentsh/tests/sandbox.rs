//! The sandbox through the real binary: a sandbox the kernel cannot enforce stops
//! every mode at start, and the sandbox line reaches an RPC client in every result a denied
//! command produces.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use agentsh_test_support::tmux::skip_without_tmux;
use serde_json::{Value, json};

use crate::util::{AGENTSH, LIVENESS, TestEnv, finish, unique_marker};

/// The test seam: the sandbox is checked as if the kernel had no Landlock (it can only make
/// the check stricter).
const NO_LANDLOCK: (&str, &str) = ("AGENTSH_TEST_SANDBOX_KERNEL", "landlock_abi=0");

const WORKSPACE_WRITE: &str = "[sandbox]\nmode = \"workspace-write\"\n";

/// `agentsh: Sandbox unavailable: <reason>` as the first and only line.
fn assert_unavailable(stderr: &str, context: &str) {
    assert!(
        stderr.starts_with("agentsh: Sandbox unavailable: Landlock is not enabled")
            && stderr.ends_with('\n')
            && stderr.lines().count() == 1,
        "{context}: {stderr:?}"
    );
}

/// A file that holds `lines`, as a mode's stdin.
fn stdin_file(env: &TestEnv, name: &str, lines: &[Value]) -> std::fs::File {
    let path = env.root().join(name);
    let text: String = lines
        .iter()
        .flat_map(|line| [line.to_string(), "\n".to_owned()])
        .collect();
    std::fs::write(&path, text).expect("write stdin");
    std::fs::File::open(&path).expect("open stdin")
}

/// A sandbox the kernel cannot enforce is a start-up error in every mode: `agentsh: Sandbox
/// unavailable: <reason>` on stderr, exit 2 (a config-like error), nothing on stdout, and the
/// command never runs (its file is not written, though the cwd is a writable root).
#[test]
fn an_unenforceable_sandbox_stops_every_mode_at_start() {
    let env = TestEnv::with_config(WORKSPACE_WRITE);
    let ran = |mode: &str| env.work_dir().join(format!("ran-{mode}"));
    let touch = |mode: &str| format!("touch {}", ran(mode).display());
    let config = env.config_path();
    let config = config.to_str().expect("utf-8");

    // Control: on the real kernel the sandboxed command runs.
    let done = env.exec(&["--", &touch("control")]);
    assert_eq!(done.code(), 0, "{done:?}");
    assert!(ran("control").exists(), "the test proves nothing");

    let done = finish(
        env.command(&["exec", "--config", config, "--", &touch("exec")])
            .env(NO_LANDLOCK.0, NO_LANDLOCK.1)
            .stdin(Stdio::null()),
    );
    assert_eq!(done.code(), 2, "exec: {done:?}");
    assert_eq!(done.stdout, "", "exec");
    assert_unavailable(&done.stderr, "exec");

    let rpc_input = stdin_file(
        &env,
        "rpc.in",
        &[json!({"id": "1", "type": "bash", "command": touch("rpc")})],
    );
    let done = finish(
        env.command(&["rpc", "--config", config])
            .env(NO_LANDLOCK.0, NO_LANDLOCK.1)
            .stdin(rpc_input),
    );
    assert_eq!(done.code(), 2, "rpc: {done:?}");
    assert_eq!(done.stdout, "", "rpc");
    assert_unavailable(&done.stderr, "rpc");

    let mcp_input = stdin_file(
        &env,
        "mcp.in",
        &[
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                "name": "bash", "arguments": {"command": touch("mcp")}}}),
        ],
    );
    let done = finish(
        env.command(&["mcp", "--config", config])
            .env(NO_LANDLOCK.0, NO_LANDLOCK.1)
            .stdin(mcp_input),
    );
    assert_eq!(done.code(), 2, "mcp: {done:?}");
    assert_eq!(done.stdout, "", "mcp");
    assert_unavailable(&done.stderr, "mcp");

    for mode in ["exec", "rpc", "mcp"] {
        assert!(!ran(mode).exists(), "{mode}: the command ran");
    }
}

/// The interactive mode too: it stops before it takes the terminal.
#[test]
fn an_unenforceable_sandbox_stops_the_interactive_mode_at_start() {
    if skip_without_tmux("an_unenforceable_sandbox_stops_the_interactive_mode_at_start") {
        return;
    }
    let env = TestEnv::with_config(WORKSPACE_WRITE);
    let err = env.root().join("stderr.txt");
    let status = env.root().join("status.txt");
    let script = format!(
        "{AGENTSH} 2> {err}; echo $? > {status}",
        err = err.display(),
        status = status.display()
    );
    let pane =
        crate::interactive::pane_builder(&env, ["bash", "--norc", "--noprofile", "-c", &script])
            .env(NO_LANDLOCK.0, NO_LANDLOCK.1)
            .start()
            .expect("tmux starts");
    assert!(pane.wait_exit(LIVENESS).is_some(), "agentsh ended");
    drop(pane);
    let code = std::fs::read_to_string(&status).expect("the status file");
    assert_eq!(code.trim(), "2");
    assert_unavailable(
        &std::fs::read_to_string(&err).expect("the stderr file"),
        "interactive",
    );
    // It never drew its screen: no history, no state written.
    assert!(!env.root().join("state/agentsh").exists());
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().expect("canonical path")
}

/// Asserts `text` ends with the outcome `outcome` then the sandbox line of a
/// `workspace-write` session in `work` (its private temp dir's name is the session's own).
fn assert_ends_with_sandbox_line(text: &str, outcome: &str, work: &Path) {
    let (before, last) = text.rsplit_once("\n\n").expect("sections");
    assert!(before.ends_with(outcome), "{text}");
    let prefix = format!(
        "[sandbox: workspace-write; writable: {}, ",
        canonical(work).display()
    );
    assert!(
        last.starts_with(&prefix) && last.ends_with("; network off]"),
        "{text}"
    );
}

/// The RPC `bash` request's response carries the sandbox line in its `text` (the
/// result as the session's context keeps it), after the outcome; a background job's
/// `job_output` after it ended has it after the state line. Real kernel, real binary.
#[test]
fn rpc_results_of_a_denied_command_name_the_sandbox() {
    let env = TestEnv::with_config(WORKSPACE_WRITE);
    let target = PathBuf::from(format!("/etc/{}", unique_marker()));
    let mut rpc = env.rpc();
    rpc.send_json(&json!({
        "id": "1", "type": "bash",
        "command": format!("touch {}", target.display()),
    }));
    let response = rpc.response("1");
    assert_eq!(response["success"], true, "{response}");
    let data = &response["data"];
    assert_eq!(data["exitCode"], 1, "{data}");
    let output = data["output"].as_str().expect("output");
    assert!(output.contains("Permission denied"), "{data}");
    let text = data["text"].as_str().expect("the response's text");
    assert!(
        text.starts_with(&format!(
            "Ran `touch {}`\n```\n{}",
            target.display(),
            output.trim_end()
        )),
        "{text}"
    );
    assert_ends_with_sandbox_line(text, "\n```\n\nCommand exited with code 1", &env.work_dir());

    rpc.send_json(&json!({
        "id": "2", "type": "tool_call", "toolCallId": "job", "name": "bash",
        "arguments": {
            "command": format!("touch {}; echo waiting; sleep 1.5; exit 1", target.display()),
            "run_in_background": true,
        },
    }));
    rpc.response("2");
    // `job_output` until one says the job ended (each waits for new output or the end).
    let ended = (3..13)
        .map(|id| {
            let id = id.to_string();
            rpc.send_json(&json!({
                "id": id, "type": "tool_call", "toolCallId": format!("read-{id}"),
                "name": "job_output", "arguments": {"jobId": "1", "wait": 10},
            }));
            let response = rpc.response(&id);
            response["data"]["content"][0]["text"]
                .as_str()
                .expect("job_output text")
                .to_owned()
        })
        .find(|text| text.contains("[job 1: exited"))
        .expect("the job ended");
    // A job's state line closes its result, after the sandbox line.
    let (with_line, state) = ended.rsplit_once("\n\n").expect("sections");
    assert_eq!(state, "[job 1: exited with code 1]", "{ended}");
    assert_ends_with_sandbox_line(with_line, "", &env.work_dir());
    let (status, _) = rpc.close(LIVENESS);
    assert!(status.success(), "{status:?}");
    assert!(
        !target.exists(),
        "a sandboxed command wrote {}",
        target.display()
    );
}

/// `exec --cwd DIR` sets the session's cwd, so the sandbox's writable root is DIR: started from
/// `/` (which is no writable root) and from another directory, DIR is writable and the
/// directory agentsh started in is not.
#[test]
fn exec_cwd_is_the_sandboxs_writable_root() {
    let env = TestEnv::with_config(WORKSPACE_WRITE);
    let project = env.root().join("project");
    std::fs::create_dir(&project).expect("project");
    let config = env.config_path();
    let config = config.to_str().expect("utf-8");
    let project_arg = project.to_str().expect("utf-8");
    // `agentsh exec --cwd <project> -- <command>`, started in `started_in`.
    let exec_from = |started_in: &Path, command: &str| {
        finish(
            env.command(&[
                "exec",
                "--config",
                config,
                "--cwd",
                project_arg,
                "--",
                command,
            ])
            .current_dir(started_in)
            .stdin(Stdio::null()),
        )
    };
    for started_in in [PathBuf::from("/"), env.work_dir()] {
        let done = exec_from(&started_in, "pwd && touch here && echo made-here");
        assert_eq!(done.code(), 0, "from {}: {done:?}", started_in.display());
        assert!(
            done.stdout.starts_with(&format!("{}\n", project.display()))
                && done.stdout.contains("made-here"),
            "from {}: {done:?}",
            started_in.display()
        );
        assert!(project.join("here").exists());
        std::fs::remove_file(project.join("here")).expect("remove");

        // The directory agentsh started in is not writable.
        let target = started_in.join(format!("agentsh-{}", unique_marker()));
        let done = exec_from(&started_in, &format!("touch {}", target.display()));
        assert_eq!(done.code(), 1, "from {}: {done:?}", started_in.display());
        assert!(
            done.stdout.contains("Permission denied") || done.stdout.contains("Read-only"),
            "{done:?}"
        );
        assert!(!target.exists(), "{} was written", target.display());
    }
}
