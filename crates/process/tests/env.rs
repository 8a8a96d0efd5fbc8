//! Environment hardening: the table, what a real process sees, the cache key.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::process::Command;

use agentsh_process::env::{HARDENED_ENV, TerminalKind, env_cache_key, hardened_env};

/// The hardened environment table, copied by hand: the test is the second copy that the table
/// must agree with.
const SPEC_HARDENED: &[(&str, &str)] = &[
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("MANPAGER", "cat"),
    ("SYSTEMD_PAGER", "cat"),
    ("BAT_PAGER", "cat"),
    ("DELTA_PAGER", "cat"),
    ("GH_PAGER", "cat"),
    ("GLAB_PAGER", "cat"),
    ("PSQL_PAGER", "cat"),
    ("MYSQL_PAGER", "cat"),
    ("HOMEBREW_PAGER", "cat"),
    ("AWS_PAGER", ""),
    ("LESS", "FRX"),
    ("GIT_EDITOR", "true"),
    ("VISUAL", "true"),
    ("EDITOR", "true"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("SSH_ASKPASS", "/usr/bin/false"),
    ("GPG_TTY", "not a tty"),
    ("CI", "1"),
    ("npm_config_yes", "true"),
    ("npm_config_update_notifier", "false"),
    ("npm_config_fund", "false"),
    ("npm_config_audit", "false"),
    ("npm_config_progress", "false"),
    ("PNPM_DISABLE_SELF_UPDATE_CHECK", "true"),
    ("PNPM_UPDATE_NOTIFIER", "false"),
    ("YARN_ENABLE_TELEMETRY", "0"),
    ("YARN_ENABLE_PROGRESS_BARS", "0"),
    ("CARGO_TERM_PROGRESS_WHEN", "never"),
    ("DEBIAN_FRONTEND", "noninteractive"),
    ("PIP_NO_INPUT", "1"),
    ("PIP_DISABLE_PIP_VERSION_CHECK", "1"),
    ("TF_INPUT", "0"),
    ("TF_IN_AUTOMATION", "1"),
    ("GH_PROMPT_DISABLED", "1"),
    ("COMPOSER_NO_INTERACTION", "1"),
    ("CLOUDSDK_CORE_DISABLE_PROMPTS", "1"),
    ("PYTHONUNBUFFERED", "1"),
];

fn os_pairs(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).into(), (*v).into()))
        .collect()
}

fn as_map(env: &[(OsString, OsString)]) -> BTreeMap<String, String> {
    env.iter()
        .map(|(k, v)| {
            (
                k.clone().into_string().expect("UTF-8 name"),
                v.clone().into_string().expect("UTF-8 value"),
            )
        })
        .collect()
}

fn user_env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn hardened_table_is_exactly_the_spec_list() {
    let mut table: Vec<(&str, &str)> = HARDENED_ENV.to_vec();
    let mut spec: Vec<(&str, &str)> = SPEC_HARDENED.to_vec();
    table.sort_unstable();
    spec.sort_unstable();
    assert_eq!(table, spec);
}

#[test]
fn every_spec_variable_reaches_the_environment_with_its_exact_value() {
    let env = as_map(&hardened_env(
        os_pairs(&[("PAGER", "less"), ("LESS", "-R"), ("EDITOR", "vim")]),
        &BTreeMap::new(),
        TerminalKind::Pipe,
    ));
    for (name, value) in SPEC_HARDENED {
        assert_eq!(env.get(*name).map(String::as_str), Some(*value), "{name}");
    }
}

#[test]
fn terminal_kind_decides_term_and_no_color() {
    let base = os_pairs(&[("TERM", "xterm-kitty")]);
    let pipe = as_map(&hardened_env(
        base.clone(),
        &BTreeMap::new(),
        TerminalKind::Pipe,
    ));
    assert_eq!(pipe["TERM"], "dumb");
    assert_eq!(pipe["NO_COLOR"], "1");
    let pty = as_map(&hardened_env(base, &BTreeMap::new(), TerminalKind::Pty));
    assert_eq!(pty["TERM"], "xterm-256color");
    assert!(!pty.contains_key("NO_COLOR"));
}

#[test]
fn user_bash_env_wins_over_hardening_and_base() {
    let user = user_env(&[
        ("PAGER", "less"),
        ("AWS_PAGER", "less -R"),
        ("TERM", "vt100"),
        ("HOME", "/elsewhere"),
        ("MY_VAR", "x y"),
    ]);
    let env = as_map(&hardened_env(
        os_pairs(&[("HOME", "/home/u"), ("PATH", "/usr/bin:/bin")]),
        &user,
        TerminalKind::Pipe,
    ));
    assert_eq!(env["PAGER"], "less");
    assert_eq!(env["AWS_PAGER"], "less -R");
    assert_eq!(env["TERM"], "vt100");
    assert_eq!(env["HOME"], "/elsewhere");
    assert_eq!(env["MY_VAR"], "x y");
    assert_eq!(env["PATH"], "/usr/bin:/bin");
    // Variables the user did not set stay hardened.
    assert_eq!(env["GIT_PAGER"], "cat");
    assert_eq!(env["NO_COLOR"], "1");
}

/// agentsh run inside an agentsh shell inherits that shell's command marker; a shell it starts
/// (piped or PTY) must not carry it on, or its processes would be taken for the outer command's.
#[test]
fn an_inherited_command_marker_is_dropped() {
    for terminal in [TerminalKind::Pipe, TerminalKind::Pty] {
        let env = as_map(&hardened_env(
            os_pairs(&[("AGENTSH_CMD", "a1b2c3.7"), ("PATH", "/bin")]),
            &BTreeMap::new(),
            terminal,
        ));
        assert!(!env.contains_key("AGENTSH_CMD"), "{terminal:?}");
        assert_eq!(env["PATH"], "/bin");
    }
}

#[test]
fn hardened_env_is_sorted_unique_and_independent_of_base_order() {
    let base = os_pairs(&[
        ("ZED", "1"),
        ("ALPHA", "first"),
        ("MID", "m"),
        ("ALPHA", "second"),
    ]);
    let mut reversed = base.clone();
    reversed.reverse();
    let a = hardened_env(base, &BTreeMap::new(), TerminalKind::Pty);
    let names: Vec<&OsString> = a.iter().map(|(k, _)| k).collect();
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(names, sorted);
    // A later duplicate in the base wins.
    assert_eq!(as_map(&a)["ALPHA"], "second");
    let b = hardened_env(
        reversed
            .into_iter()
            .filter(|(k, v)| !(k == "ALPHA" && v == "second")),
        &BTreeMap::new(),
        TerminalKind::Pty,
    );
    assert_eq!(as_map(&b)["ALPHA"], "first");
    assert_eq!(a.len(), b.len());
}

#[test]
fn a_real_process_sees_the_hardened_environment() {
    let env = hardened_env(
        std::env::vars_os(),
        &user_env(&[("PAGER", "more")]),
        TerminalKind::Pipe,
    );
    let out = Command::new("env")
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for line in [
        "GPG_TTY=not a tty",
        "AWS_PAGER=",
        "TERM=dumb",
        "NO_COLOR=1",
        "PAGER=more",
        "LESS=FRX",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }
}

#[test]
fn env_cache_key_renders_sorted_nul_terminated_pairs() {
    let key = env_cache_key(&user_env(&[("B", "2"), ("A", "x=y")]));
    assert_eq!(key, b"A=x=y\0B=2\0");
    // A later duplicate wins, as in `hardened_env`.
    let dup = env_cache_key([("A", "1"), ("B", "2"), ("A", "3")]);
    assert_eq!(dup, b"A=3\0B=2\0");
    // No two different environments render the same.
    assert_ne!(
        env_cache_key([("A", "1\nB=2")]),
        env_cache_key([("A", "1"), ("B", "2")])
    );
    // Byte order: upper-case names before the lower-case `npm_config_*`, which sort before `zz`.
    let env = hardened_env(
        os_pairs(&[("zz", "z")]),
        &BTreeMap::new(),
        TerminalKind::Pipe,
    );
    let key = env_cache_key(env.iter().map(|(k, v)| (k, v)));
    assert!(key.starts_with(b"AWS_PAGER=\0BAT_PAGER=cat\0"));
    assert!(key.ends_with(b"npm_config_yes=true\0zz=z\0"));
}

#[test]
fn pty_jobs_get_no_prompt_suppressors_inherited_or_hardened() {
    use agentsh_process::env::PROMPT_SUPPRESSORS;
    let base: Vec<(OsString, OsString)> = vec![
        ("CI".into(), "true".into()),
        ("DEBIAN_FRONTEND".into(), "noninteractive".into()),
        ("HOME".into(), "/home/u".into()),
    ];
    let mut user = BTreeMap::new();
    user.insert("TF_INPUT".to_owned(), "0".to_owned());
    let job = as_map(&hardened_env(base.clone(), &user, TerminalKind::PtyJob));
    for name in PROMPT_SUPPRESSORS {
        if *name == "TF_INPUT" {
            // What the user's `bash.env` names is theirs.
            assert_eq!(job.get(*name).map(String::as_str), Some("0"));
        } else {
            assert!(
                !job.contains_key(*name),
                "{name} in a PTY job's environment"
            );
        }
    }
    assert_eq!(job.get("TERM").map(String::as_str), Some("xterm-256color"));
    assert_eq!(job.get("PAGER").map(String::as_str), Some("cat"));
    assert_eq!(job.get("HOME").map(String::as_str), Some("/home/u"));
    // An ordinary PTY run keeps them.
    let pty = as_map(&hardened_env(base, &user, TerminalKind::Pty));
    assert_eq!(pty.get("CI").map(String::as_str), Some("1"));
    assert!(pty.contains_key("GIT_TERMINAL_PROMPT"));
}
