//! Faults and hostile input, on the real binary: a full artifact disk, RPC lines that JSON
//! allows but a strict parser refuses, broken lines whose `id` a client waits for, and signals
//! to the RPC server while commands with escaped children run (issue 10, classes 9–11).

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::util::{
    LIVENESS, Rpc, TestEnv, assert_no_survivor, finish, is_response, marked_sleep, unique_marker,
    wait_for_process,
};

/// The file size limit (`RLIMIT_FSIZE`) of an agentsh whose artifact writes must fail: the
/// first spill (the 50 KB tail) fits, the rest of `seq 1 100000` (588,895 bytes) does not.
const FILE_SIZE_LIMIT: u64 = 100_000;

/// The reason of a write that crossed the file size limit, for the artifact with id `id`.
fn efbig(id: u32) -> String {
    format!("cannot write artifact {id}: File too large (os error 27)")
}

/// The notice of `seq 1 100000` under the default limit when its artifact `id` failed.
fn not_saved_notice(id: u32) -> String {
    format!(
        "[Showing lines 91468-100000 of 100000 (50.0KB limit). Full output not saved: {}]",
        efbig(id)
    )
}

/// Makes every file agentsh writes fail past [`FILE_SIZE_LIMIT`] bytes with `EFBIG` (SIGXFSZ
/// ignored, so the write fails instead of killing the process): a real full-disk fault that
/// needs no mount and no privilege.
fn limit_file_size(command: &mut Command) -> &mut Command {
    // SAFETY: between fork and exec only async-signal-safe calls (signal, setrlimit) on the
    // child itself; nothing is allocated.
    unsafe {
        command.pre_exec(|| {
            if libc::signal(libc::SIGXFSZ, libc::SIG_IGN) == libc::SIG_ERR {
                return Err(std::io::Error::last_os_error());
            }
            let limit = libc::rlimit {
                rlim_cur: FILE_SIZE_LIMIT,
                rlim_max: FILE_SIZE_LIMIT,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &raw const limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    }
}

/// The files left in the artifact store: none may be a (partial) artifact.
fn assert_no_artifact_left(env: &TestEnv) {
    let left: Vec<String> = agentsh_test_support::sorted_names(&env.artifacts_dir())
        .into_iter()
        .filter(|name| name.ends_with(".bash.log"))
        .collect();
    assert_eq!(left, Vec::<String>::new(), "partial artifacts left");
}

/// Checks a tool result of `seq 1 100000` whose artifact `id` could not be written.
fn check_not_saved_result(result: &Value, id: u32) {
    let text = result["content"][0]["text"].as_str().expect("text");
    assert!(
        text.ends_with(&format!("99999\n100000\n\n{}", not_saved_notice(id))),
        "{}",
        &text[text.len().saturating_sub(300)..]
    );
    let truncation = &result["details"]["meta"]["truncation"];
    assert_eq!(truncation["artifactError"], efbig(id), "{truncation}");
    assert_eq!(truncation.get("artifactId"), None, "{truncation}");
    assert_eq!(truncation["truncatedBy"], "bytes");
    assert_eq!(result["isError"], false);
}

/// Regression (issue 10, class 9): a full artifact disk was invisible on the tool path (the
/// `Full: artifact://` link just vanished). The notice ends `. Full output not saved:
/// <reason>]` and `details.meta.truncation.artifactError` holds the reason; no partial
/// artifact is left.
#[test]
fn a_full_artifact_disk_is_reported_by_exec_json() {
    let env = TestEnv::new();
    let config = env.config_path();
    let mut command = env.command(&[
        "exec",
        "--config",
        config.to_str().expect("utf-8"),
        "--json",
        "--",
        "seq 1 100000",
    ]);
    command.stdin(Stdio::null());
    let done = finish(limit_file_size(&mut command));
    assert_eq!(done.code(), 0, "{done:?}");
    check_not_saved_result(&done.json(), 1);
    assert_no_artifact_left(&env);
}

/// Regression (issue 10, class 9), RPC: the same in a `tool_call`'s end event and response,
/// and as `artifactError` of a `bash` request's data.
#[test]
fn a_full_artifact_disk_is_reported_by_rpc_tool_call_and_bash() {
    let env = TestEnv::new();
    let config = env.config_path();
    let mut command = env.command(&["rpc", "--config", config.to_str().expect("utf-8")]);
    limit_file_size(&mut command);
    let mut rpc = Rpc::spawn(command);
    rpc.send_json(
        &json!({"id": "t", "type": "tool_call", "toolCallId": "c", "name": "bash",
                          "arguments": {"command": "seq 1 100000"}}),
    );
    let lines = rpc.until(LIVENESS, |line| is_response(line, "t"));
    let end = lines
        .iter()
        .find(|line| line["type"] == "tool_execution_end")
        .expect("an end event");
    check_not_saved_result(&end["result"], 1);
    check_not_saved_result(&lines.last().expect("the response")["data"], 1);

    rpc.send_json(&json!({"id": "b", "type": "bash", "command": "seq 1 100000"}));
    let data = rpc.response("b")["data"].clone();
    assert_eq!(data["artifactError"], efbig(2), "{}", data["artifactError"]);
    assert_eq!(data.get("artifactId"), None);
    assert_eq!(data["truncated"], true);
    assert_no_artifact_left(&env);
    let (status, _) = rpc.close(LIVENESS);
    assert_eq!(status.code(), Some(0));
}

/// A command that replaces the artifact store of `env` with a plain file, then prints
/// `seq 1 100000`: the store breaks after the call started, before its output overflows.
fn break_store_then_overflow(env: &TestEnv) -> String {
    format!(
        "rm -r '{0}' && : > '{0}' && seq 1 100000",
        env.artifacts_dir().display()
    )
}

/// The warning of an artifact that could not be allocated in the broken store of `env`.
fn cannot_allocate(env: &TestEnv, id: u32) -> String {
    format!(
        "cannot allocate an artifact: cannot create artifact {}/{id}.bash.log: Not a directory \
         (os error 20)",
        env.artifacts_dir().display()
    )
}

/// Checks a tool result of `seq 1 100000` that got no artifact at all: truncated, the notice
/// without a `Full:` part, neither `artifactId` nor `artifactError`.
fn check_no_artifact_result(result: &Value) {
    let text = result["content"][0]["text"].as_str().expect("text");
    assert!(
        text.ends_with("100000\n\n[Showing lines 91468-100000 of 100000 (50.0KB limit)]"),
        "{}",
        &text[text.len().saturating_sub(300)..]
    );
    let truncation = &result["details"]["meta"]["truncation"];
    assert_eq!(truncation["truncatedBy"], "bytes", "{truncation}");
    assert_eq!(truncation.get("artifactId"), None, "{truncation}");
    assert_eq!(truncation.get("artifactError"), None, "{truncation}");
    assert_eq!(result["isError"], false);
}

/// The artifact is allocated when the output first overflows, best effort.
/// When that fails the call still runs and truncates, without `artifactId` or `artifactError`,
/// and the user gets the warning `cannot allocate an artifact: <reason>` for that call: on
/// stderr from `exec`.
#[test]
fn an_artifact_that_cannot_be_allocated_at_overflow_is_warned_about_by_exec() {
    let env = TestEnv::new();
    let done = env.exec(&["--json", "--", &break_store_then_overflow(&env)]);
    assert_eq!(done.code(), 0, "{done:?}");
    check_no_artifact_result(&done.json());
    assert_eq!(
        done.stderr,
        format!("agentsh: warning: {}\n", cannot_allocate(&env, 1))
    );
}

/// The same over RPC: a `warning` event before the `tool_call`'s response, and a `bash`
/// request's data without `artifactId` or `artifactError`.
#[test]
fn an_artifact_that_cannot_be_allocated_at_overflow_is_a_warning_event_in_rpc() {
    let env = TestEnv::new();
    let mut rpc = env.rpc();
    rpc.send_json(
        &json!({"id": "t", "type": "tool_call", "toolCallId": "c", "name": "bash",
                          "arguments": {"command": break_store_then_overflow(&env)}}),
    );
    let lines = rpc.until(LIVENESS, |line| is_response(line, "t"));
    let warnings: Vec<&Value> = lines
        .iter()
        .filter(|line| line["type"] == "warning")
        .collect();
    assert_eq!(
        warnings,
        [&json!({"type": "warning", "message": cannot_allocate(&env, 1)})],
        "{lines:#?}"
    );
    let end = lines
        .iter()
        .find(|line| line["type"] == "tool_execution_end")
        .expect("an end event");
    check_no_artifact_result(&end["result"]);
    check_no_artifact_result(&lines.last().expect("the response")["data"]);

    rpc.send_json(&json!({"id": "b", "type": "bash", "command": "seq 1 100000"}));
    let lines = rpc.until(LIVENESS, |line| is_response(line, "b"));
    assert!(
        lines.contains(&json!({"type": "warning", "message": cannot_allocate(&env, 2)})),
        "{lines:#?}"
    );
    let data = &lines.last().expect("the response")["data"];
    assert_eq!(data["truncated"], true);
    assert_eq!(data.get("artifactId"), None, "{data}");
    assert_eq!(data.get("artifactError"), None, "{data}");
    let (status, _) = rpc.close(LIVENESS);
    assert_eq!(status.code(), Some(0));
}

/// Regression (issue 10, class 10): what JSON allows but serde_json refuses was answered
/// `command: "parse"` without its id. A lone surrogate escape reads as U+FFFD, an
/// out-of-range number clamps as the timeout does.
#[test]
fn rpc_accepts_lone_surrogates_and_out_of_range_numbers() {
    let env = TestEnv::new();
    let mut rpc = env.rpc();
    // A JavaScript client cutting an emoji in half writes its high surrogate alone.
    rpc.send(r#"{"id": "s", "type": "bash", "command": "printf '%s|' 'cut \ud83d'"}"#);
    let answer = rpc.response("s");
    assert_eq!(answer["success"], true, "{answer}");
    assert_eq!(answer["data"]["output"], "cut \u{FFFD}|");

    rpc.send(r#"{"id": "t", "type": "bash", "command": "echo in time", "timeout": 1e999}"#);
    let answer = rpc.response("t");
    assert_eq!(answer["success"], true, "{answer}");
    assert_eq!(answer["data"]["output"], "in time\n");

    for (timeout, clamped) in [("1e999", 3600), ("-1e999", 1), ("1e400", 3600)] {
        // One line: the arguments' timeout is the number as written.
        let arguments = format!(r#"{{"command": "echo \udc00", "timeout": {timeout}}}"#);
        rpc.send(&format!(
            r#"{{"id": "c{timeout}", "type": "tool_call", "toolCallId": "c{timeout}", "name": "bash", "arguments": {arguments}}}"#
        ));
        let answer = rpc.response(&format!("c{timeout}"));
        assert_eq!(answer["success"], true, "{answer}");
        let result = &answer["data"];
        assert_eq!(result["details"]["timeout"], clamped, "{timeout}: {result}");
        assert_eq!(
            result["content"][0]["text"], "\u{FFFD}",
            "{timeout}: {result}"
        );
    }
}

/// Regression (issue 10, class 10): a line that is not valid JSON was answered without its
/// id, so a client waiting by id waited forever. The id is echoed whenever it can
/// be read, also from a line that is not JSON; an "id" inside a string or a nested object is
/// never taken for it.
#[test]
fn rpc_failures_keep_their_id() {
    let env = TestEnv::new();
    let mut rpc = env.rpc();
    let cases: &[(&[u8], Option<Value>)] = &[
        (
            br#"{"id": "cut", "type": "bash", "command": "ec"#,
            Some(json!("cut")),
        ),
        (
            br#"{"id": 42, "type": "bash", "command": "x" "#,
            Some(json!(42)),
        ),
        (
            br#"{"type": "bash", "command": "echo \"id\": 1", "id": "late", broken"#,
            Some(json!("late")),
        ),
        (
            br#"{"id": "bad-escape", "type": "bash", "command": "\x"}"#,
            Some(json!("bad-escape")),
        ),
        (
            b"{\"id\": \"not-utf8\", \"command\": \"\xff\"}",
            Some(json!("not-utf8")),
        ),
        (br#"{"command": "echo \"id\": \"fake\"", "type": "#, None),
        (br#"{"arguments": {"id": "nested"}, "type": "#, None),
        (br"not json", None),
    ];
    for (line, id) in cases {
        rpc.send_bytes(line);
        let answer = rpc.next(LIVENESS);
        let text = String::from_utf8_lossy(line);
        assert_eq!(answer["command"], "parse", "{text}: {answer}");
        assert_eq!(answer["success"], false, "{text}: {answer}");
        assert!(
            answer["error"]
                .as_str()
                .is_some_and(|error| error.starts_with("Failed to parse command: ")),
            "{text}: {answer}"
        );
        assert_eq!(answer.get("id"), id.as_ref(), "{text}: {answer}");
    }
    // The server lives on.
    rpc.send(r#"{"id": "ok", "type": "bash", "command": "echo alive"}"#);
    assert_eq!(rpc.response("ok")["data"]["output"], "alive\n");
}

/// A signal to `agentsh rpc` while a tool call with a `setsid` escapee and a `bash` request
/// run: every command answered as aborted, every tree ended, stdin's flags as they were, exit
/// status 128 + the signal.
fn check_rpc_signal(signal: libc::c_int, code: i32) {
    let env = TestEnv::new();
    let config = env.config_path();
    let (reader, mut writer) = std::io::pipe().expect("pipe");
    let rpc = Rpc::spawn_with_stdin(
        env.command(&["rpc", "--config", config.to_str().expect("utf-8")]),
        reader.try_clone().expect("dup").into(),
    );
    let escapee = unique_marker();
    let tool = unique_marker();
    let bang = unique_marker();
    let requests = [
        json!({"id": "t", "type": "tool_call", "toolCallId": "t", "name": "bash", "arguments": {
            "command": format!("setsid {} & {}", marked_sleep(&escapee), marked_sleep(&tool))}}),
        json!({"id": "b", "type": "bash", "command": marked_sleep(&bang)}),
    ];
    for request in requests {
        std::io::Write::write_all(&mut writer, format!("{request}\n").as_bytes()).expect("write");
    }
    for marker in [&escapee, &tool, &bang] {
        wait_for_process(marker);
    }
    let pid = libc::pid_t::try_from(rpc.pid()).expect("pid fits");
    // SAFETY: kill(2) on our own child's pid; it cannot have been reaped yet (`rpc` holds it).
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    let answers = rpc.until(LIVENESS, |line| is_response(line, "t"));
    let tool_result = &answers.last().expect("the response")["data"];
    assert_eq!(tool_result["isError"], true, "{tool_result}");
    assert!(
        tool_result["content"][0]["text"]
            .as_str()
            .is_some_and(|text| text.ends_with("Command aborted")),
        "{tool_result}"
    );
    let bash = answers
        .iter()
        .find(|line| is_response(line, "b"))
        .cloned()
        .unwrap_or_else(|| rpc.response("b"));
    assert_eq!(bash["data"]["cancelled"], true, "{bash}");
    let (status, _) = rpc.close(LIVENESS);
    assert_eq!(status.code(), Some(code), "{status:?}");
    for marker in [&escapee, &tool, &bang] {
        assert_no_survivor(marker);
    }
    // SAFETY: fcntl on a descriptor we own; it shares the open file with the server's stdin.
    let flags = unsafe { libc::fcntl(std::os::fd::AsRawFd::as_raw_fd(&reader), libc::F_GETFL) };
    assert!(flags >= 0);
    assert_eq!(flags & libc::O_NONBLOCK, 0, "stdin left non-blocking");
    drop(writer);
}

/// Regression (issue 10, class 11): RPC mode installed no signal handler; SIGINT killed it by
/// the default disposition (trees ended only through the parent-death signal). It must end
/// every tree after a clean shutdown, exit 130.
#[test]
fn sigint_to_rpc_ends_every_tree_and_exits_130() {
    check_rpc_signal(libc::SIGINT, 130);
}

/// Regression (issue 10, class 11), SIGTERM: exit 143.
#[test]
fn sigterm_to_rpc_ends_every_tree_and_exits_143() {
    check_rpc_signal(libc::SIGTERM, 143);
}

/// Regression (issue 10, class 11), SIGHUP: exit 129.
#[test]
fn sighup_to_rpc_ends_every_tree_and_exits_129() {
    check_rpc_signal(libc::SIGHUP, 129);
}

/// A signal to an idle server (nothing running, stdin still open) ends it with the signal's
/// status too.
#[test]
fn a_signal_to_an_idle_rpc_server_exits_with_its_status() {
    let env = TestEnv::new();
    let mut rpc = env.rpc();
    rpc.send(r#"{"id": "1", "type": "bash", "command": "echo ready"}"#);
    assert_eq!(rpc.response("1")["data"]["output"], "ready\n");
    let pid = libc::pid_t::try_from(rpc.pid()).expect("pid fits");
    // SAFETY: kill(2) on our own child's pid; it cannot have been reaped yet (`rpc` holds it).
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let (status, rest) = rpc.wait(LIVENESS);
    assert_eq!(status.code(), Some(143), "{status:?}");
    assert_eq!(rest, Vec::<Value>::new());
}
