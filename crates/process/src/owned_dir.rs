//! Private directories that tell whether their owner still runs, so that what a dead agentsh
//! left can be found and removed without guessing.
//!
//! An [`OwnedDir`] is made 0700, then its owner takes an exclusive `flock` on the directory
//! itself and holds it for as long as the directory lives, and only then marks it with an empty
//! file [`OWNED_MARK`]. The kernel drops the lock when the last descriptor of it closes: when
//! the owner removes the directory, or when the owner dies, however (SIGKILL included). So a
//! marked directory whose lock can be taken has no owner any more:
//!
//! - a pid is never involved, so pid reuse cannot make a dead owner look alive or a live one
//!   dead, and a lock taken in another pid namespace is seen the same;
//! - the mark comes after the lock: a directory being made (not yet locked) is not marked, and
//!   a directory of an agentsh that marks none (an older one) is never judged;
//! - removal holds the lock and takes the mark last, so an interrupted removal leaves a marked,
//!   unlocked directory for the next look.
//!
//! [`remove_ownerless`] is that look: the directories in a parent named `<prefix>` plus six
//! letters or digits (the shape [`OwnedDir::create`] makes), of this user, private, marked and
//! not locked, are removed. The supervisor does the same for a session's temp dir when it
//! ends its tree after agentsh died (`SandboxPolicy::temp_dir`).
//!
//! Every descriptor agentsh opens is close-on-exec and the supervisor closes every descriptor
//! it does not need right after its fork, so the lock is agentsh's alone.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FlockOperation, Mode, OFlags};

/// The file that marks a directory as an [`OwnedDir`] whose owner holds a lock on it.
pub const OWNED_MARK: &str = ".agentsh-owned";

/// How many random letters and digits follow the prefix of an [`OwnedDir`]'s name.
const RANDOM_CHARS: usize = 6;
/// The permission bits of the group and others: none is set on a private directory.
const GROUP_OR_OTHERS: u32 = 0o077;
/// How often [`OwnedDir::close`] tries to remove the directory before it leaves it (marked,
/// unlocked) to a later [`remove_ownerless`].
const REMOVE_ATTEMPTS: usize = 3;

/// A private (0700) directory locked by this process for as long as it exists: removed, with
/// everything in it, by [`OwnedDir::close`] or on drop, and by [`remove_ownerless`] in a later
/// process when this one died without removing it.
#[derive(Debug)]
pub struct OwnedDir {
    path: PathBuf,
    /// The directory, opened and locked; `None` once removed.
    lock: Option<OwnedFd>,
}

impl OwnedDir {
    /// Makes `<parent>/<prefix>XXXXXX` (six random letters and digits), 0700 whatever the
    /// umask, locks it and marks it.
    pub fn create(parent: &Path, prefix: &str) -> io::Result<Self> {
        let dir = tempfile::Builder::new()
            .prefix(prefix)
            .rand_bytes(RANDOM_CHARS)
            .permissions(fs::Permissions::from_mode(0o700))
            .tempdir_in(parent)?;
        // Until `keep` below, a failure removes the new directory with `dir`.
        let lock = open_dir(dir.path())?;
        rustix::fs::flock(&lock, FlockOperation::NonBlockingLockExclusive)?;
        rustix::fs::openat(
            &lock,
            OWNED_MARK,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )?;
        Ok(Self {
            path: dir.keep(),
            lock: Some(lock),
        })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the directory and everything in it now, and says how that went (dropping it
    /// does the same, silently).
    pub fn close(mut self) -> io::Result<()> {
        self.remove()
    }

    fn remove(&mut self) -> io::Result<()> {
        let Some(lock) = self.lock.take() else {
            return Ok(());
        };
        // Removed while locked: nobody else judges it meanwhile. A process that is still
        // ending may add an entry while the removal lists; a second pass takes it.
        let mut removed = remove_marked(&self.path);
        for _ in 1..REMOVE_ATTEMPTS {
            match &removed {
                Err(err) if err.kind() != io::ErrorKind::NotFound => {
                    removed = remove_marked(&self.path);
                }
                _ => break,
            }
        }
        drop(lock);
        match removed {
            // Gone already (its shell's supervisor, a person).
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }
}

impl Drop for OwnedDir {
    fn drop(&mut self) {
        let _ = self.remove();
    }
}

/// Removes every directory in `parent` that an [`OwnedDir::create`] with `prefix` made and
/// whose owner is gone: named `<prefix>` plus six letters or digits, a directory (not a
/// symlink) of this user, private (no access for group or others), marked with
/// [`OWNED_MARK`], and not locked. Returns the directories removed. Best effort: an entry that
/// cannot be looked at is kept.
pub fn remove_ownerless(parent: &Path, prefix: &str) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(parent) else {
        return Vec::new();
    };
    let uid = rustix::process::geteuid().as_raw();
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !has_owned_name(&name, prefix) {
            continue;
        }
        let path = entry.path();
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        let mut seen = Seen {
            directory: meta.is_dir(),
            uid: meta.uid(),
            mode: meta.mode(),
            marked: None,
            lock: None,
        };
        let mut dir = None;
        loop {
            match verdict(&seen, uid) {
                Verdict::Keep => break,
                Verdict::LookInside => {
                    // The entry looked at is the one opened (not swapped meanwhile).
                    let opened = open_dir(&path).ok().filter(|fd| {
                        rustix::fs::fstat(fd)
                            .is_ok_and(|st| st.st_dev == meta.dev() && st.st_ino == meta.ino())
                    });
                    seen.marked = Some(opened.as_ref().is_some_and(is_marked));
                    dir = opened;
                }
                Verdict::TryLock => seen.lock = dir.as_ref().map(try_lock),
                Verdict::Remove => {
                    if remove_marked(&path).is_ok() {
                        removed.push(path);
                    }
                    break;
                }
            }
        }
        // The lock goes with `dir`, after the removal.
        drop(dir);
    }
    removed
}

/// Whether `name` is `<prefix>` and six ASCII letters or digits.
fn has_owned_name(name: &OsStr, prefix: &str) -> bool {
    name.as_bytes()
        .strip_prefix(prefix.as_bytes())
        .is_some_and(|rest| {
            rest.len() == RANDOM_CHARS && rest.iter().all(u8::is_ascii_alphanumeric)
        })
}

/// What is known of a directory entry with an owned dir's name, as far as it was looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen {
    /// A directory, not a symlink or anything else.
    directory: bool,
    /// Its owner.
    uid: u32,
    /// Its mode bits (`st_mode`).
    mode: u32,
    /// Whether it holds the [`OWNED_MARK`] file; `None` until looked at.
    marked: Option<bool>,
    /// What taking its lock gave; `None` until tried.
    lock: Option<Lock>,
}

/// What trying an owned dir's lock gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lock {
    /// Taken: nobody holds it, the owner is gone.
    Taken,
    /// Someone holds it: the owner runs.
    Held,
    /// The attempt failed otherwise: nothing can be told.
    Failed,
}

/// What to do next with an entry, from what is known of it so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Not one to remove: someone else's, not private, not marked, or its owner runs.
    Keep,
    /// This user's private directory: open it and look for the mark.
    LookInside,
    /// Marked: try its lock. Only a marked directory's lock is tried, since the mark comes
    /// after the lock: taking the lock of one being made would fail its making.
    TryLock,
    /// Its owner is gone: remove it.
    Remove,
}

/// The next step with one entry named like an owned dir, for the user `uid`. Pure, so that
/// every case is tested without a dead owner.
fn verdict(seen: &Seen, uid: u32) -> Verdict {
    let private = seen.mode & GROUP_OR_OTHERS == 0;
    if !seen.directory || seen.uid != uid || !private {
        return Verdict::Keep;
    }
    match (seen.marked, seen.lock) {
        (None, _) => Verdict::LookInside,
        (Some(true), None) => Verdict::TryLock,
        (Some(true), Some(Lock::Taken)) => Verdict::Remove,
        (Some(false), _) | (Some(true), Some(Lock::Held | Lock::Failed)) => Verdict::Keep,
    }
}

/// Opens a directory (not through a symlink), close-on-exec.
fn open_dir(path: &Path) -> io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    Ok(rustix::fs::open(path, flags, Mode::empty())?)
}

/// Whether the directory `dir` holds the mark, a regular file.
fn is_marked(dir: &OwnedFd) -> bool {
    rustix::fs::statat(dir, OWNED_MARK, AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|st| rustix::fs::FileType::from_raw_mode(st.st_mode).is_file())
}

/// Tries the directory's lock without waiting.
fn try_lock(dir: &OwnedFd) -> Lock {
    match rustix::fs::flock(dir, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Lock::Taken,
        Err(rustix::io::Errno::WOULDBLOCK) => Lock::Held,
        Err(_) => Lock::Failed,
    }
}

/// Removes the marked directory `path` with everything in it, the mark last (so that a
/// removal cut short leaves it marked for the next look). Symlinks inside are removed, never
/// followed.
fn remove_marked(path: &Path) -> io::Result<()> {
    for entry in fs::read_dir(path)? {
        let entry = entry?;
        if entry.file_name() == OWNED_MARK {
            continue;
        }
        let gone = if entry.file_type()?.is_dir() {
            fs::remove_dir_all(entry.path())
        } else {
            fs::remove_file(entry.path())
        };
        match gone {
            Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
            _ => {}
        }
    }
    match fs::remove_file(path.join(OWNED_MARK)) {
        Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
        _ => {}
    }
    fs::remove_dir(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ME: u32 = 1000;

    /// A private directory of `ME`, looked at as far as `marked` and `lock` say.
    fn private(marked: Option<bool>, lock: Option<Lock>) -> Seen {
        Seen {
            directory: true,
            uid: ME,
            mode: 0o040_700,
            marked,
            lock,
        }
    }

    #[test]
    fn a_marked_private_directory_of_mine_whose_lock_is_free_is_removed() {
        let steps = [
            (private(None, None), Verdict::LookInside),
            (private(Some(true), None), Verdict::TryLock),
            (private(Some(true), Some(Lock::Taken)), Verdict::Remove),
        ];
        for (seen, next) in steps {
            assert_eq!(verdict(&seen, ME), next, "{seen:?}");
        }
    }

    #[test]
    fn a_directory_whose_lock_is_held_is_kept() {
        for lock in [Lock::Held, Lock::Failed] {
            assert_eq!(verdict(&private(Some(true), Some(lock)), ME), Verdict::Keep);
        }
    }

    #[test]
    fn an_unmarked_directory_is_kept_and_its_lock_never_tried() {
        // Being made (locked, not yet marked), or made by an agentsh that marks none.
        assert_eq!(verdict(&private(Some(false), None), ME), Verdict::Keep);
        assert_eq!(
            verdict(&private(Some(false), Some(Lock::Taken)), ME),
            Verdict::Keep
        );
    }

    #[test]
    fn only_a_private_directory_of_mine_is_looked_into() {
        for (marked, lock) in [
            (None, None),
            (Some(true), None),
            (Some(true), Some(Lock::Taken)),
        ] {
            let mine = private(marked, lock);
            let cases = [
                ("another user's", Seen { uid: 0, ..mine }),
                (
                    "not a directory",
                    Seen {
                        directory: false,
                        ..mine
                    },
                ),
                (
                    "readable by the group",
                    Seen {
                        mode: 0o040_750,
                        ..mine
                    },
                ),
                (
                    "open to others",
                    Seen {
                        mode: 0o040_701,
                        ..mine
                    },
                ),
            ];
            for (what, seen) in cases {
                assert_eq!(verdict(&seen, ME), Verdict::Keep, "{what}: {seen:?}");
            }
        }
    }

    #[test]
    fn only_the_names_an_owned_dir_gets_are_looked_at() {
        let cases = [
            ("agentsh-10LqPg", true),
            ("agentsh-abc123", true),
            ("agentsh-abc12", false),
            ("agentsh-abc1234", false),
            ("agentsh-ab-123", false),
            ("agentsh-sandbox-Xy12ab", false),
            ("agentsh-probe-abcdef", false),
            ("other-abcdef", false),
        ];
        for (name, owned) in cases {
            assert_eq!(
                has_owned_name(OsStr::new(name), "agentsh-"),
                owned,
                "{name}"
            );
        }
        assert!(has_owned_name(
            OsStr::new("agentsh-sandbox-Xy12ab"),
            "agentsh-sandbox-"
        ));
    }

    #[test]
    fn a_dead_owners_directory_is_removed_and_a_live_ones_kept() {
        let parent = tempfile::tempdir().expect("temp dir");
        let live = OwnedDir::create(parent.path(), "agentsh-t-").expect("created");
        std::fs::create_dir(live.path().join("sub")).expect("subdir");
        std::fs::write(live.path().join("sub/file"), "x").expect("file");
        // A dead owner's: marked, private, and nobody holds its lock.
        let dead = parent.path().join("agentsh-t-dead00");
        std::fs::create_dir(&dead).expect("dir");
        std::fs::set_permissions(&dead, fs::Permissions::from_mode(0o700)).expect("mode");
        std::fs::write(dead.join(OWNED_MARK), "").expect("mark");
        std::os::unix::fs::symlink(live.path(), dead.join("link")).expect("symlink");
        std::fs::write(dead.join("file"), "x").expect("file");
        // An older agentsh's, unmarked: not judged.
        let unmarked = parent.path().join("agentsh-t-old000");
        std::fs::create_dir(&unmarked).expect("dir");
        std::fs::set_permissions(&unmarked, fs::Permissions::from_mode(0o700)).expect("mode");

        assert_eq!(
            remove_ownerless(parent.path(), "agentsh-t-"),
            vec![dead.clone()]
        );
        assert!(!dead.exists());
        assert!(
            live.path().join("sub/file").exists(),
            "the symlink was not followed"
        );
        assert!(unmarked.exists());

        let path = live.path().to_path_buf();
        live.close().expect("removed");
        assert!(!path.exists());
    }

    #[test]
    fn a_dropped_owned_dir_is_removed_with_what_it_holds() {
        let parent = tempfile::tempdir().expect("temp dir");
        let dir = OwnedDir::create(parent.path(), "agentsh-t-").expect("created");
        let path = dir.path().to_path_buf();
        assert_eq!(
            std::fs::metadata(&path).expect("made").permissions().mode() & 0o777,
            0o700
        );
        std::fs::create_dir_all(path.join("a/b")).expect("subdirs");
        drop(dir);
        assert!(!path.exists());
    }
}
