//! The rc snapshot under the sandbox: the generating shell is confined like the session's
//! shells (the cache directory writable too), and its snapshot is cached apart.

use std::path::{Path, PathBuf};

use agentsh_process::env::{TerminalKind, hardened_env};
use agentsh_process::sandbox::{self, SandboxMode, SandboxNetwork, SandboxSpec};
use agentsh_process::shell::discover_shell;
use agentsh_rc_snapshot::{SnapshotOptions, snapshot_with};

/// Whether the running kernel can sandbox at all; tests say why they skip when it cannot.
fn sandbox_available() -> bool {
    let policy = SandboxSpec {
        mode: SandboxMode::WorkspaceWrite,
        writable: Vec::new(),
        read_only: Vec::new(),
        network: SandboxNetwork::Off,
        temp_dir: None,
        temp_fs: None,
    };
    match sandbox::check(&policy) {
        Ok(()) => true,
        Err(err) => {
            eprintln!("skipped: {err}");
            false
        }
    }
}

/// A test's directories: the writable cwd and private tmp, and a HOME and an `outside`
/// directory that are not writable roots.
struct Dirs {
    _base: tempfile::TempDir,
    cwd: PathBuf,
    tmp: PathBuf,
    home: PathBuf,
    outside: PathBuf,
}

fn dirs() -> Dirs {
    let base = tempfile::tempdir().expect("tempdir");
    let make = |name: &str| {
        let dir = base.path().join(name);
        std::fs::create_dir(&dir).expect("mkdir");
        dir
    };
    Dirs {
        cwd: make("cwd"),
        tmp: make("tmp"),
        home: make("home"),
        outside: make("outside"),
        _base: base,
    }
}

/// A workspace-write policy without network: `dirs.cwd` and `dirs.tmp` writable.
fn policy(dirs: &Dirs) -> SandboxSpec {
    SandboxSpec {
        mode: SandboxMode::WorkspaceWrite,
        writable: vec![dirs.cwd.clone(), dirs.tmp.clone()],
        read_only: Vec::new(),
        network: SandboxNetwork::Off,
        temp_dir: None,
        temp_fs: None,
    }
}

fn no_entries(dir: &Path) {
    let names: Vec<_> = std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert!(names.is_empty(), "{} gained {names:?}", dir.display());
}

#[test]
fn the_rc_snapshot_runs_sandboxed_and_is_cached_apart() {
    if !sandbox_available() {
        return;
    }
    let dirs = dirs();
    let cache = dirs.tmp.join("cache");
    std::fs::write(
        dirs.home.join(".bashrc"),
        "alias sbcheck='echo sandboxed-alias'\necho x > \"$HOME/rc-wrote\"\necho x > \"$OUT_DIR/rc-wrote\"\n",
    )
    .expect("bashrc");
    let shell = discover_shell(Some(Path::new("bash")), |name| std::env::var_os(name))
        .expect("bash on PATH");
    let mut env = hardened_env(
        std::env::vars_os(),
        &std::collections::BTreeMap::new(),
        TerminalKind::Pipe,
    );
    env.push(("OUT_DIR".into(), dirs.outside.clone().into()));
    let policy = policy(&dirs);
    let options = SnapshotOptions {
        sandbox: Some(policy),
        ..SnapshotOptions::default()
    };
    let snapshot = snapshot_with(&shell, &dirs.home, &cache, &env, &options)
        .expect("a snapshot")
        .expect("bash has one");
    let name = snapshot.path.file_name().expect("name").to_string_lossy();
    assert!(name.ends_with("-sandboxed.sh"), "{name}");
    let content = std::fs::read_to_string(&snapshot.path).expect("snapshot");
    assert!(content.contains("sandboxed-alias"), "{content}");
    assert!(!dirs.home.join("rc-wrote").exists(), "the rc wrote to HOME");
    no_entries(&dirs.outside);
}
