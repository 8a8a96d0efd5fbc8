//! Faults and hostile input, on the real binary: a full artifact disk (issue 10, class 9).

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::util::{LIVENESS, Rpc, TestEnv, finish, is_response};

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
    let left: Vec<String> = std::fs::read_dir(env.artifacts_dir())
        .expect("the store exists")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
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
/// `Full: artifact://` link just vanished). SPEC §9: the notice ends `. Full output not saved:
/// <reason>]` and `details.meta.truncation.artifactError` holds the reason; SPEC §4: no
/// partial artifact is left.
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
