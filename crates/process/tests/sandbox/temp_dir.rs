//! The session's temp dir ([`SandboxPolicy::temp_dir`]): a supervisor that ends its tree
//! removes it, whole, once its owner's lock is free (agentsh died), and leaves it alone while
//! the owner runs.

use std::os::unix::fs::PermissionsExt as _;

use agentsh_process::{OWNED_MARK, OwnedDir};

use super::*;

/// A sandboxed `true` whose policy names `temp` as its temp dir, run to its end and shut down.
fn run_true(dirs: &Dirs, temp: &Path) {
    let mut policy = policy(SandboxMode::WorkspaceWrite, dirs, false);
    policy.writable.push(temp.to_path_buf());
    policy.temp_dir = Some(temp.to_path_buf());
    let (code, out) = run(policy, dirs, "true");
    assert_eq!(code, 0, "{out}");
}

#[test]
fn the_supervisor_leaves_a_live_owners_temp_dir_alone() {
    if !sandbox_available() {
        return;
    }
    let dirs = dirs();
    let owned = OwnedDir::create(&dirs.tmp, "agentsh-sandbox-").expect("owned dir");
    std::fs::write(owned.path().join("kept"), "x").expect("file");
    run_true(&dirs, owned.path());
    assert!(
        owned.path().join("kept").exists(),
        "the owner's lock is held"
    );
}

#[test]
fn the_supervisor_removes_a_dead_owners_temp_dir_whole() {
    if !sandbox_available() {
        return;
    }
    let dirs = dirs();
    // What a dead owner leaves: marked, private, and nobody holds its lock.
    let temp = dirs.tmp.join("agentsh-sandbox-dead00");
    std::fs::create_dir(&temp).expect("dir");
    std::fs::set_permissions(&temp, std::fs::Permissions::from_mode(0o700)).expect("mode");
    std::fs::write(temp.join(OWNED_MARK), "").expect("mark");
    std::fs::create_dir_all(temp.join("a/b/c")).expect("subdirs");
    std::fs::write(temp.join("a/b/c/file"), "x").expect("file");
    std::fs::write(dirs.outside.join("target"), "x").expect("outside file");
    std::os::unix::fs::symlink(&dirs.outside, temp.join("a/link")).expect("symlink");
    run_true(&dirs, &temp);
    assert!(!temp.exists(), "{} is left", temp.display());
    assert!(
        dirs.outside.join("target").exists(),
        "the symlink was not followed"
    );
}
