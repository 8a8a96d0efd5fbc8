//! `agentsh doctor`: every line true on this machine, checked against what actually happens.

use std::process::{Command, Stdio};

use crate::util::{Finished, TestEnv, finish};

/// `agentsh doctor` in `env` with its config; the lines as `(ok, what, finding)`.
fn doctor(env: &TestEnv, extra: &[&str]) -> (Finished, Vec<(bool, String, String)>) {
    let config = env.config_path();
    let mut args = vec!["doctor", "--config", config.to_str().expect("utf-8")];
    args.extend_from_slice(extra);
    let finished = finish(env.command(&args).stdin(Stdio::null()));
    let lines = finished
        .stdout
        .lines()
        .skip(1)
        .map(|line| {
            let (mark, rest) = line.split_at(line.char_indices().nth(1).map_or(0, |(i, _)| i));
            let ok = match mark.trim() {
                "✓" => true,
                "✗" => false,
                other => panic!("a line without ✓ or ✗ ({other:?}): {line}"),
            };
            let (what, finding) = rest.trim().split_once(": ").expect("what: finding");
            (ok, what.to_owned(), finding.to_owned())
        })
        .collect();
    (finished, lines)
}

fn line<'a>(lines: &'a [(bool, String, String)], what: &str) -> &'a (bool, String, String) {
    lines
        .iter()
        .find(|(_, name, _)| name == what)
        .unwrap_or_else(|| panic!("no `{what}` line in {lines:#?}"))
}

/// The first line `program args` prints, as the doctor reads it.
fn first_line(program: &str, args: &[&str]) -> Option<String> {
    let output = Command::new(program).args(args).output().ok()?;
    let text = if output.stdout.is_empty() {
        output.stderr
    } else {
        output.stdout
    };
    String::from_utf8_lossy(&text)
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .map(str::to_owned)
}

#[test]
fn every_line_of_the_doctor_is_true_here() {
    let env = TestEnv::new();
    std::fs::write(
        env.root().join("home/.bashrc"),
        "doctor_fn() { echo from-rc; }\n",
    )
    .expect("rc");
    let (finished, lines) = doctor(&env, &[]);
    assert_eq!(finished.code(), 0, "{finished:?}");
    assert!(
        finished.stdout.starts_with("agentsh "),
        "{}",
        finished.stdout
    );
    for what in [
        "config",
        "bash",
        "zsh",
        "rc snapshot",
        "commands",
        "/proc",
        "PTYs",
        "hidden input",
        "Landlock",
        "user namespaces",
        "seccomp",
        "resource limits",
        "sandbox read-only",
        "sandbox workspace-write",
        "network namespaces",
        "network allowlist",
        "tmux",
        "ssh",
        "artifacts",
    ] {
        line(&lines, what);
    }

    // The config, the shells and the programs: as the system says.
    let config = line(&lines, "config");
    assert!(config.0, "{config:?}");
    assert!(
        config.2.contains(&env.config_path().display().to_string()),
        "{config:?}"
    );
    for (what, args) in [
        ("bash", &["--version"][..]),
        ("zsh", &["--version"][..]),
        ("tmux", &["-V"][..]),
        ("ssh", &["-V"][..]),
    ] {
        let seen = line(&lines, what);
        match first_line(what, args) {
            Some(version) => assert!(seen.0 && seen.2.starts_with(&version), "{seen:?}"),
            None => assert!(!seen.0, "{what} is not here: {seen:?}"),
        }
    }

    // The rc snapshot: made now, then taken from the cache; the rc's function works.
    let snapshot = line(&lines, "rc snapshot");
    assert!(
        snapshot.0 && snapshot.2.contains(".bashrc sourced in"),
        "{snapshot:?}"
    );
    let (_, again) = doctor(&env, &[]);
    let snapshot = line(&again, "rc snapshot");
    assert!(
        snapshot.0 && snapshot.2.contains("taken from the cache"),
        "{snapshot:?}"
    );
    let ran = env.exec(&["--", "doctor_fn"]);
    assert_eq!(ran.stdout.trim(), "from-rc", "{ran:?}");
    let commands = line(&lines, "commands");
    assert!(
        commands.0 && commands.2.contains("sandbox off"),
        "{commands:?}"
    );

    // PTYs and hidden input: as a PTY job with `read -s` shows them (the job tests check it
    // in depth); here at least /proc and /dev/ptmx are what the doctor needs.
    assert_eq!(
        line(&lines, "/proc").0,
        std::fs::read_to_string("/proc/self/stat").is_ok()
    );
    assert_eq!(
        line(&lines, "PTYs").0,
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/ptmx")
            .is_ok()
    );

    // Each sandbox mode: a session with that mode starts exactly when the doctor says so, and
    // a write to its cwd goes through exactly in workspace-write.
    for (mode, writes) in [("read-only", false), ("workspace-write", true)] {
        let claimed = line(&lines, &format!("sandbox {mode}"));
        let sandboxed = TestEnv::with_config(&format!("[sandbox]\nmode = \"{mode}\"\n"));
        let ran = sandboxed.exec(&["--", ": > written && echo wrote"]);
        if claimed.0 {
            assert_eq!(
                ran.stdout.contains("wrote"),
                writes,
                "doctor said {claimed:?}, exec gave {ran:?}"
            );
            assert!(!ran.stderr.contains("Sandbox unavailable"), "{ran:?}");
        } else {
            assert!(
                ran.code() != 0 && ran.stderr.contains("Sandbox"),
                "doctor said {claimed:?}, exec gave {ran:?}"
            );
        }
    }
    let namespaces = line(&lines, "network namespaces");
    if namespaces.0 {
        let sandboxed = TestEnv::with_config("[sandbox]\nmode = \"read-only\"\n");
        let ran = sandboxed.exec(&["--", "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"]);
        assert_eq!(ran.stdout.trim(), "lo", "{ran:?}");
    }
    let allowlist = line(&lines, "network allowlist");
    assert_eq!(
        allowlist.0,
        line(&lines, "sandbox read-only").0,
        "the allowlist works where a sandbox does: {allowlist:?}"
    );

    // The resource limits: a cgroup where this test process finds one too, named as it
    // describes it.
    let limits = line(&lines, "resource limits");
    let mechanism = agentsh_process::limits_mechanism();
    assert_eq!(limits.0, mechanism.is_kernel_enforced(), "{limits:?}");
    let kind = mechanism
        .describe()
        .split(':')
        .next()
        .expect("a kind")
        .to_owned();
    assert!(limits.2.starts_with(&kind), "{limits:?} vs {kind}");

    // The artifact directory the config names.
    let artifacts = line(&lines, "artifacts");
    assert!(
        artifacts.0
            && artifacts
                .2
                .starts_with(&env.artifacts_dir().display().to_string()),
        "{artifacts:?}"
    );
}

#[test]
fn a_broken_config_is_named_and_exits_2() {
    let env = TestEnv::with_config("[bash]\ndefault_timeout = \"soon\"\n");
    let (finished, lines) = doctor(&env, &[]);
    assert_eq!(finished.code(), 2, "{finished:?}");
    let config = line(&lines, "config");
    assert!(!config.0, "{config:?}");
    // The same error exec reports for this file.
    let exec = env.exec(&["--", "true"]);
    assert_eq!(exec.code(), 2, "{exec:?}");
    let error = exec
        .stderr
        .trim()
        .strip_prefix("agentsh: ")
        .expect("agentsh: <error>");
    assert!(config.2.starts_with(error), "{config:?} vs {error:?}");
    // The rest of the report still comes, on the defaults.
    assert!(line(&lines, "bash").0);
    line(&lines, "artifacts");
}

#[test]
fn a_missing_cwd_is_named_and_exits_2() {
    let env = TestEnv::new();
    let (finished, lines) = doctor(&env, &["--cwd", "/nonexistent/agentsh-doctor"]);
    assert_eq!(finished.code(), 2, "{finished:?}");
    let cwd = line(&lines, "cwd");
    assert!(
        !cwd.0 && cwd.2.contains("/nonexistent/agentsh-doctor"),
        "{cwd:?}"
    );
}
