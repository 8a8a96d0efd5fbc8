//! `agentsh artifact`: the full output of an `agentsh exec` read back byte for byte, line
//! ranges, the texts of an id that cannot be read, and the session's options before or after
//! the subcommand.

use std::process::Stdio;

use crate::util::{Finished, TestEnv, finish};

/// A command whose output overflows [`SMALL_OUTPUT`]: many lines, a tab, two spaces, and a last
/// line without its newline.
const COMMAND: &str = "seq 1 3000; printf 'tab\\there  two spaces\\nno newline at the end'";

/// An `[output]` limit far below what [`COMMAND`] prints.
const SMALL_OUTPUT: &str = "[output]\nmax_bytes = 1024\n";

/// What `sh -c <command>` prints here.
fn shell_output(command: &str) -> String {
    let output = std::process::Command::new("sh")
        .args(["-c", command])
        .stdin(Stdio::null())
        .output()
        .expect("sh runs");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).expect("utf-8 output")
}

/// The id in the `Full: artifact://ID]` notice of an exec's text.
fn artifact_id(done: &Finished) -> String {
    let (_, rest) = done
        .stdout
        .rsplit_once("Full: artifact://")
        .unwrap_or_else(|| panic!("no artifact named: {done:?}"));
    let id: String = rest.chars().take_while(char::is_ascii_digit).collect();
    assert!(!id.is_empty(), "{done:?}");
    id
}

/// `agentsh exec` of [`COMMAND`] in `env`; the id of its artifact.
fn exec_overflowing(env: &TestEnv) -> String {
    let done = env.exec(&["--", COMMAND]);
    assert_eq!(done.code(), 0, "{done:?}");
    artifact_id(&done)
}

/// `agentsh artifact --config <env's config> <args…>`, waited for.
fn artifact(env: &TestEnv, args: &[&str]) -> Finished {
    let config = env.config_path();
    let mut all = vec!["artifact", "--config", config.to_str().expect("utf-8 path")];
    all.extend_from_slice(args);
    finish(env.command(&all).stdin(Stdio::null()))
}

/// stderr's lines, but for the one warning a host without writable cgroups gives.
fn stderr_lines(done: &Finished) -> Vec<&str> {
    done.stderr
        .lines()
        .filter(|line| !line.starts_with(crate::containment::NO_CGROUP_WARNING))
        .collect()
}

#[test]
fn the_full_output_of_an_exec_reads_back_byte_exact() {
    let env = TestEnv::with_config(SMALL_OUTPUT);
    let id = exec_overflowing(&env);
    let expected = shell_output(COMMAND);
    assert!(expected.len() > 10_000, "the command overflows the limit");
    for given in [id.clone(), format!("artifact://{id}")] {
        let done = artifact(&env, &[&given]);
        assert_eq!(done.code(), 0, "{given}: {done:?}");
        assert!(
            done.stdout == expected,
            "{given}: not the command's output: {done:?}"
        );
        assert_eq!(stderr_lines(&done), Vec::<&str>::new(), "{done:?}");
    }
}

#[test]
fn line_ranges_are_the_lines_sed_prints() {
    let env = TestEnv::with_config(SMALL_OUTPUT);
    let id = exec_overflowing(&env);
    // (--offset, --limit, the `sed -n` script that prints the same lines)
    let cases: [(Option<&str>, Option<&str>, &str); 7] = [
        (Some("1"), Some("1"), "1p"),
        (Some("5"), Some("5"), "5,9p"),
        (None, Some("3"), "1,3p"),
        (Some("2999"), None, "2999,$p"),
        // Across the last line, which has no newline.
        (Some("2998"), Some("10"), "2998,3007p"),
        (Some("3002"), Some("1"), "3002p"),
        // Past the end: nothing, and still success.
        (Some("5000"), Some("2"), "5000,5001p"),
    ];
    for (offset, limit, script) in cases {
        let mut args = vec![id.as_str()];
        if let Some(offset) = offset {
            args.extend(["--offset", offset]);
        }
        if let Some(limit) = limit {
            args.extend(["--limit", limit]);
        }
        let done = artifact(&env, &args);
        assert_eq!(done.code(), 0, "{args:?}: {done:?}");
        let expected = shell_output(&format!("{{ {COMMAND}; }} | sed -n '{script}'"));
        assert_eq!(done.stdout, expected, "{args:?} against sed -n '{script}'");
    }
}

#[test]
fn an_unknown_id_names_the_ones_there() {
    let env = TestEnv::with_config(SMALL_OUTPUT);
    let empty = artifact(&env, &["1"]);
    assert_eq!(empty.code(), 1, "{empty:?}");
    assert_eq!(empty.stdout, "");
    assert_eq!(
        stderr_lines(&empty),
        ["agentsh: Artifact 1 not found. Available: none"],
        "{empty:?}"
    );
    let id = exec_overflowing(&env);
    let unknown = artifact(&env, &["artifact://99"]);
    assert_eq!(unknown.code(), 1, "{unknown:?}");
    assert_eq!(unknown.stdout, "");
    let line = format!("agentsh: Artifact 99 not found. Available: {id}");
    assert_eq!(stderr_lines(&unknown), [line.as_str()], "{unknown:?}");
}

#[test]
fn an_id_that_is_not_digits_is_refused_with_the_stores_text() {
    let env = TestEnv::new();
    for (id, text) in [
        ("abc", "agentsh: artifact:// ID must be numeric, got: abc"),
        ("../1", "agentsh: artifact:// ID must be numeric, got: ../1"),
        (
            "artifact://x1",
            "agentsh: artifact:// ID must be numeric, got: x1",
        ),
        (
            "artifact://",
            "agentsh: artifact:// URL requires a numeric ID: artifact://",
        ),
    ] {
        let done = artifact(&env, &[id]);
        assert_eq!(done.code(), 1, "{id}: {done:?}");
        assert_eq!(done.stdout, "", "{id}");
        assert_eq!(stderr_lines(&done), [text], "{id}: {done:?}");
    }
    // What the command line cannot take is a usage error.
    for args in [
        &[][..],
        &["1", "--offset", "first"],
        &["1", "--limit", "-2"],
        &["1", "2"],
    ] {
        let done = artifact(&env, args);
        assert_eq!(done.code(), 2, "{args:?}: {done:?}");
        assert_eq!(done.stdout, "", "{args:?}");
    }
}

#[test]
fn config_goes_before_or_after_the_subcommand() {
    let env = TestEnv::with_config(SMALL_OUTPUT);
    let config = env.config_path();
    let config = config.to_str().expect("utf-8 path");
    // As the report had it: `--config` before `exec`.
    let done = finish(env.command(&["--config", config, "exec", "--", COMMAND]));
    assert_eq!(done.code(), 0, "{done:?}");
    let id = artifact_id(&done);
    let expected = shell_output(COMMAND);
    for args in [
        ["--config", config, "artifact", &id],
        ["artifact", "--config", config, &id],
        ["artifact", &id, "--config", config],
    ] {
        let done = finish(env.command(&args));
        assert_eq!(done.code(), 0, "{args:?}: {done:?}");
        assert!(done.stdout == expected, "{args:?}: {done:?}");
    }
    // The configuration names the store: without it, the default one, which has no such id.
    let default = finish(env.command(&["artifact", &id]));
    assert_eq!(default.code(), 1, "{default:?}");
    let line = format!("agentsh: Artifact {id} not found. Available: none");
    assert_eq!(stderr_lines(&default), [line.as_str()], "{default:?}");
    // `--cwd` too.
    let work = env.root().join("home");
    let work = work.to_str().expect("utf-8 path");
    for args in [
        ["--cwd", work, "exec", "--", "pwd"],
        ["exec", "--cwd", work, "--", "pwd"],
    ] {
        let done = finish(env.command(&args));
        assert_eq!(done.code(), 0, "{args:?}: {done:?}");
        assert_eq!(done.stdout, format!("{work}\n"), "{args:?}");
    }
}

#[test]
fn an_option_given_twice_is_a_usage_error_and_nothing_runs() {
    let env = TestEnv::new();
    let config = env.config_path();
    let config = config.to_str().expect("utf-8 path");
    let ran = env.work_dir().join("ran");
    for args in [
        &[
            "--config",
            config,
            "exec",
            "--config",
            config,
            "--",
            "touch ran",
        ][..],
        &[
            "exec",
            "--config",
            config,
            "--config",
            config,
            "--",
            "touch ran",
        ],
        &[
            "--config",
            config,
            "--config",
            config,
            "exec",
            "--",
            "touch ran",
        ],
        &["--cwd", ".", "exec", "--cwd", ".", "--", "touch ran"],
        &["--config", config, "artifact", "1", "--config", config],
    ] {
        let done = finish(env.command(args).stdin(Stdio::null()));
        assert_eq!(done.code(), 2, "{args:?}: {done:?}");
        assert_eq!(done.stdout, "", "{args:?}");
        assert!(
            done.stderr.contains("cannot be used multiple times"),
            "{args:?}: {done:?}"
        );
        assert!(!ran.exists(), "{args:?} ran the command");
    }
    let both = finish(env.command(&["--config", config, "exec", "--config", config, "--", "true"]));
    assert!(
        both.stderr.starts_with(
            "error: the argument '--config <FILE>' cannot be used multiple times (it was given \
             before 'exec' and after it; give it once)\n"
        ),
        "{both:?}"
    );
    // An option a subcommand does not take is refused before it as after it.
    let doctor = finish(env.command(&["--remote", "ssh://host", "doctor"]));
    assert_eq!(doctor.code(), 2, "{doctor:?}");
    assert!(
        doctor
            .stderr
            .contains("'--remote <TARGET>' cannot be used with 'agentsh doctor'"),
        "{doctor:?}"
    );
}

#[test]
fn nothing_after_the_double_dash_is_an_option() {
    let env = TestEnv::new();
    let config = env.config_path();
    let config = config.to_str().expect("utf-8 path");
    let done = finish(env.command(&[
        "--config", config, "exec", "--", "echo", "--config", "x", "--cwd", "y", "--remote", "z",
    ]));
    assert_eq!(done.code(), 0, "{done:?}");
    assert_eq!(done.stdout, "--config x --cwd y --remote z\n");
    // After `--`, an id that looks like an option is still the id.
    let done = finish(env.command(&["artifact", "--config", config, "--", "--limit"]));
    assert_eq!(done.code(), 1, "{done:?}");
    assert!(
        done.stderr
            .contains("agentsh: artifact:// ID must be numeric, got: --limit"),
        "{done:?}"
    );
}

/// Makes the file at `path` look last written 30 days ago (past the default 7 days).
fn make_old(path: &std::path::Path) {
    let when = std::time::SystemTime::now() - std::time::Duration::from_secs(30 * 86_400);
    std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|file| file.set_modified(when))
        .unwrap_or_else(|err| panic!("age {}: {err}", path.display()));
}

#[test]
fn a_session_start_removes_old_artifacts_at_most_once_a_period() {
    let env = TestEnv::with_config(SMALL_OUTPUT);
    let store = env.artifacts_dir();
    let first = exec_overflowing(&env);
    let first_path = store.join(format!("{first}.bash.log"));
    make_old(&first_path);

    // A session started when the last pass is a period old (the period shortened to zero)
    // hands retention to a thread: the old artifact goes while the session runs.
    let config = env.config_path();
    let mut command = env.command(&["rpc", "--config", config.to_str().expect("utf-8 path")]);
    command.env(agentsh_process::SWEEP_PERIOD_VAR, "0");
    let rpc = crate::util::Rpc::spawn(command);
    let stamp = store.join(".retention-stamp");
    let deadline = std::time::Instant::now() + crate::util::LIVENESS;
    while first_path.exists() || std::fs::metadata(&stamp).map_or(true, |meta| meta.len() == 0) {
        assert!(
            std::time::Instant::now() < deadline,
            "artifact {first} still there, or no pass finished, within {:?}",
            crate::util::LIVENESS
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let (status, _) = rpc.close(crate::util::LIVENESS);
    assert!(status.success(), "{status:?}");

    // Within the period (the default minute) no start removes anything, and ids go on.
    let second = exec_overflowing(&env);
    let id = |text: &str| text.parse::<u64>().expect("numeric id");
    assert_eq!(id(&second), id(&first) + 1);
    make_old(&store.join(format!("{second}.bash.log")));
    assert_eq!(env.exec(&["--", "true"]).code(), 0);
    let read = artifact(&env, &[&second, "--limit", "1"]);
    assert_eq!(read.code(), 0, "{read:?}");
    assert_eq!(read.stdout, "1\n");
}
