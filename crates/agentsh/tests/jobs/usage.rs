//! What jobs cost, in `job_list`: CPU over the last 10 s and the resident memory of the job's
//! whole tree, checked against `/proc`; a job busy without output is marked and noticed once
//! (the 10 minutes shortened with `AGENTSH_TEST_BUSY_AFTER_S`).

use std::time::{Duration, Instant};

use serde_json::json;

use super::{Session, text};
use crate::util::{LIVENESS, Rpc, TestEnv, processes_with, unique_marker};

/// `job_list`'s line of job `id`.
fn list_line(session: &mut Session, id: &str) -> String {
    let listed = session.call("job_list", json!({}));
    text(&listed)
        .lines()
        .find(|line| line.starts_with(&format!("job {id} · ")))
        .unwrap_or_else(|| panic!("job {id} listed: {listed}"))
        .to_owned()
}

/// The `cpu P%` and RSS fields of a list line: (percent, bytes).
fn usage_of(line: &str) -> (u32, f64) {
    let fields: Vec<&str> = line.split(" · ").collect();
    let at = fields
        .iter()
        .position(|field| field.starts_with("cpu "))
        .unwrap_or_else(|| panic!("a cpu field: {line}"));
    let cpu = fields[at]
        .trim_start_matches("cpu ")
        .trim_end_matches('%')
        .parse()
        .unwrap_or_else(|_| panic!("a percent: {line}"));
    // `<RSS>`, or `<RSS> of <limit>` under a memory limit.
    let size = fields[at + 1]
        .split_once(" of ")
        .map_or(fields[at + 1], |(rss, _)| rss);
    let (number, unit) = size.split_at(
        size.find(|c: char| c.is_ascii_alphabetic())
            .unwrap_or(size.len()),
    );
    let scale = match unit {
        "B" => 1.0,
        "KB" => 1024.0,
        "MB" => 1024.0 * 1024.0,
        "GB" => 1024.0 * 1024.0 * 1024.0,
        other => panic!("a size unit: {other} in {line}"),
    };
    (cpu, number.parse::<f64>().expect("a size") * scale)
}

/// The CPU `/proc` shows `pids` used since each started, in percent of one core, summed.
fn lifetime_cpu_percent(pids: &[u32]) -> f64 {
    assert!(!pids.is_empty(), "no process to measure");
    // SAFETY: sysconf takes no pointer.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let uptime: f64 = std::fs::read_to_string("/proc/uptime")
        .expect("uptime")
        .split_whitespace()
        .next()
        .and_then(|field| field.parse().ok())
        .expect("uptime seconds");
    pids.iter()
        .map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
            // After the command name's closing parenthesis: field 3 onwards.
            let fields: Vec<f64> = stat[stat.rfind(')').expect("comm") + 2..]
                .split_whitespace()
                .map(|field| field.parse().unwrap_or(0.0))
                .collect();
            let (utime, stime, start) = (fields[11], fields[12], fields[19]);
            let alive = uptime - start / ticks;
            100.0 * (utime + stime) / ticks / alive.max(0.001)
        })
        .sum()
}

/// The resident memory `/proc` shows for `pid`, in bytes.
fn vm_rss(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let kb: f64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS");
    kb * 1024.0
}

#[test]
fn job_list_shows_a_busy_jobs_cpu_and_a_large_jobs_memory() {
    let env = TestEnv::new();
    let mut session = Session::start(&env);
    // Two `yes`, marked: what they get depends on the machine's load, so the figure is
    // checked against what `/proc` says they used.
    let busy_marker = unique_marker();
    let (busy, _) = session.background(
        &format!("yes {busy_marker} > /dev/null & yes {busy_marker} > /dev/null; wait"),
        json!({}),
    );
    let marker = unique_marker();
    let (large, _) = session.background(
        &format!(
            "python3 -c 'import time\nb = bytearray(200 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\nprint(\"ready\", flush=True)\ntime.sleep(300)' {marker}"
        ),
        json!({}),
    );
    session.output(&large, json!({"until": "ready", "wait": 60}));
    // The window fills over a few samples.
    std::thread::sleep(Duration::from_secs(4));

    let line = list_line(&mut session, &busy);
    let real = lifetime_cpu_percent(&processes_with(&busy_marker));
    let (cpu, _) = usage_of(&line);
    // The job is younger than the 10 s window: its figure is its average since it started
    // (give or take the first sample's second), as `/proc`'s is.
    assert!(
        (f64::from(cpu) - real).abs() <= 25.0 && cpu >= 10,
        "{line}: cpu {cpu}% against /proc's {real:.0}%"
    );

    let line = list_line(&mut session, &large);
    let (_, rss) = usage_of(&line);
    let python = processes_with(&marker);
    assert_eq!(python.len(), 1, "{python:?}");
    let real = vm_rss(python[0]);
    assert!(
        (rss - real).abs() <= real * 0.1,
        "{line}: RSS {rss} against python's {real}"
    );
    session.call("job_kill", json!({"jobId": busy}));
    session.call("job_kill", json!({"jobId": large}));
}

#[test]
fn a_job_busy_without_output_is_marked_and_noticed_once() {
    let env = TestEnv::new();
    let config = env.config_path();
    let mut command = env.command(&["rpc", "--config", config.to_str().expect("utf-8")]);
    command.env("AGENTSH_TEST_BUSY_AFTER_S", "2");
    // Busy from 10% of a core: two `yes` got 30-47% of the 2 cores while builds loaded them,
    // under the real 90% (which the unit tests check on given samples).
    command.env("AGENTSH_TEST_BUSY_SHARE", "0.1");
    let mut session = Session {
        rpc: Rpc::spawn(command),
        calls: 0,
    };
    let busy_command = "yes > /dev/null & yes > /dev/null; wait";
    let (id, _) = session.background(busy_command, json!({}));
    let notice =
        format!("[job {id} ({busy_command}) has used a full core for 1 min without output]");
    let mut texts = String::new();
    let deadline = Instant::now() + LIVENESS;
    loop {
        let listed = session.call("job_list", json!({}));
        texts.push_str(text(&listed));
        if text(&listed).contains("· busy without output for 1 min · $ ") {
            break;
        }
        assert!(Instant::now() < deadline, "never marked busy: {texts}");
        std::thread::sleep(Duration::from_millis(500));
    }
    // A few more results: the notice was in exactly one of them.
    for _ in 0..3 {
        texts.push_str(text(&session.call("bash", json!({"command": "true"}))));
    }
    assert_eq!(texts.matches(&notice).count(), 1, "{texts}");
    session.call("job_kill", json!({"jobId": id}));
}
