//! Tests that read the cache's contents (which shells it holds, their pids): state per key,
//! calls in order, and many commands or shells without leaks or cross-talk.

use std::fmt::Write as _;
use std::time::Duration;

use agentsh_process::descendants;
use agentsh_test_support::open_fds;

use crate::test_helpers::{executor, in_own_process, run, runtime, session, with_session};
use crate::{SessionKey, Surface};

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

#[test]
fn sessions_and_surfaces_never_share_a_shell() {
    runtime().block_on(async {
        let exec = executor();
        let tool = SessionKey::new("s1", Surface::Tool);
        let user = SessionKey::new("s1", Surface::User);
        let other = SessionKey::new("s2", Surface::Tool);
        run(&exec, &tool, "A=tool").await;
        run(&exec, &user, "A=user").await;
        assert_eq!(
            run(&exec, &other, "echo \"[$A]\"").await.summary.output,
            "[]\n"
        );
        assert_eq!(
            run(&exec, &tool, "echo \"[$A]\"").await.summary.output,
            "[tool]\n"
        );
        assert_eq!(
            run(&exec, &user, "echo \"[$A]\"").await.summary.output,
            "[user]\n"
        );
        assert_eq!(exec.shells().len(), 3);
    });
}

#[test]
fn calls_on_one_key_run_one_at_a_time_in_order() {
    runtime().block_on(async {
        let exec = std::sync::Arc::new(executor());
        let s = session("order");
        let dir = tempfile::tempdir().expect("tempdir");
        let log_path = dir.path().join("log");
        let log = log_path.display().to_string();
        let gate = dir.path().join("gate");
        let mut calls = Vec::new();
        // `a` runs until the test opens the gate, after `b` and then `c` were sent.
        for (i, command) in [
            format!(
                "echo start-a >> {log}; until [ -e {} ]; do sleep 0.02; done; echo end-a >> {log}",
                gate.display()
            ),
            format!("echo b >> {log}"),
            format!("echo c >> {log}"),
        ]
        .into_iter()
        .enumerate()
        {
            let exec = std::sync::Arc::clone(&exec);
            let s = s.clone();
            calls.push(tokio::spawn(async move {
                run(&exec, &s, &command).await.exit_code
            }));
            if i == 0 {
                assert!(
                    crate::test_helpers::wait_until(Duration::from_secs(20), || {
                        std::fs::read_to_string(&log_path).is_ok_and(|l| l == "start-a\n")
                    }),
                    "a never started"
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        std::fs::write(&gate, "").expect("open the gate");
        for call in calls {
            assert_eq!(call.await.expect("task"), Some(0));
        }
        assert_eq!(
            std::fs::read_to_string(dir.path().join("log")).expect("log"),
            "start-a\nend-a\nb\nc\n"
        );
        assert_eq!(exec.shells().len(), 1);
    });
}

#[test]
fn a_thousand_commands_leak_nothing() {
    if !in_own_process("executor::tests::a_thousand_commands_leak_nothing") {
        return;
    }
    with_session("soak", async |exec, s| {
        // Warm up: shell started, FIFOs created, allocator settled.
        for i in 0..50 {
            run(
                &exec,
                &s,
                &format!("x=$((${{x:-0}}+1)); echo {i} $x; (true)"),
            )
            .await;
        }
        let status = exec.shells().into_iter().next().expect("one shell");
        let (supervisor, shell) = (
            status.supervisor_pid.expect("pid"),
            status.shell_pid.expect("pid"),
        );
        let fds_before = open_fds();
        let rss_before = rss_kib(shell);
        for i in 0..1000 {
            let result = run(&exec, &s, &format!("x=$((x+1)); echo {i} $x; /bin/true")).await;
            assert_eq!(result.summary.output, format!("{i} {}\n", i + 51));
        }
        let fds_after = open_fds();
        let rss_after = rss_kib(shell);
        assert!(
            fds_after <= fds_before,
            "agentsh fds grew: {fds_before} -> {fds_after}"
        );
        assert!(
            rss_after <= rss_before + 512,
            "the shell grew: {rss_before} KiB -> {rss_after} KiB"
        );
        let zombies: Vec<_> = descendants(supervisor)
            .into_iter()
            .filter(agentsh_process::ProcessInfo::is_exited)
            .collect();
        assert!(
            zombies.is_empty(),
            "zombies under the supervisor: {zombies:?}"
        );
        assert_eq!(
            exec.shells()[0].shell_pid,
            Some(shell),
            "one shell all along"
        );
        // One output FIFO, reused by every command
        // (`bash --noprofile --norc -c LOOP bash DIR SNAPSHOT TAG`).
        let cmdline = std::fs::read(format!("/proc/{shell}/cmdline")).expect("cmdline");
        let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
        let dir = std::path::Path::new(std::str::from_utf8(args[6]).expect("utf-8 dir"));
        let fifos = std::fs::read_dir(dir)
            .expect("private dir")
            .filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().starts_with("out"))
            })
            .count();
        assert_eq!(fifos, 1, "FIFOs in {}", dir.display());
    });
}

#[test]
fn sixteen_shells_at_once_without_cross_talk() {
    runtime().block_on(async {
        let exec = std::sync::Arc::new(executor());
        let mut tasks = Vec::new();
        for n in 0..16 {
            let exec = std::sync::Arc::clone(&exec);
            tasks.push(tokio::spawn(async move {
                let s = session(&format!("parallel-{n}"));
                let mut outputs = Vec::new();
                for round in 0..3 {
                    let command = format!(
                        "for i in $(seq 300); do echo s{n}-r{round}-$i; done; sleep 0.0{n}"
                    );
                    outputs.push(run(&exec, &s, &command).await.summary.output);
                }
                (n, outputs)
            }));
        }
        for task in tasks {
            let (n, outputs) = tokio::time::timeout(Duration::from_secs(60), task)
                .await
                .expect("in time")
                .expect("task");
            for (round, output) in outputs.iter().enumerate() {
                let want: String = (1..=300).fold(String::new(), |mut want, i| {
                    let _ = writeln!(want, "s{n}-r{round}-{i}");
                    want
                });
                assert_eq!(output, &want, "shell {n} round {round}");
            }
        }
        assert_eq!(exec.shells().len(), 16);
    });
}
