//! Benchmarks of the `agentsh` binary, each against a baseline measured in the same run:
//!
//! - `rpc bash round trip`: median time from writing `{"type":"bash","command":"true"}` to
//!   reading its response, over 500 calls to one `agentsh rpc`, vs spawning `bash -c true`
//!   (goal ≤ 0.25×: a persistent shell must beat a fresh one by far).
//! - `exec true`: median wall time of `agentsh exec -- true` (rc snapshot cached on disk after a
//!   warm-up run) vs `bash -c true` (goal ≤ 3×).
//! - throughput of two 200 MB shapes, `head -c 200000000 /dev/zero | tr '\0' a` (one line) and
//!   `yes <79 x> | head -c 200000000` (80-byte lines), each through `agentsh rpc` (one warm
//!   server, a `bash` request; the response must report every byte and an artifact holding them)
//!   and through `agentsh exec -- <command>` (the whole process, its artifact checked the same
//!   way), vs the pipe floor `bash -c '<command> | cat > file'`: best of 5 rounds, each round one
//!   floor, one RPC and one exec run; the ratio is MB/s ÷ the floor's MB/s (goal ≥ 0.8×).
//!   The RPC server's peak RSS after those calls is a row too (goal ≤ 20 MiB).
//! - `CPU per warm true call`: user + system time from `getrusage(RUSAGE_CHILDREN)` around whole
//!   server lifetimes, one server with the 20 warm-up calls only and one with 2,000 `true` calls
//!   more, (difference) ÷ 2,000, median of 3 rounds (goal ≤ 0.08 ms). It counts agentsh, the
//!   supervisor and bash: each is reaped by its parent before that parent exits, so their CPU
//!   adds up into this process's children. A row checks that: a 100,000-iteration bash loop run
//!   through the server must cost at least 0.5× what the same loop costs under `bash -c` (about
//!   1× when counted; agentsh's own share alone would be near 0×).
//! - `mcp bash round trip` (in `agentsh/mcp.rs`): median time of an MCP `tools/call` of `bash`
//!   `true` through `agentsh mcp` (raw JSON-RPC lines after the handshake, no SDK in the
//!   timing), 500 calls alternating in blocks of 50 with the `agentsh rpc` `true` round trip
//!   above (goal ≤ 1.2×).
//! - peak resident memory (`VmHWM`, polled from `/proc/<pid>/status`) of `agentsh exec` while the
//!   command prints 1 GiB on one line and 200 MB of 80-byte lines (goal ≤ 20 MiB each).
//! - `jobs`, `sandbox`, `policy`, `remote`, `network` (issues 12, 16, 27, 17, 28): the cost of
//!   jobs, the sandbox, a 50-rule approval policy, a far side over sshd and the network
//!   allowlist's proxy (each `agentsh/<group>.rs` says how).
//! - `sessions` (issue 44, in `agentsh/sessions.rs`): `agentsh exec -- true` with 0, 500 and
//!   2,000 `agentsh rpc` sessions open, against none open (goal ≤ 1.10×), and the time to open
//!   each thousand.
//! - `shaping` (docs/shaping.md, in `agentsh/shaping.rs`): o200k tokens the model reads of twelve
//!   everyday commands (git, cargo, pytest, node --test, make, grep, find) in fixture projects
//!   the bench builds, raw vs agentsh's `tool_call` vs oh-my-pi 18.2.3's minimizer, with the
//!   lines a model needs named per command and checked in each text (goals: ≤ 0.55× of raw,
//!   fewer tokens than oh-my-pi where it keeps every needed line, every needed line kept); and
//!   the time of a 200 MB `grep -rn` through a tool call, shaped vs `[shape] enabled = false`.
//!
//! Subject and baseline samples alternate (one `exec` then one `bash -c true`; a block of 50 RPC
//! calls then 50 spawns, so the RPC figure is the steady state of a warm server), so a machine
//! that gets busier or quieter during the run moves both alike and the ratio stays fair.
//!
//! With `AGENTSH_BENCH_BASELINE=<another agentsh binary>` the round trips (`agentsh/baseline.rs`)
//! (`rpc`, `tool_call`, MCP `tools/call`, `exec`) and the CPU per call are also measured for that
//! binary, alternating (goal ≤ 1.05× for the round trips, ≤ 1.10× for the CPU).
//!
//! The binary measured is the one cargo builds for this bench (`CARGO_BIN_EXE_agentsh`, bench
//! profile); every run uses a private HOME/XDG tree and artifact store in a temp dir.
//! `AGENTSH_BENCH_QUICK=1` shrinks the sizes and counts (for a smoke run). A filter argument
//! (`cargo xtask bench FILTER`) runs only the groups whose name contains it: `rpc round trip`,
//! `rpc baseline`, `exec true`, `throughput`, `cpu`, `rss`, `jobs`, `mcp`, `policy`, `sandbox`,
//! `remote`, `network`, `shaping`, `limits`, `sessions`.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

// Not `benches/jobs.rs` or `benches/mcp.rs`: cargo would take those for bench targets of their own.
#[path = "agentsh/baseline.rs"]
mod baseline;
#[path = "agentsh/cpu.rs"]
mod cpu;
#[path = "agentsh/jobs.rs"]
mod jobs;
#[path = "agentsh/limits.rs"]
mod limits;
#[path = "agentsh/mcp.rs"]
mod mcp;
#[path = "agentsh/network.rs"]
mod network;
#[path = "agentsh/policy.rs"]
mod policy;
#[path = "agentsh/remote.rs"]
mod remote;
#[path = "agentsh/sandbox.rs"]
mod sandbox;
#[path = "agentsh/sessions.rs"]
mod sessions;
#[path = "agentsh/shaping.rs"]
mod shaping;

use agentsh_bench_support::{Filter, Row, mb_per_s, median, pipe_floor, quick, vm_hwm_kib};
use serde_json::Value;

const AGENTSH: &str = env!("CARGO_BIN_EXE_agentsh");
const BENCH: &str = "agentsh";
const RPC_CALLS: usize = 500;
/// Calls `RpcServer::start` makes before a server counts as warm (the first starts the shell).
const WARM_UP_CALLS: usize = 20;
const RPC_BLOCK: usize = 50;
const EXEC_RUNS: usize = 100;
/// Calls of each binary in the baseline comparison.
const BASELINE_CALLS: usize = 2000;
/// The agentsh binary the baseline row compares this build with.
const BASELINE_ENV: &str = "AGENTSH_BENCH_BASELINE";
const ONE_GIB: u64 = 1 << 30;
/// Size of each throughput shape (issue 11: 200 MB).
const SHAPE_BYTES: u64 = 200_000_000;
/// Alternating rounds of the throughput rows (best of each).
const ROUNDS: usize = 5;
/// `timeout` of a big `bash` request, in seconds: far beyond any run.
const BIG_TIMEOUT_S: u64 = 3600;
/// `true` calls of a server whose CPU per call is measured (after its warm-up).
const CPU_CALLS: usize = 2000;
/// Rounds of the CPU per call measurement (median of them).
const CPU_ROUNDS: usize = 3;
/// Spawns of `bash -c true` whose CPU per spawn is the CPU row's same-run reference.
const SPAWN_CPU_RUNS: usize = 200;
/// The bash loop whose CPU must be counted when run through a server.
const CPU_CHECK_LOOP: &str = "for i in $(seq 100000); do :; done";

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

    /// Reports the subject's median in ms against the baseline (`baseline` names it; its median
    /// follows), met when the ratio is at most `most`.
    fn report(&self, metric: String, baseline: &str, decimals: usize, most: f64) {
        let ratio = self.ratio();
        Row::new(BENCH, metric)
            .value(self.subject.as_secs_f64() * 1e3, "ms")
            .ratio(
                ratio,
                format!(
                    "{baseline}, {:.decimals$} ms",
                    self.baseline.as_secs_f64() * 1e3
                ),
            )
            .goal(format!("≤ {most:.2}×"), ratio <= most)
            .report();
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

/// Closes a server's stdin and waits for it to exit 0 (both servers end at end of input).
fn end_at_eof(mut child: Child, stdin: ChildStdin) {
    drop(stdin);
    assert!(child.wait().expect("wait").success());
}

/// Spawns `command` with piped stdin and stdout: the child and both pipes.
fn spawn_piped(mut command: Command) -> (Child, ChildStdin, BufReader<ChildStdout>) {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| panic!("{command:?}: {err}"));
    let stdin = child.stdin.take().expect("stdin");
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    (child, stdin, stdout)
}

impl RpcServer {
    /// Starts `binary rpc` and warms it up (the first call starts the shell).
    fn start(env: &Env, binary: &Path) -> Self {
        Self::start_with(env, binary, &["rpc"], true)
    }

    /// Starts `binary args` (an `rpc` command line), warmed up or not.
    fn start_with(env: &Env, binary: &Path, args: &[&str], warm: bool) -> Self {
        let mut server = Self::spawn(env.binary(binary, args));
        for _ in 0..if warm { WARM_UP_CALLS } else { 0 } {
            server.call();
        }
        server
    }

    /// Starts `command` (an `agentsh rpc` command line) with piped stdin and stdout.
    fn spawn(command: Command) -> Self {
        let (child, stdin, stdout) = spawn_piped(command);
        Self {
            child,
            stdin,
            stdout,
            line: String::new(),
            calls: 0,
        }
    }

    /// One `true` round trip, timed.
    fn call(&mut self) -> Duration {
        let start = Instant::now();
        self.send_true();
        self.wait_response();
        start.elapsed()
    }

    /// Writes one `bash` request of `true`.
    fn send_true(&mut self) {
        self.calls += 1;
        writeln!(
            self.stdin,
            r#"{{"id":"{}","type":"bash","command":"true"}}"#,
            self.calls
        )
        .expect("write");
        self.stdin.flush().expect("flush");
    }

    /// Reads up to the next response, which must be a success.
    fn wait_response(&mut self) {
        loop {
            self.line.clear();
            assert!(
                self.stdout.read_line(&mut self.line).expect("read") > 0,
                "agentsh rpc ended"
            );
            if self.line.contains(r#""type":"response""#) {
                assert!(self.line.contains(r#""success":true"#), "{}", self.line);
                return;
            }
        }
    }

    /// One `bash` request for `command`, timed until its response; returns the response's data.
    fn bash(&mut self, command: &str) -> (Value, Duration) {
        self.calls += 1;
        let request = serde_json::json!({
            "id": self.calls.to_string(),
            "type": "bash",
            "command": command,
            "timeout": BIG_TIMEOUT_S,
        });
        self.request_data(&request)
    }

    /// Sends `request` and reads up to its response (events come first), timed; returns the
    /// response's `data` (the response must be a success).
    fn request_data(&mut self, request: &Value) -> (Value, Duration) {
        let start = Instant::now();
        writeln!(self.stdin, "{request}").expect("write");
        self.stdin.flush().expect("flush");
        loop {
            self.line.clear();
            assert!(
                self.stdout.read_line(&mut self.line).expect("read") > 0,
                "agentsh rpc ended"
            );
            // Events come first; the response line starts with its type.
            if self.line.starts_with(r#"{"type":"response""#) {
                let elapsed = start.elapsed();
                let mut response: Value = serde_json::from_str(&self.line).expect("a JSON line");
                assert_eq!(response["success"], true, "{request}: {response}");
                return (response["data"].take(), elapsed);
            }
        }
    }

    /// Peak resident memory of the server so far (`VmHWM`), in MiB.
    fn peak_rss_mib(&self) -> f64 {
        vm_hwm_kib(Some(self.child.id())).expect("the server is alive") as f64 / 1024.0
    }

    fn stop(self) {
        let Self { child, stdin, .. } = self;
        end_at_eof(child, stdin);
    }
}

fn rpc_round_trip(env: &Env) -> Paired {
    let mut server = RpcServer::start(env, Path::new(AGENTSH));
    let timings = paired(RPC_CALLS, RPC_BLOCK, || server.call(), spawn_bash_true);
    server.stop();
    timings
}

/// One `agentsh exec -- true`, timed (the first of an environment takes the rc snapshot).
fn exec_true_once(env: &Env) -> Duration {
    let start = Instant::now();
    let status = env
        .agentsh(&["exec", "--", "true"])
        .status()
        .expect("agentsh exec");
    assert!(status.success());
    start.elapsed()
}

fn exec_true(env: &Env) -> Paired {
    // Warm-up: takes and caches the rc snapshot.
    exec_true_once(env);
    paired(EXEC_RUNS, 1, || exec_true_once(env), spawn_bash_true)
}

/// The sizes and counts of a run: the full ones, or smaller for `AGENTSH_BENCH_QUICK`.
/// Bytes through the remote connection (issue 17).
const REMOTE_BYTES: u64 = 100_000_000;
/// Bytes of the download through the network allowlist's proxy (issue 28).
const DOWNLOAD_BYTES: u64 = 200_000_000;

struct Sizes {
    shape_bytes: u64,
    rss_bytes: u64,
    baseline_calls: usize,
    job_calls: usize,
    cpu_calls: usize,
    cpu_rounds: usize,
    remote_bytes: u64,
    download_bytes: u64,
}

impl Sizes {
    fn new(quick: bool) -> Self {
        if quick {
            Self {
                shape_bytes: SHAPE_BYTES / 10,
                rss_bytes: 64 << 20,
                baseline_calls: BASELINE_CALLS / 10,
                job_calls: RPC_CALLS / 10,
                cpu_calls: CPU_CALLS / 10,
                cpu_rounds: 1,
                remote_bytes: REMOTE_BYTES / 10,
                download_bytes: DOWNLOAD_BYTES / 10,
            }
        } else {
            Self {
                shape_bytes: SHAPE_BYTES,
                rss_bytes: ONE_GIB,
                baseline_calls: BASELINE_CALLS,
                job_calls: RPC_CALLS,
                cpu_calls: CPU_CALLS,
                cpu_rounds: CPU_ROUNDS,
                remote_bytes: REMOTE_BYTES,
                download_bytes: DOWNLOAD_BYTES,
            }
        }
    }
}

/// One output shape of the throughput rows.
struct Shape {
    name: String,
    command: String,
}

/// The two shapes of issue 11, `bytes` each: one long line, and 80-byte lines.
fn shapes(bytes: u64) -> [Shape; 2] {
    let mb = bytes / 1_000_000;
    [
        Shape {
            name: format!("one {mb} MB line"),
            command: format!("head -c {bytes} /dev/zero | tr '\\0' a"),
        },
        Shape {
            name: format!("{mb} MB of 80-byte lines"),
            command: format!("yes {} | head -c {bytes}", "x".repeat(79)),
        },
    ]
}

impl Env {
    fn artifacts(&self) -> PathBuf {
        self.root.join("artifacts")
    }

    /// Asserts that the artifact store holds exactly one artifact, of `bytes` bytes, and removes
    /// it (so the store never fills up, and the next run's artifact is the only one again).
    fn take_the_artifact(&self, bytes: u64, what: &str) {
        let logs: Vec<(PathBuf, u64)> = std::fs::read_dir(self.artifacts())
            .expect("the artifact store")
            .map(|entry| entry.expect("a store entry").path())
            .filter(|path| path.to_string_lossy().ends_with(".bash.log"))
            .map(|path| {
                let len = std::fs::metadata(&path).map_or(0, |m| m.len());
                (path, len)
            })
            .collect();
        for (path, _) in &logs {
            std::fs::remove_file(path).expect("remove an artifact");
        }
        assert!(
            matches!(logs.as_slice(), [(_, len)] if *len == bytes),
            "{what}: one artifact of {bytes} bytes expected, found {logs:?}"
        );
    }
}

/// One run of `shape` through a warm `agentsh rpc`: the response reports every byte, and its
/// artifact holds them.
fn rpc_run(env: &Env, server: &mut RpcServer, shape: &Shape, bytes: u64) -> Duration {
    let (data, elapsed) = server.bash(&shape.command);
    assert_eq!(data["exitCode"], 0, "{}: {data}", shape.name);
    assert_eq!(data["totalBytes"], bytes, "{}: {data}", shape.name);
    let id = data["artifactId"].as_str().expect("an artifactId");
    let path = env.artifacts().join(format!("{id}.bash.log"));
    assert_eq!(
        std::fs::metadata(&path).map_or(0, |m| m.len()),
        bytes,
        "artifact {id} holds the whole output"
    );
    env.take_the_artifact(bytes, &shape.name);
    elapsed
}

/// One `agentsh exec -- <shape>`, the whole process, its stdout (the bounded result) to
/// `/dev/null`; its artifact holds every byte.
fn exec_run(env: &Env, shape: &Shape, bytes: u64) -> Duration {
    let start = Instant::now();
    let status = env
        .agentsh(&["exec", "--", &shape.command])
        .status()
        .expect("agentsh exec");
    let elapsed = start.elapsed();
    assert!(status.success(), "{}: {status}", shape.name);
    env.take_the_artifact(bytes, &shape.name);
    elapsed
}

/// The throughput rows of every shape, and the RPC server's peak RSS after them.
fn throughput(env: &Env, bytes: u64) {
    let bash = Path::new("bash");
    let floor_file = env.root.join("floor.out");
    let mut server = RpcServer::start(env, Path::new(AGENTSH));
    for shape in shapes(bytes) {
        // Alternating rounds, best of each: load from elsewhere hits all three alike.
        let (mut floor, mut rpc, mut exec) = (Duration::MAX, Duration::MAX, Duration::MAX);
        for _ in 0..ROUNDS {
            floor = floor.min(pipe_floor(bash, &shape.command, &floor_file, bytes));
            rpc = rpc.min(rpc_run(env, &mut server, &shape, bytes));
            exec = exec.min(exec_run(env, &shape, bytes));
        }
        let floor_rate = mb_per_s(bytes, floor);
        Row::new(
            BENCH,
            format!(
                "{}: `… | cat > file` (the pipe floor), best of {ROUNDS}",
                shape.name
            ),
        )
        .value(floor_rate, "MB/s")
        .report();
        for (surface, time) in [("agentsh rpc", rpc), ("agentsh exec", exec)] {
            let rate = mb_per_s(bytes, time);
            let ratio = rate / floor_rate;
            Row::new(
                BENCH,
                format!("{}: through {surface}, best of {ROUNDS}", shape.name),
            )
            .value(rate, "MB/s")
            .ratio(ratio, format!("`… | cat > file`, {floor_rate:.0} MB/s"))
            .goal("≥ 0.8×", ratio >= 0.8)
            .report();
        }
    }
    let peak = server.peak_rss_mib();
    server.stop();
    Row::new(
        BENCH,
        format!(
            "agentsh rpc after the {} MB calls: peak RSS (VmHWM)",
            bytes / 1_000_000
        ),
    )
    .value(peak, "MiB")
    .goal("≤ 20 MiB", peak <= 20.0)
    .report();
}

/// Peak RSS (MiB) and wall time of `agentsh exec -- <command>`, its output read and dropped;
/// the command prints `bytes`, which its artifact must hold.
fn exec_peak_rss(env: &Env, command: &str, bytes: u64) -> (f64, Duration) {
    let start = Instant::now();
    let mut child = env
        .agentsh(&["exec", "--", command])
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
        if let Some(kib) = vm_hwm_kib(Some(child.id())) {
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
    env.take_the_artifact(bytes, command);
    (peak_kib as f64 / 1024.0, elapsed)
}

fn main() {
    let filter = Filter::from_args();
    let sizes = Sizes::new(quick());
    let baseline = std::env::var_os(BASELINE_ENV).map(PathBuf::from);
    let env = Env::new();

    if filter.wants("rpc round trip") {
        rpc_round_trip(&env).report(
            format!("rpc bash `true` round trip (median of {RPC_CALLS})"),
            "spawning bash -c true",
            2,
            0.25,
        );
    }

    if filter.wants("mcp") {
        mcp::round_trip(&env).report(
            format!("mcp bash `true` round trip, raw JSON-RPC (median of {RPC_CALLS})"),
            "the agentsh rpc `true` round trip",
            2,
            1.2,
        );
        mcp::round_trip_vs_tool_call(&env).report(
            format!("mcp bash `true` round trip vs rpc tool_call bash (median of {RPC_CALLS})"),
            "the same tool over agentsh rpc",
            2,
            1.2,
        );
    }

    match &baseline {
        Some(baseline) if filter.wants("rpc baseline") => {
            let calls = sizes.baseline_calls;
            baseline::rpc(&env, baseline, calls).report(
                format!("rpc `true` round trip vs the baseline build (median of {calls})"),
                &baseline.display().to_string(),
                3,
                1.05,
            );
            baseline::rpc_tool_call(&env, baseline, calls).report(
                format!("rpc tool_call `true` vs the baseline build (median of {calls})"),
                &baseline.display().to_string(),
                3,
                1.05,
            );
            baseline::mcp(&env, baseline, calls).report(
                format!("mcp tools/call `true` vs the baseline build (median of {calls})"),
                &baseline.display().to_string(),
                3,
                1.05,
            );
            baseline::exec(&env, baseline, EXEC_RUNS).report(
                format!("agentsh exec -- true vs the baseline build (median of {EXEC_RUNS})"),
                &baseline.display().to_string(),
                3,
                1.05,
            );
        }
        Some(_) => {}
        None => eprintln!(
            "{BENCH}: set {BASELINE_ENV} to another agentsh binary to compare its round trip and CPU per call"
        ),
    }

    if filter.wants("exec true") {
        exec_true(&env).report(
            format!("agentsh exec -- true (median of {EXEC_RUNS})"),
            "spawning bash -c true",
            2,
            3.0,
        );
    }

    if filter.wants("throughput") {
        // The rc snapshot is taken and cached before the first timed `exec`.
        exec_true_once(&env);
        throughput(&env, sizes.shape_bytes);
    }

    if filter.wants("cpu") {
        cpu::rows(&env, &sizes, baseline.as_deref());
    }

    if filter.wants("jobs") {
        jobs::rows(&env, sizes.job_calls);
    }

    if filter.wants("policy") {
        policy::rows(&env, RPC_CALLS);
    }
    if filter.wants("sandbox") {
        sandbox::rows(&env, RPC_CALLS);
    }
    if filter.wants("limits") {
        limits::rows(&env, RPC_CALLS);
    }
    if filter.wants("sessions") {
        sessions::rows(&env, quick());
    }

    if filter.wants("remote") {
        remote::rows(&env, sizes.remote_bytes);
    }
    if filter.wants("network") {
        network::rows(&env, sizes.download_bytes);
    }

    if filter.wants("shaping") {
        shaping::rows(quick());
    }

    if filter.wants("rss") {
        let [_, lines] = shapes(sizes.shape_bytes);
        let long = format!("head -c {} /dev/zero | tr '\\0' a", sizes.rss_bytes);
        let size = if sizes.rss_bytes == ONE_GIB {
            "1 GiB".to_owned()
        } else {
            format!("{} MiB", sizes.rss_bytes >> 20)
        };
        let (peak_mib, elapsed) = exec_peak_rss(&env, &long, sizes.rss_bytes);
        Row::new(
            BENCH,
            format!("agentsh exec printing {size} on one line: peak RSS (VmHWM)"),
        )
        .value(peak_mib, "MiB")
        .goal("≤ 20 MiB", peak_mib <= 20.0)
        .report();
        Row::new(
            BENCH,
            format!("agentsh exec printing {size} on one line: wall time"),
        )
        .value(elapsed.as_secs_f64(), "s")
        .report();
        let (peak_mib, _) = exec_peak_rss(&env, &lines.command, sizes.shape_bytes);
        Row::new(
            BENCH,
            format!("agentsh exec printing {}: peak RSS (VmHWM)", lines.name),
        )
        .value(peak_mib, "MiB")
        .goal("≤ 20 MiB", peak_mib <= 20.0)
        .report();
    }
}
