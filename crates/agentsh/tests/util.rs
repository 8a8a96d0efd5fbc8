//! Test support: a private environment per test, an RPC client over real pipes, process checks.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;

/// The binary under test.
pub const AGENTSH: &str = env!("CARGO_BIN_EXE_agentsh");

/// A generous bound for things that should take milliseconds, on a loaded 2-core machine.
pub const LIVENESS: Duration = Duration::from_secs(20);

/// A private HOME, XDG directories, artifact store and config file for one test.
pub struct TestEnv {
    root: TempDir,
}

impl TestEnv {
    /// A fresh environment with a config that only sets the artifact store.
    pub fn new() -> Self {
        Self::with_config("")
    }

    /// A fresh environment whose config file holds `[artifacts] dir = <root>/artifacts` followed
    /// by `extra`.
    pub fn with_config(extra: &str) -> Self {
        let root = tempfile::Builder::new()
            .prefix("agentsh-test-")
            .tempdir()
            .expect("temp dir");
        let env = Self { root };
        for dir in ["home", "config", "state", "cache", "work"] {
            std::fs::create_dir_all(env.root().join(dir)).expect("create dir");
        }
        let config = format!(
            "[artifacts]\ndir = \"{}\"\n{extra}",
            env.artifacts_dir().display()
        );
        std::fs::write(env.config_path(), config).expect("write config");
        env
    }

    /// Adds `text` at the end of the config file (e.g. a section that names paths in the
    /// environment).
    pub fn append_config(&self, text: &str) {
        use std::io::Write as _;
        std::fs::OpenOptions::new()
            .append(true)
            .open(self.config_path())
            .and_then(|mut file| file.write_all(text.as_bytes()))
            .expect("append to the config");
    }

    /// The root of the environment (every path in it starts here).
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// The artifact store of the config.
    pub fn artifacts_dir(&self) -> PathBuf {
        self.root().join("artifacts")
    }

    /// The config file (passed with `--config`).
    pub fn config_path(&self) -> PathBuf {
        self.root().join("agentsh.toml")
    }

    /// The working directory of the process.
    pub fn work_dir(&self) -> PathBuf {
        self.root().join("work")
    }

    /// `agentsh <args…>` with a clean environment pointing into this one, run in `work/`.
    pub fn command(&self, args: &[&str]) -> Command {
        self.program(AGENTSH, args)
    }

    /// `<program> <args…>` with the environment of [`TestEnv::command`] (e.g. an MCP client that
    /// starts agentsh itself).
    pub fn program(&self, program: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Command {
        let mut command = Command::new(program);
        command
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.root().join("home"))
            .env("XDG_CONFIG_HOME", self.root().join("config"))
            .env("XDG_STATE_HOME", self.root().join("state"))
            .env("XDG_CACHE_HOME", self.root().join("cache"))
            .env("LC_ALL", "C")
            .current_dir(self.work_dir());
        command
    }

    /// `agentsh exec --config <config> <args…>`, waited for with output captured.
    pub fn exec(&self, args: &[&str]) -> Finished {
        let config = self.config_path();
        let mut all = vec!["exec", "--config", config.to_str().expect("utf-8 path")];
        all.extend_from_slice(args);
        finish(self.command(&all).stdin(Stdio::null()))
    }

    /// `agentsh rpc --config <config>`.
    pub fn rpc(&self) -> Rpc {
        let config = self.config_path();
        Rpc::spawn(self.command(&["rpc", "--config", config.to_str().expect("utf-8 path")]))
    }

    /// Replaces this environment's root path with `<TMP>` in every string of `value`.
    pub fn normalise_paths(&self, value: &mut Value) {
        let root = self.root().to_str().expect("utf-8 path").to_owned();
        map_strings(value, &|text| text.replace(&root, "<TMP>"));
    }
}

/// Applies `f` to every string (not keys) in `value`.
pub fn map_strings(value: &mut Value, f: &dyn Fn(&str) -> String) {
    match value {
        Value::String(text) => *text = f(text),
        Value::Array(items) => items.iter_mut().for_each(|item| map_strings(item, f)),
        Value::Object(map) => map.values_mut().for_each(|item| map_strings(item, f)),
        _ => {}
    }
}

/// A finished process: status and captured output.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Finished {
    /// The exit code (panics when killed by a signal).
    pub fn code(&self) -> i32 {
        self.status
            .code()
            .unwrap_or_else(|| panic!("killed by a signal: {self:?}"))
    }

    /// stdout as one JSON value.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|err| panic!("stdout is not one JSON value ({err}): {self:?}"))
    }
}

/// Spawns `command` with stdout and stderr captured and waits for it (at most [`LIVENESS`]).
pub fn finish(mut command: impl std::borrow::BorrowMut<Command>) -> Finished {
    let child = command
        .borrow_mut()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn agentsh");
    wait_output(child, LIVENESS)
}

/// Waits for `child` (stdout/stderr piped) at most `limit`, killing it on timeout.
pub fn wait_output(mut child: Child, limit: Duration) -> Finished {
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    let out = std::thread::spawn(move || std::io::read_to_string(stdout).expect("read stdout"));
    let err = std::thread::spawn(move || std::io::read_to_string(stderr).expect("read stderr"));
    let status = wait_timeout(&mut child, limit);
    Finished {
        status,
        stdout: out.join().expect("stdout thread"),
        stderr: err.join().expect("stderr thread"),
    }
}

/// Waits for `child` at most `limit`; kills it and panics on timeout.
pub fn wait_timeout(child: &mut Child, limit: Duration) -> ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("agentsh did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A string found in no other process's command line: put it in a command's argv to find
/// the command's processes in `/proc`.
pub fn unique_marker() -> String {
    agentsh_test_support::unique_marker("agentsh-marker")
}

/// A command that sleeps 100 s in a child of an `sh` whose argv holds `marker`.
pub fn marked_sleep(marker: &str) -> String {
    agentsh_test_support::marked_sleep(marker)
}

/// A command whose one process sleeps 300 s with `marker` as its `argv[0]` (bash `exec -a`):
/// the sleeping process itself is found by the marker, wherever it moved (`setsid`, `nohup`).
pub fn marked_sleeper(marker: &str) -> String {
    format!("bash -c 'exec -a {marker} sleep 300'")
}

/// Pids of live (not zombie) processes whose command line contains `marker`.
pub fn processes_with(marker: &str) -> Vec<u32> {
    agentsh_test_support::alive_containing(marker)
}

/// Waits until a process with `marker` runs (the command really started).
pub fn wait_for_process(marker: &str) {
    agentsh_test_support::wait_for_process(marker, LIVENESS);
}

/// Asserts that no process with `marker` is left (allowing a moment for the last to be reaped).
pub fn assert_no_survivor(marker: &str) {
    agentsh_test_support::assert_no_survivor(marker, Duration::from_secs(3));
}

/// An `agentsh rpc` process with its stdin and a thread reading its stdout line by line.
pub struct Rpc {
    child: Child,
    stdin: Option<ChildStdin>,
    /// The lines the server wrote, as written (read as JSON by the reader: a line that is not
    /// JSON is a failure in itself).
    lines: mpsc::Receiver<String>,
}

impl Rpc {
    /// Spawns `command` with piped stdin/stdout (stderr inherited: it shows in test output).
    pub fn spawn(command: Command) -> Self {
        Self::spawn_with_stdin(command, Stdio::piped())
    }

    /// Spawns `command` reading `stdin` (when it is not [`Stdio::piped`], [`Rpc::send`] is not
    /// available: the caller writes to its own end).
    pub fn spawn_with_stdin(mut command: Command, stdin: Stdio) -> Self {
        let mut child = command
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn agentsh rpc");
        let stdout = child.stdout.take().expect("piped stdout");
        let stdin = child.stdin.take();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stdin,
            lines,
        }
    }

    /// The server's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Writes `line` and a newline.
    pub fn send(&mut self, line: &str) {
        self.send_bytes(line.as_bytes());
    }

    /// Writes raw bytes and a newline.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write to agentsh");
        stdin.write_all(b"\n").expect("write to agentsh");
        stdin.flush().expect("flush");
    }

    /// Writes the JSON of `value` as one line.
    pub fn send_json(&mut self, value: &Value) {
        self.send(&value.to_string());
    }

    /// Access to stdin, e.g. to stream a huge line from another thread.
    pub fn take_stdin(&mut self) -> ChildStdin {
        self.stdin.take().expect("stdin open")
    }

    /// Gives stdin back.
    pub fn put_stdin(&mut self, stdin: ChildStdin) {
        self.stdin = Some(stdin);
    }

    /// The next line, within `limit`.
    pub fn next(&self, limit: Duration) -> Value {
        self.next_or(limit, "")
    }

    /// The next line, within `limit`; `context` says what was awaited when it does not come.
    pub fn next_or(&self, limit: Duration, context: &str) -> Value {
        let text = self.next_text_or(limit, context);
        serde_json::from_str(&text).unwrap_or_else(|_| {
            panic!("{context}: agentsh wrote a line that is not JSON: {text:?}")
        })
    }

    /// The next line as written (without its `\n`), within `limit`: for what a JSON value
    /// does not keep (how a number is written).
    pub fn next_text(&self, limit: Duration) -> String {
        self.next_text_or(limit, "")
    }

    fn next_text_or(&self, limit: Duration, context: &str) -> String {
        self.lines
            .recv_timeout(limit)
            .unwrap_or_else(|err| panic!("{context}: no line from agentsh within {limit:?}: {err}"))
    }

    /// Lines until (and including) the first for which `done` holds, within `limit` overall.
    pub fn until(&self, limit: Duration, done: impl Fn(&Value) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + limit;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(text) => serde_json::from_str(&text)
                    .unwrap_or_else(|_| panic!("agentsh wrote a line that is not JSON: {text:?}")),
                Err(err) => panic!("waiting within {limit:?}: {err}; seen so far: {seen:#?}"),
            };
            let finished = done(&line);
            seen.push(line);
            if finished {
                return seen;
            }
        }
    }

    /// Lines until the response with `id`; returns that response (other lines are dropped).
    pub fn response(&self, id: &str) -> Value {
        self.response_within(id, LIVENESS)
    }

    /// Lines until the response with `id`, within `limit`; returns that response.
    pub fn response_within(&self, id: &str, limit: Duration) -> Value {
        let lines = self.until(limit, |line| is_response(line, id));
        lines.last().cloned().expect("at least the response")
    }

    /// The exit status, if the server has exited (it is not waited for).
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().expect("try_wait")
    }

    /// SIGKILLs the server and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Closes stdin and waits for the exit status.
    pub fn close(mut self, limit: Duration) -> (ExitStatus, Vec<Value>) {
        drop(self.stdin.take());
        self.wait(limit)
    }

    /// Waits for the exit status (stdin left as it is) and the lines not read yet.
    pub fn wait(mut self, limit: Duration) -> (ExitStatus, Vec<Value>) {
        let status = wait_timeout(&mut self.child, limit);
        let rest = self
            .lines
            .try_iter()
            .filter_map(|text| serde_json::from_str(&text).ok())
            .collect();
        (status, rest)
    }
}

impl Drop for Rpc {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Whether `program` is on PATH.
pub fn have(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Whether `line` is the response to request `id`.
pub fn is_response(line: &Value, id: &str) -> bool {
    line["type"] == "response" && line["id"] == id
}

/// Compares two JSON values field by field; the panic names the first differing path.
pub fn assert_json_eq(expected: &Value, actual: &Value, context: &str) {
    if let Some(diff) = first_difference(expected, actual, "$") {
        panic!(
            "{context}: {diff}\nexpected: {}\nactual:   {}",
            serde_json::to_string_pretty(expected).unwrap_or_default(),
            serde_json::to_string_pretty(actual).unwrap_or_default()
        );
    }
}

fn first_difference(expected: &Value, actual: &Value, path: &str) -> Option<String> {
    match (expected, actual) {
        (Value::Object(want), Value::Object(got)) => {
            for key in want.keys().chain(got.keys()) {
                let here = format!("{path}.{key}");
                match (want.get(key), got.get(key)) {
                    (Some(a), Some(b)) => {
                        if let Some(diff) = first_difference(a, b, &here) {
                            return Some(diff);
                        }
                    }
                    (Some(a), None) => return Some(format!("{here} missing (expected {a})")),
                    (None, Some(b)) => return Some(format!("{here} unexpected (got {b})")),
                    (None, None) => {}
                }
            }
            None
        }
        (Value::Array(want), Value::Array(got)) => {
            for (index, (a, b)) in want.iter().zip(got).enumerate() {
                if let Some(diff) = first_difference(a, b, &format!("{path}[{index}]")) {
                    return Some(diff);
                }
            }
            (want.len() != got.len())
                .then(|| format!("{path}: {} items expected, got {}", want.len(), got.len()))
        }
        // 300 and 300.0 are the same number to a JSON reader, but not to a golden file.
        _ if expected == actual => None,
        _ => Some(format!("{path}: expected {expected}, got {actual}")),
    }
}

/// Every file under `dir`, read (unreadable ones skipped): (path, bytes).
pub fn files_under(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_under(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            found.push((path, bytes));
        }
    }
    found
}

/// No file under `dir` holds `secret`.
#[track_caller]
pub fn assert_in_no_file(dir: &std::path::Path, secret: &str) {
    let files = files_under(dir);
    assert!(
        !files.is_empty(),
        "files to look at under {}",
        dir.display()
    );
    for (path, bytes) in files {
        assert!(
            !bytes
                .windows(secret.len())
                .any(|window| window == secret.as_bytes()),
            "{} holds the secret",
            path.display()
        );
    }
}
