//! The lock that lets one process at a time make the snapshot of a cache key: an exclusive
//! `flock` on `<name>.lock` in the cache directory. The kernel releases it when its holder
//! ends, however it ends, so a lock file left behind never blocks a later run.

use std::fs::{File, OpenOptions, TryLockError};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use crate::error::{SnapshotError, io_error};

/// First pause between two tries to take a busy lock; it doubles up to [`MAX_POLL`].
const FIRST_POLL: Duration = Duration::from_millis(5);

/// Longest pause between two tries to take a busy lock.
const MAX_POLL: Duration = Duration::from_millis(50);

/// Takes the exclusive lock on `path` (created 0600 if missing), waiting at most `wait` for
/// another process to release it. `Some(file)`: held until `file` is closed. `None`: the lock
/// could not be had within `wait` (its holder is stopped or hung), or the file system does not
/// support locks; the caller goes on without it. Snapshot files are written by rename, so such
/// a race costs only a second run of the rc, never a torn file.
pub(crate) fn lock(path: &Path, wait: Duration) -> Result<Option<File>, SnapshotError> {
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|error| io_error("create", path, error))?;
    let deadline = Instant::now() + wait;
    let mut pause = FIRST_POLL;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(Some(file)),
            Err(TryLockError::WouldBlock) => {}
            // ENOLCK, EOPNOTSUPP (some network file systems): locking is not to be had here.
            Err(TryLockError::Error(_)) => return Ok(None),
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(None);
        }
        thread::sleep(pause.min(deadline - now));
        pause = next_pause(pause);
    }
}

/// The pause after `pause`: doubled, at most [`MAX_POLL`].
fn next_pause(pause: Duration) -> Duration {
    pause.saturating_mul(2).min(MAX_POLL)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_double_up_to_the_cap() {
        let mut pause = FIRST_POLL;
        let mut seen = vec![pause];
        for _ in 0..6 {
            pause = next_pause(pause);
            seen.push(pause);
        }
        let ms: Vec<u128> = seen.iter().map(Duration::as_millis).collect();
        assert_eq!(ms, [5, 10, 20, 40, 50, 50, 50]);
    }

    #[test]
    fn a_second_holder_waits_and_gives_up_at_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.lock");
        let first = lock(&path, Duration::ZERO).unwrap();
        assert!(first.is_some());
        let started = Instant::now();
        let second = lock(&path, Duration::from_millis(200)).unwrap();
        assert!(second.is_none());
        assert!(started.elapsed() >= Duration::from_millis(200));
        drop(first);
        let third = lock(&path, Duration::ZERO).unwrap();
        assert!(third.is_some());
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&path).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o600);
    }
}
