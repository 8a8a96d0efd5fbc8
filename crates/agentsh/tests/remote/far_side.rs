//! The far side of remote execution through the real binary: `hello` (version,
//! protocol, settings for a new session), `ping`, `list_artifacts` and `agentsh rpc --lease`.

use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::util::{
    LIVENESS, Rpc, TestEnv, assert_no_survivor, marked_sleep, marked_sleeper, unique_marker,
    wait_for_process,
};

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// `agentsh rpc --config <config> <extra…>`.
fn rpc_with(env: &TestEnv, extra: &[&str]) -> Rpc {
    Rpc::spawn(rpc_command(env, extra))
}

fn rpc_command(env: &TestEnv, extra: &[&str]) -> Command {
    let config = env.config_path();
    let mut args = vec!["rpc", "--config", config.to_str().expect("utf-8 path")];
    args.extend_from_slice(extra);
    env.command(&args)
}

/// The `data.output` of a `bash` request's response.
fn bash_output(rpc: &mut Rpc, id: &str, command: &str) -> Value {
    rpc.send_json(&json!({"id": id, "type": "bash", "command": command}));
    let response = rpc.response(id);
    assert_eq!(response["success"], true, "{response}");
    response["data"]["output"].clone()
}

/// Sends a `hello` with `settings` and returns its response.
fn hello(rpc: &mut Rpc, id: &str, settings: &Value) -> Value {
    rpc.send_json(&json!({"id": id, "type": "hello", "protocol": 2, "settings": settings}));
    rpc.response(id)
}

#[test]
fn hello_names_the_version_and_protocol_and_ping_answers() {
    let env = TestEnv::new();
    let mut rpc = env.rpc();
    let answer = json!({"id": "h", "type": "response", "command": "hello", "success": true,
                        "data": {"agentsh": VERSION, "protocol": 2}});
    rpc.send(r#"{"id": "h", "type": "hello", "protocol": 2}"#);
    assert_eq!(rpc.response("h"), answer);
    // Without a protocol nothing is checked.
    rpc.send(r#"{"id": "h", "type": "hello"}"#);
    assert_eq!(rpc.response("h"), answer);
    rpc.send(r#"{"id": "p", "type": "ping"}"#);
    assert_eq!(
        rpc.response("p"),
        json!({"id": "p", "type": "response", "command": "ping", "success": true})
    );
}

#[test]
fn a_hello_of_another_protocol_is_refused_naming_both() {
    let env = TestEnv::new();
    let mut rpc = env.rpc();
    let refused = |id: &str| {
        json!({"id": id, "type": "response", "command": "hello", "success": false,
               "error": format!("Protocol mismatch: this agentsh {VERSION} speaks protocol 2, the other side speaks 3")})
    };
    rpc.send(r#"{"id": "h", "type": "hello", "protocol": 3}"#);
    assert_eq!(rpc.response("h"), refused("h"));
    // Its settings are not applied.
    rpc.send_json(&json!({"id": "s", "type": "hello", "protocol": 3,
                          "settings": {"bash": {"env": {"FAR": "applied"}}}}));
    assert_eq!(rpc.response("s"), refused("s"));
    assert_eq!(
        bash_output(&mut rpc, "b", "echo \"${FAR-unset}\""),
        "unset\n"
    );
}

#[test]
fn hello_settings_take_effect_in_the_next_call_and_end_the_old_session() {
    let env = TestEnv::new();
    let mut rpc = env.rpc();
    // A job of the old session: its tree ends with that session.
    let marker = unique_marker();
    rpc.send_json(&json!({"id": "job", "type": "tool_call", "toolCallId": "job", "name": "bash",
                          "arguments": {"command": marked_sleeper(&marker), "run_in_background": true}}));
    assert_eq!(rpc.response("job")["success"], true);
    wait_for_process(&marker);
    assert_eq!(bash_output(&mut rpc, "1", "X=old; echo $X"), "old\n");

    let settings = json!({"bash": {"env": {"FAR": "applied"}}, "output": {"max_bytes": 100}});
    let answer = hello(&mut rpc, "h", &settings);
    assert_eq!(
        answer,
        json!({"id": "h", "type": "response", "command": "hello", "success": true,
               "data": {"agentsh": VERSION, "protocol": 2}})
    );
    assert_no_survivor(&marker);

    // A new session: a new shell (the old one's variable is gone), the hello's environment.
    assert_eq!(
        bash_output(&mut rpc, "2", "echo \"${X-unset} $FAR\""),
        "unset applied\n"
    );
    // And the hello's output bound: 100 bytes of tail.
    rpc.send(r#"{"id": "3", "type": "bash", "command": "seq 1000"}"#);
    let data = rpc.response("3")["data"].clone();
    assert_eq!(data["truncated"], true, "{data}");
    let output = data["output"].as_str().expect("output");
    assert!(output.len() <= 100, "{} bytes: {output:?}", output.len());
    assert!(output.ends_with("999\n1000\n"), "{output:?}");
}

#[test]
fn bad_hello_settings_name_the_key_and_keep_the_session() {
    let env = TestEnv::new();
    let mut rpc = env.rpc();
    assert_eq!(bash_output(&mut rpc, "1", "KEPT=yes; echo set"), "set\n");
    let cases = [
        (
            json!({"sandbox": {"mode": "on"}}),
            "config error in hello settings: sandbox.mode: unknown variant `on`, expected one of `off`, `read-only`, `workspace-write`",
        ),
        (
            json!({"output": {"max_bytes": 0}}),
            "config error in hello settings: output.max_bytes: must be at least 1, got 0",
        ),
        (
            json!({"artifacts": {"dir": "/elsewhere"}}),
            "config error in hello settings: artifacts: is not a section that shapes execution (those are bash, bash_interceptor, output, jobs, sandbox, secrets, shape, limits)",
        ),
    ];
    for (settings, error) in cases {
        assert_eq!(
            hello(&mut rpc, "h", &settings),
            json!({"id": "h", "type": "response", "command": "hello", "success": false,
                   "error": error})
        );
    }
    // The same session, the same shell.
    assert_eq!(bash_output(&mut rpc, "2", "echo $KEPT"), "yes\n");
}

#[test]
fn a_hello_with_settings_while_a_call_runs_is_refused() {
    let env = TestEnv::new();
    let mut rpc = env.rpc();
    let marker = unique_marker();
    rpc.send_json(&json!({"id": "b", "type": "bash", "command": marked_sleep(&marker)}));
    wait_for_process(&marker);
    assert_eq!(
        hello(&mut rpc, "h", &json!({})),
        json!({"id": "h", "type": "response", "command": "hello", "success": false,
               "error": "hello while calls are running: settings apply to a new session, so a hello with `settings` must come while no call runs"})
    );
    // A hello without settings only checks.
    rpc.send(r#"{"id": "plain", "type": "hello", "protocol": 2}"#);
    assert_eq!(rpc.response("plain")["success"], true);
    rpc.send(r#"{"id": "a", "type": "abort_bash"}"#);
    assert_eq!(rpc.response("b")["data"]["cancelled"], true);
    assert_no_survivor(&marker);
    assert_eq!(hello(&mut rpc, "h2", &json!({}))["success"], true);
}

#[test]
fn a_hello_sandbox_that_cannot_be_had_is_refused_and_the_session_stays() {
    // Workspace-write in a cwd of `$HOME`: the session refuses that writable root.
    let env = TestEnv::new();
    let home = env.root().join("home");
    let mut rpc = rpc_with(&env, &["--cwd", home.to_str().expect("utf-8 path")]);
    assert_eq!(bash_output(&mut rpc, "1", "KEPT=yes; echo set"), "set\n");
    assert_eq!(
        hello(
            &mut rpc,
            "h",
            &json!({"sandbox": {"mode": "workspace-write"}})
        ),
        json!({"id": "h", "type": "response", "command": "hello", "success": false,
               "error": format!("Sandbox refuses a writable root of {}", home.display())})
    );
    assert_eq!(bash_output(&mut rpc, "2", "echo $KEPT"), "yes\n");
}

#[test]
fn a_hello_sandbox_confines_the_next_call() {
    let env = TestEnv::new();
    let mut rpc = env.rpc();
    let target = env.work_dir().join("written");
    let answer = hello(&mut rpc, "h", &json!({"sandbox": {"mode": "read-only"}}));
    if answer["error"]
        .as_str()
        .is_some_and(|error| error.starts_with("Sandbox unavailable: "))
    {
        eprintln!("skipped: this kernel cannot enforce a sandbox: {answer}");
        return;
    }
    assert_eq!(answer["success"], true, "{answer}");
    rpc.send_json(&json!({"id": "w", "type": "bash",
                          "command": format!("touch {}", target.display())}));
    let data = rpc.response("w")["data"].clone();
    assert_ne!(data["exitCode"], 0, "{data}");
    assert!(
        data["output"]
            .as_str()
            .is_some_and(|output| output.contains("Permission denied")),
        "{data}"
    );
    assert!(!target.exists());
}

/// Runs the rest of its arguments under a seccomp filter that answers
/// `landlock_create_ruleset` (444 on every architecture) with ENOSYS: a kernel without
/// Landlock, as in a container whose seccomp profile predates it.
const WITHOUT_LANDLOCK: &str = r"
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
code = [(0x20, 0, 0, 0), (0x15, 0, 1, 444), (0x06, 0, 0, 0x00050000 | 38), (0x06, 0, 0, 0x7fff0000)]
filters = ctypes.create_string_buffer(b''.join(struct.pack('HBBI', *op) for op in code))
class Prog(ctypes.Structure):
    _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.c_void_p)]
prog = Prog(len(code), ctypes.addressof(filters))
if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(prog), 0, 0) != 0:
    sys.exit('cannot install the seccomp filter: ' + os.strerror(ctypes.get_errno()))
os.execv(sys.argv[1], sys.argv[1:])
";

#[test]
fn a_hello_sandbox_the_kernel_cannot_enforce_is_refused() {
    if agentsh_test_support::which("python3").is_none() {
        eprintln!("skipped: no python3 to hide Landlock with a seccomp filter");
        return;
    }
    let env = TestEnv::new();
    let config = env.config_path();
    let mut rpc = Rpc::spawn(env.program(
        "python3",
        &[
            "-c",
            WITHOUT_LANDLOCK,
            crate::util::AGENTSH,
            "rpc",
            "--config",
            config.to_str().expect("utf-8 path"),
        ],
    ));
    assert_eq!(bash_output(&mut rpc, "1", "KEPT=yes; echo set"), "set\n");
    let refused = hello(&mut rpc, "h", &json!({"sandbox": {"mode": "read-only"}}));
    assert_eq!(
        refused,
        json!({"id": "h", "type": "response", "command": "hello", "success": false,
               "error": "Sandbox unavailable: Landlock is not enabled in this kernel (it needs Linux 6.2 or later with `landlock` in the `lsm=` list)"})
    );
    assert_eq!(bash_output(&mut rpc, "2", "echo $KEPT"), "yes\n");
}

#[test]
fn list_artifacts_gives_the_newest_first_with_real_sizes() {
    let env = TestEnv::new();
    let mut rpc = env.rpc();
    rpc.send(r#"{"id": "l0", "type": "list_artifacts"}"#);
    assert_eq!(
        rpc.response("l0"),
        json!({"id": "l0", "type": "response", "command": "list_artifacts", "success": true,
               "data": {"artifacts": []}})
    );
    let before = SystemTime::now();
    let mut ids = Vec::new();
    for (id, command) in [("1", "seq 200000"), ("2", "seq 100000")] {
        rpc.send_json(&json!({"id": id, "type": "bash", "command": command}));
        let data = rpc.response(id)["data"].clone();
        assert_eq!(data["truncated"], true, "{data}");
        ids.push(data["artifactId"].as_str().expect("an artifact").to_owned());
    }
    let after = SystemTime::now();
    rpc.send(r#"{"id": "l", "type": "list_artifacts"}"#);
    let response = rpc.response("l");
    assert_eq!(response["success"], true, "{response}");
    let listed = response["data"]["artifacts"]
        .as_array()
        .expect("artifacts")
        .clone();
    // `seq 200000`: 9×2 + 90×3 + 900×4 + 9000×5 + 90000×6 + 100001×7 bytes.
    let sizes = [1_288_895, 588_895];
    let millis = |time: SystemTime| {
        u64::try_from(
            time.duration_since(UNIX_EPOCH)
                .expect("after 1970")
                .as_millis(),
        )
        .expect("fits")
    };
    assert_eq!(listed.len(), 2, "{listed:#?}");
    for (entry, (id, size)) in listed.iter().zip(ids.iter().zip(sizes).rev()) {
        assert_eq!(entry["id"], json!(id), "newest first: {listed:#?}");
        assert_eq!(entry["size"], json!(size), "{entry}");
        let path = env.artifacts_dir().join(format!("{id}.bash.log"));
        assert_eq!(
            std::fs::metadata(&path).expect("the artifact").len(),
            size,
            "{path:?}"
        );
        let modified = entry["modifiedMs"].as_u64().expect("modifiedMs");
        // File times may be a tick coarser than the clock.
        assert!(
            (millis(before).saturating_sub(1000)..=millis(after) + 1000).contains(&modified),
            "{entry}"
        );
    }
}

#[test]
fn a_lease_ends_the_server_and_every_tree_after_silence() {
    let env = TestEnv::new();
    let mut rpc = rpc_with(&env, &["--lease", "1"]);
    let (detached, child) = (unique_marker(), unique_marker());
    let command = format!(
        "setsid {} & {}",
        marked_sleeper(&detached),
        marked_sleeper(&child)
    );
    let sent = Instant::now();
    rpc.send_json(&json!({"id": "b", "type": "bash", "command": command}));
    wait_for_process(&detached);
    wait_for_process(&child);
    // Silence from here on, stdin still open: the lease ends everything, as end of input would:
    // the running call is answered, every tree ended, exit status 0.
    let response = rpc.response("b");
    let lasted = sent.elapsed();
    assert!(
        lasted >= Duration::from_secs(1),
        "answered after {lasted:?}"
    );
    assert_eq!(response["data"]["cancelled"], true, "{response}");
    let (status, _) = rpc.wait(LIVENESS);
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert_no_survivor(&detached);
    assert_no_survivor(&child);
}

#[test]
fn any_input_line_renews_the_lease_a_running_command_does_not() {
    let env = TestEnv::new();
    let mut rpc = rpc_with(&env, &["--lease", "1"]);
    let started = Instant::now();
    // Each kind of line alone keeps it for longer than the lease: lines 0.3 s apart for 1.5 s.
    for kind in ["ping", "bad", "blank"] {
        let phase = Instant::now();
        while phase.elapsed() < Duration::from_millis(1500) {
            std::thread::sleep(Duration::from_millis(300));
            match kind {
                "ping" => {
                    rpc.send(r#"{"id": "p", "type": "ping"}"#);
                    assert_eq!(rpc.response("p")["success"], true);
                }
                "bad" => {
                    rpc.send("not json");
                    assert_eq!(rpc.next(LIVENESS)["command"], "parse");
                }
                _ => rpc.send(""),
            }
            assert!(
                rpc.exited().is_none(),
                "ended after {:?}, sending {kind} lines",
                started.elapsed()
            );
        }
    }
    // A command that runs on does not keep it: only input does.
    let marker = unique_marker();
    rpc.send_json(&json!({"id": "b", "type": "bash", "command": marked_sleep(&marker)}));
    wait_for_process(&marker);
    assert_eq!(rpc.response("b")["data"]["cancelled"], true);
    let (status, _) = rpc.wait(LIVENESS);
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert_no_survivor(&marker);
}

/// Sends `request` (with its `id`) and returns the response.
fn ask(rpc: &mut Rpc, id: &str, request: Value) -> Value {
    let mut request = request;
    request["id"] = json!(id);
    rpc.send_json(&request);
    rpc.response(id)
}

/// `status` and `job_view` (what the interactive mode's `--remote` shows) on `rpc`, whose
/// session is in `work`.
fn check_status_and_job_view(rpc: &mut Rpc, work: &str, name: &str) {
    let status = ask(rpc, "s1", json!({"type": "status"}));
    assert_eq!(status["success"], true, "{name}: {status}");
    assert_eq!(status["command"], "status", "{name}: {status}");
    let data = &status["data"];
    assert_eq!(data["cwd"], work, "{name}: {status}");
    assert!(
        data["shell"]
            .as_str()
            .is_some_and(|shell| shell.ends_with("bash")),
        "{name}: {status}"
    );
    assert_eq!(data["sandbox"], Value::Null, "{name}: {status}");
    assert_eq!(data["jobs"], json!([]), "{name}: {status}");
    // A job that prints a line after its starting result has returned: once the test opens
    // its gate.
    let marker = unique_marker();
    let gate = format!("{work}/gate-{marker}");
    let command = format!(
        "echo one; until [ -e {gate} ]; do sleep 0.05; done; echo late; {}",
        marked_sleeper(&marker)
    );
    let started = ask(
        rpc,
        "start",
        json!({"type": "tool_call", "toolCallId": "job", "name": "bash",
               "arguments": {"command": command, "run_in_background": true}}),
    );
    assert_eq!(
        started["data"]["details"]["job"]["id"], "1",
        "{name}: {started}"
    );
    // The model has read `one` (the starting result showed it, or this does).
    let read = ask(
        rpc,
        "one",
        json!({"type": "tool_call", "toolCallId": "one", "name": "job_output",
               "arguments": {"jobId": "1", "until": "^one$", "wait": 60}}),
    );
    assert_eq!(
        read["data"]["details"]["job"]["state"], "running",
        "{name}: {read}"
    );
    std::fs::write(&gate, "").expect("open the gate");
    wait_for_process(&marker);
    let status = ask(rpc, "s2", json!({"type": "status"}));
    let jobs = &status["data"]["jobs"];
    assert_eq!(jobs.as_array().map(Vec::len), Some(1), "{name}: {status}");
    assert_eq!(jobs[0]["id"], "1", "{name}: {status}");
    assert_eq!(jobs[0]["state"], "running", "{name}: {status}");
    assert_eq!(jobs[0]["command"], command, "{name}: {status}");
    assert_eq!(jobs[0]["pty"], false, "{name}: {status}");
    assert!(jobs[0]["runTime"].as_f64().is_some(), "{name}: {status}");
    // The look shows every line so far, as a number or a string id alike.
    let look = ask(rpc, "v1", json!({"type": "job_view", "jobId": 1}));
    assert_eq!(look["success"], true, "{name}: {look}");
    assert_eq!(look["data"]["job"]["id"], "1", "{name}: {look}");
    assert_eq!(look["data"]["screen"], Value::Null, "{name}: {look}");
    let deadline = Instant::now() + LIVENESS;
    let look = loop {
        let look = ask(rpc, "v2", json!({"type": "job_view", "jobId": "1"}));
        if look["data"]["output"] == "one\nlate\n" {
            break look;
        }
        assert!(Instant::now() < deadline, "{name}: {look}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(look["data"]["totalLines"], 2, "{name}: {look}");
    // Looking moved nothing: the model's job_output still gets the late line.
    let output = ask(
        rpc,
        "out",
        json!({"type": "tool_call", "toolCallId": "out", "name": "job_output",
               "arguments": {"jobId": "1"}}),
    );
    let text = output["data"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.starts_with("late\n"), "{name}: {output}");
    // An id no job has: the job tools' own words.
    let missing = ask(rpc, "v3", json!({"type": "job_view", "jobId": "9"}));
    assert_eq!(missing["success"], false, "{name}: {missing}");
    assert_eq!(missing["error"], "No job 9. Jobs: 1", "{name}: {missing}");
    let bad = ask(rpc, "v4", json!({"type": "job_view"}));
    assert_eq!(
        bad["error"], "missing field `jobId` (a string or a whole number)",
        "{name}: {bad}"
    );
    ask(
        rpc,
        "kill",
        json!({"type": "tool_call", "toolCallId": "kill", "name": "job_kill",
               "arguments": {"jobId": "1"}}),
    );
    assert_no_survivor(&marker);
}

#[test]
fn status_and_job_view_answer_here_and_through_every_far_side() {
    let env = TestEnv::new();
    let work = env.work_dir();
    let work = work.to_str().expect("utf-8 path");
    let mut rpc = rpc_with(&env, &["--cwd", work]);
    check_status_and_job_view(&mut rpc, work, "local");
    drop(rpc);
    super::on_every_far_side("status_and_job_view", |far| {
        let env = far.env("");
        let work = env.work_dir();
        let mut rpc = far.rpc(&env);
        check_status_and_job_view(&mut rpc, work.to_str().expect("utf-8 path"), far.name());
    });
}

/// The `bash_output` events of `stream` among `lines`, in order: their texts.
fn streamed(lines: &[Value], stream: &str) -> Vec<String> {
    lines
        .iter()
        .filter(|line| line["type"] == "bash_output" && line["streamId"] == stream)
        .map(|line| line["text"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// A `bash` request with `streamId` streams its output before its response; one without
/// streams nothing; a big output streams a bounded tail.
fn check_bash_streams(rpc: &mut Rpc, name: &str) {
    rpc.send_json(&json!({"id": "b1", "type": "bash", "streamId": "s-1",
        "command": "for i in 1 2 3; do echo s$i; sleep 0.3; done"}));
    let lines = rpc.until(LIVENESS, |line| crate::util::is_response(line, "b1"));
    let response = lines.last().expect("the response");
    assert_eq!(
        response["data"]["output"], "s1\ns2\ns3\n",
        "{name}: {response}"
    );
    let pieces = streamed(&lines, "s-1");
    assert!(pieces.len() >= 2, "{name}: pieces as they came: {pieces:?}");
    assert_eq!(pieces.concat(), "s1\ns2\ns3\n", "{name}: {pieces:?}");
    // Without a streamId, nothing but the response.
    rpc.send_json(&json!({"id": "b2", "type": "bash", "command": "echo quiet"}));
    let lines = rpc.until(LIVENESS, |line| crate::util::is_response(line, "b2"));
    assert!(
        lines.iter().all(|line| line["type"] != "bash_output"),
        "{name}: {lines:?}"
    );
    // 6.9 MB of output: each event at most 64 KiB, the last one ending with the last line.
    rpc.send_json(&json!({"id": "b3", "type": "bash", "streamId": "s-3",
        "command": "seq 1000000"}));
    let lines = rpc.until(LIVENESS * 2, |line| crate::util::is_response(line, "b3"));
    let pieces = streamed(&lines, "s-3");
    assert!(!pieces.is_empty(), "{name}");
    assert!(
        pieces.iter().all(|piece| piece.len() <= 64 * 1024),
        "{name}: {:?}",
        pieces.iter().map(String::len).collect::<Vec<_>>()
    );
    let total: usize = pieces.iter().map(String::len).sum();
    assert!(
        total < 6_888_896,
        "{name}: {total} bytes streamed of 6888896"
    );
    assert!(
        pieces
            .last()
            .is_some_and(|last| last.ends_with("999999\n1000000\n")),
        "{name}"
    );
}

#[test]
fn a_streamed_bash_sends_its_output_live_here_and_through_every_far_side() {
    let env = TestEnv::new();
    let mut rpc = rpc_with(&env, &[]);
    check_bash_streams(&mut rpc, "local");
    drop(rpc);
    super::on_every_far_side("a_streamed_bash", |far| {
        let env = far.env("");
        let mut rpc = far.rpc(&env);
        check_bash_streams(&mut rpc, far.name());
    });
}
