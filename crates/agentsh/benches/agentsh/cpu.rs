//! CPU per call (the `cpu` group): the CPU time agentsh and its shells spend on a call,
//! counted with `getrusage` for the children this process reaped, against spawning
//! `bash -c true`, and the rusage check that shows the shell's CPU is counted.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use agentsh_bench_support::{Row, median};

use super::{
    AGENTSH, BENCH, CPU_CHECK_LOOP, Env, RpcServer, SPAWN_CPU_RUNS, Sizes, spawn_bash_true,
};

/// CPU time (user + system) of every child of this process that has ended and been reaped,
/// with the reaped children of those children, and so on (`getrusage(RUSAGE_CHILDREN)`).
fn children_cpu() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `usage` is valid for writes of one `rusage`, which getrusage fills on success.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, usage.as_mut_ptr()) };
    assert_eq!(rc, 0, "getrusage: {}", std::io::Error::last_os_error());
    // SAFETY: getrusage succeeded, so `usage` is initialised (and zeroed is valid anyway).
    let usage = unsafe { usage.assume_init() };
    let time = |tv: libc::timeval| {
        Duration::from_secs(tv.tv_sec.unsigned_abs())
            + Duration::from_micros(tv.tv_usec.unsigned_abs())
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// The CPU `f` made ended children use (nothing else of this process spawns meanwhile).
fn cpu_of(f: impl FnOnce()) -> Duration {
    let before = children_cpu();
    f();
    children_cpu().saturating_sub(before)
}

/// CPU of one whole `binary rpc` server with its supervisor and shells: start and warm-up,
/// `work`, stdin closed, the server waited for.
fn server_cpu(env: &Env, binary: &Path, work: impl FnOnce(&mut RpcServer)) -> Duration {
    cpu_of(|| {
        let mut server = RpcServer::start(env, binary);
        work(&mut server);
        server.stop();
    })
}

/// CPU per warm `true` call of `binary`: a server with `calls` calls more than a warm one, per
/// call.
fn cpu_per_call(env: &Env, binary: &Path, calls: usize) -> Duration {
    let warm = server_cpu(env, binary, |_| {});
    let busy = server_cpu(env, binary, |server| {
        for _ in 0..calls {
            server.call();
        }
    });
    busy.saturating_sub(warm) / u32::try_from(calls).expect("a small count")
}

pub fn rows(env: &Env, sizes: &Sizes, baseline: Option<&Path>) {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    // Alternating rounds: this build, then the baseline build.
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..sizes.cpu_rounds {
        ours.push(cpu_per_call(env, Path::new(AGENTSH), sizes.cpu_calls));
        if let Some(baseline) = baseline {
            theirs.push(cpu_per_call(env, baseline, sizes.cpu_calls));
        }
    }
    let spawn = cpu_of(|| {
        for _ in 0..SPAWN_CPU_RUNS {
            spawn_bash_true();
        }
    }) / u32::try_from(SPAWN_CPU_RUNS).expect("a small count");
    let per_call = median(&ours);
    let rounds = sizes.cpu_rounds;
    let calls = sizes.cpu_calls;
    Row::new(
        BENCH,
        format!(
            "rpc `true`: CPU per warm call (agentsh + supervisor + bash, rusage, {calls} calls, median of {rounds})"
        ),
    )
    .value(ms(per_call), "ms")
    .ratio(
        per_call.as_secs_f64() / spawn.as_secs_f64(),
        format!("CPU of spawning bash -c true, {:.3} ms", ms(spawn)),
    )
    .goal("≤ 0.08 ms", ms(per_call) <= 0.08)
    .report();
    if let Some(baseline) = baseline {
        let theirs = median(&theirs);
        let ratio = per_call.as_secs_f64() / theirs.as_secs_f64();
        Row::new(
            BENCH,
            format!("rpc `true`: CPU per warm call vs the baseline build (median of {rounds})"),
        )
        .value(ms(per_call), "ms")
        .ratio(
            ratio,
            format!("{}, {:.4} ms", baseline.display(), ms(theirs)),
        )
        .goal("≤ 1.10×", ratio <= 1.10)
        .report();
    }

    // What is counted: the shell's own work must show up, not only agentsh's. bash is a child
    // of the supervisor, itself a child of agentsh, so the loop's CPU reaches this process only
    // if each was reaped by its parent: the check covers the supervisor too. Without it the
    // figure would be agentsh's own share, near 0×.
    let (mut direct, mut through) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        direct.push(cpu_of(|| {
            let status = Command::new("bash")
                .args(["-c", CPU_CHECK_LOOP])
                .stdin(Stdio::null())
                .status()
                .expect("bash");
            assert!(status.success());
        }));
        let warm = server_cpu(env, Path::new(AGENTSH), |_| {});
        let looped = server_cpu(env, Path::new(AGENTSH), |server| {
            let (data, _) = server.bash(CPU_CHECK_LOOP);
            assert_eq!(data["exitCode"], 0, "{data}");
        });
        through.push(looped.saturating_sub(warm));
    }
    let (direct, through) = (median(&direct), median(&through));
    let ratio = through.as_secs_f64() / direct.as_secs_f64();
    Row::new(
        BENCH,
        format!("rusage check: CPU of a 100,000-iteration bash loop through agentsh rpc (median of {rounds})"),
    )
    .value(ms(through), "ms")
    .ratio(ratio, format!("the loop under bash -c, {:.1} ms", ms(direct)))
    .goal("≥ 0.5× (the shell's CPU is counted)", ratio >= 0.5)
    .report();
}
