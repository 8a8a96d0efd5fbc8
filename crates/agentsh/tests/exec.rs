//! `agentsh exec` (print mode): output, exit statuses, signals, config errors.

use std::process::Stdio;
use std::time::Duration;

use crate::util::{
    LIVENESS, TestEnv, assert_no_survivor, finish, marked_sleep, processes_with, unique_marker,
    wait_output,
};

#[test]
fn success_prints_the_text_and_exits_zero() {
    let env = TestEnv::new();
    let done = env.exec(&["--", "echo", "hello", "world"]);
    assert_eq!(done.code(), 0, "{done:?}");
    assert_eq!(done.stdout, "hello world\n");
    // Where cgroup v2 is not writable agentsh says so once (see `containment`); nothing else.
    let stderr: Vec<&str> = done
        .stderr
        .lines()
        .filter(|line| !line.starts_with(crate::containment::NO_CGROUP_WARNING))
        .collect();
    assert_eq!(stderr, Vec::<&str>::new(), "{done:?}");
}

#[test]
fn words_are_joined_with_single_spaces_and_run_by_the_shell() {
    let env = TestEnv::new();
    // One word holding a pipeline, as in the README.
    let done = env.exec(&["--", "printf 'a\\nb\\nc\\n' | tail -n 2"]);
    assert_eq!(done.stdout, "b\nc\n");
    // Words are joined, then the shell splits them again: `echo a  b c` prints `a b c`.
    let done = env.exec(&["--", "echo", "a  b", "c"]);
    assert_eq!(done.stdout, "a b c\n");
}

#[test]
fn a_non_zero_exit_is_a_tool_error() {
    let env = TestEnv::new();
    let done = env.exec(&["--", "echo out; (exit 3)"]);
    assert_eq!(done.code(), 1, "{done:?}");
    assert_eq!(done.stdout, "out\n\nCommand exited with code 3\n");
}

#[test]
fn a_timeout_is_a_tool_error() {
    let env = TestEnv::new();
    let done = env.exec(&["--timeout", "1", "--", "echo started; sleep 30 & wait"]);
    assert_eq!(done.code(), 1, "{done:?}");
    assert_eq!(
        done.stdout,
        "[Command timed out after 1 seconds]\nstarted\n"
    );
}

#[test]
fn a_bad_cwd_is_a_tool_error() {
    let env = TestEnv::new();
    let done = env.exec(&["--cwd", "missing", "--", "true"]);
    assert_eq!(done.code(), 1, "{done:?}");
    let expected = format!(
        "Working directory does not exist: {}\n",
        env.work_dir().join("missing").display()
    );
    assert_eq!(done.stdout, expected);
}

#[test]
fn cwd_head_and_tail_are_tool_arguments() {
    let env = TestEnv::new();
    std::fs::create_dir(env.work_dir().join("sub")).expect("mkdir");
    let done = env.exec(&["--cwd", "sub", "--", "pwd"]);
    assert_eq!(
        done.stdout,
        format!("{}\n", env.work_dir().join("sub").display())
    );
    let done = env.exec(&["--head", "3", "--tail", "2", "--", "seq", "10"]);
    assert_eq!((done.code(), done.stdout.as_str()), (0, "2\n3\n"));
}

#[test]
fn interception_needs_the_suggested_tool() {
    let env = TestEnv::with_config("[bash_interceptor]\nenabled = true\n");
    std::fs::write(env.work_dir().join("notes.txt"), "hi\n").expect("write");
    // Without --tools nothing is available to suggest: the command runs.
    let done = env.exec(&["--", "cat", "notes.txt"]);
    assert_eq!((done.code(), done.stdout.as_str()), (0, "hi\n"));
    let done = env.exec(&["--tools", "read,grep", "--", "cat", "notes.txt"]);
    assert_eq!(done.code(), 1, "{done:?}");
    assert_eq!(
        done.stdout,
        "Blocked: Use the `read` tool instead of cat/head/tail. It provides better context and handles binary files.\n\nOriginal command: cat notes.txt\n"
    );
}

#[test]
fn usage_errors_exit_two() {
    let env = TestEnv::new();
    let done = env.exec(&[]);
    assert_eq!(done.code(), 2, "no command: {done:?}");
    assert_eq!(done.stdout, "");
    let done = env.exec(&["--head", "many", "--", "true"]);
    assert_eq!(done.code(), 2, "{done:?}");
    let done = finish(env.command(&["frobnicate"]));
    assert_eq!(done.code(), 2, "{done:?}");
}

#[test]
fn help_is_available_everywhere() {
    let env = TestEnv::new();
    for args in [&["--help"][..], &["exec", "--help"], &["rpc", "--help"]] {
        let done = finish(env.command(args));
        assert_eq!(done.code(), 0, "{args:?}: {done:?}");
        assert!(
            done.stdout.contains("Usage: agentsh"),
            "{args:?}: {}",
            done.stdout
        );
    }
}

#[test]
fn config_errors_name_file_and_key_and_exit_two() {
    let env = TestEnv::with_config("[bash]\nmax_shells = \"many\"\n");
    let done = env.exec(&["--", "true"]);
    assert_eq!(done.code(), 2, "{done:?}");
    assert_eq!(done.stdout, "");
    let path = env.config_path();
    let prefix = format!(
        "agentsh: config error in {}: bash.max_shells: ",
        path.display()
    );
    assert!(done.stderr.starts_with(&prefix), "{}", done.stderr);
    assert_eq!(done.stderr.lines().count(), 1, "{}", done.stderr);

    let env = TestEnv::with_config("[output]\nmax_bites = 10\n");
    let done = env.exec(&["--", "true"]);
    assert_eq!(done.code(), 2);
    assert!(
        done.stderr.contains(&format!(
            "{}: output.max_bites: ",
            env.config_path().display()
        )),
        "{}",
        done.stderr
    );

    // A missing explicit file is an error too; so is one named by AGENTSH_CONFIG.
    let env = TestEnv::new();
    let missing = env.root().join("nope.toml");
    let done = finish(env.command(&[
        "exec",
        "--config",
        missing.to_str().expect("utf-8"),
        "--",
        "true",
    ]));
    assert_eq!(done.code(), 2);
    assert_eq!(
        done.stderr,
        format!(
            "agentsh: config error in {}: file not found\n",
            missing.display()
        )
    );
    let done = finish(
        env.command(&["exec", "--", "true"])
            .env("AGENTSH_CONFIG", &missing),
    );
    assert_eq!(done.code(), 2, "{done:?}");

    // rpc refuses a broken config the same way, before reading any input.
    let env = TestEnv::with_config("[bash]\nvirtual_terminal = \"maybe\"\n");
    let config = env.config_path();
    let done = finish(
        env.command(&["rpc", "--config", config.to_str().expect("utf-8")])
            .stdin(Stdio::piped()),
    );
    assert_eq!(done.code(), 2, "{done:?}");
    assert!(
        done.stderr.contains("bash.virtual_terminal"),
        "{}",
        done.stderr
    );
    assert_eq!(done.stdout, "");
}

#[test]
fn the_default_config_file_is_read() {
    let env = TestEnv::new();
    let dir = env.root().join("config").join("agentsh");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("config.toml"), "[bash]\ndefault_timeout = 7\n").expect("write");
    let done = finish(env.command(&["exec", "--json", "--", "true"]));
    assert_eq!(done.json()["details"]["timeout"], 7, "{done:?}");
}

#[test]
fn warnings_are_printed_once_on_stderr() {
    let env = TestEnv::with_config(
        "[bash_interceptor]\nenabled = true\n[[bash_interceptor.rules]]\npattern = \"(\"\ntool = \"read\"\nmessage = \"m\"\n",
    );
    let done = env.exec(&["--", "echo", "ran"]);
    assert_eq!((done.code(), done.stdout.as_str()), (0, "ran\n"));
    // The text is the session's, whole (this one spans lines: the regex error shows a caret).
    assert!(
        done.stderr
            .starts_with("agentsh: warning: bash_interceptor.rules[0] (pattern `(`)"),
        "{}",
        done.stderr
    );
    assert_eq!(
        done.stderr.matches("agentsh: warning: ").count(),
        1,
        "{}",
        done.stderr
    );
}

#[test]
fn json_output_is_the_tool_result() {
    let env = TestEnv::new();
    let done = env.exec(&["--json", "--", "echo hi; (exit 4)"]);
    assert_eq!(done.code(), 1);
    assert_eq!(done.stdout.lines().count(), 1, "one line: {}", done.stdout);
    let result = done.json();
    assert_eq!(result["content"][0]["type"], "text");
    assert_eq!(
        result["content"][0]["text"],
        "hi\n\nCommand exited with code 4"
    );
    assert_eq!(result["isError"], true);
    let details = &result["details"];
    assert_eq!(details["exitCode"], 4);
    assert_eq!(details["cancelled"], false);
    assert_eq!(details["timedOut"], false);
    assert_eq!(details["sessionRestarted"], false);
    assert_eq!(details["cwd"], env.work_dir().to_str().expect("utf-8"));
    assert_eq!(details["timeout"], 300);
}

/// Regression (issue 10, class 11): `--timeout inf` ran with the default 300 s (JSON cannot
/// carry infinity), and `--timeout nan` was accepted.
#[test]
fn infinite_timeouts_clamp_and_nan_is_a_usage_error() {
    let env = TestEnv::new();
    let done = env.exec(&["--json", "--timeout", "inf", "--", "true"]);
    assert_eq!(done.code(), 0, "{done:?}");
    assert_eq!(done.json()["details"]["timeout"], 3600);
    let done = env.exec(&["--json", "--timeout=-inf", "--", "true"]);
    assert_eq!(done.code(), 0, "{done:?}");
    assert_eq!(done.json()["details"]["timeout"], 1);
    let done = env.exec(&["--timeout", "nan", "--", "touch ran"]);
    assert_eq!(done.code(), 2, "{done:?}");
    assert!(done.stderr.contains("--timeout"), "{}", done.stderr);
    assert!(
        !env.work_dir().join("ran").exists(),
        "nothing runs on a usage error"
    );
}

/// A signal to agentsh while a command runs: the tree ends, exit status 128 + the signal.
fn check_interrupt(signal: libc::c_int, code: i32) {
    let env = TestEnv::new();
    let marker = unique_marker();
    let config = env.config_path();
    let child = env
        .command(&[
            "exec",
            "--config",
            config.to_str().expect("utf-8"),
            "--",
            &marked_sleep(&marker),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    // Wait for the sleep itself (a child of `sh`), not agentsh whose argv also has the marker.
    let deadline = std::time::Instant::now() + LIVENESS;
    while processes_with(&marker).iter().all(|&pid| pid == child.id()) {
        assert!(
            std::time::Instant::now() < deadline,
            "the command never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = libc::pid_t::try_from(child.id()).expect("pid fits");
    // SAFETY: kill(2) on our own child's pid; it cannot have been reaped yet (we hold the Child).
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    let done = wait_output(child, LIVENESS);
    assert_eq!(done.status.code(), Some(code), "{done:?}");
    assert!(done.stdout.ends_with("Command aborted\n"), "{done:?}");
    assert_no_survivor(&marker);
}

#[test]
fn sigint_ends_the_command_tree_and_exits_130() {
    check_interrupt(libc::SIGINT, 130);
}

/// Regression (issue 10, class 11): SIGTERM exited 130 like SIGINT; it must exit 143.
#[test]
fn sigterm_ends_the_command_tree_and_exits_143() {
    check_interrupt(libc::SIGTERM, 143);
}

#[test]
fn sighup_ends_the_command_tree_and_exits_129() {
    check_interrupt(libc::SIGHUP, 129);
}

#[test]
fn no_survivor_after_a_normal_exit() {
    // A background job started by the command does not outlive agentsh exec.
    let env = TestEnv::new();
    let marker = unique_marker();
    let done = env.exec(&["--", &format!("({}) & echo started", marked_sleep(&marker))]);
    assert_eq!(
        (done.code(), done.stdout.as_str()),
        (0, "started\n"),
        "{done:?}"
    );
    assert_no_survivor(&marker);
}

#[test]
fn logs_go_to_stderr_only() {
    let env = TestEnv::new();
    let config = env.config_path();
    let done = finish(
        env.command(&[
            "exec",
            "--config",
            config.to_str().expect("utf-8"),
            "--",
            "echo",
            "clean",
        ])
        .env("RUST_LOG", "trace"),
    );
    assert_eq!(
        (done.code(), done.stdout.as_str()),
        (0, "clean\n"),
        "{done:?}"
    );
    assert!(
        done.stderr.contains("DEBUG"),
        "debug logs reach stderr: {}",
        done.stderr
    );
    assert!(
        !done.stderr.contains('\u{1b}'),
        "no colours when stderr is not a terminal"
    );
}
