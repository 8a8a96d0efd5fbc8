//! Remote execution through the real binary: a real sshd on loopback
//! (`agentsh_test_support::sshd`) and the generic `command` transport with `agentsh rpc` under
//! `unshare` in new mount and PID namespaces. Each case runs on both far sides.

mod far_side;
mod faults;
mod interactive;
mod limits;
mod mcp;
mod network;
mod secrets;
mod setup;

use serde_json::json;

use crate::util::{
    LIVENESS, TestEnv, assert_no_survivor, finish, marked_sleep, unique_marker, wait_for_process,
};
use setup::{Far, body, call_id, tool_call};

/// Runs `case` against every far side this machine offers (sshd is installed by
/// `scripts/install-test-deps`; without it, the ssh half is skipped, or fails under CI).
fn on_every_far_side(test: &str, case: impl Fn(&Far)) {
    for far in Far::all(test) {
        case(&far);
    }
}

#[test]
fn exec_runs_on_the_far_side_and_keeps_exit_codes() {
    on_every_far_side("exec_runs_on_the_far_side", |far| {
        let env = far.env("");
        let hi = far.exec(&env, &["--", "echo hi; echo \"conn=$SSH_CONNECTION\""]);
        assert_eq!(hi.code(), 0, "{} {hi:?}", far.name());
        assert!(hi.stdout.starts_with("hi\n"), "{hi:?}");
        if far.is_ssh() {
            // Really through sshd: the far side's environment names the connection.
            assert!(hi.stdout.contains("conn=127.0.0.1 "), "{hi:?}");
        }
        let failed = far.exec(&env, &["--", "echo out; (exit 3)"]);
        assert_eq!(failed.code(), 1, "{failed:?}");
        assert!(
            failed.stdout.contains("out\n") && failed.stdout.contains("Command exited with code 3"),
            "{failed:?}"
        );
        let json = far.exec(&env, &["--json", "--", "(exit 7)"]).json();
        assert_eq!(json["details"]["exitCode"], 7, "{json}");
        assert_eq!(json["isError"], true, "{json}");
    });
}

#[test]
fn a_timeout_leaves_no_survivor_on_the_far_side() {
    on_every_far_side("a_timeout_leaves_no_survivor", |far| {
        let env = far.env("");
        let marker = unique_marker();
        let command = format!("echo started; {}", marked_sleep(&marker));
        let timed_out = far.exec(&env, &["--timeout", "1", "--", &command]);
        assert_eq!(timed_out.code(), 1, "{timed_out:?}");
        assert!(
            timed_out.stdout.contains("started")
                && timed_out
                    .stdout
                    .contains("Command timed out after 1 second"),
            "{timed_out:?}"
        );
        assert_no_survivor(&marker);
    });
}

#[test]
fn a_chatty_far_side_rc_is_skipped() {
    let Some(far) = Far::ssh("a_chatty_far_side_rc_is_skipped") else {
        return;
    };
    far.write_bashrc("echo 'Welcome to the far side {\"type\":\"response\"'\necho '{not json'\n");
    let env = far.env("");
    let hi = far.exec(&env, &["--", "echo hi"]);
    assert_eq!(hi.code(), 0, "{hi:?}");
    assert_eq!(hi.stdout, "hi\n", "{hi:?}");
}

#[test]
fn rpc_forwards_calls_aborts_and_jobs() {
    on_every_far_side("rpc_forwards_calls_aborts_and_jobs", |far| {
        let env = far.env("");
        let mut rpc = far.rpc(&env);
        // A plain call, with its events under the client's toolCallId.
        let (events, hi) = tool_call(&mut rpc, "c1", "bash", &json!({"command": "echo hi"}));
        assert_eq!(body(&hi), "hi", "{hi}");
        assert_eq!(
            events.first().map(|e| e["type"].clone()),
            Some(json!("tool_execution_start"))
        );
        assert!(
            events.iter().all(|event| call_id(event) == "c1"),
            "{events:#?}"
        );
        // An abort: answered at once, the tree ended on the far side.
        let marker = unique_marker();
        rpc.send_json(&json!({"id": "2", "type": "tool_call", "toolCallId": "c2",
            "name": "bash", "arguments": {"command": format!("echo go; {}", marked_sleep(&marker))}}));
        wait_for_process(&marker);
        rpc.send_json(&json!({"id": "3", "type": "abort", "toolCallId": "c2"}));
        let aborted = rpc.response("2");
        let text = aborted["data"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(text.contains("Command aborted"), "{aborted}");
        assert_no_survivor(&marker);
        // A background job, read and killed through the connection.
        let (_, started) = tool_call(
            &mut rpc,
            "c3",
            "bash",
            &json!({"command": "sleep 0.5; echo job-out; sleep 300", "run_in_background": true}),
        );
        let job = started["details"]["job"]["id"]
            .as_str()
            .expect("job id")
            .to_owned();
        let (_, output) = tool_call(
            &mut rpc,
            "c4",
            "job_output",
            &json!({"jobId": job, "until": "job-out", "wait": 10}),
        );
        // The line shows in the starting result or in the first read, never in neither.
        assert!(
            body(&started).contains("job-out") || body(&output).contains("job-out"),
            "{started} {output}"
        );
        let (_, killed) = tool_call(&mut rpc, "c5", "job_kill", &json!({"jobId": job}));
        assert_eq!(killed["details"]["job"]["state"], "killed", "{killed}");
        let (status, _) = rpc.close(LIVENESS);
        assert!(status.success(), "{status:?}");
    });
}

#[test]
fn a_large_artifact_reads_back_byte_exact_through_the_connection() {
    on_every_far_side("a_large_artifact_reads_back_byte_exact", |far| {
        let env = far.env("");
        let mut rpc = far.rpc(&env);
        let (_, result) = tool_call(&mut rpc, "big", "bash", &json!({"command": "seq 2000000"}));
        let artifact = result["details"]["meta"]["truncation"]["artifactId"]
            .as_str()
            .unwrap_or_else(|| panic!("an artifact: {result}"))
            .to_owned();
        let expected = (1..=2_000_000).fold(String::new(), |mut text, n| {
            use std::fmt::Write as _;
            let _ = writeln!(text, "{n}");
            text
        });
        rpc.send_json(&json!({"id": "list", "type": "list_artifacts"}));
        let listed = rpc.response("list");
        assert_eq!(
            listed["data"]["artifacts"][0]["id"],
            artifact.as_str(),
            "{listed}"
        );
        assert_eq!(
            listed["data"]["artifacts"][0]["size"],
            expected.len(),
            "{listed}"
        );
        rpc.send_json(&json!({"id": "read", "type": "read_artifact", "artifactId": artifact}));
        let read = rpc.response_within("read", LIVENESS * 3);
        assert_eq!(read["success"], true, "{}", read["error"]);
        let text = read["data"]["text"].as_str().expect("text");
        assert!(
            text == expected || format!("{text}\n") == expected,
            "{} bytes back",
            text.len()
        );
        assert_eq!(read["data"]["totalLines"], 2_000_000);
        // A window of it.
        rpc.send_json(&json!({"id": "w", "type": "read_artifact",
            "artifactId": format!("artifact://{artifact}"), "offset": 1_999_999, "limit": 5}));
        let window = rpc.response("w");
        assert_eq!(
            window["data"]["text"].as_str().map(str::trim_end),
            Some("1999999\n2000000")
        );
    });
}

#[test]
fn artifact_reads_the_far_sides_store() {
    on_every_far_side("artifact_reads_the_far_sides_store", |far| {
        let env = far.env("[output]\nmax_bytes = 1024\n");
        let done = far.exec(&env, &["--", "seq 1 2000"]);
        assert_eq!(done.code(), 0, "{} {done:?}", far.name());
        let (_, rest) = done
            .stdout
            .rsplit_once("Full: artifact://")
            .unwrap_or_else(|| panic!("no artifact named: {done:?}"));
        let id: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let config = env.config_path();
        let config = config.to_str().expect("utf-8 path");
        // The far side's flags before the subcommand, the config after it.
        let mut args: Vec<String> = far.flags();
        args.extend(["artifact", &id, "--offset", "1999", "--config", config].map(str::to_owned));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let read = finish(env.command(&args).stdin(std::process::Stdio::null()));
        assert_eq!(read.code(), 0, "{} {read:?}", far.name());
        assert_eq!(read.stdout, "1999\n2000\n", "{}", far.name());
        // The output is there, not in this side's store.
        let here = TestEnv::new();
        let config = here.config_path();
        let local = finish(
            here.command(&["artifact", &id, "--config", config.to_str().expect("utf-8")])
                .stdin(std::process::Stdio::null()),
        );
        assert_eq!(local.code(), 1, "{local:?}");
        assert!(local.stderr.contains("Available: none"), "{local:?}");
    });
}

#[test]
fn hello_is_answered_and_ping_stays_local() {
    on_every_far_side("hello_is_answered", |far| {
        let env = far.env("");
        let mut rpc = far.rpc(&env);
        rpc.send(r#"{"id":"p","type":"ping"}"#);
        let pong = rpc.response("p");
        assert_eq!(pong["success"], true, "{pong}");
        rpc.send(r#"{"id":"h","type":"hello"}"#);
        let hello = rpc.response("h");
        assert_eq!(hello["data"]["protocol"], 2, "{hello}");
        assert_eq!(
            hello["data"]["agentsh"],
            env!("CARGO_PKG_VERSION"),
            "{hello}"
        );
        // Bad input is answered here, as the local server answers it.
        rpc.send(r#"{"id":"x","type":"nope"}"#);
        let bad = rpc.response("x");
        assert!(
            bad["error"]
                .as_str()
                .unwrap_or_default()
                .starts_with("Unknown command type `nope`"),
            "{bad}"
        );
    });
}

#[test]
fn local_settings_travel_in_the_hello() {
    on_every_far_side("local_settings_travel_in_the_hello", |far| {
        let env =
            far.env("[bash.env]\nAGENTSH_FROM_HELLO = \"travelled\"\n[output]\nmax_bytes = 4096\n");
        let out = far.exec(&env, &["--", "echo $AGENTSH_FROM_HELLO; seq 3000"]);
        assert_eq!(out.code(), 0, "{out:?}");
        // Cut to the far side's 4 KB: the settings were applied there.
        assert!(!out.stdout.contains("travelled\n1\n"), "{out:?}");
        assert!(out.stdout.contains("2999\n3000"), "{out:?}");
        let env = far.env("[bash.env]\nAGENTSH_FROM_HELLO = \"travelled\"\n");
        let out = far.exec(&env, &["--", "echo $AGENTSH_FROM_HELLO"]);
        assert_eq!(out.stdout, "travelled\n", "{out:?}");
    });
}

#[test]
fn remote_flags_are_checked_before_anything_runs() {
    let env = TestEnv::new();
    let bad = env.exec(&["--remote", "ssh://-oProxyCommand=x", "--", "true"]);
    assert_eq!(bad.code(), 2, "{bad:?}");
    assert!(
        bad.stderr.contains("--remote ssh://-oProxyCommand=x"),
        "{bad:?}"
    );
    let install = env.exec(&["--remote-install", "--", "true"]);
    assert_eq!(install.code(), 2, "{install:?}");
    assert!(install.stderr.contains("--remote-install"), "{install:?}");
}

#[test]
fn the_far_sides_approval_requests_are_answered_by_the_local_client() {
    on_every_far_side("far_approval_requests", |far| {
        let env = far.env(
            "[[policy.rules]]\nprefix = [\"touch\"]\ndecision = \"ask\"\nreason = \"Creates files.\"\n",
        );
        let mut rpc = far.rpc(&env);
        rpc.send(r#"{"id": "h", "type": "hello", "capabilities": {"approvals": true}}"#);
        assert_eq!(rpc.response("h")["success"], true);
        for (call, file, decision) in [("c1", "yes", "allow"), ("c2", "no", "deny")] {
            rpc.send_json(&json!({"id": call, "type": "tool_call", "toolCallId": call,
                                  "name": "bash", "arguments": {"command": format!("touch {file}")}}));
            let lines = rpc.until(LIVENESS, |line| line["type"] == "approval_request");
            let request = lines.last().expect("the request");
            assert_eq!(request["toolCallId"], call, "{} {request}", far.name());
            assert_eq!(request["command"], format!("touch {file}"));
            assert_eq!(request["segments"][0]["reason"], "Creates files.");
            assert!(!env.work_dir().join(file).exists(), "ran before the answer");
            rpc.send_json(
                &json!({"type": "approval", "requestId": request["requestId"],
                                  "decision": decision}),
            );
            let lines = rpc.until(LIVENESS, |line| crate::util::is_response(line, call));
            let resolved = lines
                .iter()
                .find(|line| line["type"] == "approval_resolved")
                .expect("approval_resolved");
            assert_eq!(resolved["decision"], decision, "{}", far.name());
            assert_eq!(resolved["answeredBy"], "rpc");
            let response = lines.last().expect("response");
            assert_eq!(
                response["data"]["isError"],
                decision == "deny",
                "{response}"
            );
            assert_eq!(env.work_dir().join(file).exists(), decision == "allow");
        }
        // A client that cannot answer: denied at once, also through the far side.
        let mut plain = far.rpc(&env);
        plain.send_json(&json!({"id": "p", "type": "tool_call", "toolCallId": "p",
                                "name": "bash", "arguments": {"command": "touch never"}}));
        let response = plain.response("p");
        assert_eq!(
            body(&response["data"]),
            "Command needs approval and nobody can be asked in this session: touch never \
             (Creates files.)\nDo not retry it in another form; tell the user what you wanted to run."
        );
        assert!(!env.work_dir().join("never").exists());
    });
}

/// A far side shapes the model's results (the client never shapes them again), and the
/// `[shape]` section travels to it with the other execution settings.
#[test]
fn the_far_side_shapes_once_and_the_shape_settings_travel() {
    on_every_far_side("far_side_shapes", |far| {
        let check = |config: &str, args: &[&str], shaped: bool| {
            let env = far.env(config);
            let work = env.work_dir();
            for file in ["a.txt", "b.txt"] {
                let lines: Vec<String> = (1..=40).map(|n| format!("line {n} matches")).collect();
                std::fs::write(work.join(file), lines.join("\n")).expect("write");
            }
            let work = work.to_str().expect("utf-8 path").to_owned();
            let mut all = vec!["--json", "--cwd", &work];
            all.extend_from_slice(args);
            all.extend_from_slice(&["--", "grep", "-rn", "matches", "a.txt", "b.txt"]);
            let done = far.exec(&env, &all);
            assert_eq!(done.code(), 0, "{} {done:?}", far.name());
            let result = done.json();
            let text = result["content"][0]["text"].as_str().unwrap_or_default();
            let closings = text.matches("[Shaped output of grep: ").count();
            assert_eq!(
                closings,
                usize::from(shaped),
                "{} {config} {args:?}: {text}",
                far.name()
            );
            assert_eq!(
                result["details"]["meta"]["shaped"]["shaper"].as_str() == Some("grep"),
                shaped,
                "{} {result}",
                far.name()
            );
            // Shaped or not, every match is there.
            assert!(text.contains("40:line 40 matches"), "{text}");
        };
        check("", &[], true);
        check("", &["--raw"], false);
        check("[shape]\nenabled = false\n", &[], false);
    });
}

#[test]
fn the_far_side_applies_this_sides_limits() {
    on_every_far_side("far_side_limits", |far| {
        let env = far.env("[limits]\nmemory = \"256MiB\"\n");
        let done = far.exec(&env, &["--json", "--", crate::limits::MEMORY_HOG]);
        assert_eq!(done.code(), 1, "{} {done:?}", far.name());
        let result = done.json();
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        assert!(
            text.ends_with(crate::limits::MEMORY_LINE),
            "{}: {text}",
            far.name()
        );
        assert_eq!(result["details"]["limit"]["kind"], "memory", "{result}");
        assert_eq!(result["details"]["limit"]["limit"], 256 << 20);
        // CPU time, counted on the far side.
        let env = far.env("[limits]\ncpu_time = 2\n");
        let spin = far.exec(&env, &["--json", "--", "sh -c 'while :; do :; done'"]);
        let result = spin.json();
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        assert!(
            text.ends_with(crate::limits::CPU_LINE),
            "{}: {text}",
            far.name()
        );
        assert_eq!(result["details"]["limit"]["kind"], "cpu_time", "{result}");
        // The sandbox's temp dir of limited size, made on the far side.
        let env =
            far.env("[sandbox]\nmode = \"workspace-write\"\n\n[limits]\ntmp_size = \"10MiB\"\n");
        let done = far.exec(
            &env,
            &[
                "--",
                "head -c 20000000 /dev/zero > \"$TMPDIR/big\"; echo big=$?",
            ],
        );
        assert!(
            done.stdout.contains("No space left on device") && done.stdout.contains("big=1"),
            "{}: {done:?}",
            far.name()
        );
    });
}
