//! PTY runtime benchmarks, each against a same-run baseline:
//!
//! - throughput: `cat` of a large file of log-like lines (plain and coloured) through
//!   `PtyRun` (PTY + headless terminal + output sink) vs a raw read loop on a PTY master
//!   that `cat` writes the same file to (no emulator, no sink);
//! - keystroke-to-echo latency: one key written through `PtyRun::write_input` until the
//!   terminal shows its echo by `cat` (raw mode), median over 1,000 keys, vs the same round trip
//!   with plain blocking reads and writes on a PTY master.
//!
//! `AGENTSH_PTY_BENCH_MIB` sets the size of the throughput file (default 256).

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use agentsh_bench_support::{Row, mb_per_s, median};
use agentsh_output_sink::{OutputSink, SinkOptions};
use agentsh_process::shell::ShellSpec;
use agentsh_pty_runtime::{PtyCommand, PtyRun};
use rustix::pty::OpenptFlags;

const BENCH: &str = "pty-runtime";
const KEYS: usize = 1_000;
/// The echo program of both latency runs: `cat` on a raw terminal, after a ready mark.
const ECHO_SCRIPT: &str = "stty raw -echo; printf R; exec cat";

fn main() {
    let mib: u64 = std::env::var("AGENTSH_PTY_BENCH_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("output.txt");
    let bytes = write_log(&file, mib << 20);
    let runtime = agentsh_test_support::runtime();

    let raw = raw_pty_cat(&file);
    let session = runtime.block_on(session_cat(&file));
    let (raw_rate, session_rate) = (mb_per_s(bytes, raw), mb_per_s(bytes, session));
    let ratio = session_rate / raw_rate;
    Row::new(
        BENCH,
        format!("throughput, {mib} MiB via PTY + terminal + sink"),
    )
    .value(session_rate, "MB/s")
    .ratio(ratio, format!("raw PTY read loop ({raw_rate:.0} MB/s)"))
    .goal(
        "≥ 0.5× and ≥ 100 MB/s",
        ratio >= 0.5 && session_rate >= 100.0,
    )
    .report();

    let raw_echo = raw_echo_latency();
    let session_echo = runtime.block_on(session_echo_latency());
    Row::new(
        BENCH,
        format!("keystroke-to-echo via cat, median of {KEYS}"),
    )
    .value(session_echo.as_secs_f64() * 1e6, "µs")
    .ratio(
        session_echo.as_secs_f64() / raw_echo.as_secs_f64().max(1e-9),
        format!(
            "raw PTY round trip ({:.0} µs)",
            raw_echo.as_secs_f64() * 1e6
        ),
    )
    .report();
}

/// Writes `size` bytes of build-log-like lines: mostly plain, every fifth coloured.
fn write_log(path: &std::path::Path, size: u64) -> u64 {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    let mut written = 0u64;
    let mut i = 0u64;
    while written < size {
        let line = if i.is_multiple_of(5) {
            format!(
                "\x1b[32m   Compiling\x1b[0m crate-{i} v0.1.{} (/work/crates/crate-{i})\n",
                i % 97
            )
        } else {
            format!(
                "test module_{}::case_{i} ... ok (elapsed {} ms, checksum {:08x})\n",
                i % 31,
                i % 1000,
                i.wrapping_mul(2_654_435_761)
            )
        };
        out.write_all(line.as_bytes()).expect("write");
        written += line.len() as u64;
        i += 1;
    }
    out.flush().expect("flush");
    written
}

fn open_pty() -> (OwnedFd, OwnedFd) {
    let master =
        rustix::pty::openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)
            .expect("openpt");
    rustix::pty::grantpt(&master).expect("grantpt");
    rustix::pty::unlockpt(&master).expect("unlockpt");
    let name = rustix::pty::ptsname(&master, Vec::new()).expect("ptsname");
    let slave = rustix::fs::open(
        name.as_c_str(),
        rustix::fs::OFlags::RDWR | rustix::fs::OFlags::NOCTTY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .expect("open slave");
    (master, slave)
}

/// Starts `command` with a new PTY's slave as stdin and stdout (stderr `/dev/null`); returns
/// the child and the master, to be read and written with plain blocking calls.
fn spawn_on_pty(command: &mut Command) -> (Child, File) {
    let (master, slave) = open_pty();
    let child = command
        .stdin(slave.try_clone().expect("dup"))
        .stdout(slave)
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn on the PTY");
    (child, File::from(master))
}

/// `cat file` on a PTY, read with a plain blocking loop until EIO.
fn raw_pty_cat(file: &std::path::Path) -> Duration {
    let start = Instant::now();
    let (mut child, mut master) = spawn_on_pty(Command::new("cat").arg(file));
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        match master.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => total += n as u64,
            Err(err) if err.raw_os_error() == Some(libc::EIO) => break,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => panic!("read: {err}"),
        }
    }
    let elapsed = start.elapsed();
    child.wait().expect("cat exits");
    assert!(total > 0);
    elapsed
}

/// `text` in bash, in `/tmp`, with a timeout longer than any run.
fn bash_command(text: impl Into<String>) -> PtyCommand {
    let mut command = PtyCommand::new(text, "/tmp", Duration::from_secs(600));
    command.shell =
        ShellSpec::from_path(agentsh_test_support::which("bash").expect("bash on PATH"));
    command
}

async fn session_cat(file: &std::path::Path) -> Duration {
    let command = bash_command(format!("exec cat '{}'", file.display()));
    let start = Instant::now();
    let session = PtyRun::start(command, OutputSink::new(SinkOptions::default()));
    let terminal = session.terminal().clone();
    let result = session.wait().await;
    // Reading the screen draws what the fast-forward held back: part of the cost.
    let last = terminal
        .rows()
        .into_iter()
        .rev()
        .find(|row| !row.is_empty());
    let elapsed = start.elapsed();
    assert_eq!(result.exit_code, Some(0), "{}", result.summary.output);
    assert!(last.is_some_and(|row| row.contains(" ok ") || row.contains("Compiling")));
    elapsed
}

/// Raw round trip: write one byte to a PTY master, read its echo by `cat` in raw mode.
fn raw_echo_latency() -> Duration {
    let (mut child, mut master) = spawn_on_pty(Command::new("sh").args(["-c", ECHO_SCRIPT]));
    let mut buf = [0u8; 64];
    let mut ready = 0;
    while ready == 0 {
        ready = master.read(&mut buf).expect("ready");
    }
    let mut samples = Vec::with_capacity(KEYS);
    for _ in 0..KEYS {
        let start = Instant::now();
        master.write_all(b"k").expect("write");
        let mut got = 0;
        while got == 0 {
            got = master.read(&mut buf).expect("echo");
        }
        samples.push(start.elapsed());
    }
    let _ = child.kill();
    let _ = child.wait();
    median(&samples)
}

async fn session_echo_latency() -> Duration {
    let session = PtyRun::start(
        bash_command(ECHO_SCRIPT),
        OutputSink::new(SinkOptions::default()),
    );
    let terminal = session.terminal().clone();
    let mut updates = session.updates();
    while terminal.cursor() != (0, 1) {
        updates.changed().await.expect("running");
    }
    let mut samples = Vec::with_capacity(KEYS);
    for i in 0..KEYS {
        // Alternate CR (cursor to column 0) and a letter (column 1).
        let (key, col) = if i % 2 == 0 {
            (&b"\r"[..], 0)
        } else {
            (&b"k"[..], 1)
        };
        let start = Instant::now();
        session.write_input(key);
        while terminal.cursor().1 != col {
            updates.changed().await.expect("running");
        }
        samples.push(start.elapsed());
    }
    session.kill();
    session.wait().await;
    median(&samples)
}
