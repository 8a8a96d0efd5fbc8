//! `--listen PATH`: a real client process (python3, the standard library's Unix
//! socket) speaks the RPC protocol to the socket; its calls appear in the pane while they
//! run, their results reach the client, and Esc in the pane aborts them.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;

use serde_json::{Value, json};

use super::{STATUS_MARK, Tui, VIRTUAL_TERMINAL_ON, pane_builder};
use crate::util::{LIVENESS, TestEnv, assert_no_survivor, marked_sleep, unique_marker};

/// A client in python3: sends each line it reads on stdin to the socket, prints each line the
/// socket sends (flushing), exits when the socket closes.
const CLIENT: &str = r#"
import socket, sys, threading
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
def pump():
    for line in sys.stdin:
        s.sendall(line.encode())
threading.Thread(target=pump, daemon=True).start()
f = s.makefile("r")
for line in f:
    sys.stdout.write(line)
    sys.stdout.flush()
"#;

/// The python client, its stdin, and the lines it printed (read on a thread).
pub(crate) struct Client {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<Value>,
}

impl Client {
    pub(crate) fn connect(socket: &Path) -> Self {
        let mut child = Command::new("python3")
            .arg("-c")
            .arg(CLIENT)
            .arg(socket)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let value = serde_json::from_str(&line).expect("the socket sends JSON lines");
                if tx.send(value).is_err() {
                    return;
                }
            }
        });
        Self {
            child,
            stdin,
            lines,
        }
    }

    pub(crate) fn send(&mut self, request: &Value) {
        writeln!(self.stdin, "{request}").expect("write to the client");
        self.stdin.flush().expect("flush");
    }

    /// Every line up to and including the response with `id`.
    pub(crate) fn until_response(&self, id: &str) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let line = self
                .lines
                .recv_timeout(LIVENESS)
                .unwrap_or_else(|_| panic!("no response {id}; got {seen:#?}"));
            let done = line["type"] == "response" && line["id"] == id;
            seen.push(line);
            if done {
                return seen;
            }
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// agentsh with `--listen <env root>/agent.sock` in a pane; waits for its first screen.
pub(super) fn listening(test: &str, config: &str) -> Option<(Tui, PathBuf)> {
    listening_with(test, config, &[])
}

/// [`listening`] with more environment `vars`.
pub(crate) fn listening_with(
    test: &str,
    config: &str,
    vars: &[(&str, &str)],
) -> Option<(Tui, PathBuf)> {
    if agentsh_test_support::tmux::skip_without_tmux(test) {
        return None;
    }
    let env = TestEnv::with_config(config);
    let socket = env.root().join("agent.sock");
    let pane = pane_builder(&env, listen_argv(&socket))
        .envs(vars.iter().copied())
        .start()
        .expect("tmux starts");
    let tui = Tui { pane, env };
    tui.wait_text(STATUS_MARK);
    Some((tui, socket))
}

/// `agentsh --listen SOCKET`.
fn listen_argv(socket: &Path) -> Vec<OsString> {
    vec![
        crate::util::AGENTSH.into(),
        "--listen".into(),
        socket.as_os_str().to_owned(),
    ]
}

pub(crate) fn tool_call(id: &str, call: &str, command: &str) -> Value {
    json!({"id": id, "type": "tool_call", "toolCallId": call, "name": "bash",
           "arguments": {"command": command}})
}

#[test]
fn interactive_listen_shows_a_clients_calls_live_and_esc_aborts_one() {
    let Some((tui, socket)) = listening("interactive_listen", "") else {
        return;
    };
    let mode = std::fs::metadata(&socket)
        .expect("the socket")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "the socket is the user's alone");
    tui.wait_text("listening on");
    let mut client = Client::connect(&socket);

    // A call that ends: drawn in the pane, marked with its connection; its result to the client.
    client.send(&tool_call("1", "c1", "echo from-the-client"));
    let answered = client.until_response("1");
    let response = answered.last().expect("the response");
    assert_eq!(response["success"], true, "{response}");
    assert_eq!(response["data"]["content"][0]["text"], "from-the-client");
    tui.wait_rows(&["[1] $ echo from-the-client", "from-the-client"]);

    // A call that runs: visible while it runs, then Esc in the pane aborts it.
    let marker = unique_marker();
    let command = format!("echo started; {}; echo no", marked_sleep(&marker));
    client.send(&tool_call("2", "c2", &command));
    tui.wait("the running call in the pane", LIVENESS, |screen| {
        screen
            .iter()
            .any(|row| row.starts_with("[1] $ echo started"))
            && screen.iter().any(|row| row.trim_end() == "started")
            && screen
                .iter()
                .any(|row| row.contains("Running…") && row.trim_end().ends_with("(esc to cancel)"))
    });
    crate::util::wait_for_process(&marker);
    tui.pane.send_keys(&["Escape"]);
    let lines = client.until_response("2");
    let end = lines
        .iter()
        .find(|line| line["type"] == "tool_execution_end")
        .unwrap_or_else(|| panic!("no end event: {lines:#?}"));
    assert_eq!(end["isError"], true);
    let response = lines.last().expect("the response");
    assert_eq!(
        response["success"], true,
        "an abort is a result: {response}"
    );
    let text = response["data"]["content"][0]["text"]
        .as_str()
        .expect("text");
    assert!(text.ends_with("Command aborted"), "{text}");
    assert!(!text.contains("\nno"), "{text}");
    tui.wait_text("Command aborted");
    assert_no_survivor(&marker);
}

#[test]
fn interactive_listen_runs_a_clients_call_on_the_pty_at_the_panes_width() {
    let Some((tui, socket)) = listening("interactive_listen_pty", VIRTUAL_TERMINAL_ON) else {
        return;
    };
    let mut client = Client::connect(&socket);
    client.send(&tool_call("1", "c1", "tput cols"));
    let lines = client.until_response("1");
    let response = lines.last().expect("the response");
    let text = response["data"]["content"][0]["text"]
        .as_str()
        .expect("text");
    assert_eq!(text.trim(), "100", "{response}");
    tui.wait_text("[1] $ tput cols");
}

#[test]
fn interactive_listen_replaces_a_stale_socket_and_refuses_a_live_one() {
    let Some((first, socket)) = listening("interactive_listen_live", "") else {
        return;
    };
    // A second agentsh on the same path, on a terminal of its own: refused, naming the path
    // (its stderr kept in a file: tmux scrolls a dead pane's first row away).
    let errors = first.env.root().join("second.err");
    let argv: Vec<OsString> = vec![
        "sh".into(),
        "-c".into(),
        "exec \"$0\" --listen \"$1\" 2>\"$2\"".into(),
        crate::util::AGENTSH.into(),
        socket.as_os_str().to_owned(),
        errors.as_os_str().to_owned(),
    ];
    let second = pane_builder(&first.env, argv).start().expect("tmux starts");
    let status = second
        .wait_exit(LIVENESS)
        .expect("the second agentsh exits");
    assert_eq!(status.code(), Some(2), "a usage error");
    let message = std::fs::read_to_string(&errors).expect("its stderr");
    assert_eq!(
        message.trim_end(),
        format!(
            "agentsh: --listen: cannot listen on {}: another agentsh is listening there",
            socket.display()
        )
    );
    // The first still serves.
    let mut client = Client::connect(&socket);
    client.send(&tool_call("1", "c1", "echo still-here"));
    client.until_response("1");
    drop(first);

    // A socket file nobody listens on (as a killed agentsh leaves it) is replaced.
    let env = TestEnv::new();
    let stale = env.root().join("stale.sock");
    drop(std::os::unix::net::UnixListener::bind(&stale).expect("bind"));
    assert!(
        std::fs::metadata(&stale)
            .expect("left behind")
            .file_type()
            .is_socket()
    );
    let pane = pane_builder(&env, listen_argv(&stale))
        .start()
        .expect("tmux starts");
    let tui = Tui { pane, env };
    tui.wait_text("listening on");
    let mut client = Client::connect(&stale);
    client.send(&tool_call("1", "c1", "echo replaced"));
    let lines = client.until_response("1");
    assert_eq!(
        lines.last().expect("response")["data"]["content"][0]["text"],
        "replaced"
    );
}
