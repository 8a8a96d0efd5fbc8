//! The supervisor: real shells under a real subreaper.

use std::ffi::OsString;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use agentsh_process::{
    ChildStdio, CommandScope, SpawnError, SpawnSpec, StartMark, Supervisor, TERM_GRACE,
    command_processes, descendants, end_command, kill_tree, process_info,
};
use agentsh_test_support::alive_with_arg;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn sh(script: &str) -> SpawnSpec {
    let mut spec = SpawnSpec::new("/bin/sh");
    spec.args = vec!["-c".into(), script.into()];
    spec.env = vec![("PATH".into(), std::env::var_os("PATH").unwrap_or_default())];
    spec
}

fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    done()
}

fn pipe() -> (OwnedFd, OwnedFd) {
    let (r, w) = std::io::pipe().expect("pipe");
    (r.into(), w.into())
}

#[test]
fn reports_exit_codes_and_signals_like_a_shell() {
    runtime().block_on(async {
        for (script, want) in [
            ("exit 3", 3),
            ("exit 0", 0),
            ("kill -9 $$", 137),
            ("kill -TERM $$", 143),
        ] {
            let mut sup = Supervisor::spawn(sh(script)).await.expect("spawn");
            let exit = sup.wait_child().await.expect("status");
            assert_eq!(exit.shell_code(), want, "{script}");
            sup.shutdown().await;
        }
    });
}

#[test]
fn start_failures_are_errors_that_name_the_cause() {
    runtime().block_on(async {
        let err = Supervisor::spawn(SpawnSpec::new("/nonexistent/agentsh-shell"))
            .await
            .expect_err("missing program");
        assert!(matches!(err, SpawnError::Exec { .. }), "{err:?}");
        assert!(
            err.to_string().contains("/nonexistent/agentsh-shell"),
            "{err}"
        );

        let mut spec = sh("true");
        spec.cwd = "/nonexistent-dir-agentsh".into();
        let err = Supervisor::spawn(spec).await.expect_err("missing cwd");
        assert!(matches!(err, SpawnError::Cwd { .. }), "{err:?}");

        let mut spec = sh("true");
        let (r, _w) = pipe();
        spec.fds = vec![(r, 12)];
        let err = Supervisor::spawn(spec).await.expect_err("fd out of range");
        assert!(matches!(err, SpawnError::BadFd(12)), "{err:?}");

        let mut spec = sh("true");
        spec.args.push(OsString::from("a\0b"));
        assert!(matches!(
            Supervisor::spawn(spec).await,
            Err(SpawnError::NulByte { .. })
        ));
    });
}

#[test]
fn child_gets_its_descriptors_environment_and_directory() {
    runtime().block_on(async {
        let (out_r, out_w) = pipe();
        let (extra_r, extra_w) = pipe();
        let mut spec = sh(
            "echo \"$GREETING $(pwd)\"; echo side >&3; ls /proc/self/fd | sort -n | tr '\\n' ' '",
        );
        spec.env.push(("GREETING".into(), "hello".into()));
        spec.cwd = "/tmp".into();
        spec.stdio[1] = ChildStdio::Fd(out_w);
        spec.fds = vec![(extra_w, 3)];
        let mut sup = Supervisor::spawn(spec).await.expect("spawn");
        assert_eq!(sup.wait_child().await.expect("status").shell_code(), 0);
        let mut out = String::new();
        std::fs::File::from(out_r)
            .read_to_string(&mut out)
            .expect("read");
        let mut side = String::new();
        std::fs::File::from(extra_r)
            .read_to_string(&mut side)
            .expect("read");
        let mut lines = out.lines();
        assert_eq!(lines.next(), Some("hello /tmp"));
        // 0, 1, 2, 3 and the one `ls` opened to list the directory: nothing of agentsh leaks.
        let fds: Vec<&str> = lines.next().expect("fd list").split_whitespace().collect();
        assert_eq!(fds.len(), 5, "descriptors of the child: {fds:?}");
        assert_eq!(&fds[..4], ["0", "1", "2", "3"]);
        assert_eq!(side, "side\n");
        sup.shutdown().await;
    });
}

#[test]
fn child_has_no_controlling_terminal_and_its_own_session() {
    runtime().block_on(async {
        let (out_r, out_w) = pipe();
        let mut spec = sh(
            "if (exec 3</dev/tty) 2>/dev/null; then echo tty; else echo none; fi; ps -o sid= -p $$",
        );
        spec.stdio[1] = ChildStdio::Fd(out_w);
        let mut sup = Supervisor::spawn(spec).await.expect("spawn");
        sup.wait_child().await.expect("status");
        let mut out = String::new();
        std::fs::File::from(out_r)
            .read_to_string(&mut out)
            .expect("read");
        let mut lines = out.lines();
        assert_eq!(lines.next(), Some("none"));
        let sid: u32 = lines.next().expect("sid").trim().parse().expect("number");
        assert_eq!(sid, sup.pid(), "the supervisor leads the session");
        sup.shutdown().await;
    });
}

#[test]
fn orphans_are_adopted_and_reaped() {
    runtime().block_on(async {
        let mut sup = Supervisor::spawn(sh(
            "(setsid sleep 100.3101 &); (sleep 0.05 &); sleep 100.3102",
        ))
        .await
        .expect("spawn");
        assert!(wait_until(Duration::from_secs(5), || {
            alive_with_arg("100.3101").len() == 1 && alive_with_arg("100.3102").len() == 1
        }));
        let orphan = alive_with_arg("100.3101")[0];
        assert_eq!(
            process_info(orphan).expect("stat").ppid,
            sup.pid(),
            "a setsid'd orphan is reparented to the supervisor"
        );
        // The short-lived orphan exits and is reaped: no zombie stays under the supervisor.
        assert!(wait_until(Duration::from_secs(5), || {
            descendants(sup.pid()).iter().all(|p| !p.is_exited())
        }));
        assert!(sup.try_child_exit().is_none());
        sup.shutdown().await;
        assert!(alive_with_arg("100.3101").is_empty());
        assert!(alive_with_arg("100.3102").is_empty());
    });
}

#[test]
fn shutdown_ends_every_escape() {
    runtime().block_on(async {
        let script = "(setsid sleep 100.3201 &); (env -i setsid sh -c 'sleep 100.3202' &); \
                      nohup sleep 100.3203 >/dev/null 2>&1 & \
                      sh -c 'trap \"\" TERM HUP; sleep 100.3204' & sleep 100.3205";
        let sup = Supervisor::spawn(sh(script)).await.expect("spawn");
        let markers = ["100.3201", "100.3202", "100.3203", "100.3204", "100.3205"];
        assert!(wait_until(Duration::from_secs(5), || {
            markers.iter().all(|m| !alive_with_arg(m).is_empty())
        }));
        sup.shutdown().await;
        for marker in markers {
            assert!(
                alive_with_arg(marker).is_empty(),
                "{marker} survived the shutdown"
            );
        }
    });
}

#[test]
fn dropping_the_handle_ends_the_tree() {
    runtime().block_on(async {
        let sup = Supervisor::spawn(sh("(setsid sleep 100.3301 &); sleep 100.3302"))
            .await
            .expect("spawn");
        assert!(wait_until(Duration::from_secs(5), || !alive_with_arg(
            "100.3301"
        )
        .is_empty()));
        drop(sup);
    });
    assert!(wait_until(Duration::from_secs(5), || {
        alive_with_arg("100.3301").is_empty() && alive_with_arg("100.3302").is_empty()
    }));
}

#[test]
fn end_command_spares_the_shell_and_earlier_jobs() {
    runtime().block_on(async {
        // The "shell" exports a marker per "command" the way shell-executor's loop does;
        // command 2 starts once the file `go` exists.
        let dir = tempfile::tempdir().expect("tempdir");
        let go = dir.path().join("go");
        let script = format!(
            "export AGENTSH_CMD=t.1; sleep 100.3401 & \
             while [ ! -e '{go}' ]; do sleep 0.01; done; \
             export AGENTSH_CMD=t.2; (env -i setsid sh -c 'sleep 100.3402' &); \
             sh -c 'trap \"\" TERM; sleep 100.3403' & sleep 100.3404; wait",
            go = go.display()
        );
        let mut sup = Supervisor::spawn(sh(&script)).await.expect("spawn");
        assert!(wait_until(Duration::from_secs(5), || !alive_with_arg(
            "100.3401"
        )
        .is_empty()));
        // Command 2 starts after `sleep 100.3401` was running.
        let started = StartMark::now();
        std::fs::write(&go, "").expect("go");
        let markers = ["100.3401", "100.3402", "100.3403", "100.3404"];
        assert!(wait_until(Duration::from_secs(5), || {
            markers.iter().all(|m| !alive_with_arg(m).is_empty())
        }));
        let scope = CommandScope {
            supervisor: sup.pid(),
            shell: sup.child_pid(),
            tag: "t".into(),
            seq: 2,
            started,
        };
        let mine: Vec<u32> = command_processes(&scope).iter().map(|p| p.pid).collect();
        for marker in ["100.3402", "100.3403", "100.3404"] {
            let pid = alive_with_arg(marker)[0];
            assert!(mine.contains(&pid), "{marker} is the command's");
        }
        assert!(
            !mine.contains(&alive_with_arg("100.3401")[0]),
            "the earlier job is not"
        );
        let began = Instant::now();
        let report = end_command(&scope, TERM_GRACE).await;
        assert!(
            began.elapsed() >= TERM_GRACE,
            "a TERM-proof process waits for the grace"
        );
        assert!(began.elapsed() < TERM_GRACE + Duration::from_secs(2));
        assert!(report.killed >= 1, "{report:?}");
        assert!(!report.survivors);
        for marker in ["100.3402", "100.3403", "100.3404"] {
            assert!(alive_with_arg(marker).is_empty(), "{marker} survived");
        }
        assert_eq!(
            alive_with_arg("100.3401").len(),
            1,
            "the earlier job is alive"
        );
        assert!(sup.try_child_exit().is_none(), "the shell is alive");
        sup.shutdown().await;
        assert!(alive_with_arg("100.3401").is_empty());
    });
}

#[test]
fn the_private_directory_goes_with_the_tree() {
    runtime().block_on(async {
        let parent = std::env::temp_dir();
        let dir = parent.join(format!("agentsh-remove-test-{}", std::process::id()));
        std::fs::create_dir(&dir).expect("dir");
        for i in 0..300 {
            std::fs::write(dir.join(format!("file-with-a-longish-name-{i}")), "x").expect("file");
        }
        let fifo = std::ffi::CString::new(dir.join("fifo").into_os_string().into_encoded_bytes())
            .expect("path");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            fifo.as_c_str(),
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .expect("mkfifo");
        let mut spec = sh("sleep 100.3501");
        spec.remove_on_exit = Some(dir.clone());
        let sup = Supervisor::spawn(spec).await.expect("spawn");
        assert!(dir.exists());
        sup.shutdown().await;
        assert!(!dir.exists(), "the supervisor removed {}", dir.display());
    });
}

#[test]
fn kill_tree_ends_a_process_and_its_descendants_after_the_grace() {
    runtime().block_on(async {
        let script = "(setsid sleep 100.3601 &); \
                      sh -c 'trap \"\" TERM; sleep 100.3602' & sleep 100.3603 & wait";
        let mut sup = Supervisor::spawn(sh(script)).await.expect("spawn");
        let markers = ["100.3601", "100.3602", "100.3603"];
        assert!(wait_until(Duration::from_secs(5), || {
            markers.iter().all(|m| !alive_with_arg(m).is_empty())
        }));
        let began = Instant::now();
        let report = kill_tree(sup.child_pid(), TERM_GRACE).await;
        assert!(
            began.elapsed() >= TERM_GRACE,
            "a TERM-proof process waits for the grace"
        );
        assert!(began.elapsed() < TERM_GRACE + Duration::from_secs(2));
        // The shell, `sh -c`, and both sleeps below the shell.
        assert!(report.terminated >= 4, "{report:?}");
        assert!(report.killed >= 1, "{report:?}");
        assert!(!report.survivors);
        assert!(alive_with_arg("100.3602").is_empty());
        assert!(alive_with_arg("100.3603").is_empty());
        let exit = sup.wait_child().await.expect("status");
        assert_eq!(exit.signal(), Some(15), "the shell got SIGTERM first");
        // The orphan was adopted by the supervisor: not below the shell any more.
        assert_eq!(alive_with_arg("100.3601").len(), 1);

        let report = sup.kill_tree(TERM_GRACE).await;
        assert!(!report.survivors);
        assert!(
            alive_with_arg("100.3601").is_empty(),
            "below the supervisor"
        );
        sup.shutdown().await;
    });
}
