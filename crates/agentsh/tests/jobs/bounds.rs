//! Bounds of jobs: memory and the log cap of a job printing 1 GiB, the number of
//! running jobs, unknown ids, and `job_list`.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{
    Session, artifact_id, artifact_path, assert_state, assert_tool_error, body, job, text,
};
use crate::util::{TestEnv, assert_no_survivor, marked_sleeper, unique_marker, wait_for_process};

/// Bytes the big job prints: 1 GiB.
const BIG: u64 = 1 << 30;
/// `jobs.max_log_bytes` of the big job's session: 64 MiB.
const LOG_CAP: u64 = 64 << 20;
/// Length of each line the big job prints, newline included (1 GiB and 64 MiB are whole lines).
const LINE: u64 = 128;
/// How long the big job may take on a loaded machine (a liveness bound, not a timing).
const BIG_JOB_LIVENESS: Duration = Duration::from_secs(300);
/// Agentsh's peak RSS with one job printing 1 GiB.
const PEAK_RSS_MIB: u64 = 20;

/// The fields of a `job_list` line
/// `job N · <state> · <run time> · cpu <P>% · <RSS> · <output size> · $ <command>`.
fn list_fields(line: &str) -> [&str; 7] {
    let fields: Vec<&str> = line.splitn(7, " · ").collect();
    fields
        .try_into()
        .unwrap_or_else(|_| panic!("seven fields separated by ` · `: {line:?}"))
}

/// The `job_list` line of job `id`.
fn listed(session: &mut Session, id: &str) -> String {
    let list = session.call("job_list", json!({}));
    assert_eq!(list["isError"], false, "{list}");
    text(&list)
        .lines()
        .find(|line| line.starts_with(&format!("job {id} · ")))
        .unwrap_or_else(|| panic!("job {id} is listed: {list}"))
        .to_owned()
}

/// Parses `[Showing lines A-B of T (50.0KB limit). Full: artifact://ID…]` from `text`.
fn notice(text: &str) -> (u64, u64, u64, String) {
    let line = text
        .lines()
        .find(|line| line.starts_with("[Showing lines "))
        .unwrap_or_else(|| panic!("the truncation notice: {text:?}"));
    let parsed = line
        .strip_prefix("[Showing lines ")
        .and_then(|rest| rest.split_once('-'))
        .and_then(|(first, rest)| {
            let (last, rest) = rest.split_once(" of ")?;
            let (total, rest) = rest.split_once(" (50.0KB limit). Full: artifact://")?;
            // What the log's cap adds to the notice is not fixed by the contract.
            let id: String = rest.chars().take_while(char::is_ascii_digit).collect();
            (!id.is_empty() && rest.ends_with(']')).then_some(())?;
            Some((
                first.parse().ok()?,
                last.parse().ok()?,
                total.parse().ok()?,
                id,
            ))
        });
    parsed.unwrap_or_else(|| panic!("a truncation notice: {line:?}"))
}

/// Asserts that `file` holds exactly the first `len` bytes `bash -c command` prints, compared
/// chunk by chunk (neither is held in memory).
fn assert_prefix_of_output(file: &std::path::Path, command: &str, len: u64) {
    let mut expected = Command::new("bash")
        .args(["-c", &format!("{command} | head -c {len}")])
        .stdout(Stdio::piped())
        .spawn()
        .expect("bash");
    let mut want = expected.stdout.take().expect("stdout");
    let mut got = std::fs::File::open(file).expect("open the log artifact");
    let (mut a, mut b) = (vec![0; 1 << 20], vec![0; 1 << 20]);
    let mut offset = 0u64;
    loop {
        let n = read_full(&mut want, &mut a);
        let m = read_full(&mut got, &mut b);
        assert_eq!(
            a[..n],
            b[..m],
            "the log differs from the output in the MiB at {offset}"
        );
        if n == 0 {
            break;
        }
        offset += n as u64;
    }
    assert_eq!(offset, len, "the log holds {len} bytes");
    assert!(expected.wait().expect("wait").success());
}

/// Reads until `buf` is full or the end: the count.
fn read_full(reader: &mut impl Read, buf: &mut [u8]) -> usize {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]).expect("read") {
            0 => break,
            n => filled += n,
        }
    }
    filled
}

#[test]
fn a_job_printing_a_gib_stays_small_and_its_log_is_capped_byte_exact() {
    let env = TestEnv::with_config(&format!("[jobs]\nmax_log_bytes = {LOG_CAP}\n"));
    let mut session = Session::start(&env);
    let a = "a".repeat(usize::try_from(LINE - 1).expect("small"));
    let command = format!("yes {a} | head -c {BIG}");
    // The job prints nothing before the test opens the gate, after its starting result: a fast
    // machine prints the 1 GiB within the start window, whose result would then show its end.
    let gate = env.root().join("gate");
    let (id, started) = session.background(
        &format!(
            "until [ -e {} ]; do sleep 0.05; done; {command}",
            gate.display()
        ),
        json!({"timeout": 3600}),
    );
    assert_eq!(job(&started)["state"], "running", "{started}");
    std::fs::write(&gate, "").expect("open the gate");

    // Wait for its end without reading its output (`job_list` shows no output).
    let deadline = Instant::now() + BIG_JOB_LIVENESS;
    loop {
        let line = listed(&mut session, &id);
        if list_fields(&line)[1] != "running" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "not done within {BIG_JOB_LIVENESS:?}: {line}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let peak = agentsh_bench_support::vm_hwm_kib(Some(session.rpc.pid())).expect("agentsh runs");
    eprintln!("agentsh peak RSS after the 1 GiB job: {peak} KiB");
    assert!(
        peak <= PEAK_RSS_MIB * 1024,
        "agentsh's peak RSS {peak} KiB > {PEAK_RSS_MIB} MiB"
    );

    let out = session.output(&id, json!({}));
    assert_state(&out, &id, "exited with code 0");
    let shown = body(&out);
    let (first, last, total, log) = notice(shown);
    assert_eq!(
        total,
        BIG / LINE,
        "line numbers of the whole output: {shown:?}"
    );
    assert_eq!(last, total, "the tail is shown");
    assert!(first > 1 && first <= last, "{shown:?}");
    assert!(
        (last - first + 1) * LINE <= 50 * 1024,
        "at most 50 KB shown: {first}-{last}"
    );
    assert!(
        shown.lines().next().is_some_and(|line| line == a),
        "whole lines of the tail first: {shown:?}"
    );
    // The wording is free; it must name the cap (the word, or the setting).
    let lower = shown.to_lowercase();
    assert!(
        lower.contains("capped") || lower.contains("jobs.max_log_bytes"),
        "the notice says the log was capped: {shown:?}"
    );
    assert_eq!(log, artifact_id(shown));

    let path = artifact_path(&mut session, &log);
    assert!(path.starts_with(env.artifacts_dir()), "{}", path.display());
    let meta = std::fs::metadata(&path).expect("the log artifact");
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777,
        0o600,
        "private"
    );
    assert_prefix_of_output(&path, &command, LOG_CAP);
}

#[test]
fn the_seventeenth_running_job_is_refused_and_a_foreground_call_still_runs() {
    let env = TestEnv::new();
    let mut session = Session::start(&env);
    let list = session.call("job_list", json!({}));
    assert_eq!(text(&list), "(no jobs)", "{list}");
    let unknown = session.output("99", Value::Null);
    assert_tool_error(&unknown, "No job 99. Jobs: none");

    let marker = unique_marker();
    let command = marked_sleeper(&marker);
    for n in 1..=16 {
        let (id, started) = session.background(&command, Value::Null);
        assert_eq!(id, n.to_string(), "{started}");
        assert_eq!(started["isError"], false, "{started}");
    }
    let extra = unique_marker();
    let refused =
        session.bash(json!({"command": marked_sleeper(&extra), "run_in_background": true}));
    assert_tool_error(
        &refused,
        "Too many background jobs (16 running): stop one with job_kill first",
    );
    assert_eq!(refused["details"].get("job"), None, "{refused}");

    // 16 running jobs do not stop a foreground call from getting a shell.
    let foreground = session.bash(json!({"command": "echo ok"}));
    assert_eq!(foreground["isError"], false, "{foreground}");
    assert_eq!(text(&foreground), "ok");

    let unknown = session.call("job_kill", json!({"jobId": 99}));
    let ids: Vec<String> = (1..=16).map(|n| n.to_string()).collect();
    assert_tool_error(&unknown, &format!("No job 99. Jobs: {}", ids.join(", ")));

    let list = session.call("job_list", json!({}));
    let lines: Vec<&str> = text(&list).lines().collect();
    assert_eq!(lines.len(), 16, "one line per job: {list}");
    for (n, line) in lines.iter().enumerate() {
        let [job, state, runtime, cpu, rss, size, shown] = list_fields(line);
        assert_eq!(job, format!("job {}", n + 1), "{line}");
        assert_eq!(state, "running", "{line}");
        assert!(!runtime.is_empty(), "{line}");
        assert!(cpu.starts_with("cpu ") && cpu.ends_with('%'), "{line}");
        assert!(rss.ends_with('B') && size.ends_with('B'), "sizes: {line}");
        assert_eq!(shown, format!("$ {command}"), "{line}");
    }

    // One stopped, one more can start.
    let killed = session.call("job_kill", json!({"jobId": "16"}));
    assert_state(&killed, "16", "killed");
    let (id, _) = session.background(&marked_sleeper(&extra), Value::Null);
    assert_eq!(id, "17");
    wait_for_process(&extra);
    let (status, _) = session.rpc.close(crate::util::LIVENESS);
    assert_eq!(status.code(), Some(0));
    assert_no_survivor(&marker);
    assert_no_survivor(&extra);
}
