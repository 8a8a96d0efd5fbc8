//! The rc snapshot shared between sessions: one maker at a time per cache key (a lock in the
//! cache directory), waiting that eats no time box, and failures remembered per key.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use agentsh_rc_snapshot::{Snapshot, SnapshotError};

use crate::snapshot::{Home, bash};

/// A generous bound for what should take a moment, on a loaded 2-core machine.
const LIVENESS: Duration = Duration::from_secs(20);

/// A home whose `.bashrc` is `rc` after a line that counts each sourcing.
fn home_with_rc(rc: &str) -> Home {
    let home = Home::new("bashrc", ".bashrc");
    let text = format!("echo sourced >> \"$HOME/.sourced-count\"\n{rc}\n");
    fs::write(home.path().join(".bashrc"), text).expect("write .bashrc");
    home
}

/// The lock file of `snapshot`'s cache key: `<name>.lock` next to `<name>.sh`.
fn lock_path(snapshot: &Snapshot) -> PathBuf {
    snapshot.path.with_extension("lock")
}

#[test]
fn concurrent_sessions_source_the_rc_once() {
    let home = Arc::new(home_with_rc("sleep 0.5\ngreet() { echo hi; }"));
    let barrier = Arc::new(Barrier::new(6));
    let threads: Vec<_> = (0..6)
        .map(|_| {
            let (home, barrier) = (Arc::clone(&home), Arc::clone(&barrier));
            std::thread::spawn(move || {
                barrier.wait();
                home.snapshot(&bash())
            })
        })
        .collect();
    let results: Vec<Snapshot> = threads
        .into_iter()
        .map(|t| t.join().unwrap().unwrap().unwrap())
        .collect();
    assert_eq!(home.sourced_count(), 1, "{results:?}");
    assert_eq!(results.iter().filter(|s| !s.from_cache).count(), 1);
    assert!(results.iter().all(|s| s.path == results[0].path));
}

#[test]
fn waiting_for_the_lock_does_not_eat_the_time_box() {
    let home = Arc::new(home_with_rc("greet() { echo hi; }"));
    let first = home.snapshot(&bash()).unwrap().unwrap();
    fs::remove_file(&first.path).unwrap();
    // Another maker holds the lock longer than the time box of the one that waits.
    let held = fs::File::options()
        .write(true)
        .open(lock_path(&first))
        .unwrap();
    held.lock().unwrap();
    let started = Instant::now();
    let waiter = {
        let home = Arc::clone(&home);
        std::thread::spawn(move || home.snapshot_timed(&bash(), Duration::from_secs(1)))
    };
    std::thread::sleep(Duration::from_secs(2));
    assert!(!waiter.is_finished(), "it did not wait for the lock");
    assert_eq!(home.sourced_count(), 1);
    drop(held);
    let second = waiter.join().unwrap().unwrap().unwrap();
    assert!(started.elapsed() >= Duration::from_secs(2));
    assert_eq!(
        second,
        Snapshot {
            path: first.path,
            from_cache: false
        }
    );
    assert_eq!(home.sourced_count(), 2);
}

/// Entry point for [`a_lock_held_by_a_dead_process_does_not_block`]: takes the lock named by
/// the environment, says so, and sleeps until killed. Does nothing unless that test started it.
#[test]
#[ignore = "helper: run by a_lock_held_by_a_dead_process_does_not_block in a child process"]
fn hold_lock_in_child_process() {
    let Some(path) = std::env::var_os("AGENTSH_TEST_SNAPSHOT_LOCK") else {
        return;
    };
    let file = fs::File::options().write(true).open(path).unwrap();
    file.lock().unwrap();
    println!("locked");
    std::thread::sleep(Duration::from_secs(100));
}

#[test]
fn a_lock_held_by_a_dead_process_does_not_block() {
    let home = home_with_rc("greet() { echo hi; }");
    let first = home.snapshot(&bash()).unwrap().unwrap();
    fs::remove_file(&first.path).unwrap();
    let mut holder = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "snapshot_shared::hold_lock_in_child_process",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("AGENTSH_TEST_SNAPSHOT_LOCK", lock_path(&first))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = holder.stdout.take().unwrap();
    let locked = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .any(|line| line.contains("locked"));
    assert!(locked, "the helper did not take the lock");
    holder.kill().unwrap();
    holder.wait().unwrap();
    // The lock file stays; the kernel dropped the dead holder's lock.
    assert!(lock_path(&first).is_file());
    let started = Instant::now();
    let second = home.snapshot(&bash()).unwrap().unwrap();
    assert!(started.elapsed() < LIVENESS, "{:?}", started.elapsed());
    assert!(!second.from_cache);
    assert_eq!(home.sourced_count(), 2);
}

#[test]
fn a_failure_is_remembered_until_the_rc_changes() {
    let home = home_with_rc("greet() { echo hi; }\nif then fi");
    let err = home.snapshot(&bash()).unwrap_err();
    assert!(matches!(err, SnapshotError::Broken { .. }), "{err:?}");
    let warning = err.to_string();
    let again = home.snapshot(&bash()).unwrap_err();
    let SnapshotError::Remembered { rc, warning: kept } = &again else {
        panic!("expected Remembered, got {again:?}");
    };
    assert_eq!(rc, &home.path().join(".bashrc"));
    assert_eq!(kept, &warning);
    let message = again.to_string();
    assert!(message.starts_with(&warning), "{message}");
    assert!(
        message.contains("remembered from an earlier try"),
        "{message}"
    );
    assert_eq!(home.sourced_count(), 1, "the rc was sourced again");
    // A private record next to the lock, and no snapshot.
    let mode = |p: &PathBuf| {
        std::os::unix::fs::PermissionsExt::mode(&fs::metadata(p).unwrap().permissions()) & 0o777
    };
    let files = home.cached_files();
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(files.iter().all(|f| mode(f) == 0o600), "{files:?}");
    assert_eq!(home.snapshot_files(), Vec::<PathBuf>::new());

    // A fixed rc has another key: it is tried afresh.
    fs::write(
        home.path().join(".bashrc"),
        "echo sourced >> \"$HOME/.sourced-count\"\ngreet() { echo hi; }\n",
    )
    .unwrap();
    let fixed = home.snapshot(&bash()).unwrap().unwrap();
    assert!(!fixed.from_cache);
    assert_eq!(home.sourced_count(), 2);
}

#[test]
fn a_remembered_time_out_is_tried_again_only_with_a_longer_time_box() {
    let home = home_with_rc("sleep 2\ngreet() { echo hi; }");
    let short = Duration::from_secs(1);
    let err = home.snapshot_timed(&bash(), short).unwrap_err();
    assert!(matches!(err, SnapshotError::Timeout { .. }), "{err:?}");
    let started = Instant::now();
    let err = home.snapshot_timed(&bash(), short).unwrap_err();
    assert!(matches!(err, SnapshotError::Remembered { .. }), "{err:?}");
    assert!(err.to_string().contains("took longer than 1 s"), "{err}");
    assert!(started.elapsed() < LIVENESS);
    assert_eq!(home.sourced_count(), 1);

    let made = home
        .snapshot_timed(&bash(), Duration::from_secs(15))
        .unwrap()
        .unwrap();
    assert!(!made.from_cache);
    assert_eq!(home.sourced_count(), 2);
    // The snapshot wins over the record from now on, whatever the time box.
    let hit = home.snapshot_timed(&bash(), short).unwrap().unwrap();
    assert!(hit.from_cache);
    assert_eq!(home.sourced_count(), 2);
}
