//! Benchmarks of the `agentsh` binary, each against a baseline measured in the same run:
//!
//! - `rpc bash round trip`: median time from writing `{"type":"bash","command":"true"}` to
//!   reading its response, over 500 calls to one `agentsh rpc`, vs spawning `bash -c true`
//!   (goal ≤ 0.25×: a persistent shell must beat a fresh one by far).
//! - `exec true`: median wall time of `agentsh exec -- true` (rc snapshot cached on disk after a
//!   warm-up run) vs `bash -c true` (goal ≤ 3×).
//! - `exec 1 GiB peak RSS`: the peak resident memory (`VmHWM`, polled from
//!   `/proc/<pid>/status`) of `agentsh exec` while the command prints 1 GiB (goal ≤ 20 MiB).
//!
//! Subject and baseline samples alternate (one `exec` then one `bash -c true`; a block of 50 RPC
//! calls then 50 spawns, so the RPC figure is the steady state of a warm server), so a machine
//! that gets busier or quieter during the run moves both alike and the ratio stays fair.
//!
//! The binary measured is the one cargo builds for this bench (`CARGO_BIN_EXE_agentsh`, bench
//! profile = release settings), so `cargo bench -p agentsh` needs no separate build step.
//! Every run uses a private HOME/XDG tree and artifact store in a temp dir.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use agentsh_bench_support::{Row, median};

const AGENTSH: &str = env!("CARGO_BIN_EXE_agentsh");
const BENCH: &str = "agentsh";
const RPC_CALLS: usize = 500;
const RPC_BLOCK: usize = 50;
const EXEC_RUNS: usize = 100;
/// Calls of each binary in the baseline comparison.
const BASELINE_CALLS: usize = 2000;
/// The agentsh binary the baseline row compares this build with.
const BASELINE_ENV: &str = "AGENTSH_BENCH_BASELINE";
const ONE_GIB: u64 = 1 << 30;

struct Env {
    _root: tempfile::TempDir,
    root: PathBuf,
}

impl Env {
    fn new() -> Self {
        let root = tempfile::Builder::new()
            .prefix("agentsh-bench-")
            .tempdir()
            .expect("temp dir");
        let path = root.path().to_path_buf();
        for dir in ["home", "config", "state", "cache"] {
            std::fs::create_dir_all(path.join(dir)).expect("mkdir");
        }
        std::fs::write(
            path.join("agentsh.toml"),
            format!(
                "[artifacts]\ndir = \"{}\"\n",
                path.join("artifacts").display()
            ),
        )
        .expect("config");
        Self {
            _root: root,
            root: path,
        }
    }

    fn agentsh(&self, args: &[&str]) -> Command {
        self.binary(Path::new(AGENTSH), args)
    }

    /// `binary args` in this environment (this build or another one).
    fn binary(&self, binary: &Path, args: &[&str]) -> Command {
        let mut command = Command::new(binary);
        command
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.root.join("home"))
            .env("XDG_CONFIG_HOME", self.root.join("config"))
            .env("XDG_STATE_HOME", self.root.join("state"))
            .env("XDG_CACHE_HOME", self.root.join("cache"))
            .env("AGENTSH_CONFIG", self.root.join("agentsh.toml"))
            .current_dir(&self.root)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        command
    }
}

/// One `bash -c true`, timed.
fn spawn_bash_true() -> Duration {
    let start = Instant::now();
    let status = Command::new("bash")
        .args(["-c", "true"])
        .stdin(Stdio::null())
        .status()
        .expect("bash");
    assert!(status.success());
    start.elapsed()
}

/// Medians of the subject and of its baseline, sampled alternately.
struct Paired {
    subject: Duration,
    baseline: Duration,
}

impl Paired {
    fn ratio(&self) -> f64 {
        self.subject.as_secs_f64() / self.baseline.as_secs_f64()
    }
}

/// Times `subject` `n` times in blocks of `block` samples, each block followed by as many
/// samples of `baseline`.
fn paired(
    n: usize,
    block: usize,
    mut subject: impl FnMut() -> Duration,
    mut baseline: impl FnMut() -> Duration,
) -> Paired {
    let mut subjects = Vec::with_capacity(n);
    let mut baselines = Vec::with_capacity(n);
    while subjects.len() < n {
        let count = block.min(n - subjects.len());
        subjects.extend((0..count).map(|_| subject()));
        baselines.extend((0..count).map(|_| baseline()));
    }
    Paired {
        subject: median(&subjects),
        baseline: median(&baselines),
    }
}

/// An `agentsh rpc` server answering `bash` requests one at a time.
struct RpcServer {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    line: String,
    calls: usize,
}

impl RpcServer {
    /// Starts `binary rpc` and warms it up (the first call starts the shell).
    fn start(env: &Env, binary: &Path) -> Self {
        let mut child = env
            .binary(binary, &["rpc"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("agentsh rpc");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut server = Self {
            child,
            stdin,
            stdout,
            line: String::new(),
            calls: 0,
        };
        for _ in 0..20 {
            server.call();
        }
        server
    }

    /// One `true` round trip, timed.
    fn call(&mut self) -> Duration {
        self.calls += 1;
        let start = Instant::now();
        writeln!(
            self.stdin,
            r#"{{"id":"{}","type":"bash","command":"true"}}"#,
            self.calls
        )
        .expect("write");
        self.stdin.flush().expect("flush");
        loop {
            self.line.clear();
            assert!(
                self.stdout.read_line(&mut self.line).expect("read") > 0,
                "agentsh rpc ended"
            );
            if self.line.contains(r#""type":"response""#) {
                assert!(self.line.contains(r#""success":true"#), "{}", self.line);
                return start.elapsed();
            }
        }
    }

    fn stop(self) {
        let Self {
            mut child, stdin, ..
        } = self;
        drop(stdin);
        assert!(child.wait().expect("wait").success());
    }
}

fn rpc_round_trip(env: &Env) -> Paired {
    let mut server = RpcServer::start(env, Path::new(AGENTSH));
    let timings = paired(RPC_CALLS, RPC_BLOCK, || server.call(), spawn_bash_true);
    server.stop();
    timings
}

/// The `true` round trip of this build against another agentsh binary (`AGENTSH_BENCH_BASELINE`,
/// e.g. a build from before a change), sampled alternately in blocks: the per-call cost of
/// what a change added.
fn rpc_against_baseline(env: &Env, baseline: &Path) -> Paired {
    let mut subject = RpcServer::start(env, Path::new(AGENTSH));
    let mut base = RpcServer::start(env, baseline);
    let timings = paired(BASELINE_CALLS, RPC_BLOCK, || subject.call(), || base.call());
    subject.stop();
    base.stop();
    timings
}

fn exec_true(env: &Env) -> Paired {
    let run = || {
        let start = Instant::now();
        let status = env
            .agentsh(&["exec", "--", "true"])
            .status()
            .expect("agentsh exec");
        assert!(status.success());
        start.elapsed()
    };
    // Warm-up: takes and caches the rc snapshot.
    run();
    paired(EXEC_RUNS, 1, run, spawn_bash_true)
}

/// `VmHWM` of `pid` in KiB, while it is alive.
fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let status =
        std::fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
}

fn exec_peak_rss(env: &Env) -> (f64, Duration) {
    let command = format!("head -c {ONE_GIB} /dev/zero | tr '\\0' a");
    let start = Instant::now();
    let mut child = env
        .agentsh(&["exec", "--", &command])
        .stdout(Stdio::piped())
        .spawn()
        .expect("agentsh exec");
    let mut stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut buf).expect("read");
        buf.len()
    });
    let mut peak_kib = 0;
    while child.try_wait().expect("wait").is_none() {
        if let Some(kib) = vm_hwm_kib(child.id()) {
            peak_kib = peak_kib.max(kib);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let elapsed = start.elapsed();
    let printed = reader.join().expect("reader");
    assert!(
        printed > 0 && printed < 1 << 20,
        "bounded output expected, got {printed} bytes"
    );
    (peak_kib as f64 / 1024.0, elapsed)
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not supported (three figures only).
    let env = Env::new();

    let rpc = rpc_round_trip(&env);
    let ratio = rpc.ratio();
    Row::new(
        BENCH,
        format!("rpc bash `true` round trip (median of {RPC_CALLS})"),
    )
    .value(rpc.subject.as_secs_f64() * 1e3, "ms")
    .ratio(
        ratio,
        format!(
            "spawning bash -c true, {:.2} ms",
            rpc.baseline.as_secs_f64() * 1e3
        ),
    )
    .goal("≤ 0.25×", ratio <= 0.25)
    .report();

    match std::env::var_os(BASELINE_ENV) {
        Some(baseline) => {
            let pair = rpc_against_baseline(&env, Path::new(&baseline));
            let ratio = pair.ratio();
            Row::new(
                BENCH,
                format!("rpc `true` round trip vs the baseline build (median of {BASELINE_CALLS})"),
            )
            .value(pair.subject.as_secs_f64() * 1e3, "ms")
            .ratio(
                ratio,
                format!(
                    "{}, {:.3} ms",
                    Path::new(&baseline).display(),
                    pair.baseline.as_secs_f64() * 1e3
                ),
            )
            .goal("≤ 1.10×", ratio <= 1.10)
            .report();
        }
        None => eprintln!(
            "{BENCH}: set {BASELINE_ENV} to another agentsh binary to compare its round trip"
        ),
    }

    let exec = exec_true(&env);
    let ratio = exec.ratio();
    Row::new(
        BENCH,
        format!("agentsh exec -- true (median of {EXEC_RUNS})"),
    )
    .value(exec.subject.as_secs_f64() * 1e3, "ms")
    .ratio(
        ratio,
        format!(
            "spawning bash -c true, {:.2} ms",
            exec.baseline.as_secs_f64() * 1e3
        ),
    )
    .goal("≤ 3×", ratio <= 3.0)
    .report();

    let (peak_mib, elapsed) = exec_peak_rss(&env);
    Row::new(BENCH, "agentsh exec printing 1 GiB: peak RSS (VmHWM)")
        .value(peak_mib, "MiB")
        .goal("≤ 20 MiB", peak_mib <= 20.0)
        .report();
    Row::new(BENCH, "agentsh exec printing 1 GiB: wall time")
        .value(elapsed.as_secs_f64(), "s")
        .report();
}
