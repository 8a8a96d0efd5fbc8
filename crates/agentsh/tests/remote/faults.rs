//! Faults of a remote connection: a killed transport, a killed local agentsh, a silent link,
//! the reconnect after a loss, and the far sides that must be refused.

use std::time::{Duration, Instant};

use serde_json::json;

use super::on_every_far_side;

/// The line a result gets when it ran in a new far-side session (the documented text).
const RECONNECTED: &str = "[Reconnected: this command ran in a new session; variables, functions and jobs from earlier calls are gone]";

use super::setup::{Far, body, tool_call};
use crate::util::{
    AGENTSH, LIVENESS, Rpc, TestEnv, marked_sleeper, processes_with, unique_marker,
    wait_for_process,
};

/// Nothing with `marker` is left within 3 s (The far side ends every tree).
fn assert_gone_within_3s(marker: &str, what: &str) {
    agentsh_test_support::assert_no_survivor(marker, Duration::from_secs(3));
    assert!(
        processes_with(marker).is_empty(),
        "{what}: {marker} survived"
    );
}

/// Starts `setsid <sleeper> &` plus a foreground sleeper through `rpc` (call `c-tree`); both
/// markers, once both run.
fn start_two_trees(rpc: &mut Rpc) -> (String, String) {
    let (detached, foreground) = (unique_marker(), unique_marker());
    let command = format!(
        "setsid {} & {}",
        marked_sleeper(&detached),
        marked_sleeper(&foreground)
    );
    rpc.send_json(
        &json!({"id": "tree", "type": "tool_call", "toolCallId": "c-tree",
        "name": "bash", "arguments": {"command": command}}),
    );
    wait_for_process(&detached);
    wait_for_process(&foreground);
    (detached, foreground)
}

/// The local transport process (`ssh`, `unshare`): a child of the local agentsh.
fn transport_pid(rpc: &Rpc, far: &Far) -> u32 {
    let deadline = Instant::now() + LIVENESS;
    loop {
        if let Some(pid) = child_named(rpc.pid(), far.transport_comm()) {
            return pid;
        }
        assert!(
            Instant::now() < deadline,
            "no {} child of agentsh",
            far.transport_comm()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A child of `parent` whose command name is `comm`, from `/proc/*/stat`
/// (`pid (comm) state ppid …`).
pub(super) fn child_named(parent: u32, comm: &str) -> Option<u32> {
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let open = stat.find('(')?;
            let close = stat.rfind(')')?;
            let ppid: u32 = stat[close + 2..].split(' ').nth(1)?.parse().ok()?;
            (ppid == parent && &stat[open + 1..close] == comm).then_some(pid)
        })
}

fn signal(pid: u32, signal: i32) {
    assert!(
        agentsh_test_support::send_signal(pid, signal),
        "kill {pid} {signal}"
    );
}

#[test]
fn a_killed_transport_ends_everything_and_the_next_call_reconnects() {
    on_every_far_side("a_killed_transport_ends_everything", |far| {
        let env = far.env("");
        let mut rpc = far.rpc(&env);
        let (_, hi) = tool_call(&mut rpc, "first", "bash", &json!({"command": "echo hi"}));
        assert_eq!(hi["details"]["sessionRestarted"], false, "{hi}");
        let (detached, foreground) = start_two_trees(&mut rpc);
        signal(transport_pid(&rpc, far), libc::SIGKILL);
        let response = rpc.response("tree");
        let text = response["data"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(text.starts_with("Remote connection lost: "), "{response}");
        assert_eq!(response["data"]["isError"], true, "{response}");
        assert_gone_within_3s(&detached, "setsid child after the transport was killed");
        assert_gone_within_3s(&foreground, "foreground after the transport was killed");
        // The next call opens a new far-side session and says so.
        let (_, again) = tool_call(&mut rpc, "again", "bash", &json!({"command": "echo back"}));
        assert_eq!(body(&again), format!("back\n\n{RECONNECTED}"), "{again}");
        assert_eq!(again["details"]["sessionRestarted"], true, "{again}");
        let (_, after) = tool_call(&mut rpc, "after", "bash", &json!({"command": "true"}));
        assert_eq!(after["details"]["sessionRestarted"], false, "{after}");
    });
}

#[test]
fn sigkill_of_the_local_agentsh_ends_everything_on_the_far_side() {
    on_every_far_side("sigkill_of_the_local_agentsh", |far| {
        let env = far.env("");
        let mut rpc = far.rpc(&env);
        let (detached, foreground) = start_two_trees(&mut rpc);
        rpc.kill();
        assert_gone_within_3s(&detached, "setsid child after SIGKILL of agentsh");
        assert_gone_within_3s(&foreground, "foreground after SIGKILL of agentsh");
    });
}

#[test]
fn a_silent_link_ends_everything_when_the_lease_runs_out() {
    let Some(far) = Far::ssh("a_silent_link_ends_everything") else {
        return;
    };
    let env = far.env("");
    // A 2 s lease instead of 30 s (the test knob of the binary).
    let mut rpc = far.rpc_with(&env, &[("AGENTSH_REMOTE_LEASE", "2")]);
    let (detached, foreground) = start_two_trees(&mut rpc);
    let ssh = transport_pid(&rpc, &far);
    signal(ssh, libc::SIGSTOP);
    // The far side's lease (2 s) ends its trees; the local side gives the link up as well.
    agentsh_test_support::assert_no_survivor(&detached, Duration::from_secs(2 + 3));
    agentsh_test_support::assert_no_survivor(&foreground, Duration::from_secs(3));
    let response = rpc.response("tree");
    let text = response["data"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.starts_with("Remote connection lost: "), "{response}");
    // Lets it go on (it may already be gone).
    let _ = agentsh_test_support::send_signal(ssh, libc::SIGCONT);
}

#[test]
fn ssh_errors_are_clear_and_never_hang() {
    let Some(Far::Ssh(sshd)) = Far::ssh("ssh_errors_are_clear") else {
        return;
    };
    for (ssh_command, expected) in [
        (sshd.unknown_host_ssh_command(), "is not known"),
        (sshd.refused_key_ssh_command(), "refused the login"),
    ] {
        let config = format!(
            "[remote]\nssh_command = {}\nagentsh_path = {}\n",
            serde_json::to_string(&ssh_command).expect("json"),
            serde_json::to_string(AGENTSH).expect("json")
        );
        let env = TestEnv::with_config(&config);
        let started = Instant::now();
        let failed = env.exec(&["--remote", &sshd.target(), "--", "touch never-ran"]);
        assert_eq!(failed.code(), 2, "{failed:?}");
        assert!(failed.stderr.contains(expected), "{expected}: {failed:?}");
        assert!(started.elapsed() < LIVENESS, "{failed:?}");
        assert!(!env.work_dir().join("never-ran").exists());
    }
}

#[test]
fn a_far_side_of_another_protocol_is_refused_with_both_versions() {
    // A far side that answers hello with protocol 99 and agentsh 9.9.9.
    let script = r#"read -r line; echo 'motd line'; printf '%s\n' '{"id":1,"type":"response","command":"hello","success":true,"data":{"agentsh":"9.9.9","protocol":99}}'; cat >/dev/null"#;
    let config = format!(
        "[remote]\ncommand = {}\n",
        serde_json::to_string(&["sh", "-c", script, "fake-far-side"]).expect("json")
    );
    let env = TestEnv::with_config(&config);
    let failed = env.exec(&["--", "true"]);
    assert_eq!(failed.code(), 2, "{failed:?}");
    for part in [
        "Protocol mismatch",
        "protocol 2",
        "protocol 99",
        "9.9.9",
        env!("CARGO_PKG_VERSION"),
    ] {
        assert!(failed.stderr.contains(part), "{part}: {failed:?}");
    }
}

#[test]
fn a_far_side_that_never_starts_is_a_clear_error() {
    let config = "[remote]\ncommand = [\"/nonexistent/agentsh-far-side\"]\n";
    let env = TestEnv::with_config(config);
    let failed = env.exec(&["--", "true"]);
    assert_eq!(failed.code(), 2, "{failed:?}");
    assert!(
        failed.stderr.contains("/nonexistent/agentsh-far-side"),
        "{failed:?}"
    );
    // A far side that exits at once: its stderr is the reason.
    let config = "[remote]\ncommand = [\"sh\", \"-c\", \"echo 'agentsh: command not found' >&2; exit 127\", \"x\"]\n";
    let env = TestEnv::with_config(config);
    let failed = env.exec(&["--", "true"]);
    assert_eq!(failed.code(), 2, "{failed:?}");
    assert!(
        failed.stderr.contains("agentsh: command not found"),
        "{failed:?}"
    );
}

#[test]
fn remote_install_copies_agentsh_to_a_target_that_lacks_it() {
    let Some(Far::Ssh(sshd)) = Far::ssh("remote_install") else {
        return;
    };
    // `agentsh` is not on the far side's PATH: only --remote-install makes this work.
    let config = format!(
        "[remote]\nssh_command = {}\n",
        serde_json::to_string(&sshd.ssh_command()).expect("json")
    );
    let env = TestEnv::with_config(&config);
    let without = env.exec(&["--remote", &sshd.target(), "--", "echo hi"]);
    assert_eq!(without.code(), 2, "{without:?}");
    let with = env.exec(&[
        "--remote",
        &sshd.target(),
        "--remote-install",
        "--",
        "echo hi",
    ]);
    assert_eq!(with.code(), 0, "{with:?}");
    assert_eq!(with.stdout, "hi\n", "{with:?}");
    let installed = sshd.home().join(".local/bin/agentsh");
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&installed)
            .expect("installed")
            .permissions(),
    );
    assert_eq!(mode & 0o777, 0o755, "{}", installed.display());
    // A second time it is used as it is.
    let again = env.exec(&[
        "--remote",
        &sshd.target(),
        "--remote-install",
        "--",
        "echo again",
    ]);
    assert_eq!(again.stdout, "again\n", "{again:?}");
}

#[test]
fn a_far_side_that_cannot_enforce_the_sandbox_refuses_it_at_hello() {
    // The far side's kernel offers no Landlock (the session seam of the sandbox tests, which can
    // only take away): the `[sandbox]` sent in the hello is refused there, with its reason.
    let far = Far::Unshare;
    let env = far.env("[sandbox]\nmode = \"workspace-write\"\n");
    let config = env.config_path();
    let mut command = env.command(&[
        "exec",
        "--config",
        config.to_str().expect("utf-8"),
        "--",
        "touch refused-ran",
    ]);
    command.env("AGENTSH_TEST_SANDBOX_KERNEL", "landlock_abi=0");
    let failed = crate::util::finish(command.stdin(std::process::Stdio::null()));
    assert_eq!(failed.code(), 2, "{failed:?}");
    assert!(
        failed
            .stderr
            .contains("refused the session: Sandbox unavailable: "),
        "{failed:?}"
    );
    assert!(!env.work_dir().join("refused-ran").exists());
    // Without the limit the same settings are enforced there: the write outside is denied.
    let out = far.exec(&env, &["--", "touch /etc/agentsh-remote-sandbox-check"]);
    assert_eq!(out.code(), 1, "{out:?}");
    assert!(out.stdout.contains("[sandbox: workspace-write"), "{out:?}");
    assert!(!std::path::Path::new("/etc/agentsh-remote-sandbox-check").exists());
}

#[test]
fn a_client_hello_s_settings_survive_a_reconnect() {
    on_every_far_side("a_client_hello_s_settings_survive", |far| {
        let env = far.env("");
        let mut rpc = far.rpc(&env);
        rpc.send_json(&json!({"id": "h", "type": "hello", "protocol": 2,
            "settings": {"bash": {"env": {"AGENTSH_FROM_CLIENT": "kept"}}}}));
        let hello = rpc.response("h");
        assert_eq!(hello["success"], true, "{hello}");
        let (_, first) = tool_call(
            &mut rpc,
            "first",
            "bash",
            &json!({"command": "echo $AGENTSH_FROM_CLIENT"}),
        );
        assert_eq!(body(&first), "kept", "{first}");
        let (detached, foreground) = start_two_trees(&mut rpc);
        signal(transport_pid(&rpc, far), libc::SIGKILL);
        rpc.response("tree");
        assert_gone_within_3s(&detached, "setsid child");
        assert_gone_within_3s(&foreground, "foreground");
        // A new far-side session, started with the client's settings again.
        let (_, again) = tool_call(
            &mut rpc,
            "again",
            "bash",
            &json!({"command": "echo $AGENTSH_FROM_CLIENT"}),
        );
        assert_eq!(again["details"]["sessionRestarted"], true, "{again}");
        assert_eq!(body(&again), format!("kept\n\n{RECONNECTED}"), "{again}");
    });
}
