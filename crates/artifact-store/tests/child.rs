//! Re-running this test binary as a child process.
//!
//! A parent test runs `current_exe() --exact child::entry --nocapture` with [`ROLE`] set; the
//! child does one job and prints `KEY value` lines the parent parses. Child processes give the
//! tests real cross-process behaviour (two allocators, a lock held by another process) and a
//! place to change process-wide state (umask, file size limit) without touching other tests,
//! whether they run under nextest (a process per test) or `cargo test` (threads).

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use agentsh_artifact_store::{ArtifactStore, Spill};

use crate::util::{artifact, artifact_path, open};

/// Which job the child does; unset in ordinary test runs.
pub const ROLE: &str = "AGENTSH_ARTIFACT_TEST_ROLE";
/// The store directory the child uses.
const STORE: &str = "AGENTSH_ARTIFACT_TEST_STORE";
/// A directory for start/stop signal files.
const SIGNALS: &str = "AGENTSH_ARTIFACT_TEST_SIGNALS";
/// Role-specific argument.
const ARG: &str = "AGENTSH_ARTIFACT_TEST_ARG";

const WAIT_LIMIT: Duration = Duration::from_secs(60);

/// The child's entry point. In an ordinary run (no [`ROLE`]) it has nothing to do.
#[test]
fn entry() {
    let Some(role) = std::env::var_os(ROLE) else {
        return;
    };
    let store_dir = PathBuf::from(std::env::var_os(STORE).expect("store dir"));
    if role == "default-dir" {
        match ArtifactStore::default_dir() {
            Ok(dir) => println!("DEFAULT-DIR {}", dir.display()),
            Err(err) => println!("DEFAULT-DIR error: {err}"),
        }
        return;
    }
    let signals = std::env::var_os(SIGNALS).map(PathBuf::from);
    let arg = std::env::var(ARG).unwrap_or_default();
    match role.to_str().expect("utf-8 role") {
        "allocate" => allocate(&store_dir, &signals.expect("signals dir"), &arg),
        "hold" => hold(&store_dir, &signals.expect("signals dir")),
        "umask" => umask(&store_dir, &arg),
        "write-failure" => crate::write_failure::in_child(&store_dir, &arg),
        other => panic!("unknown child role {other}"),
    }
}

/// A temporary directory with the path of a store in it (`artifacts`, not created yet) and a
/// `signals` directory for [`wait_for_file`].
pub fn store_and_signals() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = tmp.path().join("artifacts");
    let signals = tmp.path().join("signals");
    fs::create_dir(&signals).expect("mkdir");
    (tmp, store, signals)
}

/// Builds the command that runs this binary as a child doing `role`.
pub fn command(role: &str, store: &Path, signals: Option<&Path>, arg: &str) -> Command {
    let exe = std::env::current_exe().expect("current test binary");
    let mut command = Command::new(exe);
    command
        .args(["--exact", "child::entry", "--nocapture", "--test-threads=1"])
        .env(ROLE, role)
        .env(STORE, store)
        .env(ARG, arg)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(signals) = signals {
        command.env(SIGNALS, signals);
    }
    command
}

/// Runs a child to completion, asserts it succeeded, and returns the values of its `key` lines.
pub fn run(command: &mut Command, key: &str) -> Vec<String> {
    let output = command.output().expect("spawn child");
    values(&output, key)
}

/// The values of the `key` lines of a finished child, which must have succeeded.
pub fn values(output: &Output, key: &str) -> Vec<String> {
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "child failed: {}\nstdout:\n{stdout}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let prefix = format!("{key} ");
    stdout
        .lines()
        .filter_map(|line| value_of(line, &prefix))
        .map(str::to_owned)
        .collect()
}

/// The value of a `KEY value` line. libtest prints `test child::entry ... ` without a newline
/// before the test runs, so the first line of the child starts after that.
fn value_of<'a>(line: &'a str, prefix: &str) -> Option<&'a str> {
    line.find(prefix).map(|at| &line[at + prefix.len()..])
}

/// Reads the child's stdout until its first `key` line and returns the value.
pub fn wait_for_line(child: &mut Child, key: &str) -> String {
    let stdout = child.stdout.as_mut().expect("piped stdout");
    let prefix = format!("{key} ");
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("child stdout");
        if let Some(value) = value_of(&line, &prefix) {
            return value.to_owned();
        }
    }
    panic!("child ended without printing {key}");
}

/// Waits (bounded) until `path` exists.
pub fn wait_for_file(path: &Path) {
    let start = Instant::now();
    while !path.exists() {
        assert!(
            start.elapsed() < WAIT_LIMIT,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Allocates `count` artifacts (each holding `<label>\n`) once the `go` signal exists.
fn allocate(store_dir: &Path, signals: &Path, arg: &str) {
    let (label, count) = arg.split_once(':').expect("label:count");
    let count: usize = count.parse().expect("count");
    let store = open(store_dir);
    fs::write(signals.join(format!("ready-{label}")), b"").expect("ready signal");
    wait_for_file(&signals.join("go"));
    let content = format!("{label}\n");
    let ids: Vec<u64> = (0..count)
        .map(|_| artifact(&store, content.as_bytes()))
        .collect();
    for id in ids {
        println!("ARTIFACT-ID {id}");
    }
}

/// Holds one written reservation open until the `release` signal exists.
fn hold(store_dir: &Path, signals: &Path) {
    let store = open(store_dir);
    let mut spill = store.allocate().expect("allocate");
    spill
        .write_all(b"held by another process\n")
        .expect("write");
    spill.finish().expect("finish");
    println!("ARTIFACT-ID {}", spill.id());
    wait_for_file(&signals.join("release"));
    drop(spill);
}

/// Sets the umask to `arg` (octal), then opens the store and writes one artifact.
fn umask(store_dir: &Path, arg: &str) {
    let mask = libc::mode_t::from_str_radix(arg, 8).expect("octal umask");
    // SAFETY: umask only changes this (child) process's file creation mask.
    unsafe { libc::umask(mask) };
    let store = open(store_dir);
    let id = artifact(&store, b"private\n");
    store.retain();
    println!("ARTIFACT-PATH {}", artifact_path(&store, id).display());
}
