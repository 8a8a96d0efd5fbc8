//! Removing directories after the fork: the shell's private directory (flat) when the
//! supervisor ends the tree, and an [`OwnedDir`](crate::OwnedDir) of agentsh's (the session's
//! temp dir, any depth) when its lock shows that agentsh is gone. Post-fork code, under the
//! rule at the top of `forked` (raw system calls on data prepared beforehand, no allocation).

use std::ffi::{CStr, CString, c_int};

use super::report::ORDERLY_END;
use crate::owned_dir::OWNED_MARK;
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
    /// The name of the mark inside it ([`OWNED_MARK`]).
    pub(super) mark: CString,
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
            mark: CString::new(OWNED_MARK).ok()?,
        })
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
            empty_dir(fd, 0, Some(dir.mark.as_bytes()));
            libc::unlinkat(fd, dir.mark.as_ptr(), 0);
            let mut st: libc::stat = std::mem::zeroed();
            // Still the same directory at that path: remove it.
            if libc::lstat(dir.path.as_ptr(), &raw mut st) == 0
                && st.st_dev as u64 == dir.dev
                && st.st_ino as u64 == dir.ino
            {
                libc::rmdir(dir.path.as_ptr());
            }
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
        libc::fstat(fd, &raw mut st) == 0
            && st.st_dev as u64 == dir.dev
            && st.st_ino as u64 == dir.ino
    }
}

/// Removes every entry of the open directory `dir` except `keep`, into subdirectories up to
/// [`MAX_DEPTH`] levels (never through a symlink: a symlink is an entry like a file).
unsafe fn empty_dir(dir: c_int, depth: u32, keep: Option<&[u8]>) {
    let mut buf = [0u8; DIR_BUFFER];
    // Removing entries while listing may skip some: list again until a pass removes none.
    for _ in 0..64 {
        // SAFETY: rewinding a directory open here.
        unsafe { libc::lseek(dir, 0, libc::SEEK_SET) };
        let removed = procfs::for_each_dir_entry(dir, &mut buf, |name| {
            if matches!(name, b"." | b"..") || Some(name) == keep {
                return false;
            }
            let c_name = name.as_ptr().cast();
            // SAFETY: getdents64 names are NUL-terminated inside the buffer (see
            // `procfs::for_each_dir_entry`), so `c_name` is a valid C string.
            unsafe {
                if libc::unlinkat(dir, c_name, 0) == 0 {
                    return true;
                }
                if depth + 1 >= MAX_DEPTH {
                    return false;
                }
                let sub = libc::openat(
                    dir,
                    c_name,
                    libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                );
                if sub < 0 {
                    return false;
                }
                empty_dir(sub, depth + 1, None);
                libc::close(sub);
                libc::unlinkat(dir, c_name, libc::AT_REMOVEDIR) == 0
            }
        });
        if removed == 0 {
            break;
        }
    }
}

/// Removes every entry of the directory `dir` (files, FIFOs; not subdirectories) and then the
/// directory, without allocating. Elsewhere than on Linux only the (empty) directory goes.
pub(super) fn remove_flat_dir(dir: &CStr) {
    // SAFETY: `dir` is NUL-terminated.
    let fd = unsafe {
        libc::open(
            dir.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd >= 0 {
        let mut buf = [0u8; 4096];
        // Removing entries while listing may skip some: list again until a pass removes none.
        for _ in 0..64 {
            // SAFETY: rewinding a directory we opened.
            unsafe { libc::lseek(fd, 0, libc::SEEK_SET) };
            let removed = procfs::for_each_dir_entry(fd, &mut buf, |name| {
                // `name` sits in `buf` right before the NUL that ends it in the record.
                // SAFETY: getdents64 names are NUL-terminated inside `buf`, so the byte after
                // `name` is that NUL and `name.as_ptr()` is a valid C string.
                !matches!(name, b"." | b"..")
                    && unsafe { libc::unlinkat(fd, name.as_ptr().cast(), 0) } == 0
            });
            if removed == 0 {
                break;
            }
        }
        // SAFETY: `fd` was opened above and is closed once.
        unsafe { libc::close(fd) };
    }
    // SAFETY: `dir` is NUL-terminated.
    unsafe { libc::rmdir(dir.as_ptr()) };
}
