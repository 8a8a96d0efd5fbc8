//! The store's id counter, `.next-id`: the next id to hand out, shared by every process that
//! opens the store.
//!
//! Opening a store reads this one small file instead of listing the directory, so a start costs
//! the same with ten artifacts or a hundred thousand. The directory is listed only to make the
//! counter (a store from before it, a counter that was removed or holds no number). An
//! allocation reads and advances it under `flock(LOCK_EX)`, so processes take ids one after the
//! other instead of colliding on `O_EXCL`; the value only grows.

use std::fs::File;
use std::io;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use rustix::fs::{FlockOperation, Mode, OFlags};

use crate::ArtifactError;
use crate::files::{FILE_MODE, make_private_file, scan};

/// The counter's name in the store directory (not named like an artifact: never listed).
pub(crate) const COUNTER_NAME: &str = ".next-id";

/// How long an allocation waits for another process's hold on the counter before it goes on
/// without it (the ids stay unique through `O_EXCL`; only their order may then interleave). A
/// hold lasts a few system calls; this bounds the wait behind a process stopped while holding.
const LOCK_PATIENCE: Duration = Duration::from_millis(200);

/// Pause between two tries of a held counter.
const LOCK_RETRY: Duration = Duration::from_millis(1);

/// Longest text a valid counter holds: `u64::MAX` and a newline.
const MAX_TEXT: usize = 21;

/// The open counter of a store.
#[derive(Debug)]
pub(crate) struct IdCounter {
    file: File,
}

/// The counter, held: read, and advanced on [`CounterHold::advance`]; let go on drop.
pub(crate) struct CounterHold<'a> {
    file: &'a File,
    /// The value read under the hold (`None`: it held no number).
    pub(crate) value: Option<u64>,
}

impl IdCounter {
    /// Opens (creating it) the counter of the store `dir` and reads the next id from it; a
    /// counter without a number is made from the highest id in the directory (`first` when there
    /// is none). `None` in place of the counter when it cannot be opened (a full disk): the
    /// store then starts from one listing of the directory, as it did before counters.
    pub(crate) fn open(dir: &Path, first: u64) -> Result<(Option<Self>, u64), ArtifactError> {
        let path = dir.join(COUNTER_NAME);
        let flags = OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let Ok(fd) = rustix::fs::open(&path, flags, Mode::from_raw_mode(FILE_MODE)) else {
            return Ok((None, next_after_scan(dir, first)?));
        };
        let counter = Self {
            file: File::from(fd),
        };
        if make_private_file(&counter.file).is_err() {
            return Ok((None, next_after_scan(dir, first)?));
        }
        // Readers take the lock too: a writer's `pwrite` is not atomic against a read.
        let Some(mut hold) = counter.hold() else {
            return Ok((None, next_after_scan(dir, first)?));
        };
        let next = if let Some(next) = hold.value {
            next
        } else {
            let next = next_after_scan(dir, first)?;
            hold.advance(next);
            next
        };
        drop(hold);
        Ok((Some(counter), next))
    }

    /// Holds the counter (`flock(LOCK_EX)`, waiting at most [`LOCK_PATIENCE`]) and reads it;
    /// `None` when it stays held or cannot be locked.
    pub(crate) fn hold(&self) -> Option<CounterHold<'_>> {
        let deadline = Instant::now() + LOCK_PATIENCE;
        loop {
            match rustix::fs::flock(&self.file, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => break,
                Err(rustix::io::Errno::WOULDBLOCK) if Instant::now() < deadline => {
                    thread::sleep(LOCK_RETRY);
                }
                Err(_) => return None,
            }
        }
        let value = read_value(&self.file).ok().flatten();
        Some(CounterHold {
            file: &self.file,
            value,
        })
    }
}

impl CounterHold<'_> {
    /// Sets the counter to `next` when that is more than it holds (it never goes back). A
    /// failed write leaves the old value, which only makes later allocations probe further.
    pub(crate) fn advance(&mut self, next: u64) {
        if self.value.is_some_and(|value| value >= next) {
            return;
        }
        let text = format!("{next}\n");
        let written = rustix::io::pwrite(self.file, text.as_bytes(), 0)
            .is_ok_and(|len| len == text.len())
            && rustix::fs::ftruncate(self.file, text.len() as u64).is_ok();
        if written {
            self.value = Some(next);
        }
    }
}

impl Drop for CounterHold<'_> {
    fn drop(&mut self) {
        let _ = rustix::fs::flock(self.file, FlockOperation::Unlock);
    }
}

/// The number the counter file holds: `None` when it is empty or holds anything else.
fn read_value(file: &File) -> io::Result<Option<u64>> {
    let mut buf = [0u8; MAX_TEXT + 1];
    let len = rustix::io::pread(file, &mut buf, 0)?;
    let text = std::str::from_utf8(&buf[..len]).ok();
    Ok(text
        .and_then(|text| text.strip_suffix('\n'))
        .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|digits| digits.parse().ok()))
}

/// The id after the highest artifact in `dir` (`first` when there is none).
pub(crate) fn next_after_scan(dir: &Path, first: u64) -> Result<u64, ArtifactError> {
    let highest = scan(dir)?.iter().map(|entry| entry.id).max();
    Ok(highest.map_or(first, |id| id.saturating_add(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counter_text(dir: &Path) -> String {
        std::fs::read_to_string(dir.join(COUNTER_NAME)).expect("read counter")
    }

    #[test]
    fn a_missing_counter_is_made_from_the_directory_and_then_read_alone() {
        let tmp = tempfile::tempdir().expect("tempdir");
        for name in ["3.bash.log", "12.bash.log", "40.txt"] {
            std::fs::write(tmp.path().join(name), b"x").expect("write");
        }
        let (counter, next) = IdCounter::open(tmp.path(), 1).expect("open");
        assert!(counter.is_some());
        assert_eq!(next, 13);
        assert_eq!(counter_text(tmp.path()), "13\n");
        // Once made, the directory is not looked at: a later artifact does not move it.
        std::fs::write(tmp.path().join("90.bash.log"), b"x").expect("write");
        let (_, next) = IdCounter::open(tmp.path(), 1).expect("reopen");
        assert_eq!(next, 13);
    }

    #[test]
    fn a_counter_without_a_number_is_made_again() {
        let tmp = tempfile::tempdir().expect("tempdir");
        std::fs::write(tmp.path().join("7.bash.log"), b"x").expect("write");
        for garbage in ["", "x\n", "12", "-4\n", "99999999999999999999999\n", " 5\n"] {
            std::fs::write(tmp.path().join(COUNTER_NAME), garbage).expect("write");
            let (_, next) = IdCounter::open(tmp.path(), 1).expect("open");
            assert_eq!(next, 8, "{garbage:?}");
            assert_eq!(counter_text(tmp.path()), "8\n", "{garbage:?}");
        }
    }

    #[test]
    fn the_counter_never_goes_back() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (counter, next) = IdCounter::open(tmp.path(), 1).expect("open");
        assert_eq!(next, 1);
        let counter = counter.expect("counter");
        let mut hold = counter.hold().expect("hold");
        hold.advance(1000);
        hold.advance(5);
        drop(hold);
        assert_eq!(counter_text(tmp.path()), "1000\n");
        assert_eq!(counter.hold().expect("hold").value, Some(1000));
    }
}
