//! The rc snapshot through `agentsh exec`: sessions started together make it once, a slow rc
//! gets its time box, and a failure is remembered for the next session.

use std::fmt::Write as _;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::util::{Finished, LIVENESS, TestEnv, wait_output};

/// The first line of every rc here: each sourcing (only the snapshot's shell sources the rc;
/// command shells source the snapshot) leaves a line in `~/.sourced-count`.
const COUNT_LINE: &str = "echo sourced >> \"$HOME/.sourced-count\"\n";

/// Writes `body` as `~/.bashrc`, after [`COUNT_LINE`].
fn write_rc(env: &TestEnv, body: &str) {
    std::fs::write(
        env.root().join("home/.bashrc"),
        format!("{COUNT_LINE}{body}"),
    )
    .expect("write .bashrc");
}

/// How many times the rc was sourced.
fn sourced_count(env: &TestEnv) -> usize {
    std::fs::read_to_string(env.root().join("home/.sourced-count"))
        .map_or(0, |text| text.lines().count())
}

/// `agentsh exec --config <config> -- <command>`, started and not waited for.
fn start_exec(env: &TestEnv, command: &str) -> Child {
    let config = env.config_path();
    env.command(&[
        "exec",
        "--config",
        config.to_str().expect("utf-8 path"),
        "--",
        command,
    ])
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("spawn agentsh")
}

/// The lines of `done`'s stderr that say there is no rc snapshot.
fn snapshot_warnings(done: &Finished) -> Vec<&str> {
    done.stderr
        .lines()
        .filter(|line| line.contains("no rc snapshot"))
        .collect()
}

/// A `.bashrc` of 2,000 functions and a little busy work: about 0.2 s to source on an idle
/// machine, several times that when twenty of them compete for two cores.
fn big_rc() -> String {
    let mut rc = String::new();
    for i in 1..=2000 {
        let _ = writeln!(rc, "fn_{i}() {{ echo \"fn {i} $1\"; }}");
    }
    rc.push_str("for ((__i = 0; __i < 60000; __i++)); do :; done\n");
    rc
}

/// Regression: twenty sessions started together each sourced the rc themselves, and on a
/// 2-core machine about half ran past the time box and lost the user's functions.
#[test]
fn twenty_sessions_started_together_source_the_rc_once_and_all_get_it() {
    let env = TestEnv::new();
    write_rc(&env, &big_rc());
    let started = Instant::now();
    let children: Vec<Child> = (0..20).map(|_| start_exec(&env, "fn_2000 x")).collect();
    let runs: Vec<Finished> = children
        .into_iter()
        .map(|child| wait_output(child, Duration::from_secs(90)))
        .collect();
    eprintln!("20 sessions together took {:?}", started.elapsed());
    for done in &runs {
        assert_eq!(
            (done.code(), done.stdout.as_str()),
            (0, "fn 2000 x\n"),
            "{done:?}"
        );
        assert_eq!(snapshot_warnings(done), Vec::<&str>::new(), "{done:?}");
    }
    assert_eq!(sourced_count(&env), 1, "the rc was sourced more than once");
}

#[test]
fn an_rc_that_takes_3_s_works_with_the_default_time_box() {
    let env = TestEnv::new();
    write_rc(&env, "sleep 3\ngreet() { echo \"hello $1\"; }\n");
    let done = env.exec(&["--", "greet you"]);
    assert_eq!(
        (done.code(), done.stdout.as_str()),
        (0, "hello you\n"),
        "{done:?}"
    );
    assert_eq!(snapshot_warnings(&done), Vec::<&str>::new(), "{done:?}");
    assert_eq!(sourced_count(&env), 1);
}

/// `echo ran` ran, and the one snapshot warning is the 1 s time-out; the warnings.
#[track_caller]
fn ran_with_a_time_out_warning(done: &Finished) -> Vec<&str> {
    assert_eq!(
        (done.code(), done.stdout.as_str()),
        (0, "ran\n"),
        "{done:?}"
    );
    let warnings = snapshot_warnings(done);
    assert_eq!(warnings.len(), 1, "{done:?}");
    assert!(warnings[0].contains("took longer than 1 s"), "{done:?}");
    warnings
}

#[test]
fn an_rc_that_never_ends_is_stopped_at_the_time_box_and_remembered() {
    let env = TestEnv::with_config("[bash]\nsnapshot_timeout = 1\n");
    write_rc(&env, "while :; do sleep 1; done\ngreet() { echo hi; }\n");
    let done = env.exec(&["--", "echo ran"]);
    ran_with_a_time_out_warning(&done);
    assert_eq!(sourced_count(&env), 1);

    // The next session gives the same warning without running the rc again.
    let started = Instant::now();
    let done = env.exec(&["--", "echo ran"]);
    let elapsed = started.elapsed();
    let warnings = ran_with_a_time_out_warning(&done);
    assert!(warnings[0].contains("remembered"), "{done:?}");
    assert_eq!(sourced_count(&env), 1, "the rc was sourced again");
    assert!(elapsed < LIVENESS, "{elapsed:?}");
}
