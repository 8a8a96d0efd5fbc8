//! Output shaping on the real binary: a known program's output shaped on `exec`, RPC
//! `tool_call` and MCP `tools/call`, the raw output whole in the artifact the closing line
//! names; and nothing shaped where shaping must not happen.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::util::{LIVENESS, Rpc, TestEnv};

/// A git repository in `dir` with 30 commits of three-line messages: `git log` prints about
/// 5 KB, with `Author:` and `Date:` lines shaping leaves out.
pub(crate) fn repository(dir: &Path) {
    let git = |args: &[&str]| {
        let done = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
            .output()
            .expect("git runs");
        assert!(done.status.success(), "git {args:?}: {done:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["config", "user.name", "Test Person"]);
    git(&["config", "user.email", "test@example.com"]);
    for n in 0..30 {
        std::fs::write(dir.join("file.txt"), format!("{n}\n")).expect("write");
        git(&["add", "file.txt"]);
        git(&[
            "commit",
            "-q",
            "-m",
            &format!(
                "Change number {n}\n\nThe body of change {n}, which says why.\nA second line."
            ),
        ]);
    }
}

/// What `git log` prints in `dir`, run directly.
fn git_log(dir: &Path) -> String {
    let done = Command::new("git")
        .args(["log"])
        .current_dir(dir)
        .output()
        .expect("git runs");
    String::from_utf8(done.stdout).expect("utf-8")
}

fn shaped_env() -> TestEnv {
    let env = TestEnv::new();
    repository(&env.work_dir());
    env
}

fn artifact_text(env: &TestEnv, id: &str) -> String {
    std::fs::read_to_string(env.artifacts_dir().join(format!("{id}.bash.log"))).expect("artifact")
}

#[test]
fn exec_shapes_a_known_program_and_keeps_the_raw_output_whole() {
    let env = shaped_env();
    let done = env.exec(&["--json", "--", "git", "log"]);
    assert_eq!(done.code(), 0, "{done:?}");
    let result = done.json();
    let text = result["content"][0]["text"].as_str().expect("text");
    assert!(!text.contains("Author: "), "{text}");
    assert!(text.contains("Change number 29"), "{text}");
    let shaped = &result["details"]["meta"]["shaped"];
    assert_eq!(shaped["shaper"], "git log", "{result}");
    assert_eq!(result["details"]["meta"].get("truncation"), None);
    let raw = git_log(&env.work_dir());
    assert_eq!(shaped["rawBytes"], raw.len());
    assert_eq!(shaped["rawLines"], raw.lines().count());
    let id = shaped["artifactId"].as_str().expect("an artifact");
    // The artifact is the raw output, byte for byte, and the closing line says where it is.
    assert_eq!(artifact_text(&env, id), raw);
    let left_out = shaped["rawLines"].as_u64().unwrap() - shaped["keptLines"].as_u64().unwrap();
    assert!(left_out > 0);
    assert!(
        text.ends_with(&format!(
            "\n\n[Shaped output of git log: {left_out} of {} lines left out; full output: artifact://{id}]",
            shaped["rawLines"]
        )),
        "{text}"
    );
}

#[test]
fn exec_raw_gives_the_program_s_own_text() {
    let env = shaped_env();
    let done = env.exec(&["--raw", "--", "git", "log"]);
    assert_eq!(done.code(), 0, "{done:?}");
    assert_eq!(done.stdout, git_log(&env.work_dir()));
}

#[test]
fn nothing_is_shaped_where_shaping_must_not_happen() {
    let env = shaped_env();
    let raw = git_log(&env.work_dir());
    let mut rpc = env.rpc();
    let cases = [
        // A pipeline: the output is another program's.
        json!({"command": "git log | cat"}),
        // A format the caller asked for.
        json!({"command": "git log --pretty=medium"}),
        // An explicit tail, given or extracted.
        json!({"command": "git log", "tail": 1000}),
        json!({"command": "git log | tail -n 1000"}),
        // The raw argument.
        json!({"command": "git log", "raw": true}),
        // Setup joined by `||` is not setup.
        json!({"command": "false || git log"}),
    ];
    for (n, arguments) in cases.iter().enumerate() {
        let id = format!("c{n}");
        rpc.send_json(&json!({"id": id, "type": "tool_call", "toolCallId": id, "name": "bash", "arguments": arguments}));
        let data = rpc.response(&id)["data"].clone();
        assert_eq!(
            data["details"]["meta"].get("shaped"),
            None,
            "{arguments}: {data}"
        );
        let text = data["content"][0]["text"].as_str().expect("text");
        assert_eq!(format!("{text}\n"), raw, "{arguments}");
    }
    // Under 1 KiB: not shaped either.
    rpc.send_json(&json!({"id": "small", "type": "tool_call", "toolCallId": "small", "name": "bash", "arguments": {"command": "git log -n 1"}}));
    let data = rpc.response("small")["data"].clone();
    assert_eq!(data["details"]["meta"].get("shaped"), None, "{data}");
    assert!(
        data["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Author: ")
    );
    // A user's command (RPC `bash`) is never shaped.
    rpc.send(r#"{"id": "bang", "type": "bash", "command": "git log"}"#);
    assert_eq!(rpc.response("bang")["data"]["output"], raw);
    // Shaping turned off.
    let off = TestEnv::with_config("[shape]\nenabled = false\n");
    repository(&off.work_dir());
    let done = off.exec(&["--", "git", "log"]);
    assert_eq!(done.stdout, git_log(&off.work_dir()));
    // A program in `except`.
    let except = TestEnv::with_config("[shape]\nexcept = [\"git\"]\n");
    repository(&except.work_dir());
    let done = except.exec(&["--", "git", "log"]);
    assert_eq!(done.stdout, git_log(&except.work_dir()));
}

#[test]
fn rpc_tool_call_is_shaped_and_a_failed_run_keeps_its_exit_code() {
    let env = TestEnv::new();
    let lines = (1..=60)
        .map(|n| format!("line {n} of the file"))
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(env.work_dir().join("a.txt"), lines).expect("write");
    let mut rpc = env.rpc();
    rpc.send(r#"{"id": "1", "type": "tool_call", "toolCallId": "c1", "name": "bash", "arguments": {"command": "cd . && grep -rn line a.txt missing.txt"}}"#);
    let data = rpc.response("1")["data"].clone();
    assert_eq!(data["isError"], true, "{data}");
    assert_eq!(data["details"]["exitCode"], 2);
    assert_eq!(
        data["details"]["meta"]["shaped"]["shaper"], "grep",
        "{data}"
    );
    let text = data["content"][0]["text"].as_str().expect("text");
    // Every match is there, under its file written once; grep's error too; then the outcome
    // line and the shaped line: the exit code is never hidden.
    assert!(
        text.starts_with("a.txt:\n  1:line 1 of the file\n  2:line 2 of the file\n"),
        "{text}"
    );
    assert!(text.contains("\n  60:line 60 of the file\n"), "{text}");
    assert!(
        text.contains("grep: missing.txt: No such file or directory"),
        "{text}"
    );
    assert!(
        text.contains("\n\nCommand exited with code 2\n\n[Shaped output of grep: 0 of 61 lines left out; full output: artifact://"),
        "{text}"
    );
}

#[test]
fn a_user_filter_shapes_a_program_agentsh_does_not_know() {
    let env = TestEnv::with_config(
        "[[shape.filters]]\nprogram = \"seq\"\ncollapse = [\"^[0-9]+$\"]\nkeep = [\"^1000$\"]\nmatch = [\"seq 1 1000\"]\n",
    );
    let done = env.exec(&["--", "seq", "1", "1000"]);
    assert_eq!(done.code(), 0, "{done:?}");
    let id = done
        .stdout
        .rsplit("artifact://")
        .next()
        .and_then(|rest| rest.strip_suffix("]\n"))
        .expect("an artifact id")
        .to_owned();
    assert_eq!(
        done.stdout,
        format!(
            "[… 999 lines: matching ^[0-9]+$ …]\n1000\n\n[Shaped output of seq: 999 of 1000 lines left out; full output: artifact://{id}]\n"
        )
    );
    // A filter whose example does not hold is a config error naming it.
    let bad =
        TestEnv::with_config("[[shape.filters]]\nprogram = \"seq\"\nmatch = [\"seq 1 | cat\"]\n");
    let done = bad.exec(&["--", "true"]);
    assert_ne!(done.code(), 0);
    assert!(
        done.stderr
            .contains("shape.filters[0].match[0]: the filter does not apply to \"seq 1 | cat\""),
        "{done:?}"
    );
}

/// `agentsh mcp` over raw JSON-RPC lines: initialize, then one `tools/call`.
fn mcp_call(env: &TestEnv, arguments: &Value) -> Value {
    let config = env.config_path();
    let mut rpc = Rpc::spawn(env.command(&["mcp", "--config", config.to_str().expect("utf-8")]));
    rpc.send_json(
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "shaping-test", "version": "0"}}}),
    );
    rpc.until(LIVENESS, |line| line["id"] == 0);
    rpc.send(r#"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#);
    rpc.send_json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "bash", "arguments": arguments}}));
    let lines = rpc.until(LIVENESS, |line| {
        line["id"] == 1 && line.get("method").is_none()
    });
    lines.last().expect("the answer")["result"].clone()
}

#[test]
fn mcp_tools_call_is_shaped_the_same() {
    let env = shaped_env();
    let work = env.work_dir();
    let result = mcp_call(
        &env,
        &json!({"command": "git log", "cwd": work.to_str().unwrap()}),
    );
    let text = result["content"][0]["text"].as_str().expect("text");
    assert!(text.contains("[Shaped output of git log: "), "{result}");
    assert!(!text.contains("Author: "), "{text}");
    let raw = mcp_call(
        &env,
        &json!({"command": "git log", "raw": true, "cwd": work.to_str().unwrap()}),
    );
    assert_eq!(
        format!("{}\n", raw["content"][0]["text"].as_str().expect("text")),
        git_log(&work)
    );
}

#[test]
fn an_ended_job_s_output_is_shaped_when_job_output_first_reads_it() {
    // A program that prints only after the start's answer (one second), shaped by a filter.
    let env =
        TestEnv::with_config("[[shape.filters]]\nprogram = \"python3\"\ncollapse = [\"^x$\"]\n");
    let command = r#"python3 -c 'import time; time.sleep(2); print("x\n" * 999 + "done")'"#;
    let mut rpc = env.rpc();
    for id in ["a", "b"] {
        rpc.send_json(
            &json!({"id": id, "type": "tool_call", "toolCallId": id, "name": "bash",
            "arguments": {"command": command, "run_in_background": true}}),
        );
        let data = rpc.response(id)["data"].clone();
        assert_eq!(data["details"]["meta"].get("shaped"), None, "{data}");
        assert_eq!(data["details"]["job"]["state"], "running", "{data}");
    }
    // Once a job ended (a UI's look moves nothing), its output is read for the first time.
    let read = |rpc: &mut Rpc, id: &str, job: &str, raw: bool| {
        let deadline = std::time::Instant::now() + LIVENESS;
        loop {
            rpc.send_json(&json!({"id": id, "type": "job_view", "jobId": job}));
            let view = rpc.response(id)["data"].clone();
            if view["job"]["state"] != "running" {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "{view}");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        rpc.send_json(
            &json!({"id": id, "type": "tool_call", "toolCallId": id, "name": "job_output",
            "arguments": {"jobId": job, "raw": raw}}),
        );
        rpc.response(id)["data"].clone()
    };
    let shaped = read(&mut rpc, "ra", "1", false);
    let text = shaped["content"][0]["text"].as_str().expect("text");
    assert!(
        text.starts_with("[… 999 lines: matching ^x$ …]\ndone\n\n"),
        "{text}"
    );
    let id = shaped["details"]["meta"]["shaped"]["artifactId"]
        .as_str()
        .expect("an artifact");
    assert_eq!(
        artifact_text(&env, id),
        format!("{}done\n", "x\n".repeat(999))
    );
    assert!(
        text.contains("[Shaped output of python3: 999 of 1000 lines left out"),
        "{text}"
    );
    let raw = read(&mut rpc, "rb", "2", true);
    assert_eq!(raw["details"]["meta"].get("shaped"), None, "{raw}");
    assert!(
        raw["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("x\nx\n"),
        "{raw}"
    );
}
