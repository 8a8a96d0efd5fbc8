//! Containment has no single point of failure: a shell's supervisor that dies while
//! agentsh lives (a command kills it, the OOM killer picks it) takes the shell and every
//! descendant with it, and the call in flight ends with the shell replaced.
//!
//! Each test runs twice: in this process (a cgroup v2 per shell where the machine has one), and
//! in a copy of this test binary started with `AGENTSH_NO_CGROUP=1`, where agentsh falls back to
//! being a subreaper itself.

use std::time::{Duration, Instant};

use agentsh_process::Containment;

use crate::common::{alive_with, run, unique, wait_until, with_session};

/// Set in the copy of this binary that runs a test without cgroups.
const NO_CGROUP: &str = agentsh_process::NO_CGROUP_VAR;

/// Whether `pid` is a live process (not a zombie).
fn is_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X']))
    })
}

/// Checks that this process contains its shells the way the test means: by the subreaper in
/// the copy without cgroups, else by cgroups where the machine has a writable cgroup v2.
fn check_containment() {
    let mode = agentsh_process::containment();
    if std::env::var_os(NO_CGROUP).is_some() {
        assert!(
            matches!(mode, Containment::Subreaper { .. }),
            "{NO_CGROUP} set, yet {mode:?}"
        );
    } else if !matches!(mode, Containment::Cgroup { .. }) {
        eprintln!("cgroup v2 is not writable here ({mode:?}): only the subreaper is tested");
    }
}

/// Runs the test `name` of this module again in a copy of this binary without cgroups.
fn again_without_cgroups(name: &str) {
    agentsh_test_support::rerun_with_env(&format!("containment::{name}"), NO_CGROUP);
}

/// The pids `echo $$ $PPID` printed: the shell's and its supervisor's.
fn shell_and_supervisor(output: &str) -> (u32, u32) {
    let mut pids = output.split_whitespace().map(|p| p.parse().expect("a pid"));
    (
        pids.next().expect("the shell's pid"),
        pids.next().expect("the supervisor's pid"),
    )
}

fn assert_nothing_left(markers: &[&str], shell: u32) {
    let gone = || markers.iter().all(|m| alive_with(m).is_empty()) && !is_alive(shell);
    // The promise is within 1 s; the bound here is generous for a loaded machine.
    assert!(
        wait_until(Duration::from_secs(5), gone),
        "left behind: shell alive {}, {:?}",
        is_alive(shell),
        markers.iter().map(|m| alive_with(m)).collect::<Vec<_>>()
    );
}

#[test]
fn killing_the_supervisor_leaves_no_survivor() {
    check_containment();
    with_session("contain-kill-ppid", async |exec, s| {
        for (i, escape_first) in [false, true].into_iter().enumerate() {
            let (a, b) = (unique(&format!("100.71{i}")), unique(&format!("100.72{i}")));
            let ids = run(&exec, &s, "echo $$ $PPID").await;
            let (shell, _) = shell_and_supervisor(&ids.summary.output);
            let command = if escape_first {
                // The escapee was adopted by the supervisor before the supervisor died.
                format!("(setsid sleep {a} &); sleep 0.2; kill -9 $PPID; sleep {b}")
            } else {
                format!("kill -9 $PPID; (setsid sleep {a} &); sleep {b}")
            };
            let started = Instant::now();
            let result = run(&exec, &s, &command).await;
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "the call waited for its sleep"
            );
            assert!(result.session_restarted, "{command}: {result:?}");
            assert_eq!(result.exit_code, None, "{command}: {result:?}");
            assert_nothing_left(&[&a, &b], shell);
            let next = run(&exec, &s, "echo next").await;
            assert_eq!(
                next.summary.output, "next\n",
                "{command}: the next call works"
            );
            assert_eq!(next.exit_code, Some(0));
        }
    });
    again_without_cgroups("killing_the_supervisor_leaves_no_survivor");
}

/// The OOM killer's choice, imitated: SIGKILL to the supervisor from outside, once while a
/// command runs and once while the shell is idle with background jobs.
#[test]
fn a_supervisor_killed_from_outside_leaves_no_survivor() {
    check_containment();
    with_session("contain-oom", async |exec, s| {
        let (escapee, job, foreground) = (unique("100.731"), unique("100.732"), unique("100.733"));
        let ids = run(&exec, &s, "echo $$ $PPID").await;
        let (shell, supervisor) = shell_and_supervisor(&ids.summary.output);
        let command = format!("(setsid sleep {escapee} &); sleep {job} & sleep {foreground}");
        let running = run(&exec, &s, &command);
        let kill = async {
            assert!(
                wait_until(Duration::from_secs(5), || !alive_with(&foreground)
                    .is_empty()),
                "the command never started"
            );
            kill9(supervisor);
        };
        let (result, ()) = tokio::join!(running, kill);
        assert!(result.session_restarted, "{result:?}");
        assert_eq!(result.exit_code, None, "{result:?}");
        assert_nothing_left(&[&escapee, &job, &foreground], shell);

        let (idle_escapee, idle_job) = (unique("100.734"), unique("100.735"));
        let ids = run(
            &exec,
            &s,
            &format!("(setsid sleep {idle_escapee} &); sleep {idle_job} & echo $$ $PPID"),
        )
        .await;
        let (shell, supervisor) = shell_and_supervisor(&ids.summary.output);
        assert!(
            wait_until(Duration::from_secs(5), || !alive_with(&idle_escapee)
                .is_empty()
                && !alive_with(&idle_job).is_empty()),
            "the jobs never started"
        );
        kill9(supervisor);
        assert_nothing_left(&[&idle_escapee, &idle_job], shell);
        let next = run(&exec, &s, "echo next").await;
        assert_eq!(next.summary.output, "next\n");
    });
    again_without_cgroups("a_supervisor_killed_from_outside_leaves_no_survivor");
}

fn kill9(pid: u32) {
    let pid = rustix::process::Pid::from_raw(i32::try_from(pid).expect("a pid")).expect("a pid");
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).expect("SIGKILL");
}
