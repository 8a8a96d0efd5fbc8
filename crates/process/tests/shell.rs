//! Shell discovery and prefix, against real files.

use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use agentsh_process::shell::{
    ShellError, ShellKind, ShellSpec, apply_prefix, discover_shell, shell_prefix,
};

/// A made-up environment for the discovery functions.
fn lookup(pairs: Vec<(&'static str, OsString)>) -> impl Fn(&str) -> Option<OsString> {
    move |name| {
        pairs
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.clone())
    }
}

/// Creates `dir/name` as an executable (or not) file.
fn program(dir: &Path, name: &str, executable: bool) -> PathBuf {
    fs::create_dir_all(dir).expect("create dir");
    let path = dir.join(name);
    fs::write(&path, "#!/bin/sh\n").expect("write program");
    let mode = if executable { 0o755 } else { 0o644 };
    fs::set_permissions(&path, fs::Permissions::from_mode(mode)).expect("chmod program");
    path
}

#[test]
fn shell_kind_is_detected_from_the_file_name() {
    let cases = [
        ("/bin/bash", Some(ShellKind::Bash)),
        ("/usr/local/bin/bash5.2", Some(ShellKind::Bash)),
        ("/opt/homebrew/bin/zsh", Some(ShellKind::Zsh)),
        ("/usr/bin/zsh-5.9", Some(ShellKind::Zsh)),
        ("/bin/sh", None),
        ("/bin/dash", None),
        ("/usr/bin/fish", None),
        ("/usr/bin/rbash", None),
        ("/usr/bin/bashful", None),
        ("bash", Some(ShellKind::Bash)),
    ];
    for (path, kind) in cases {
        assert_eq!(ShellKind::from_path(Path::new(path)), kind, "{path}");
    }
    assert_eq!(ShellSpec::from_path("/usr/bin/fish").kind, ShellKind::Sh);
}

#[test]
fn shell_setting_wins_over_shell_variable_and_path() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    program(&bin, "bash", true);
    let zsh = program(&tmp.path().join("opt"), "zsh", true);
    let env = lookup(vec![
        ("SHELL", bin.join("bash").into()),
        ("PATH", bin.clone().into()),
    ]);
    let spec = discover_shell(Some(&zsh), &env).unwrap();
    assert_eq!(
        spec,
        ShellSpec {
            path: zsh,
            kind: ShellKind::Zsh
        }
    );
    // A bare name is looked up on PATH.
    let spec = discover_shell(Some(Path::new("bash")), &env).unwrap();
    assert_eq!(
        spec,
        ShellSpec {
            path: bin.join("bash"),
            kind: ShellKind::Bash
        }
    );
    // Another shell by setting is used as a plain POSIX shell.
    let dash = program(&bin, "dash", true);
    assert_eq!(
        discover_shell(Some(&dash), &env).unwrap().kind,
        ShellKind::Sh
    );
}

#[test]
fn unusable_shell_setting_is_an_error_naming_the_setting() {
    let tmp = tempfile::tempdir().unwrap();
    let not_exec = program(tmp.path(), "bash", false);
    let env = lookup(vec![("PATH", tmp.path().into())]);
    let err = discover_shell(Some(&not_exec), &env).unwrap_err();
    assert_eq!(
        err,
        ShellError::NotExecutable {
            path: not_exec.clone()
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "bash.shell = \"{}\": not an executable file",
            not_exec.display()
        )
    );
    let err = discover_shell(Some(Path::new("zsh")), &env).unwrap_err();
    assert_eq!(err, ShellError::NotOnPath { name: "zsh".into() });
    assert!(
        err.to_string()
            .starts_with("bash.shell = \"zsh\": no executable of that name on PATH")
    );
}

#[test]
fn shell_variable_is_used_when_it_is_bash_or_zsh() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    program(&bin, "bash", true);
    let zsh = program(&tmp.path().join("usr"), "zsh", true);
    let env = lookup(vec![("SHELL", zsh.clone().into()), ("PATH", bin.into())]);
    assert_eq!(
        discover_shell(None, env).unwrap(),
        ShellSpec {
            path: zsh,
            kind: ShellKind::Zsh
        }
    );
}

#[test]
fn other_shell_variable_falls_back_to_bash_on_path() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    let fish = program(&tmp.path().join("usr"), "fish", true);
    program(&bin, "bash", true);
    // Empty and relative PATH entries are never searched.
    let path = std::env::join_paths([Path::new(""), Path::new("rel"), &bin]).unwrap();
    let env = lookup(vec![("SHELL", fish.into()), ("PATH", path)]);
    let spec = discover_shell(None, env).unwrap();
    assert_eq!(
        spec,
        ShellSpec {
            path: bin.join("bash"),
            kind: ShellKind::Bash
        }
    );
    // A bash or zsh $SHELL that does not exist is skipped too.
    let env = lookup(vec![
        ("SHELL", tmp.path().join("gone/zsh").into()),
        ("PATH", bin.clone().into()),
    ]);
    assert_eq!(discover_shell(None, env).unwrap().path, bin.join("bash"));
}

#[test]
fn nothing_found_falls_back_to_bin_sh() {
    let tmp = tempfile::tempdir().unwrap();
    let env = lookup(vec![("PATH", tmp.path().into())]);
    let spec = discover_shell(None, env).unwrap();
    assert_eq!(
        spec,
        ShellSpec {
            path: "/bin/sh".into(),
            kind: ShellKind::Sh
        }
    );
    assert_eq!(
        discover_shell(None, lookup(vec![])).unwrap().path,
        Path::new("/bin/sh")
    );
}

#[test]
fn prefix_setting_wins_then_environment_and_blank_means_none() {
    let env = lookup(vec![("AGENTSH_SHELL_PREFIX", "nice -n 5".into())]);
    assert_eq!(shell_prefix(Some("time"), &env).as_deref(), Some("time"));
    assert_eq!(shell_prefix(None, &env).as_deref(), Some("nice -n 5"));
    assert_eq!(shell_prefix(Some(""), &env), None);
    assert_eq!(
        shell_prefix(None, lookup(vec![("AGENTSH_SHELL_PREFIX", " ".into())])),
        None
    );
    assert_eq!(shell_prefix(None, lookup(vec![])), None);
    assert_eq!(
        apply_prefix("nice -n 5", "make -j2 test"),
        "nice -n 5 make -j2 test"
    );
}
