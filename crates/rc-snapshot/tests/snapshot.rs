//! The rc snapshot, against real shells and real processes.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use agentsh_process::env::{TerminalKind, hardened_env};
use agentsh_process::shell::discover_shell;
use agentsh_rc_snapshot::{
    ShellKind, ShellSpec, Snapshot, SnapshotError, SnapshotOptions, default_cache_dir,
    snapshot_for, snapshot_with,
};
use agentsh_test_support::alive_with_arg;

/// A made-up environment for the discovery functions.
fn lookup(pairs: Vec<(&'static str, OsString)>) -> impl Fn(&str) -> Option<OsString> {
    move |name| {
        pairs
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.clone())
    }
}

/// The user's `[env]` table, from pairs.
fn user_env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

pub(crate) fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/rc")
        .join(name)
}

/// A temporary home holding a fixture as its rc file, and a cache directory.
pub(crate) struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    pub(crate) fn new(fixture_name: &str, rc_name: &str) -> Self {
        let dir = tempfile::tempdir().expect("temp home");
        fs::copy(fixture(fixture_name), dir.path().join(rc_name)).expect("copy fixture");
        Self { dir }
    }
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }
    pub(crate) fn cache(&self) -> PathBuf {
        self.dir.path().join("cache/agentsh/snapshots")
    }
    pub(crate) fn sourced_count(&self) -> usize {
        fs::read_to_string(self.path().join(".sourced-count")).map_or(0, |s| s.lines().count())
    }
    pub(crate) fn snapshot(&self, shell: &ShellSpec) -> Result<Option<Snapshot>, SnapshotError> {
        snapshot_for(shell, self.path(), &self.cache(), &shell_env())
    }
    pub(crate) fn snapshot_timed(
        &self,
        shell: &ShellSpec,
        timeout: Duration,
    ) -> Result<Option<Snapshot>, SnapshotError> {
        let options = SnapshotOptions {
            timeout,
            ..SnapshotOptions::default()
        };
        snapshot_with(shell, self.path(), &self.cache(), &shell_env(), &options)
    }
    /// Every file in the cache directory, sorted.
    pub(crate) fn cached_files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = fs::read_dir(self.cache())
            .map(|dir| dir.map(|e| e.expect("dir entry").path()).collect())
            .unwrap_or_default();
        files.sort();
        files
    }
    /// The snapshot files (`*.sh`) in the cache directory.
    pub(crate) fn snapshot_files(&self) -> Vec<PathBuf> {
        self.cached_files()
            .into_iter()
            .filter(|path| path.extension() == Some("sh".as_ref()))
            .collect()
    }
}

/// Writes `rc` as the `.bashrc` of `home` and takes a snapshot of it (cache under `home`).
fn snapshot_with_bashrc(home: &Path, rc: &str) {
    fs::write(home.join(".bashrc"), rc).expect("write .bashrc");
    snapshot_for(&bash(), home, &home.join("cache"), &shell_env())
        .expect("the snapshot runs")
        .expect("bash gives a snapshot");
}

pub(crate) fn shell_env() -> Vec<(OsString, OsString)> {
    hardened_env(std::env::vars_os(), &BTreeMap::new(), TerminalKind::Pipe)
}

pub(crate) fn bash() -> ShellSpec {
    let env = |name: &str| std::env::var_os(name);
    let spec = discover_shell(Some(Path::new("bash")), env).expect("bash on PATH");
    assert_eq!(spec.kind, ShellKind::Bash);
    spec
}

/// Sources `snapshot` into a fresh non-interactive shell (no rc) and runs `script` after it,
/// in a separate command so that aliases from the snapshot apply. Returns `key=value` lines.
fn probe(
    shell: &ShellSpec,
    home: &Path,
    snapshot: &Path,
    script: &str,
) -> BTreeMap<String, String> {
    let flags: &[&str] = match shell.kind {
        ShellKind::Zsh => &["-f", "-c"],
        _ => &["--norc", "--noprofile", "-c"],
    };
    let out = Command::new(&shell.path)
        .args(flags)
        .arg(format!("source \"$1\"\n{script}"))
        .arg("probe")
        .arg(snapshot)
        .env("HOME", home)
        .output()
        .expect("run the probe shell");
    let stdout = String::from_utf8(out.stdout).expect("UTF-8 probe output");
    assert!(
        out.status.success(),
        "probe failed: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

fn expected(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    user_env(pairs)
}

const BASH_PROBE: &str = r#"say probe
printf '%s\n' "ll=$(type -t ll)" "gs=$(type -t gs)" "say=$(type -t say)" "rm=$(type -t rm)" \
  "_hidden=$(type -t _hidden)" "greet=$(greet you)" "ls=$(type -t ls)" "_private=$(type -t _private)" \
  "errexit=$([[ -o errexit ]] && echo on || echo off)" "nounset=$([[ -o nounset ]] && echo on || echo off)" \
  "noclobber=$([[ -o noclobber ]] && echo on || echo off)" "histexpand=$([[ -o histexpand ]] && echo on || echo off)" \
  "extglob=$(shopt -q extglob && echo on || echo off)" "is_number=$(is_number 123 && echo yes)-$(is_number x1 || echo no)" \
  "path_head=${PATH%%:*}" "path_tail=${PATH#*:}"
"#;

#[test]
fn bash_snapshot_carries_aliases_functions_options_and_path_of_the_rc() {
    let home = Home::new("bashrc", ".bashrc");
    let shell = bash();
    let started = Instant::now();
    let snapshot = home.snapshot(&shell).unwrap().expect("a snapshot");
    let generation = started.elapsed();
    assert!(!snapshot.from_cache);
    assert_eq!(home.sourced_count(), 1);
    let probe_path = std::env::var("PATH").unwrap();
    let values = probe(&shell, home.path(), &snapshot.path, BASH_PROBE);
    let mut want = expected(&[
        ("ll", "alias"),
        ("gs", "alias"),
        ("say", "alias"),
        ("rm", "file"),
        ("_hidden", ""),
        ("greet", "hello you"),
        ("ls", "file"),
        ("_private", ""),
        ("errexit", "off"),
        ("nounset", "off"),
        ("noclobber", "on"),
        ("histexpand", "off"),
        ("extglob", "on"),
        ("is_number", "yes-no"),
    ]);
    want.insert(
        "path_head".into(),
        format!("{}/rc-bin", home.path().display()),
    );
    want.insert("path_tail".into(), probe_path);
    assert_eq!(values, want);
    // The alias really expands in the non-interactive shell: `say probe` printed `<probe>`.
    let text = fs::read_to_string(&snapshot.path).unwrap();
    assert!(text.contains("shopt -s expand_aliases\n"), "{text}");
    eprintln!("bash snapshot generated in {generation:?}");
}

#[test]
fn bash_snapshot_alias_expands_in_a_non_interactive_shell() {
    let home = Home::new("bashrc", ".bashrc");
    let shell = bash();
    let snapshot = home.snapshot(&shell).unwrap().unwrap();
    let out = Command::new(&shell.path)
        .args([
            "--norc",
            "--noprofile",
            "-c",
            "source \"$1\"\nsay one two",
            "probe",
        ])
        .arg(&snapshot.path)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "<one>\n<two>\n");
}

#[test]
fn nothing_the_rc_starts_survives_a_good_snapshot() {
    let home = Home::new("bashrc", ".bashrc");
    // The fixture starts `sleep 30.789 &` too, but other tests use it at the same time; this
    // marker is only ever started here. One job in the background, one double-forked.
    let rc = home.path().join(".bashrc");
    let mut text = fs::read_to_string(&rc).unwrap();
    text.push_str(
        "sleep 31.2468 &
(sleep 31.3579 &)
",
    );
    fs::write(&rc, text).unwrap();
    home.snapshot(&bash()).unwrap().unwrap();
    assert_eq!(alive_with_arg("31.2468"), Vec::<u32>::new());
    assert_eq!(alive_with_arg("31.3579"), Vec::<u32>::new());
}

/// The rc snapshot's child runs under the same containment as every shell. Daemons
/// the rc starts — `setsid` in a subshell, `setsid -f`, the common `eval $(ssh-agent)` — used
/// to survive it, one per snapshot generation. Run once as is (a cgroup where the machine has
/// a writable cgroup v2) and once without cgroups (agentsh as subreaper).
#[test]
fn rc_daemons_do_not_survive_the_snapshot_child() {
    let home = tempfile::tempdir().unwrap();
    let (a, b) = (
        format!("32.1{}", std::process::id()),
        format!("32.2{}", std::process::id()),
    );
    let agent = agentsh_test_support::which("ssh-agent");
    let sock = home.path().join("agent.sock");
    let mut rc = format!("(setsid sleep {a} &)\nsetsid -f sleep {b}\n");
    if agent.is_some() {
        let eval = format!("eval $(ssh-agent -s -a {}) >/dev/null\n", sock.display());
        rc.push_str(&eval);
    } else {
        eprintln!("no ssh-agent on PATH: only the setsid daemons are tested");
    }
    snapshot_with_bashrc(home.path(), &rc);
    let agents = || {
        let sock = sock.display().to_string();
        agentsh_test_support::alive_with_arg(&sock)
    };
    let gone =
        || alive_with_arg(&a).is_empty() && alive_with_arg(&b).is_empty() && agents().is_empty();
    // The snapshot call returns once the child's tree is gone; the bound is only generous.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !gone() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        gone(),
        "left behind: {:?} {:?} ssh-agent {:?}",
        alive_with_arg(&a),
        alive_with_arg(&b),
        agents()
    );
    agentsh_test_support::rerun_with_env(
        "snapshot::rc_daemons_do_not_survive_the_snapshot_child",
        agentsh_process::NO_CGROUP_VAR,
    );
}

#[test]
fn rc_runs_in_a_session_of_its_own_without_a_terminal_and_with_stdin_on_dev_null() {
    let home = tempfile::tempdir().unwrap();
    // Fields 4, 6 and 7 of /proc/PID/stat: parent, session id and controlling terminal (0:
    // none). The shell runs under a supervisor like every shell: the session is the
    // supervisor's, not agentsh's.
    snapshot_with_bashrc(
        home.path(),
        r#"read -r -a stat < /proc/$$/stat
printf '%s\n' "pid=$$" "ppid=${stat[3]}" "sid=${stat[5]}" "tty_nr=${stat[6]}" "stdin=$(readlink /proc/$$/fd/0)" > "$HOME/.whoami"
if { : </dev/tty; } 2>/dev/null; then echo "dev_tty=opened"; else echo "dev_tty=failed"; fi >> "$HOME/.whoami"
"#,
    );
    let text = fs::read_to_string(home.path().join(".whoami")).unwrap();
    let values: BTreeMap<&str, &str> = text.lines().filter_map(|l| l.split_once('=')).collect();
    assert_eq!(
        values["sid"], values["ppid"],
        "not its supervisor's session: {text}"
    );
    // Our own session id from /proc, not getsid(2): in a container whose session leader is
    // outside our pid namespace getsid returns 0, which rustix's `Pid` cannot hold.
    let own_stat = fs::read_to_string("/proc/self/stat").unwrap();
    let own_session = own_stat[own_stat.rfind(')').unwrap() + 2..]
        .split(' ')
        .nth(3)
        .unwrap()
        .to_string();
    assert_ne!(values["sid"], own_session, "{text}");
    assert_eq!(values["tty_nr"], "0", "{text}");
    assert_eq!(values["stdin"], "/dev/null", "{text}");
    assert_eq!(values["dev_tty"], "failed", "{text}");
}

#[test]
fn second_call_reuses_the_cached_snapshot_without_starting_a_shell() {
    let home = Home::new("bashrc", ".bashrc");
    let shell = bash();
    let first = home.snapshot(&shell).unwrap().unwrap();
    let started = Instant::now();
    let second = home.snapshot(&shell).unwrap().unwrap();
    let hit = started.elapsed();
    assert_eq!(
        second,
        Snapshot {
            path: first.path.clone(),
            from_cache: true
        }
    );
    assert_eq!(home.sourced_count(), 1, "the rc was sourced again");
    eprintln!("snapshot cache hit in {hit:?}");
}

/// Entry point for [`cache_is_shared_between_processes`]: asks for a snapshot in a process of
/// its own and prints the outcome. Does nothing unless that test started it.
#[test]
#[ignore = "helper: run by cache_is_shared_between_processes in a child process"]
fn snapshot_in_child_process() {
    let Some(home) = std::env::var_os("AGENTSH_TEST_SNAPSHOT_HOME") else {
        return;
    };
    let home = PathBuf::from(home);
    let cache = home.join("cache/agentsh/snapshots");
    let snapshot = snapshot_for(&bash(), &home, &cache, &shell_env())
        .unwrap()
        .unwrap();
    println!(
        "child-outcome from_cache={} path={}",
        snapshot.from_cache,
        snapshot.path.display()
    );
}

#[test]
fn cache_is_shared_between_processes() {
    let home = Home::new("bashrc", ".bashrc");
    let first = home.snapshot(&bash()).unwrap().unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "snapshot::snapshot_in_child_process",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("AGENTSH_TEST_SNAPSHOT_HOME", home.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want = format!(
        "child-outcome from_cache=true path={}",
        first.path.display()
    );
    // The test harness prints the test name on the same line, before the outcome.
    assert!(
        stdout.contains(&format!("{want}\n")),
        "want {want:?} in\n{stdout}"
    );
    assert_eq!(home.sourced_count(), 1);
}

#[test]
fn changing_the_rc_size_or_mtime_makes_a_new_snapshot() {
    let home = Home::new("bashrc", ".bashrc");
    let shell = bash();
    let rc = home.path().join(".bashrc");
    let first = home.snapshot(&shell).unwrap().unwrap();

    let mut text = fs::read_to_string(&rc).unwrap();
    text.push_str("alias extra='echo extra'\n");
    fs::write(&rc, &text).unwrap();
    let second = home.snapshot(&shell).unwrap().unwrap();
    assert!(!second.from_cache);
    assert_ne!(second.path, first.path);
    assert_eq!(home.sourced_count(), 2);
    let values = probe(
        &shell,
        home.path(),
        &second.path,
        "echo \"extra=$(type -t extra)\"",
    );
    assert_eq!(values, expected(&[("extra", "alias")]));

    // Same size and content, another mtime.
    let file = fs::File::options().write(true).open(&rc).unwrap();
    file.set_modified(std::time::SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
    drop(file);
    let third = home.snapshot(&shell).unwrap().unwrap();
    assert!(!third.from_cache);
    assert_ne!(third.path, second.path);
    assert_eq!(home.sourced_count(), 3);
}

#[test]
fn a_different_starting_path_makes_a_different_snapshot() {
    let home = Home::new("bashrc", ".bashrc");
    let shell = bash();
    let first = home.snapshot(&shell).unwrap().unwrap();
    let mut env = shell_env();
    for (name, value) in &mut env {
        if name == "PATH" {
            let mut extended = OsString::from("/opt/venv/bin:");
            extended.push(&*value);
            *value = extended;
        }
    }
    let second = snapshot_for(&shell, home.path(), &home.cache(), &env)
        .unwrap()
        .unwrap();
    assert!(!second.from_cache);
    assert_ne!(second.path, first.path);
    let values = probe(
        &shell,
        home.path(),
        &second.path,
        "echo \"path=${PATH#*:}\"",
    );
    assert!(values["path"].starts_with("/opt/venv/bin:"), "{values:?}");
}

#[test]
fn cache_directory_is_0700_and_snapshot_files_0600() {
    let home = Home::new("bashrc", ".bashrc");
    let snapshot = home.snapshot(&bash()).unwrap().unwrap();
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&home.cache()), 0o700);
    assert_eq!(mode(home.cache().parent().unwrap()), 0o700);
    assert_eq!(mode(&snapshot.path), 0o600);
    // Only the snapshot and its lock file are left in the directory: no dump or stderr
    // files.
    let lock = snapshot.path.with_extension("lock");
    assert_eq!(
        home.cached_files(),
        vec![lock.clone(), snapshot.path.clone()]
    );
    assert_eq!(mode(&lock), 0o600);
    let name = snapshot.path.file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with("bash-"), "{name}");
    assert_eq!(Path::new(name).extension(), Some("sh".as_ref()), "{name}");
}

#[test]
fn an_existing_cache_directory_open_to_others_is_narrowed() {
    let home = Home::new("bashrc", ".bashrc");
    fs::create_dir_all(home.cache()).unwrap();
    fs::set_permissions(home.cache(), fs::Permissions::from_mode(0o755)).unwrap();
    home.snapshot(&bash()).unwrap().unwrap();
    assert_eq!(
        fs::metadata(home.cache()).unwrap().permissions().mode() & 0o777,
        0o700
    );
}

#[test]
fn a_cache_path_that_is_a_symlink_is_refused() {
    let home = Home::new("bashrc", ".bashrc");
    let real = home.path().join("real");
    fs::create_dir(&real).unwrap();
    let link = home.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let err = snapshot_for(&bash(), home.path(), &link, &shell_env()).unwrap_err();
    assert!(
        matches!(err, SnapshotError::CacheDirNotPrivate { .. }),
        "{err:?}"
    );
    assert_eq!(home.sourced_count(), 0);
}

#[test]
fn broken_rc_gives_no_snapshot_and_a_warning_naming_the_error() {
    let home = Home::new("bashrc-broken", ".bashrc");
    let err = home.snapshot(&bash()).unwrap_err();
    let SnapshotError::Broken { rc, status, detail } = &err else {
        panic!("expected Broken, got {err:?}");
    };
    assert_eq!(rc, &home.path().join(".bashrc"));
    assert_eq!(*status, 2);
    assert!(detail.contains("line 4: syntax error"), "{detail}");
    let message = err.to_string();
    assert!(message.starts_with("no rc snapshot: "), "{message}");
    assert!(message.contains("returned status 2"), "{message}");
    assert_eq!(home.snapshot_files(), Vec::<PathBuf>::new());
}

#[test]
fn rc_that_exits_gives_no_snapshot_and_a_warning() {
    let home = Home::new("bashrc-exit", ".bashrc");
    let err = home.snapshot(&bash()).unwrap_err();
    let SnapshotError::ShellEnded { how, .. } = &err else {
        panic!("expected ShellEnded, got {err:?}");
    };
    assert_eq!(how, "exit status 3");
    assert!(
        err.to_string().contains("does it call exit or exec?"),
        "{err}"
    );
    assert_eq!(home.snapshot_files(), Vec::<PathBuf>::new());
}

#[test]
fn slow_rc_is_stopped_at_the_time_box_and_leaves_no_process() {
    let home = Home::new("bashrc-slow", ".bashrc");
    let timeout = Duration::from_secs(1);
    let started = Instant::now();
    let err = home.snapshot_timed(&bash(), timeout).unwrap_err();
    let elapsed = started.elapsed();
    assert!(matches!(err, SnapshotError::Timeout { .. }), "{err:?}");
    assert!(elapsed >= timeout, "gave up early: {elapsed:?}");
    // A liveness bound, generous for a loaded CI machine: the time box itself is checked by
    // the lower bound and the Timeout error.
    assert!(
        elapsed < timeout + Duration::from_secs(5),
        "took {elapsed:?}"
    );
    assert!(err.to_string().contains("took longer than 1 s"), "{err}");
    assert_eq!(alive_with_arg("30.123"), Vec::<u32>::new());
    assert_eq!(alive_with_arg("30.456"), Vec::<u32>::new());
    assert_eq!(home.snapshot_files(), Vec::<PathBuf>::new());
    eprintln!("slow rc given up after {elapsed:?}");
}

#[test]
fn no_rc_file_or_sh_means_no_snapshot_and_no_warning() {
    let home = tempfile::tempdir().unwrap();
    let cache = home.path().join("cache");
    assert!(
        snapshot_for(&bash(), home.path(), &cache, &shell_env())
            .unwrap()
            .is_none()
    );
    fs::copy(fixture("bashrc"), home.path().join(".bashrc")).unwrap();
    let sh = ShellSpec {
        path: "/bin/sh".into(),
        kind: ShellKind::Sh,
    };
    assert!(
        snapshot_for(&sh, home.path(), &cache, &shell_env())
            .unwrap()
            .is_none()
    );
}

#[test]
fn default_cache_dir_uses_xdg_cache_home_then_home() {
    let env = lookup(vec![
        ("XDG_CACHE_HOME", "/x/cache".into()),
        ("HOME", "/home/u".into()),
    ]);
    assert_eq!(
        default_cache_dir(env),
        Some(PathBuf::from("/x/cache/agentsh/snapshots"))
    );
    let env = lookup(vec![("HOME", "/home/u".into())]);
    assert_eq!(
        default_cache_dir(env),
        Some(PathBuf::from("/home/u/.cache/agentsh/snapshots"))
    );
}

/// zsh, when installed; the zsh tests are skipped with a note otherwise (install zsh in CI).
fn zsh() -> Option<ShellSpec> {
    let env = |name: &str| std::env::var_os(name);
    let spec = discover_shell(Some(Path::new("zsh")), env).ok();
    if spec.is_none() {
        eprintln!("zsh is not installed: zsh snapshot test skipped");
    }
    spec
}

#[test]
fn zsh_snapshot_carries_aliases_functions_options_and_path_of_the_rc() {
    let Some(shell) = zsh() else { return };
    assert_eq!(shell.kind, ShellKind::Zsh);
    let home = Home::new("zshrc", ".zshrc");
    let snapshot = home.snapshot(&shell).unwrap().expect("a snapshot");
    assert_eq!(home.sourced_count(), 1);
    let values = probe(
        &shell,
        home.path(),
        &snapshot.path,
        r#"print -rl -- "ll=$(whence -w ll)" "gs=$(whence -w gs)" "rm=$(whence -w rm)" \
  "greet=$(greet you)" "ls=$(whence -w ls)" "_private=$(whence -w _private)" \
  "TRAPUSR1=$(whence -w TRAPUSR1)" "precmd=$(whence -w precmd)" \
  "errexit=$([[ -o errexit ]] && echo on || echo off)" "nounset=$([[ -o nounset ]] && echo on || echo off)" \
  "extendedglob=$([[ -o extendedglob ]] && echo on || echo off)" "hashdirs=$([[ -o hashdirs ]] && echo on || echo off)" \
  "path_head=${PATH%%:*}""#,
    );
    let mut want = expected(&[
        ("ll", "ll: alias"),
        ("gs", "gs: alias"),
        ("rm", "rm: command"),
        ("greet", "hello you"),
        ("ls", "ls: command"),
        ("_private", "_private: none"),
        ("TRAPUSR1", "TRAPUSR1: none"),
        ("precmd", "precmd: none"),
        ("errexit", "off"),
        ("nounset", "off"),
        ("extendedglob", "on"),
        ("hashdirs", "off"),
    ]);
    want.insert(
        "path_head".into(),
        format!("{}/rc-bin", home.path().display()),
    );
    assert_eq!(values, want);
    assert!(home.snapshot(&shell).unwrap().unwrap().from_cache);
    assert_eq!(home.sourced_count(), 1);
}

#[test]
fn broken_zshrc_gives_no_snapshot_and_a_warning() {
    let Some(shell) = zsh() else { return };
    let home = Home::new("zshrc-broken", ".zshrc");
    let err = home.snapshot(&shell).unwrap_err();
    let SnapshotError::Broken { status, detail, .. } = &err else {
        panic!("expected Broken, got {err:?}");
    };
    assert_eq!(*status, 126);
    assert!(detail.contains("parse error"), "{detail}");
}
