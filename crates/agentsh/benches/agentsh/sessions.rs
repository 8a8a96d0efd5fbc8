//! A start's cost with many sessions on the host (issue 44): `agentsh rpc` sessions are opened
//! 100 at a time, each answering a first call before the next hundred start, up to 500 and
//! then 2,000 open; at 0 (before and after), 500 and 2,000 open, `agentsh exec -- true` is
//! timed (median of 15), against the time with none open before (goal ≤ 1.10×: a start looks
//! at a stamp, not at every session's directories). The time to open the first and the last
//! thousand sessions are rows too, and one call on every open session at the end. Every
//! session is closed at the end (end of input), 100 at a time, and waited for.
//!
//! With `AGENTSH_BENCH_BASELINE=<another agentsh binary>` the same steps run for that binary
//! afterwards (its rows say so), for the figures before a change.

use std::path::Path;
use std::time::{Duration, Instant};

use agentsh_bench_support::{Row, median};

use super::{AGENTSH, BASELINE_ENV, BENCH, Env, RpcServer};

/// Sessions opened (and closed) at a time.
const STEP: usize = 100;
/// The numbers of open sessions at which a start is timed, after none (before and after).
const OPEN: [usize; 2] = [500, 2000];
/// `agentsh exec -- true` runs per figure (their median).
const EXEC_RUNS: usize = 15;
/// The most a start with sessions open may take, in times the one with none.
const MOST: f64 = 1.10;

/// The rows, for this build and, when set, the baseline build.
pub fn rows(env: &Env, quick: bool) {
    raise_open_files();
    let open: Vec<usize> = if quick {
        OPEN.iter().map(|n| n / 10).collect()
    } else {
        OPEN.to_vec()
    };
    steps(env, Path::new(AGENTSH), "", &open);
    if let Some(baseline) = std::env::var_os(BASELINE_ENV) {
        let label = format!(", baseline {}", Path::new(&baseline).display());
        steps(env, Path::new(&baseline), &label, &open);
    }
}

/// Opens sessions of `binary` up to each of `open`, times a start at each, closes them all.
fn steps(env: &Env, binary: &Path, label: &str, open: &[usize]) {
    let before = exec_times(env, binary);
    let none = median(&before);
    let report = |count: usize, when: &str, times: &[Duration]| {
        let figure = median(times);
        let ratio = figure.as_secs_f64() / none.as_secs_f64();
        Row::new(
            BENCH,
            format!(
                "agentsh exec -- true with {count} rpc sessions open{when}{label} (median of \
                 {EXEC_RUNS})"
            ),
        )
        .value(figure.as_secs_f64() * 1e3, "ms")
        .ratio(
            ratio,
            format!("none open before, {:.1} ms", none.as_secs_f64() * 1e3),
        )
        .goal(format!("≤ {MOST:.2}×"), ratio <= MOST)
        .report();
    };
    report(0, " (before)", &before);

    let mut sessions: Vec<RpcServer> = Vec::new();
    // How long each thousand took to open (the starts timed meanwhile left out).
    let mut thousands: Vec<Duration> = Vec::new();
    let mut opening = Duration::ZERO;
    for &target in open {
        while sessions.len() < target {
            let count = STEP.min(target - sessions.len());
            let step = Instant::now();
            open_step(env, binary, &mut sessions, count);
            opening += step.elapsed();
            if sessions.len().is_multiple_of(1000) {
                thousands.push(std::mem::take(&mut opening));
            }
        }
        report(target, "", &exec_times(env, binary));
    }
    for (i, took) in thousands.iter().enumerate() {
        Row::new(
            BENCH,
            format!(
                "opening rpc sessions {}–{} ({STEP} at a time, each answering a first call){label}",
                i * 1000 + 1,
                (i + 1) * 1000
            ),
        )
        .value(took.as_secs_f64(), "s")
        .report();
    }
    let all = Instant::now();
    call_all(&mut sessions);
    Row::new(
        BENCH,
        format!(
            "one `true` call on each of {} open rpc sessions{label}",
            sessions.len()
        ),
    )
    .value(all.elapsed().as_secs_f64(), "s")
    .report();
    while !sessions.is_empty() {
        let rest = sessions.split_off(sessions.len().saturating_sub(STEP));
        close(rest);
    }
    report(0, " (after)", &exec_times(env, binary));
}

/// `EXEC_RUNS` timed runs of `binary exec -- true`, after one untimed (the rc snapshot).
fn exec_times(env: &Env, binary: &Path) -> Vec<Duration> {
    let once = || {
        let start = Instant::now();
        let status = env
            .binary(binary, &["exec", "--", "true"])
            .status()
            .expect("agentsh exec");
        assert!(status.success());
        start.elapsed()
    };
    once();
    (0..EXEC_RUNS).map(|_| once()).collect()
}

/// Starts `count` sessions of `binary`, then sends each its first call and waits for every
/// answer.
fn open_step(env: &Env, binary: &Path, sessions: &mut Vec<RpcServer>, count: usize) {
    let first = sessions.len();
    for _ in 0..count {
        let mut command = env.binary(binary, &["rpc"]);
        // A warning per session would bury the table; a failed call fails the bench anyway.
        command.stderr(std::process::Stdio::null());
        sessions.push(RpcServer::spawn(command));
    }
    call_all(&mut sessions[first..]);
}

/// One `true` call on each of `sessions`: every request written, then every answer read.
fn call_all(sessions: &mut [RpcServer]) {
    for session in sessions.iter_mut() {
        session.send_true();
    }
    for session in sessions.iter_mut() {
        session.wait_response();
    }
}

/// Ends `sessions` at end of input, all at once, and waits for each (exit 0).
fn close(sessions: Vec<RpcServer>) {
    let mut children = Vec::with_capacity(sessions.len());
    for RpcServer { child, stdin, .. } in sessions {
        drop(stdin);
        children.push(child);
    }
    for mut child in children {
        assert!(child.wait().expect("wait").success());
    }
}

/// Raises this process's open-files limit to its hard limit: two pipes per session.
fn raise_open_files() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit with a valid pointer to a local struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut limit) == 0 {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &raw const limit);
        }
    }
}
