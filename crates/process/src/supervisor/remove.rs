//! Removing directories after the fork: the shell's private directory when the supervisor
//! ends the tree, and an [`OwnedDir`](crate::OwnedDir) of agentsh's (the session's temp dir)
//! when its lock shows that agentsh is gone. Both go with their mark last, so that a removal
//! cut short leaves a directory the next agentsh still judges. Post-fork code, under the rule
//! at the top of `forked` (raw system calls on data prepared beforehand, no allocation).

use std::ffi::{CStr, CString, c_int};

use super::report::ORDERLY_END;
use crate::owned_dir::OWNED_MARK_C;
use crate::procfs;

/// How deep [`remove_owned_if_orphaned`] follows subdirectories: one directory buffer per
/// level sits on the stack. What lies deeper is left, with the marked directory, for the next
/// agentsh's [`remove_ownerless`](crate::remove_ownerless).
const MAX_DEPTH: u32 = 16;
/// The size of one level's directory buffer (a `getdents64` record is at most ~280 bytes).
const DIR_BUFFER: usize = 2048;
/// How many 1 ms naps [`remove_owned_if_orphaned`] waits at most for the lock of a dead
/// agentsh to be dropped.
const LOCK_WAIT_ROUNDS: u32 = 2000;
/// How long [`Ending::after_signal`] waits for the control pipe of an agentsh that may be
/// dying, in milliseconds.
const SIGNALLED_WAIT_MS: c_int = 2000;

/// An [`OwnedDir`](crate::OwnedDir) of agentsh's that the supervisor removes once agentsh is
/// gone, prepared before the fork.
pub(super) struct OrphanDir {
    /// Its path.
    pub(super) path: CString,
    /// Its device and inode when the plan was made: the one removed is that one.
    pub(super) dev: u64,
    pub(super) ino: u64,
}

impl OrphanDir {
    /// The directory at `path` as it is now; `None` when it cannot be looked at (nothing to
    /// remove later then).
    pub(super) fn prepare(path: &std::path::Path) -> Option<Self> {
        use std::os::unix::ffi::OsStrExt as _;
        use std::os::unix::fs::MetadataExt as _;
        let meta = std::fs::symlink_metadata(path).ok()?;
        Some(Self {
            path: CString::new(path.as_os_str().as_bytes()).ok()?,
            dev: meta.dev(),
            ino: meta.ino(),
        })
    }

    /// Whether `st` describes this directory (its device and inode).
    // `dev_t` and `ino_t` are not `u64` on every target.
    #[allow(clippy::unnecessary_cast)]
    fn is(&self, st: &libc::stat) -> bool {
        st.st_dev as u64 == self.dev && st.st_ino as u64 == self.ino
    }
}

/// Why the supervisor ends its tree, as far as agentsh's life goes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Ending {
    /// agentsh asked, and lives on ([`ORDERLY_END`] came before the end of the control pipe).
    Orderly,
    /// The control pipe ended without it: agentsh's exit closed it (agentsh died, or exited
    /// without ending its trees one by one).
    OwnerExited,
    /// A signal, with the control pipe still open: agentsh lives.
    Signalled,
}

impl Ending {
    /// Reads what the control pipe `control` holds, without waiting.
    pub(super) fn of(control: c_int) -> Self {
        Self::within(control, 0)
    }

    /// After [`Ending::Signalled`]: what the control pipe `control` holds once it has
    /// something, waiting up to [`SIGNALLED_WAIT_MS`]. The signal is most often the
    /// parent-death signal of a dying agentsh, which comes when the thread that forked the
    /// supervisor exits, before the last of agentsh's threads has closed the control pipe
    /// and dropped its locks; its end then follows within moments. A signal from anyone else
    /// leaves the pipe silent: still `Signalled`, after the wait.
    pub(super) fn after_signal(control: c_int) -> Self {
        Self::within(control, SIGNALLED_WAIT_MS)
    }

    /// What the control pipe holds, waiting up to `wait_ms` for it to have something.
    fn within(control: c_int, wait_ms: c_int) -> Self {
        let mut poll = libc::pollfd {
            fd: control,
            events: libc::POLLIN,
            revents: 0,
        };
        let mut byte = 0u8;
        // SAFETY: `poll` and `byte` are valid for the calls; the read happens only when the
        // pipe is readable, so it never blocks.
        unsafe {
            let deadline = monotonic_ms() + i64::from(wait_ms);
            let mut ready = libc::poll(&raw mut poll, 1, wait_ms);
            // A signal (the end of a child, another SIGTERM) cuts the wait short: wait on,
            // for what is left of it.
            while ready < 0 && super::report::errno() == libc::EINTR {
                let left = (deadline - monotonic_ms()).clamp(0, i64::from(wait_ms));
                ready = libc::poll(&raw mut poll, 1, left as c_int);
            }
            if ready <= 0 || poll.revents == 0 {
                return Self::Signalled;
            }
            if libc::read(control, (&raw mut byte).cast(), 1) == 1 && byte == ORDERLY_END {
                Self::Orderly
            } else {
                Self::OwnerExited
            }
        }
    }
}

/// Removes `dir` with everything in it, the mark last, when its lock can be taken: nobody
/// holds it, so agentsh (which holds it for as long as it runs) is gone. Nothing is tried
/// after an [`Ending::Orderly`] end (the directory is the live session's); after
/// [`Ending::OwnerExited`] the lock is waited for up to [`LOCK_WAIT_ROUNDS`] naps, since a
/// dying agentsh closes the control pipe and drops the lock at about the same time, in no
/// set order. Without the lock, or when the path no longer names the same directory, nothing
/// is touched.
pub(super) fn remove_owned_if_orphaned(dir: &OrphanDir, ending: Ending) {
    if ending == Ending::Orderly {
        return;
    }
    let rounds = if ending == Ending::OwnerExited {
        LOCK_WAIT_ROUNDS
    } else {
        1
    };
    // SAFETY: raw syscalls on a NUL-terminated path and descriptors opened here.
    unsafe {
        let fd = libc::open(
            dir.path.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return;
        }
        if !same_inode(fd, dir) {
            libc::close(fd);
            return;
        }
        let mut locked = false;
        for round in 0..rounds {
            if round > 0 {
                nap_ms();
            }
            locked = libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) == 0;
            if locked {
                break;
            }
        }
        if locked {
            remove_mark_last(fd, &dir.path, || {
                let mut st: libc::stat = std::mem::zeroed();
                // Still the same directory at that path.
                libc::lstat(dir.path.as_ptr(), &raw mut st) == 0 && dir.is(&st)
            });
        }
        // Closing it drops the lock.
        libc::close(fd);
    }
}

/// Milliseconds of the monotonic clock.
// `time_t` and the nanoseconds' type are not `i64` on every target.
#[allow(clippy::useless_conversion)]
fn monotonic_ms() -> i64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid out-pointer; clock_gettime is async-signal-safe.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &raw mut now) };
    i64::from(now.tv_sec) * 1000 + i64::from(now.tv_nsec) / 1_000_000
}

/// Sleeps about a millisecond.
fn nap_ms() {
    let pause = libc::timespec {
        tv_sec: 0,
        tv_nsec: 1_000_000,
    };
    // SAFETY: `pause` is a valid timespec; no remainder is asked for.
    unsafe { libc::nanosleep(&raw const pause, std::ptr::null_mut()) };
}

/// Whether the open directory `fd` is the one `dir` was prepared from.
fn same_inode(fd: c_int, dir: &OrphanDir) -> bool {
    // SAFETY: `st` is a valid out-pointer.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        libc::fstat(fd, &raw mut st) == 0 && dir.is(&st)
    }
}

/// Removes the directory `path`, open as `fd`, with everything in it, its mark
/// ([`OWNED_MARK`](crate::OWNED_MARK)) last: the mark goes only once nothing else is left,
/// and comes back when the directory would not go (an entry came in meanwhile). A removal cut
/// short (by SIGKILL, the end of a PID namespace) or failed so leaves the directory marked —
/// or, stopped right between the mark and the `rmdir`, empty — and the next agentsh's
/// [`remove_ownerless`](crate::remove_ownerless) finds it either way; an unmarked directory
/// with something in it would never be judged again. `still_there` tells whether `path` still
/// names the directory.
unsafe fn remove_mark_last(fd: c_int, path: &CStr, still_there: impl FnOnce() -> bool) {
    // SAFETY: raw syscalls on NUL-terminated names and a descriptor open in the caller.
    unsafe {
        if !empty_dir(fd, 0, Some(OWNED_MARK_C.to_bytes())) || !still_there() {
            return;
        }
        let unmarked = libc::unlinkat(fd, OWNED_MARK_C.as_ptr(), 0) == 0;
        if libc::rmdir(path.as_ptr()) != 0 && unmarked {
            let again = libc::openat(
                fd,
                OWNED_MARK_C.as_ptr(),
                libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                0o600,
            );
            if again >= 0 {
                libc::close(again);
            }
        }
    }
}

/// Removes every entry of the open directory `dir` except `keep`, into subdirectories up to
/// [`MAX_DEPTH`] levels (never through a symlink: a symlink is an entry like a file). Returns
/// whether the last listing found nothing else (on Linux; elsewhere nothing is listed or
/// removed, and the answer is yes: the `rmdir` that follows tells).
unsafe fn empty_dir(dir: c_int, depth: u32, keep: Option<&[u8]>) -> bool {
    let mut buf = [0u8; DIR_BUFFER];
    // Removing entries while listing may skip some: list again until a pass removes none.
    for _ in 0..64 {
        // SAFETY: rewinding a directory open here.
        unsafe { libc::lseek(dir, 0, libc::SEEK_SET) };
        let mut left = 0usize;
        let removed = procfs::for_each_dir_entry(dir, &mut buf, |name| {
            if matches!(name, b"." | b"..") || Some(name) == keep {
                return false;
            }
            let c_name = name.as_ptr().cast();
            // SAFETY: getdents64 names are NUL-terminated inside the buffer (see
            // `procfs::for_each_dir_entry`), so `c_name` is a valid C string.
            let gone = unsafe { unlink_entry(dir, c_name, depth) };
            left += usize::from(!gone);
            gone
        });
        if removed == 0 {
            return left == 0;
        }
    }
    false
}

/// Removes the entry `name` of the open directory `dir` (`depth` levels down): a file, a
/// FIFO, a symlink, or a directory with what [`empty_dir`] empties out of it.
unsafe fn unlink_entry(dir: c_int, name: *const libc::c_char, depth: u32) -> bool {
    // SAFETY: `name` is a NUL-terminated entry name of `dir`, open in the caller.
    unsafe {
        if libc::unlinkat(dir, name, 0) == 0 {
            return true;
        }
        if depth + 1 >= MAX_DEPTH {
            return false;
        }
        let sub = libc::openat(
            dir,
            name,
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        );
        if sub < 0 {
            return false;
        }
        empty_dir(sub, depth + 1, None);
        libc::close(sub);
        libc::unlinkat(dir, name, libc::AT_REMOVEDIR) == 0
    }
}

/// Removes the shell's private directory `dir` when the supervisor ends its tree: everything
/// in it (into subdirectories, as [`empty_dir`] goes), then its mark as an
/// [`OwnedDir`](crate::OwnedDir) and the directory, as [`remove_mark_last`] does, without
/// allocating. The tree is the directory's only writer once agentsh hands it over, and it is
/// dead by then; no lock is involved.
pub(super) fn remove_tree_dir(dir: &CStr) {
    // SAFETY: `dir` is NUL-terminated; `fd` is opened here and closed once.
    unsafe {
        let fd = libc::open(
            dir.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return;
        }
        remove_mark_last(fd, dir, || true);
        libc::close(fd);
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::owned_dir::OWNED_MARK;
    use std::os::unix::ffi::OsStrExt as _;
    use std::os::unix::fs::PermissionsExt as _;
    use std::path::Path;

    /// A directory like a dead agentsh's shell's: private, marked, with files and a FIFO, and
    /// a nested subdirectory `depth` levels deep with a file at its bottom.
    fn marked_dir(parent: &Path, depth: usize) -> std::path::PathBuf {
        let dir = parent.join("agentsh-abcdef");
        std::fs::create_dir(&dir).expect("dir");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).expect("private");
        std::fs::write(dir.join(OWNED_MARK), b"").expect("mark");
        for name in ["command", "header", "out1"] {
            std::fs::write(dir.join(name), name).expect("file");
        }
        let fifo = c_path(&dir.join("trigger"));
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let mut deep = dir.clone();
        for level in 0..depth {
            deep = deep.join(format!("d{level}"));
        }
        std::fs::create_dir_all(&deep).expect("subdirectories");
        std::fs::write(deep.join("bottom"), b"").expect("bottom file");
        dir
    }

    fn c_path(path: &Path) -> CString {
        CString::new(path.as_os_str().as_bytes()).expect("path")
    }

    /// Runs [`remove_mark_last`] on `dir`, with `still_there` as its check of the path.
    fn remove_with(dir: &Path, still_there: impl FnOnce() -> bool) {
        let path = c_path(dir);
        // SAFETY: `path` is NUL-terminated; `fd` is closed once.
        unsafe {
            let fd = libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY);
            assert!(fd >= 0, "open {}", dir.display());
            remove_mark_last(fd, &path, still_there);
            libc::close(fd);
        }
    }

    #[test]
    fn a_tree_dir_goes_with_its_files_and_subdirectories() {
        let parent = tempfile::tempdir().expect("tempdir");
        let dir = marked_dir(parent.path(), 3);
        remove_tree_dir(&c_path(&dir));
        assert!(!dir.exists(), "left: {dir:?}");
    }

    /// What cannot go (here, deeper than the removal follows) keeps the mark: the next
    /// agentsh's `remove_ownerless` still judges the directory, and removes it.
    #[test]
    fn a_removal_that_leaves_something_leaves_the_mark() {
        let parent = tempfile::tempdir().expect("tempdir");
        let dir = marked_dir(parent.path(), MAX_DEPTH as usize + 2);
        remove_tree_dir(&c_path(&dir));
        assert!(dir.join(OWNED_MARK).is_file(), "mark gone from {dir:?}");
        assert!(!dir.join("command").exists(), "the files went");
        assert_eq!(
            crate::remove_ownerless(parent.path(), "agentsh-"),
            vec![dir.clone()]
        );
        assert!(!dir.exists());
    }

    /// An entry that comes in after the directory was emptied (here, from the check that the
    /// path still names it) keeps the directory: its mark comes back.
    #[test]
    fn the_mark_comes_back_when_the_directory_would_not_go() {
        let parent = tempfile::tempdir().expect("tempdir");
        let dir = marked_dir(parent.path(), 0);
        let late = dir.join("late");
        remove_with(&dir, || {
            std::fs::write(&late, b"").expect("late file");
            true
        });
        assert!(dir.join(OWNED_MARK).is_file(), "no mark in {dir:?}");
        assert!(late.is_file());
        assert!(!dir.join("command").exists(), "the files went");
    }

    /// A directory that is no longer the one at its path is left with its mark.
    #[test]
    fn the_mark_stays_when_the_path_names_another_directory() {
        let parent = tempfile::tempdir().expect("tempdir");
        let dir = marked_dir(parent.path(), 0);
        remove_with(&dir, || false);
        assert!(dir.join(OWNED_MARK).is_file());
    }
}
