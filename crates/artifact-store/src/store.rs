//! The store: a private directory of `<id>.bash.log` files.

use std::ffi::OsString;
use std::fs::{self, DirBuilder, File, OpenOptions, Permissions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, SystemTime};

use crate::ArtifactError;
use crate::counter::{IdCounter, next_after_scan};
use crate::files::{FILE_MODE, open_no_follow, scan};
use crate::id::{canonical_id, file_name, parse_artifact_id};
use crate::read::{ArtifactText, read_lines};
use crate::reservation::ArtifactReservation;
use crate::retention::{self, RetentionPolicy, RetentionReport, Stamp};

/// Mode of the store directory.
const DIR_MODE: u32 = 0o700;
/// The id a new, empty store hands out first.
const FIRST_ID: u64 = 1;
/// After this many `EEXIST` in a row (a process allocating without the counter, or files put
/// there by hand), rescan the directory and jump past its highest id instead of probing one id
/// at a time.
const RESCAN_AFTER_COLLISIONS: u32 = 8;

/// One artifact of a store, as [`ArtifactStore::list`] gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactInfo {
    /// Its id (`artifact://<id>`).
    pub id: u64,
    /// Its size in bytes.
    pub size: u64,
    /// When it was last written.
    pub modified: SystemTime,
}

/// A private directory of artifacts: allocates ids, resolves `artifact://` references,
/// reads line ranges, and applies its retention policy on request.
///
/// `ArtifactStore` is `Sync`: share one per process (e.g. in an `Arc`); several processes may
/// open the same directory at once.
#[derive(Debug)]
pub struct ArtifactStore {
    dir: PathBuf,
    policy: RetentionPolicy,
    /// The store's shared counter (`None`: it could not be opened).
    counter: Option<IdCounter>,
    /// The next id to try here; ids below it were taken (or skipped) by this store. Held while
    /// the shared counter is, so the threads of a process advance it in order.
    next: Mutex<u64>,
}

impl ArtifactStore {
    /// Opens (creating it and its parents, mode 0700) the store in `dir`, whose retention is
    /// `policy` ([`retain`](Self::retain), [`retain_when_due`](Self::retain_when_due)).
    ///
    /// An existing store directory owned by this user gets its mode set back to 0700. The cost
    /// does not grow with the number of artifacts: the next id comes from the store's counter
    /// file (`.next-id`), and the directory is listed only to make that counter when it is
    /// missing. Ids never go back, so removing old artifacts does not make their ids come back.
    pub fn open(dir: impl Into<PathBuf>, policy: RetentionPolicy) -> Result<Self, ArtifactError> {
        let dir = dir.into();
        create_private_dir(&dir)?;
        let (counter, next) = IdCounter::open(&dir, FIRST_ID)?;
        Ok(Self {
            dir,
            policy,
            counter,
            next: Mutex::new(next),
        })
    }

    /// The default store directory: `$XDG_STATE_HOME/agentsh/artifacts`, or
    /// `$HOME/.local/state/agentsh/artifacts` when `XDG_STATE_HOME` is unset, empty or relative
    /// (the XDG base-directory rule). The `artifacts.dir` setting is the caller's to apply.
    pub fn default_dir() -> Result<PathBuf, ArtifactError> {
        default_dir_from(std::env::var_os("XDG_STATE_HOME"), std::env::var_os("HOME"))
    }

    /// The store directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Applies the retention policy now, in this thread, and returns what it did. A pass that
    /// another process runs on the same store is waited for first.
    ///
    /// Artifacts older than `max_age_days` go, then the oldest while they total more than
    /// `max_bytes`; an artifact in use (its reservation open in any process) stays. Problems
    /// with single files do not stop the pass; they are listed in the report.
    pub fn retain(&self) -> RetentionReport {
        let stamp = Stamp::claim(&self.dir);
        let report = retention::run(&self.dir, self.policy, SystemTime::now());
        stamp.finish();
        report
    }

    /// Starts [`retain`](Self::retain) in a thread of its own when the store's last pass (by
    /// any process) finished more than `period` ago and none runs now, and returns its handle
    /// (join it for the report, or drop it: the pass goes on). `None` when no pass is due.
    ///
    /// One `stat` of the store's stamp file when nothing is due, so a session can ask at every
    /// start, whatever the number of artifacts. A pass cut short (its process ended) writes no
    /// stamp: the next start's pass takes it up.
    pub fn retain_when_due(&self, period: Duration) -> Option<JoinHandle<RetentionReport>> {
        let stamp = Stamp::claim_if_due(&self.dir, period)?;
        let (dir, policy) = (self.dir.clone(), self.policy);
        thread::Builder::new()
            .name("agentsh-retention".to_owned())
            .spawn(move || {
                let report = retention::run(&dir, policy, SystemTime::now());
                stamp.finish();
                report
            })
            .ok()
    }

    /// Reserves the next id by creating its file with `O_CREAT | O_EXCL` (mode 0600).
    ///
    /// Cheap: the store's counter read and advanced under its lock, and one `open`, one
    /// `flock`, one `fstat` for the id; the directory is scanned again only after a streak of
    /// ids taken by something that did not advance the counter.
    pub fn allocate(&self) -> Result<ArtifactReservation, ArtifactError> {
        let mut next = self.next.lock().unwrap_or_else(PoisonError::into_inner);
        let mut shared = self.counter.as_ref().and_then(IdCounter::hold);
        if let Some(value) = shared.as_ref().and_then(|hold| hold.value) {
            *next = (*next).max(value);
        }
        let mut streak = 0;
        let mut recreated = false;
        loop {
            let id = *next;
            *next = id
                .checked_add(1)
                .ok_or_else(|| ArtifactError::IdsExhausted {
                    dir: self.dir.clone(),
                })?;
            let path = self.dir.join(file_name(id));
            match create_reserved(&path) {
                Ok(Some(file)) => {
                    if let Some(hold) = shared.as_mut() {
                        hold.advance(*next);
                    }
                    return Ok(ArtifactReservation::new(id, path, file));
                }
                // Removed between creation and locking (a retention pass in another process
                // mistook it for an old file): take another id.
                Ok(None) => {}
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
                    streak += 1;
                    if streak >= RESCAN_AFTER_COLLISIONS {
                        streak = 0;
                        *next = (*next).max(next_after_scan(&self.dir, FIRST_ID)?);
                    }
                }
                // The store directory was removed while the store was open (a user cleaning
                // up): make it again, once.
                Err(err) if err.kind() == io::ErrorKind::NotFound && !recreated => {
                    recreated = true;
                    create_private_dir(&self.dir)?;
                }
                Err(err) => return Err(ArtifactError::io("create artifact", path, err)),
            }
        }
    }

    /// The ids of the artifacts in the store, ascending.
    pub fn ids(&self) -> Result<Vec<u64>, ArtifactError> {
        let mut ids: Vec<u64> = scan(&self.dir)?
            .into_iter()
            .filter(|entry| entry.is_file)
            .map(|entry| entry.id)
            .collect();
        ids.sort_unstable();
        Ok(ids)
    }

    /// The artifacts in the store, newest first (by modification time, then by id), each with
    /// its size. One being removed meanwhile (retention, another process) is left out.
    pub fn list(&self) -> Result<Vec<ArtifactInfo>, ArtifactError> {
        let mut listed = Vec::new();
        for entry in scan(&self.dir)?.into_iter().filter(|entry| entry.is_file) {
            match fs::symlink_metadata(&entry.path) {
                Ok(meta) if meta.is_file() => listed.push(ArtifactInfo {
                    id: entry.id,
                    size: meta.len(),
                    // A file system without mtimes: the epoch, so the id orders it.
                    modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                }),
                Ok(_) => {}
                Err(err) if err.kind() == io::ErrorKind::NotFound => {}
                Err(err) => return Err(ArtifactError::io("examine artifact", entry.path, err)),
            }
        }
        listed.sort_unstable_by_key(|info| std::cmp::Reverse((info.modified, info.id)));
        Ok(listed)
    }

    /// One artifact's id, size and time, given as for [`ArtifactStore::resolve`] (and with its
    /// errors): one file looked at, not the directory.
    pub fn info(&self, id_or_url: &str) -> Result<ArtifactInfo, ArtifactError> {
        let (id, path, file) = self.open_artifact(id_or_url)?;
        let meta = file
            .metadata()
            .map_err(|err| ArtifactError::io("examine artifact", path, err))?;
        Ok(ArtifactInfo {
            id,
            size: meta.len(),
            // As `list`: a file system without mtimes gives the epoch.
            modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        })
    }

    /// The file of an artifact, given as a bare id (`"7"`) or a URL (`"artifact://7"`).
    ///
    /// Errors, exactly: `artifact:// URL requires a numeric ID: <url>`,
    /// `artifact:// ID must be numeric, got: <x>`, `Artifact <id> not found. Available: 1, 2, 5`
    /// (or `none`). Only a canonical decimal id naming a regular file in the store resolves:
    /// `007`, a 40-digit id, or a symlink named like an artifact are "not found".
    pub fn resolve(&self, id_or_url: &str) -> Result<PathBuf, ArtifactError> {
        self.open_artifact(id_or_url).map(|(_, path, _)| path)
    }

    /// Reads lines of an artifact without loading the whole file.
    ///
    /// `offset` is the first line, 1-based (default 1; 0 is taken as 1, as the original read
    /// tool did); `limit` is the number of lines (default: to the end; 0 gives no lines). Lines
    /// keep their `\n`; an offset past the end gives empty text. `total_lines` counts the whole
    /// file by the line rule (a final `\n` does not start an empty line). Invalid UTF-8
    /// (not produced by agentsh, which stores sanitised text) becomes U+FFFD.
    pub fn read(
        &self,
        id_or_url: &str,
        offset: Option<u64>,
        limit: Option<u64>,
    ) -> Result<ArtifactText, ArtifactError> {
        let (_, path, file) = self.open_artifact(id_or_url)?;
        let first_line = offset.unwrap_or(1).max(1);
        match read_lines(file, first_line, limit) {
            Ok((text, total_lines)) => Ok(ArtifactText {
                text,
                total_lines,
                path,
            }),
            Err(err) => Err(ArtifactError::io("read artifact", path, err)),
        }
    }

    /// The artifact named by `id_or_url`, opened: its id, its path and the file (resolve's
    /// checks and errors).
    fn open_artifact(&self, id_or_url: &str) -> Result<(u64, PathBuf, File), ArtifactError> {
        let digits = parse_artifact_id(id_or_url)?;
        let not_found = || match self.ids() {
            Ok(available) => ArtifactError::NotFound {
                id: digits.to_owned(),
                available,
            },
            Err(err) => err,
        };
        let Some(id) = canonical_id(digits) else {
            return Err(not_found());
        };
        let path = self.dir.join(file_name(id));
        let file = match open_no_follow(&path) {
            Ok(file) => file,
            // ELOOP: a symlink named like an artifact is not one.
            Err(err)
                if err.kind() == io::ErrorKind::NotFound
                    || err.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) =>
            {
                return Err(not_found());
            }
            Err(err) => return Err(ArtifactError::io("open artifact", path, err)),
        };
        match file.metadata() {
            Ok(meta) if meta.is_file() => Ok((id, path, file)),
            Ok(_) => Err(not_found()),
            Err(err) => Err(ArtifactError::io("open artifact", path, err)),
        }
    }
}

/// Creates `dir` and its missing parents with mode 0700, and makes `dir` itself 0700.
fn create_private_dir(dir: &Path) -> Result<(), ArtifactError> {
    DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(dir)
        .map_err(|err| ArtifactError::io("create artifact store", dir, err))?;
    make_private(dir)
}

/// Sets the store directory back to 0700 when this user owns it and it is not already.
fn make_private(dir: &Path) -> Result<(), ArtifactError> {
    let meta =
        fs::metadata(dir).map_err(|err| ArtifactError::io("open artifact store", dir, err))?;
    if !meta.is_dir() {
        return Err(ArtifactError::io(
            "open artifact store",
            dir,
            io::Error::new(io::ErrorKind::NotADirectory, "not a directory"),
        ));
    }
    let owned = meta.uid() == rustix::process::geteuid().as_raw();
    if owned && meta.mode() & 0o7777 != DIR_MODE {
        fs::set_permissions(dir, Permissions::from_mode(DIR_MODE))
            .map_err(|err| ArtifactError::io("set mode 0700 on artifact store", dir, err))?;
    }
    Ok(())
}

/// Creates and locks a reservation file; `Ok(None)` when it was unlinked before the lock was
/// taken. Nothing is left behind on error.
fn create_reserved(path: &Path) -> io::Result<Option<File>> {
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(FILE_MODE)
        .open(path)?;
    let checked = (|| {
        // Waits only while a retention pass holds this very file, which takes microseconds.
        // Where flock is unsupported the reservation goes on unlocked, and retention (which
        // cannot lock either) removes nothing.
        let _ = file.lock();
        let meta = file.metadata()?;
        if meta.nlink() == 0 {
            return Ok(false);
        }
        // The umask can only have cleared bits of 0600; put them back.
        if meta.mode() & 0o7777 != FILE_MODE {
            file.set_permissions(Permissions::from_mode(FILE_MODE))?;
        }
        Ok(true)
    })();
    match checked {
        Ok(true) => Ok(Some(file)),
        Ok(false) => Ok(None),
        Err(err) => {
            let _ = fs::remove_file(path);
            Err(err)
        }
    }
}

fn default_dir_from(
    xdg_state_home: Option<OsString>,
    home: Option<OsString>,
) -> Result<PathBuf, ArtifactError> {
    let absolute = |value: Option<OsString>| value.map(PathBuf::from).filter(|p| p.is_absolute());
    let state = match absolute(xdg_state_home) {
        Some(state) => state,
        None => absolute(home)
            .ok_or(ArtifactError::NoStateDir)?
            .join(".local")
            .join("state"),
    };
    Ok(state.join("agentsh").join("artifacts"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(xdg: Option<&str>, home: Option<&str>) -> Option<PathBuf> {
        default_dir_from(xdg.map(OsString::from), home.map(OsString::from)).ok()
    }

    #[test]
    fn default_dir_follows_the_xdg_rule() {
        let expected = |p: &str| Some(PathBuf::from(p));
        assert_eq!(
            dir(Some("/x/state"), Some("/home/u")),
            expected("/x/state/agentsh/artifacts")
        );
        assert_eq!(
            dir(None, Some("/home/u")),
            expected("/home/u/.local/state/agentsh/artifacts")
        );
        assert_eq!(
            dir(Some(""), Some("/home/u")),
            expected("/home/u/.local/state/agentsh/artifacts")
        );
        assert_eq!(
            dir(Some("relative/state"), Some("/home/u")),
            expected("/home/u/.local/state/agentsh/artifacts")
        );
        assert_eq!(dir(Some("relative"), None), None);
        assert_eq!(dir(None, Some("home")), None);
        assert_eq!(dir(None, None), None);
        assert_eq!(
            default_dir_from(None, None).map_err(|e| e.to_string()),
            Err(
                "cannot locate the artifact store: XDG_STATE_HOME and HOME are unset or not \
                 absolute; set artifacts.dir"
                    .to_owned()
            )
        );
    }
}
