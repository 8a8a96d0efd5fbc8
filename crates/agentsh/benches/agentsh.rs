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
//! The binary measured is the one cargo builds for this bench (`CARGO_BIN_EXE_agentsh`, bench
//! profile = release settings), so `cargo bench -p agentsh` needs no separate build step.
//! Every run uses a private HOME/XDG tree and artifact store in a temp dir.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use agentsh_bench_support::{Row, median, time_each};

const AGENTSH: &str = env!("CARGO_BIN_EXE_agentsh");
const BENCH: &str = "agentsh";
const RPC_CALLS: usize = 500;
const SPAWN_RUNS: usize = 200;
const EXEC_RUNS: usize = 40;
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
        let mut command = Command::new(AGENTSH);
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

fn spawn_bash_true() -> Duration {
    let samples = time_each(SPAWN_RUNS, || {
        let status = Command::new("bash")
            .args(["-c", "true"])
            .stdin(Stdio::null())
            .status()
            .expect("bash");
        assert!(status.success());
    });
    median(&samples)
}

fn rpc_round_trip(env: &Env) -> Duration {
    let mut child = env
        .agentsh(&["rpc"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("agentsh rpc");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    let mut call = |n: usize| {
        writeln!(stdin, r#"{{"id":"{n}","type":"bash","command":"true"}}"#).expect("write");
        stdin.flush().expect("flush");
        loop {
            line.clear();
            assert!(
                stdout.read_line(&mut line).expect("read") > 0,
                "agentsh rpc ended"
            );
            if line.contains(r#""type":"response""#) {
                assert!(line.contains(r#""success":true"#), "{line}");
                return;
            }
        }
    };
    // Warm-up: the first call starts the shell.
    for n in 0..20 {
        call(n);
    }
    let mut samples = Vec::with_capacity(RPC_CALLS);
    for n in 0..RPC_CALLS {
        let start = Instant::now();
        call(n + 100);
        samples.push(start.elapsed());
    }
    drop(stdin);
    assert!(child.wait().expect("wait").success());
    median(&samples)
}

fn exec_true(env: &Env) -> Duration {
    let run = || {
        let status = env
            .agentsh(&["exec", "--", "true"])
            .status()
            .expect("agentsh exec");
        assert!(status.success());
    };
    // Warm-up: takes and caches the rc snapshot.
    run();
    median(&time_each(EXEC_RUNS, run))
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

    let spawn = spawn_bash_true();
    Row::new(BENCH, "bash -c true (baseline)")
        .value(spawn.as_secs_f64() * 1e3, "ms")
        .report();

    let rpc = rpc_round_trip(&env);
    let ratio = rpc.as_secs_f64() / spawn.as_secs_f64();
    Row::new(
        BENCH,
        format!("rpc bash `true` round trip (median of {RPC_CALLS})"),
    )
    .value(rpc.as_secs_f64() * 1e3, "ms")
    .ratio(ratio, "spawning bash -c true")
    .goal("≤ 0.25×", ratio <= 0.25)
    .report();

    let exec = exec_true(&env);
    let ratio = exec.as_secs_f64() / spawn.as_secs_f64();
    Row::new(
        BENCH,
        format!("agentsh exec -- true (median of {EXEC_RUNS})"),
    )
    .value(exec.as_secs_f64() * 1e3, "ms")
    .ratio(ratio, "spawning bash -c true")
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
