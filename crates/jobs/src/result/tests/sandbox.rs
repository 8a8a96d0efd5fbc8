//! The sandbox line in results: only for a sandboxed command that failed with a
//! denial in its output; after the outcome line, before the notice; on the tool and bang paths.

use std::path::PathBuf;

use super::*;
use agentsh_process::sandbox::{SandboxMode, SandboxNetwork};
use agentsh_sandbox::{DENIAL_MARKERS, sandbox_denial_line, shows_denial};

fn workspace(network: bool) -> SandboxSpec {
    SandboxSpec {
        mode: SandboxMode::WorkspaceWrite,
        writable: vec![
            PathBuf::from("/work/proj"),
            PathBuf::from("/tmp/agentsh-sandbox-ab12"),
            PathBuf::from("/opt/cache"),
        ],
        read_only: Vec::new(),
        network: if network {
            SandboxNetwork::On
        } else {
            SandboxNetwork::Off
        },
        temp_dir: None,
        temp_fs: None,
    }
}

const LINE: &str = "[sandbox: workspace-write; writable: /work/proj, /tmp/agentsh-sandbox-ab12, /opt/cache; network off]";

#[test]
fn the_sandbox_line_has_the_spec_format() {
    assert_eq!(sandbox_denial_line(&workspace(false)), LINE);
    assert_eq!(
        sandbox_denial_line(&workspace(true)),
        "[sandbox: workspace-write; writable: /work/proj, /tmp/agentsh-sandbox-ab12, /opt/cache; network on]"
    );
    let read_only = SandboxSpec {
        mode: SandboxMode::ReadOnly,
        writable: vec![PathBuf::from("/tmp/agentsh-sandbox-cd34")],
        read_only: Vec::new(),
        network: SandboxNetwork::Off,
        temp_dir: None,
        temp_fs: None,
    };
    assert_eq!(
        sandbox_denial_line(&read_only),
        "[sandbox: read-only; writable: /tmp/agentsh-sandbox-cd34; network off]"
    );
}

#[test]
fn denials_are_recognised_as_tools_print_them() {
    let denials = [
        "touch: cannot touch '/etc/x': Permission denied",
        "bash: /home/ann/x: Permission denied",
        "sh: 1: cannot create /etc/x: Read-only file system",
        "unshare: unshare failed: Operation not permitted",
        "nsenter: reassociate to namespace 'ns/net' failed: Operation not permitted",
        "ping: example.com: Temporary failure in name resolution",
        "getent: example.com: Name or service not known",
        "curl: (6) Could not resolve host: example.com",
        "fatal: unable to access 'https://github.com/x/y/': Could not resolve host: github.com",
        "socket.gaierror: [Errno -3] Temporary failure in name resolution",
        "dial tcp: lookup proxy.golang.org: no such host",
        "curl: (7) Failed to connect to 10.0.0.1 port 80: Network is unreachable",
        "nc: connect to 127.0.0.1 port 8080 (tcp) failed: Connection refused",
        "error: open /etc/x: permission denied",
    ];
    for text in denials {
        assert!(shows_denial(text), "{text}");
    }
    for text in [
        "make: *** [all] Error 2",
        "No such file or directory",
        "denied",
        "",
    ] {
        assert!(!shows_denial(text), "{text}");
    }
    // Every marker is recognised by itself.
    for marker in DENIAL_MARKERS {
        assert!(shows_denial(marker), "{marker}");
    }
}

#[test]
fn a_failed_sandboxed_command_with_a_denial_gets_the_line_after_the_outcome() {
    let policy = workspace(false);
    let call = Call::new(
        exited(
            sink(
                "touch: cannot touch '/etc/x': Permission denied\n",
                LIMIT,
                None,
            ),
            Some(1),
        ),
        LIMIT as u64,
    )
    .sandboxed(&policy);
    assert_eq!(
        call.text(),
        format!(
            "touch: cannot touch '/etc/x': Permission denied\n\nCommand exited with code 1\n\n{LINE}"
        )
    );
    // No exit status counts as a failure too.
    let call = Call::new(
        exited(
            sink("curl: (6) Could not resolve host: x.org\n", LIMIT, None),
            None,
        ),
        LIMIT as u64,
    )
    .sandboxed(&policy);
    assert_eq!(
        call.text(),
        format!(
            "curl: (6) Could not resolve host: x.org\n\nCommand failed: missing exit status\n\n{LINE}"
        )
    );
}

#[test]
fn the_sandbox_line_comes_before_the_notice() {
    let policy = workspace(false);
    let mut whole = seq(1, 100);
    whole.push_str("Read-only file system\n");
    // The last 30 bytes: `\n99\n100\nRead-only file system\n`, lines 99-101.
    let call = Call::new(exited(sink(&whole, 30, Some("a1")), Some(1)), 30).sandboxed(&policy);
    assert_eq!(
        call.text(),
        format!(
            "99\n100\nRead-only file system\n\nCommand exited with code 1\n\n{LINE}\n\n[Showing lines 99-101 of 101 (30B limit). Full: artifact://a1]"
        )
    );
}

#[test]
fn no_sandbox_line_without_sandbox_failure_or_denial() {
    let policy = workspace(false);
    let denied = "mkdir: cannot create directory '/x': Permission denied\n";
    // No sandbox.
    assert_eq!(
        Call::new(exited(sink(denied, LIMIT, None), Some(1)), LIMIT as u64).text(),
        "mkdir: cannot create directory '/x': Permission denied\n\nCommand exited with code 1"
    );
    // Success, even with a denial in the output (e.g. `ls -R 2>&1 || true`).
    assert_eq!(
        Call::new(exited(sink(denied, LIMIT, None), Some(0)), LIMIT as u64)
            .sandboxed(&policy)
            .text(),
        "mkdir: cannot create directory '/x': Permission denied"
    );
    // A failure that shows no denial.
    assert_eq!(
        Call::new(exited(sink("boom\n", LIMIT, None), Some(2)), LIMIT as u64)
            .sandboxed(&policy)
            .text(),
        "boom\n\nCommand exited with code 2"
    );
}

#[test]
fn a_denial_in_the_head_capture_counts() {
    let policy = workspace(true);
    let head = "ssh: connect to host x port 22: Network is unreachable\n";
    let call = Call::new(
        exited(sink("tail only\n", LIMIT, None), Some(255)),
        LIMIT as u64,
    )
    .head(1)
    .capture(head, false)
    .sandboxed(&policy);
    assert_eq!(
        call.text(),
        "ssh: connect to host x port 22: Network is unreachable\n\nCommand exited with code 255\n\n[sandbox: workspace-write; writable: /work/proj, /tmp/agentsh-sandbox-ab12, /opt/cache; network on]"
    );
}

#[test]
fn the_bang_context_text_gets_the_line_before_the_notice() {
    let policy = workspace(false);
    let failed = exited(
        sink("bash: /etc/x: Permission denied\n", LIMIT, None),
        Some(1),
    );
    assert_eq!(
        bang_context_text("echo > /etc/x", &failed, LIMIT as u64, Some(&policy)),
        format!(
            "Ran `echo > /etc/x`\n```\nbash: /etc/x: Permission denied\n```\n\nCommand exited with code 1\n\n{LINE}"
        )
    );
    let mut whole = seq(1, 100);
    whole.push_str("Permission denied\n");
    // The last 26 bytes: `\n99\n100\nPermission denied\n`, lines 99-101.
    let truncated = exited(sink(&whole, 26, Some("b2")), Some(1));
    assert_eq!(
        bang_context_text("x", &truncated, 26, Some(&policy)),
        format!(
            "Ran `x`\n```\n99\n100\nPermission denied\n```\n\nCommand exited with code 1\n\n{LINE}\n\n[Showing lines 99-101 of 101 (26B limit). Full: artifact://b2]"
        )
    );
    // Without a sandbox: no line.
    assert_eq!(
        bang_context_text("echo > /etc/x", &failed, LIMIT as u64, None),
        "Ran `echo > /etc/x`\n```\nbash: /etc/x: Permission denied\n```\n\nCommand exited with code 1"
    );
}
