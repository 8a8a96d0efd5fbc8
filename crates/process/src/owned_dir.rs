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
//!   a directory of an agentsh that marks none (an older one) is never judged by its mark;
//! - every removal takes the mark last, once nothing else is left (and puts it back when the
//!   directory would not go), so a removal cut short leaves a marked, unlocked directory for
//!   the next look — or, stopped right between the mark and the `rmdir`, an empty one;
//! - so an empty, unmarked directory whose lock can be taken goes too, by `rmdir` (which fails
//!   once anything is in it): it is what such a removal left, or one being made this moment,
//!   and a making that loses its directory so starts again under another name.
//!
//! [`remove_ownerless`] is that look: the directories in a parent named `<prefix>` plus six
//! letters or digits (the shape [`OwnedDir::create`] makes), of this user, private, marked and
//! not locked, are removed. The supervisor does the same for a session's temp dir when it
//! ends its tree after agentsh died (`SandboxSpec::temp_dir`).
//!
//! Every descriptor agentsh opens is close-on-exec and the supervisor closes every descriptor
//! it does not need right after its fork, so the lock is agentsh's alone.

use std::ffi::{CStr, OsStr};
use std::fs;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FlockOperation, Mode, OFlags};

/// The file that marks a directory as an [`OwnedDir`] whose owner holds a lock on it.
pub const OWNED_MARK: &str = match OWNED_MARK_C.to_str() {
    Ok(name) => name,
    Err(_) => panic!("the mark's name is UTF-8"),
};
/// [`OWNED_MARK`] as a C string, for the supervisor's removals after its fork.
pub(crate) const OWNED_MARK_C: &CStr = c".agentsh-owned";

/// How many random letters and digits follow the prefix of an [`OwnedDir`]'s name.
const RANDOM_CHARS: usize = 6;
/// The permission bits of the group and others: none is set on a private directory.
const GROUP_OR_OTHERS: u32 = 0o077;
/// How often [`OwnedDir::close`] tries to remove the directory before it leaves it (marked,
/// unlocked) to a later [`remove_ownerless`].
const REMOVE_ATTEMPTS: usize = 3;
/// How often [`OwnedDir::create`] makes a directory anew when it went from under it, and how
/// many names it draws for one.
const CREATE_ATTEMPTS: usize = 8;

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
        let mut attempt = 1;
        loop {
            match Self::create_once(parent, prefix) {
                // A `remove_ownerless` elsewhere judged the new, empty directory before it
                // was locked, and took its lock or removed it: make another.
                Err(err)
                    if attempt < CREATE_ATTEMPTS
                        && matches!(
                            err.kind(),
                            io::ErrorKind::NotFound | io::ErrorKind::WouldBlock
                        ) =>
                {
                    attempt += 1;
                }
                made => return made,
            }
        }
    }

    fn create_once(parent: &Path, prefix: &str) -> io::Result<Self> {
        // Made whole under a name no judge looks at (it does not start with the prefix), then
        // given its name in one step: a `remove_ownerless` of the same parent only ever sees
        // the directory marked and locked. (Made under its own name, a preempted making left
        // it empty and unlocked for a moment, and a judge could take it, again and again
        // on a loaded machine.)
        let making = tempfile::Builder::new()
            .prefix(&format!(".making-{prefix}"))
            .rand_bytes(RANDOM_CHARS)
            .permissions(fs::Permissions::from_mode(0o700))
            .tempdir_in(parent)?;
        // Until `keep` below, a failure removes the directory with `making`.
        let lock = open_dir(making.path())?;
        rustix::fs::flock(&lock, FlockOperation::NonBlockingLockExclusive)?;
        write_mark(&lock, OWNED_MARK)?;
        for _ in 0..CREATE_ATTEMPTS {
            let path = parent.join(format!("{prefix}{}", crate::random_hex(RANDOM_CHARS / 2)));
            match rename_no_replace(making.path(), &path) {
                Ok(()) => {
                    let _moved = making.keep();
                    return Ok(Self {
                        path,
                        lock: Some(lock),
                    });
                }
                // Another directory has that name: draw another.
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
                Err(err) => return Err(err),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "no free name for a private directory",
        ))
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
/// [`OWNED_MARK`] (or empty: what a removal stopped right before its `rmdir` left), and not
/// locked. Returns the directories removed. Best effort: an entry that cannot be looked at is
/// kept.
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
            inside: None,
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
                    seen.inside = Some(opened.as_ref().map_or(Inside::Unknown, look_inside));
                    dir = opened;
                }
                Verdict::TryLock => seen.lock = dir.as_ref().map(try_lock),
                Verdict::Remove => {
                    if remove_marked(&path).is_ok() {
                        removed.push(path);
                    }
                    break;
                }
                Verdict::RemoveEmpty => {
                    if fs::remove_dir(&path).is_ok() {
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
    /// What it holds; `None` until looked at.
    inside: Option<Inside>,
    /// What taking its lock gave; `None` until tried.
    lock: Option<Lock>,
}

/// What a directory with an owned dir's name holds, as far as judging it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Inside {
    /// The [`OWNED_MARK`] file.
    Marked,
    /// Nothing at all.
    Empty,
    /// Something, but no mark: an older agentsh's, or one whose mark was taken (by hand).
    Unmarked,
    /// It could not be opened or listed.
    Unknown,
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
    /// Not one to remove: someone else's, not private, unmarked with something in it, or its
    /// owner runs.
    Keep,
    /// This user's private directory: open it and look for the mark.
    LookInside,
    /// Marked, or empty: try its lock. An unmarked directory with something in it is never
    /// tried, as taking its lock could fail the making of one (the mark comes after the lock);
    /// an empty one may be one being made, whose making starts again if it loses it.
    TryLock,
    /// Marked, and its owner is gone: remove it.
    Remove,
    /// Empty, unmarked and unlocked: remove it if it is still empty (`rmdir`).
    RemoveEmpty,
}

/// The next step with one entry named like an owned dir, for the user `uid`. Pure, so that
/// every case is tested without a dead owner.
fn verdict(seen: &Seen, uid: u32) -> Verdict {
    let private = seen.mode & GROUP_OR_OTHERS == 0;
    if !seen.directory || seen.uid != uid || !private {
        return Verdict::Keep;
    }
    match (seen.inside, seen.lock) {
        (None, _) => Verdict::LookInside,
        (Some(Inside::Marked | Inside::Empty), None) => Verdict::TryLock,
        (Some(Inside::Marked), Some(Lock::Taken)) => Verdict::Remove,
        (Some(Inside::Empty), Some(Lock::Taken)) => Verdict::RemoveEmpty,
        (Some(Inside::Unmarked | Inside::Unknown), _)
        | (Some(_), Some(Lock::Held | Lock::Failed)) => Verdict::Keep,
    }
}

/// Opens a directory (not through a symlink), close-on-exec.
fn open_dir(path: &Path) -> io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    Ok(rustix::fs::open(path, flags, Mode::empty())?)
}

/// What the directory `dir` holds: the mark (a regular file), nothing at all, or else.
fn look_inside(dir: &OwnedFd) -> Inside {
    let marked = rustix::fs::statat(dir, OWNED_MARK, AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|st| rustix::fs::FileType::from_raw_mode(st.st_mode).is_file());
    if marked {
        return Inside::Marked;
    }
    let Ok(entries) = rustix::fs::Dir::read_from(dir) else {
        return Inside::Unknown;
    };
    for entry in entries {
        match entry {
            Err(_) => return Inside::Unknown,
            Ok(entry) if !matches!(entry.file_name().to_bytes(), b"." | b"..") => {
                return Inside::Unmarked;
            }
            Ok(_) => {}
        }
    }
    Inside::Empty
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
    let mark = path.join(OWNED_MARK);
    let unmarked = match fs::remove_file(&mark) {
        Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
        gone => gone.is_ok(),
    };
    fs::remove_dir(path).inspect_err(|_| {
        // Something came in meanwhile: the directory stays, marked, for the next look.
        if unmarked {
            let _ = write_mark(rustix::fs::CWD, &mark);
        }
    })
}

/// Creates the mark `mark`, relative to `dir`: a new, empty 0600 file, never through a
/// symlink.
fn write_mark(dir: impl AsFd, mark: impl rustix::path::Arg) -> io::Result<()> {
    rustix::fs::openat(
        dir,
        mark,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )?;
    Ok(())
}

/// Renames `from` to `to` unless something is at `to` (`AlreadyExists` then). Where the file
/// system has no `RENAME_NOREPLACE`, a look first and a plain rename.
fn rename_no_replace(from: &Path, to: &Path) -> io::Result<()> {
    use rustix::fs::{CWD, RenameFlags};
    match rustix::fs::renameat_with(CWD, from, CWD, to, RenameFlags::NOREPLACE) {
        Ok(()) => Ok(()),
        Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) => {
            if fs::symlink_metadata(to).is_ok() {
                return Err(io::ErrorKind::AlreadyExists.into());
            }
            fs::rename(from, to)
        }
        Err(err) => Err(err.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ME: u32 = 1000;

    /// A private directory of `ME`, looked at as far as `inside` and `lock` say.
    fn private(inside: Option<Inside>, lock: Option<Lock>) -> Seen {
        Seen {
            directory: true,
            uid: ME,
            mode: 0o040_700,
            inside,
            lock,
        }
    }

    #[test]
    fn a_marked_private_directory_of_mine_whose_lock_is_free_is_removed() {
        let steps = [
            (private(None, None), Verdict::LookInside),
            (private(Some(Inside::Marked), None), Verdict::TryLock),
            (
                private(Some(Inside::Marked), Some(Lock::Taken)),
                Verdict::Remove,
            ),
        ];
        for (seen, next) in steps {
            assert_eq!(verdict(&seen, ME), next, "{seen:?}");
        }
    }

    /// What a removal stopped between the mark and the `rmdir` leaves (or one being made).
    #[test]
    fn an_empty_private_directory_of_mine_whose_lock_is_free_is_removed_if_still_empty() {
        assert_eq!(
            verdict(&private(Some(Inside::Empty), None), ME),
            Verdict::TryLock
        );
        assert_eq!(
            verdict(&private(Some(Inside::Empty), Some(Lock::Taken)), ME),
            Verdict::RemoveEmpty
        );
    }

    #[test]
    fn a_directory_whose_lock_is_held_is_kept() {
        for inside in [Inside::Marked, Inside::Empty] {
            for lock in [Lock::Held, Lock::Failed] {
                assert_eq!(
                    verdict(&private(Some(inside), Some(lock)), ME),
                    Verdict::Keep
                );
            }
        }
    }

    #[test]
    fn an_unmarked_directory_with_something_in_it_is_kept_and_its_lock_never_tried() {
        // Locked, not yet marked (being made), or made by an agentsh that marks none; or not
        // looked into.
        for inside in [Inside::Unmarked, Inside::Unknown] {
            assert_eq!(verdict(&private(Some(inside), None), ME), Verdict::Keep);
            assert_eq!(
                verdict(&private(Some(inside), Some(Lock::Taken)), ME),
                Verdict::Keep
            );
        }
    }

    #[test]
    fn only_a_private_directory_of_mine_is_looked_into() {
        for (inside, lock) in [
            (None, None),
            (Some(Inside::Marked), None),
            (Some(Inside::Marked), Some(Lock::Taken)),
            (Some(Inside::Empty), Some(Lock::Taken)),
        ] {
            let mine = private(inside, lock);
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
        // An older agentsh's, unmarked, with its files: not judged.
        let unmarked = parent.path().join("agentsh-t-old000");
        std::fs::create_dir(&unmarked).expect("dir");
        std::fs::set_permissions(&unmarked, fs::Permissions::from_mode(0o700)).expect("mode");
        std::fs::write(unmarked.join("command"), "x").expect("file");
        // What a removal stopped right before its `rmdir` leaves: empty, unmarked, unlocked.
        let emptied = parent.path().join("agentsh-t-empty0");
        std::fs::create_dir(&emptied).expect("dir");
        std::fs::set_permissions(&emptied, fs::Permissions::from_mode(0o700)).expect("mode");

        let mut removed = remove_ownerless(parent.path(), "agentsh-t-");
        removed.sort();
        assert_eq!(removed, vec![dead.clone(), emptied.clone()]);
        assert!(!dead.exists());
        assert!(!emptied.exists());
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

    /// Makings race with a `remove_ownerless` that judges the same parent without a pause:
    /// each making either keeps its directory or makes another, and what it returns is whole
    /// (there, marked, locked).
    #[test]
    fn makings_beside_a_judge_of_the_same_parent_all_succeed() {
        let parent = tempfile::tempdir().expect("temp dir");
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let judge = {
            let (parent, stop) = (parent.path().to_path_buf(), stop.clone());
            std::thread::spawn(move || {
                let mut removed = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    removed += remove_ownerless(&parent, "agentsh-t-").len();
                }
                removed
            })
        };
        let mut made = Vec::new();
        for _ in 0..800 {
            made.push(OwnedDir::create(parent.path(), "agentsh-t-").expect("made"));
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let removed = judge.join().expect("judge");
        for dir in &made {
            assert!(dir.path().join(OWNED_MARK).is_file(), "{dir:?}");
            let fd = open_dir(dir.path()).expect("open");
            assert_eq!(try_lock(&fd), Lock::Held, "{dir:?}");
        }
        // Only directories taken while they were being made went.
        assert_eq!(
            fs::read_dir(parent.path()).expect("list").count(),
            made.len(),
            "removed {removed}"
        );
    }
}
