//! The session's temp dir ([`SandboxSpec::temp_dir`]): a supervisor that ends its tree
//! removes it, whole, once its owner's lock is free (agentsh died), and leaves it alone while
//! the owner runs. (The end that matters, agentsh killed, is the binary's to test: see
//! `crates/agentsh/tests/leftovers.rs`.)

use std::os::unix::fs::PermissionsExt as _;

use agentsh_process::{OWNED_MARK, OwnedDir};

use super::*;

/// A sandboxed `sleep` whose policy names `temp` as its temp dir, its supervisor ended by
/// SIGTERM when `signalled`, else by agentsh (shut down).
fn run_and_end(dirs: &Dirs, temp: &Path, signalled: bool) {
    let mut policy = policy(SandboxMode::WorkspaceWrite, dirs, false);
    policy.writable.push(temp.to_path_buf());
    policy.temp_dir = Some(temp.to_path_buf());
    let mut spec = SpawnSpec::new("/bin/sleep");
    spec.args = vec!["100".into()];
    spec.cwd.clone_from(&dirs.cwd);
    spec.sandbox = Some(policy);
    runtime().block_on(async {
        let mut sup = Supervisor::spawn(spec)
            .await
            .expect("spawn a sandboxed sleep");
        if signalled {
            let pid = rustix::process::Pid::from_raw(sup.pid() as i32).expect("a pid");
            rustix::process::kill_process(pid, rustix::process::Signal::TERM)
                .expect("signal the supervisor");
            // Ended by the signal (before `shutdown` could ask).
            sup.wait_child().await.expect("the child's end");
        }
        // Returns once the supervisor has exited.
        sup.shutdown().await;
    });
}

#[test]
fn the_supervisor_leaves_a_live_owners_temp_dir_alone() {
    if !sandbox_available() {
        return;
    }
    let dirs = dirs();
    let owned = OwnedDir::create(&dirs.tmp, "agentsh-sandbox-").expect("owned dir");
    std::fs::write(owned.path().join("kept"), "x").expect("file");
    // Ended by agentsh, and by a signal while agentsh lives: its lock is held either way.
    for signalled in [false, true] {
        run_and_end(&dirs, owned.path(), signalled);
        assert!(
            owned.path().join("kept").exists(),
            "signalled {signalled}: the owner's lock is held"
        );
    }
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
    // Ended by a signal (the lock is tried once): nobody holds it.
    run_and_end(&dirs, &temp, true);
    assert!(!temp.exists(), "{} is left", temp.display());
    assert!(
        dirs.outside.join("target").exists(),
        "the symlink was not followed"
    );
}
