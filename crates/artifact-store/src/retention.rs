//! Retention: what a store removes, and the stamp that keeps passes a period apart.
//!
//! "In use" is an advisory `flock` held by every open [`ArtifactReservation`]: retention opens a
//! candidate, tries `LOCK_EX | LOCK_NB`, and removes the file only while it holds that lock. A
//! lock held by any process (this one included: `flock` locks belong to open file descriptions,
//! not processes) makes the file untouchable. Where locks are unsupported retention removes
//! nothing it cannot lock, so it fails safe.
//!
//! [`ArtifactReservation`]: crate::ArtifactReservation

use std::fs::{self, File, TryLockError};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use rustix::fs::{FlockOperation, Mode, OFlags, Timespec, Timestamps, UTIME_NOW};

use crate::ArtifactError;
use crate::files::{FILE_MODE, ScannedEntry, make_private_file, open_no_follow, scan};

/// The stamp's name in the store directory: written when a pass finishes, locked while one
/// runs (not named like an artifact: never listed).
const STAMP_NAME: &str = ".retention-stamp";

/// Default of `artifacts.max_age_days`: artifacts older than this many days are removed.
pub const DEFAULT_RETENTION_MAX_AGE_DAYS: u32 = 7;

/// Default of `artifacts.max_bytes`: 1 GiB in total, oldest artifacts removed first above it.
pub const DEFAULT_RETENTION_MAX_BYTES: u64 = 1 << 30;

const SECONDS_PER_DAY: u64 = 86_400;

/// How much a store keeps (`[artifacts] max_age_days`, `max_bytes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetentionPolicy {
    /// Artifacts last modified more than this many days ago are removed (0: every artifact not
    /// in use is "old").
    pub max_age_days: u32,
    /// While the artifacts together exceed this many bytes, the oldest is removed.
    pub max_bytes: u64,
}

impl Default for RetentionPolicy {
    fn default() -> Self {
        Self {
            max_age_days: DEFAULT_RETENTION_MAX_AGE_DAYS,
            max_bytes: DEFAULT_RETENTION_MAX_BYTES,
        }
    }
}

/// What a retention pass did.
#[derive(Debug, Default)]
pub struct RetentionReport {
    /// Ids removed, in removal order (too old first, then oldest-first for size).
    pub removed: Vec<u64>,
    /// Bytes freed by the removals.
    pub removed_bytes: u64,
    /// Ids the policy would have removed but that were in use (locked), so were kept.
    pub in_use: Vec<u64>,
    /// Artifacts that could not be examined or removed; the pass went on without them.
    pub errors: Vec<ArtifactError>,
}

struct Candidate {
    id: u64,
    path: PathBuf,
    len: u64,
    modified: SystemTime,
}

enum Removal {
    Removed,
    InUse,
    Gone,
}

/// The right to run a pass on a store: its stamp, open and locked (`None` when the stamp
/// cannot be used, a full disk: the pass then runs unguarded and stamps nothing).
#[derive(Debug)]
pub(crate) struct Stamp {
    file: Option<File>,
}

impl Stamp {
    /// The claim on a pass over the store `dir` when one is due: the stamp is missing, empty
    /// or older than `period`, and no pass holds it.
    pub(crate) fn claim_if_due(dir: &Path, period: Duration) -> Option<Self> {
        let path = dir.join(STAMP_NAME);
        // The usual case, one `statx`: a pass ran lately.
        if fs::symlink_metadata(&path).is_ok_and(|meta| is_fresh(&meta, period)) {
            return None;
        }
        let Some(file) = open_stamp(&path) else {
            return Some(Self { file: None });
        };
        match rustix::fs::flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            Err(rustix::io::Errno::WOULDBLOCK) => return None,
            Err(_) => return Some(Self { file: None }),
        }
        // A pass may have finished between the look and the lock.
        match file.metadata() {
            Ok(meta) if is_fresh(&meta, period) => None,
            _ => Some(Self { file: Some(file) }),
        }
    }

    /// The claim on a pass over the store `dir` now, after the one that runs (if any).
    pub(crate) fn claim(dir: &Path) -> Self {
        let file = open_stamp(&dir.join(STAMP_NAME))
            .filter(|file| rustix::fs::flock(file, FlockOperation::LockExclusive).is_ok());
        Self { file }
    }

    /// Stamps the end of a pass, and lets the lock go.
    pub(crate) fn finish(self) {
        let Some(file) = &self.file else {
            return;
        };
        // A stamp with something in it is one a pass wrote (a new, empty one is never fresh).
        let _ = rustix::io::pwrite(file, b"retained\n", 0);
        let now = Timespec {
            tv_sec: 0,
            tv_nsec: UTIME_NOW,
        };
        let _ = rustix::fs::futimens(
            file,
            &Timestamps {
                last_access: now,
                last_modification: now,
            },
        );
    }
}

/// The stamp file at `path`, opened (made when missing, 0600).
fn open_stamp(path: &Path) -> Option<File> {
    let flags = OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::open(path, flags, Mode::from_raw_mode(FILE_MODE)).ok()?;
    let file = File::from(fd);
    make_private_file(&file).ok()?;
    Some(file)
}

/// A stamp a pass wrote less than `period` ago.
fn is_fresh(meta: &fs::Metadata, period: Duration) -> bool {
    meta.is_file()
        && meta.len() > 0
        && meta
            .modified()
            .ok()
            .and_then(|at| SystemTime::now().duration_since(at).ok())
            .is_some_and(|age| age < period)
}

/// One pass of `policy` over the store `dir`, as of `now`.
pub(crate) fn run(dir: &Path, policy: RetentionPolicy, now: SystemTime) -> RetentionReport {
    match scan(dir) {
        Ok(entries) => apply(&entries, policy, now),
        Err(err) => RetentionReport {
            errors: vec![err],
            ..RetentionReport::default()
        },
    }
}

/// Applies `policy` to the artifacts `entries` (one scan of the store), as of `now`.
fn apply(entries: &[ScannedEntry], policy: RetentionPolicy, now: SystemTime) -> RetentionReport {
    let mut report = RetentionReport::default();
    let mut candidates = Vec::with_capacity(entries.len());
    for entry in entries.iter().filter(|entry| entry.is_file) {
        match fs::symlink_metadata(&entry.path) {
            Ok(meta) if meta.is_file() => candidates.push(Candidate {
                id: entry.id,
                path: entry.path.clone(),
                len: meta.len(),
                // A file system without mtimes gives no age: treat the file as new.
                modified: meta.modified().unwrap_or(now),
            }),
            Ok(_) => {}
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => report
                .errors
                .push(ArtifactError::io("examine artifact", &entry.path, err)),
        }
    }
    // Oldest first; equal times fall back to the id, which grows with allocation order.
    candidates.sort_by_key(|candidate| (candidate.modified, candidate.id));

    let max_age = Duration::from_secs(u64::from(policy.max_age_days) * SECONDS_PER_DAY);
    let cutoff = now.checked_sub(max_age);
    // (candidate, tried): files the age pass could not remove (in use, or an error) still
    // count towards the total but are not tried again.
    let mut kept = Vec::with_capacity(candidates.len());
    for candidate in candidates {
        let too_old =
            policy.max_age_days == 0 || cutoff.is_some_and(|cutoff| candidate.modified < cutoff);
        if !too_old {
            kept.push((candidate, false));
        } else if !remove(&candidate, &mut report) {
            kept.push((candidate, true));
        }
    }

    let mut total: u64 = kept.iter().map(|(candidate, _)| candidate.len).sum();
    for (candidate, tried) in &kept {
        if total <= policy.max_bytes {
            break;
        }
        // Removing an empty file frees nothing, and an empty file is most likely a fresh
        // reservation about to be locked.
        if *tried || candidate.len == 0 {
            continue;
        }
        if remove(candidate, &mut report) {
            total -= candidate.len;
        }
    }
    report
}

/// Removes `candidate` unless it is in use; true when it is gone afterwards.
fn remove(candidate: &Candidate, report: &mut RetentionReport) -> bool {
    match try_remove(&candidate.path) {
        Ok(Removal::Removed) => {
            report.removed.push(candidate.id);
            report.removed_bytes += candidate.len;
            true
        }
        Ok(Removal::Gone) => true,
        Ok(Removal::InUse) => {
            report.in_use.push(candidate.id);
            false
        }
        Err(err) => {
            report.errors.push(ArtifactError::io(
                "remove old artifact",
                &candidate.path,
                err,
            ));
            false
        }
    }
}

fn try_remove(path: &Path) -> io::Result<Removal> {
    let file: File = match open_no_follow(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Removal::Gone),
        Err(err) => return Err(err),
    };
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => return Ok(Removal::InUse),
        Err(TryLockError::Error(err)) => return Err(err),
    }
    if !file.metadata()?.is_file() {
        return Ok(Removal::Gone);
    }
    // Unlink while holding the lock; the lock goes with `file` afterwards.
    match fs::remove_file(path) {
        Ok(()) => Ok(Removal::Removed),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(Removal::Gone),
        Err(err) => Err(err),
    }
}
