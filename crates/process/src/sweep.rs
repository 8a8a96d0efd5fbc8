//! The sweep of what dead agentsh processes left — the shells' private directories, the
//! sandboxed sessions' temp dirs and the containment cgroups of an agentsh that died together
//! with its supervisors — off the start's path, at most once a period per host and user.
//!
//! A start's cost must not grow with the number of agentsh sessions on the host, and a sweep
//! looks at every directory and cgroup of every running agentsh (a lock tried, a `/proc` read
//! each). So a start only looks at a stamp: `.agentsh-swept-<uid>` (0600) in the runtime
//! directory ([`runtime_dir`]: where the shells' private directories are), written when a sweep
//! finishes. When it is younger than the period (a minute; [`SWEEP_PERIOD_VAR`] shortens it for
//! tests) nothing happens; else the start takes the stamp's lock (`flock`, without waiting: a
//! sweep that runs holds it, and then nothing happens either) and hands it to the sweep:
//!
//! - in the `agentsh` binary (which calls [`answer_sweep_request`] first thing), a detached
//!   process: the binary again (`/proc/self/exe`) with a hidden first argument, forked twice
//!   (nothing of the start waits for it or sees it as its child), in a session of its own, stdio
//!   on `/dev/null`, the locked stamp inherited;
//! - anywhere else (agentsh's crates as a library), a thread of the process; a sweep cut short
//!   by the end of the process writes no stamp, so the next start sweeps again.
//!
//! What a sweep removes is what the owner checks say is a dead owner's: a directory whose lock
//! nobody holds ([`crate::remove_ownerless`]), a cgroup whose owning process (pid and start
//! time, in this pid namespace) is gone, or whose owner's pid namespace has no process left (a
//! far side that ran as its PID 1; told only where the sweep sees every process of the host).
//! A live session's things are never touched. What it
//! covers is what the start saw: its runtime directory, its temporary directory and its cgroup.
//!
//! [`sweep_leftovers`] is the trigger: once per process, called on the first
//! [`containment()`](crate::containment), so every start that runs anything under a supervisor
//! makes it (a library user may call it earlier).

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::os::fd::{AsFd as _, AsRawFd as _, FromRawFd as _, OwnedFd, RawFd};
use std::os::unix::fs::MetadataExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Once, OnceLock};
use std::time::{Duration, SystemTime};

use rustix::fs::{FlockOperation, Mode, OFlags};

/// The environment variable that shortens the period between two sweeps, in seconds (a
/// decimal number; `0`: every start sweeps, in the background still). Meant for tests; a value
/// above the default period, or one that is not a number, leaves the default.
pub const SWEEP_PERIOD_VAR: &str = "AGENTSH_TEST_SWEEP_PERIOD_S";

/// The start of the name of a shell's private directory in the [`runtime_dir`] (six random
/// letters and digits follow; see [`crate::OwnedDir`]).
pub const SHELL_DIR_PREFIX: &str = "agentsh-";

/// The start of the name of a sandboxed session's private temp dir in the temporary
/// directory (six random letters and digits follow; see [`crate::OwnedDir`]).
pub const SANDBOX_TEMP_DIR_PREFIX: &str = "agentsh-sandbox-";

/// The period between two sweeps, unless [`SWEEP_PERIOD_VAR`] shortens it.
const PERIOD: Duration = Duration::from_secs(60);

/// The mode bits of a file open to its group or to others.
const GROUP_OR_OTHERS: u32 = 0o077;

/// The hidden first argument that makes the `agentsh` binary a sweep.
const SWEEP_ARG: &str = "__agentsh-sweep-leftovers";

/// The start of the stamp's name of the main sweep (the user's id follows).
const STAMP_PREFIX: &str = ".agentsh-swept-";

/// Whether this binary answers [`SWEEP_ARG`] (it called [`answer_sweep_request`]).
static SELF_SWEEPS: AtomicBool = AtomicBool::new(false);

/// Where the shells' private directories go, and the sweep's stamp: `$XDG_RUNTIME_DIR` when
/// it is an absolute, writable directory (a tmpfs, the user's own), else `/dev/shm`, else the
/// temporary directory. Chosen once per process.
pub fn runtime_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(find_runtime_dir).clone()
}

fn find_runtime_dir() -> PathBuf {
    let candidates = [
        std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from),
        Some(PathBuf::from("/dev/shm")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|dir| {
            dir.is_absolute()
                && fs::metadata(dir).is_ok_and(|m| m.is_dir())
                && tempfile::Builder::new()
                    .prefix("agentsh-probe-")
                    .tempdir_in(dir)
                    .is_ok()
        })
        .unwrap_or_else(std::env::temp_dir)
}

/// Starts the sweep of what dead agentsh processes left when it is due (see the module docs),
/// without waiting for it. Once per process; later calls do nothing.
pub fn sweep_leftovers() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let runtime = runtime_dir();
        let Some(claim) = Claim::take(&stamp_path(&runtime, STAMP_PREFIX), sweep_period()) else {
            return;
        };
        let places = Places::here(runtime);
        // A binary that cannot start itself again (no `/proc`, no more processes) sweeps in a
        // thread instead.
        if SELF_SWEEPS.load(Ordering::Acquire) && spawn_detached(&claim, &places).is_ok() {
            return;
        }
        in_thread(claim, move || places.sweep());
    });
}

/// Runs `sweep` in a thread of this process when the stamp named `<stamp_prefix><uid>` in the
/// [`runtime_dir`] says it is due, and stamps when it is done; for what only this process can
/// find (the limits' cgroups, known once their mechanism is decided).
pub(crate) fn sweep_in_background(stamp_prefix: &str, sweep: impl FnOnce() + Send + 'static) {
    if let Some(claim) = Claim::take(&stamp_path(&runtime_dir(), stamp_prefix), sweep_period()) {
        in_thread(claim, sweep);
    }
}

/// In the `agentsh` binary, first thing in `main`: when this process was started as a sweep
/// (by [`sweep_leftovers`] of another agentsh), sweeps and exits; else notes that this binary
/// can be started so, and returns.
pub fn answer_sweep_request() {
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() != Some(OsStr::new(SWEEP_ARG)) {
        SELF_SWEEPS.store(true, Ordering::Release);
        return;
    }
    if let Some((lock, places)) = parse_request(args) {
        // Behind the sessions that run meanwhile: nobody waits for a sweep.
        // SAFETY: nice(2) changes this process's priority only.
        unsafe { libc::nice(10) };
        let stamp = lock.and_then(|fd| adopt_stamp(fd, &stamp_path(&places.runtime, STAMP_PREFIX)));
        places.sweep();
        Claim { stamp }.finish();
    }
    std::process::exit(0);
}

/// The period between two sweeps (a minute, or less by [`SWEEP_PERIOD_VAR`]); also the least
/// time between two retention passes over an artifact store.
pub fn sweep_period() -> Duration {
    period_from(std::env::var(SWEEP_PERIOD_VAR).ok().as_deref())
}

/// The period [`SWEEP_PERIOD_VAR`]'s value `value` gives.
fn period_from(value: Option<&str>) -> Duration {
    value
        .and_then(|text| text.trim().parse::<f64>().ok())
        .filter(|secs| secs.is_finite() && *secs >= 0.0)
        .map_or(PERIOD, |secs| Duration::from_secs_f64(secs).min(PERIOD))
}

/// `<dir>/<prefix><uid>`: a stamp of this user's, also where the directory is shared
/// (`/dev/shm`, `/tmp`).
fn stamp_path(dir: &Path, prefix: &str) -> PathBuf {
    dir.join(format!("{prefix}{}", rustix::process::geteuid().as_raw()))
}

/// Where a sweep looks: what the start that asked for it saw.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Places {
    /// The shells' private directories ([`runtime_dir`]).
    runtime: PathBuf,
    /// The sandboxed sessions' temp dirs (the temporary directory).
    temp: PathBuf,
    /// The containment cgroups' parent and this pid namespace's inode number (as the cgroups'
    /// names carry it), where cgroups are used.
    cgroups: Option<(PathBuf, String)>,
}

impl Places {
    /// The places of this process, with the shells' private directories in `runtime`.
    fn here(runtime: PathBuf) -> Self {
        Self {
            runtime,
            temp: std::env::temp_dir(),
            cgroups: crate::containment::leftovers_parent().zip(pid_namespace()),
        }
    }

    /// Removes what dead owners left there.
    fn sweep(&self) {
        crate::remove_ownerless(&self.runtime, SHELL_DIR_PREFIX);
        crate::remove_ownerless(&self.temp, SANDBOX_TEMP_DIR_PREFIX);
        if let Some((parent, namespace)) = &self.cgroups {
            crate::containment::end_leftovers_in(parent, namespace);
        }
    }

    /// The sweep's arguments after [`SWEEP_ARG`] and the lock's descriptor.
    fn to_args(&self) -> Vec<OsString> {
        let (cgroups, namespace) = match &self.cgroups {
            Some((parent, namespace)) => (parent.as_os_str(), namespace.as_str()),
            None => (OsStr::new(""), ""),
        };
        vec![
            self.runtime.clone().into_os_string(),
            self.temp.clone().into_os_string(),
            cgroups.to_owned(),
            namespace.into(),
        ]
    }
}

/// The lock's descriptor (`-`: none) and the places of a sweep request; `None` when the
/// arguments are not those [`spawn_detached`] gives.
fn parse_request(mut args: impl Iterator<Item = OsString>) -> Option<(Option<RawFd>, Places)> {
    let lock = args.next()?;
    let lock = match lock.to_str()? {
        "-" => None,
        fd => Some(fd.parse::<RawFd>().ok().filter(|fd| *fd > 2)?),
    };
    let absolute = |path: OsString| Some(PathBuf::from(path)).filter(|p| p.is_absolute());
    let runtime = absolute(args.next()?)?;
    let temp = absolute(args.next()?)?;
    let (parent, namespace) = (args.next()?, args.next()?.into_string().ok()?);
    let cgroups = if parent.is_empty() {
        None
    } else {
        Some((absolute(parent)?, namespace))
    };
    args.next().is_none().then_some((
        lock,
        Places {
            runtime,
            temp,
            cgroups,
        },
    ))
}

/// The inode number of this process's pid namespace, as text.
fn pid_namespace() -> Option<String> {
    fs::metadata("/proc/self/ns/pid")
        .ok()
        .map(|meta| meta.ino().to_string())
}

/// The right to sweep now: the stamp, opened and locked; `None` inside when the stamp could
/// not be used (the sweep then runs unguarded and stamps nothing).
#[derive(Debug)]
struct Claim {
    stamp: Option<OwnedFd>,
}

impl Claim {
    /// The claim on the sweep the stamp at `path` guards, or `None` when it is not due (the
    /// stamp is younger than `period`) or another sweep holds it.
    fn take(path: &Path, period: Duration) -> Option<Self> {
        // The usual case, one `statx`: swept lately.
        if fs::symlink_metadata(path).is_ok_and(|meta| is_ours(&meta) && is_fresh(&meta, period)) {
            return None;
        }
        let flags = OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let Ok(stamp) = rustix::fs::open(path, flags, Mode::from_raw_mode(0o600)) else {
            // Another user's name in a shared directory, a full disk: sweep unguarded.
            return Some(Self { stamp: None });
        };
        let Ok(meta) = fstat_metadata(&stamp) else {
            return Some(Self { stamp: None });
        };
        if !is_ours(&meta) {
            return Some(Self { stamp: None });
        }
        match rustix::fs::flock(&stamp, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            Err(rustix::io::Errno::WOULDBLOCK) => return None,
            Err(_) => return Some(Self { stamp: None }),
        }
        // A sweep may have finished between the look and the lock.
        match fstat_metadata(&stamp) {
            Ok(meta) if is_fresh(&meta, period) => None,
            _ => Some(Self { stamp: Some(stamp) }),
        }
    }

    /// Stamps the end of a sweep, and lets the lock go.
    fn finish(self) {
        if let Some(stamp) = &self.stamp {
            // A write sets the time; a stamp with something in it is one a sweep wrote (a new,
            // empty one is not fresh whatever its time).
            let _ = rustix::io::pwrite(stamp, b"swept\n", 0);
            let now = rustix::fs::Timespec {
                tv_sec: 0,
                tv_nsec: rustix::fs::UTIME_NOW,
            };
            let _ = rustix::fs::futimens(
                stamp,
                &rustix::fs::Timestamps {
                    last_access: now,
                    last_modification: now,
                },
            );
        }
    }
}

/// Metadata of an open descriptor, through `/proc/self/fd` without following it further.
fn fstat_metadata(fd: &OwnedFd) -> io::Result<fs::Metadata> {
    let file = fs::File::from(fd.try_clone()?);
    file.metadata()
}

/// A regular file of this user, not open to group or others.
fn is_ours(meta: &fs::Metadata) -> bool {
    meta.file_type().is_file()
        && meta.uid() == rustix::process::geteuid().as_raw()
        && meta.mode() & GROUP_OR_OTHERS == 0
}

/// A stamp a sweep wrote less than `period` ago.
fn is_fresh(meta: &fs::Metadata, period: Duration) -> bool {
    meta.len() > 0
        && meta
            .modified()
            .ok()
            .and_then(|at| SystemTime::now().duration_since(at).ok())
            .is_some_and(|age| age < period)
}

/// Runs `sweep`, then stamps, in a thread of its own. Without a thread (none can be made)
/// there is no sweep this time; the stamp stays due for the next start.
fn in_thread(claim: Claim, sweep: impl FnOnce() + Send + 'static) {
    let _ = std::thread::Builder::new()
        .name("agentsh-sweep".to_owned())
        .spawn(move || {
            sweep();
            claim.finish();
        });
}

/// Starts this binary again as a detached sweep of `places`, handing it the claim's lock.
fn spawn_detached(claim: &Claim, places: &Places) -> io::Result<()> {
    let lock = claim.stamp.as_ref().map(|fd| fd.as_fd().as_raw_fd());
    let mut command = Command::new("/proc/self/exe");
    command
        .arg0("agentsh")
        .arg(SWEEP_ARG)
        .arg(lock.map_or_else(|| "-".to_owned(), |fd| fd.to_string()))
        .args(places.to_args())
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: between fork and exec the closure makes only async-signal-safe calls (fork,
    // _exit, setsid, fcntl) and allocates nothing.
    unsafe {
        command.pre_exec(move || {
            // The first child exits at once (reaped below); its child, the sweep, is nobody's
            // child here: no wait of agentsh's sees it, and it outlives a short start.
            match libc::fork() {
                -1 => return Err(io::Error::last_os_error()),
                0 => {}
                _ => libc::_exit(0),
            }
            libc::setsid();
            if let Some(fd) = lock {
                // The locked stamp goes to the sweep (the lock is the open file's, shared).
                if libc::fcntl(fd, libc::F_SETFD, 0) == -1 {
                    return Err(io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let mut first = command.spawn()?;
    // The sweep runs from here on, with the lock: whatever the wait says, no second one.
    let _ = first.wait();
    Ok(())
}

/// Takes the inherited descriptor `fd` as the locked stamp at `path`, if it is that file.
fn adopt_stamp(fd: RawFd, path: &Path) -> Option<OwnedFd> {
    // The descriptor is checked before it is owned: it must be open (F_GETFD) and be the
    // stamp; anything else is left alone.
    // SAFETY: fcntl F_GETFD on any number has no effect beyond its result.
    if unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
        return None;
    }
    let on_disk = fs::symlink_metadata(path).ok()?;
    // SAFETY: `fd` is open (checked above) and nothing else in this process uses it: it is the
    // descriptor the starting agentsh handed down, named on the command line.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let _ = rustix::io::fcntl_setfd(&owned, rustix::io::FdFlags::CLOEXEC);
    match fstat_metadata(&owned) {
        Ok(meta) if meta.dev() == on_disk.dev() && meta.ino() == on_disk.ino() => Some(owned),
        _ => {
            // Not the stamp: give the number back untouched.
            let _ = std::os::fd::IntoRawFd::into_raw_fd(owned);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_stamp_is_due_and_a_written_one_is_not_until_the_period_passes() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = stamp_path(dir.path(), STAMP_PREFIX);
        let claim = Claim::take(&path, PERIOD).expect("due: no stamp yet");
        assert!(claim.stamp.is_some(), "the stamp is used");
        // Another start meanwhile: the sweep runs, nothing to do.
        assert!(Claim::take(&path, PERIOD).is_none(), "locked by the sweep");
        claim.finish();
        let meta = fs::metadata(&path).expect("stamp");
        assert_eq!(meta.mode() & 0o777, 0o600);
        assert!(Claim::take(&path, PERIOD).is_none(), "swept lately");
        let claim = Claim::take(&path, Duration::ZERO).expect("a period of 0: always due");
        assert!(claim.stamp.is_some());
    }

    #[test]
    fn a_sweep_cut_short_leaves_its_stamp_due() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = stamp_path(dir.path(), STAMP_PREFIX);
        drop(Claim::take(&path, PERIOD).expect("due"));
        assert!(
            Claim::take(&path, PERIOD).is_some(),
            "an empty stamp is never fresh"
        );
    }

    #[test]
    fn a_stamp_not_private_is_not_trusted() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().expect("temp dir");
        let path = stamp_path(dir.path(), STAMP_PREFIX);
        fs::write(&path, "swept\n").expect("write");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).expect("chmod");
        let claim = Claim::take(&path, PERIOD).expect("not trusted: due");
        assert!(claim.stamp.is_none(), "unguarded");
    }

    #[test]
    fn the_period_is_shortened_only() {
        let cases = [
            (None, PERIOD),
            (Some("0.5"), Duration::from_millis(500)),
            (Some(" 2 "), Duration::from_secs(2)),
            (Some("0"), Duration::ZERO),
            (Some("3600"), PERIOD),
            (Some("-1"), PERIOD),
            (Some("NaN"), PERIOD),
            (Some("soon"), PERIOD),
        ];
        for (value, period) in cases {
            assert_eq!(period_from(value), period, "{value:?}");
        }
    }

    #[test]
    fn a_request_round_trips_through_its_arguments() {
        let places = Places {
            runtime: PathBuf::from("/run/user/1000"),
            temp: PathBuf::from("/tmp"),
            cgroups: Some((
                PathBuf::from("/sys/fs/cgroup/a/agentsh"),
                "4026531836".into(),
            )),
        };
        let args = |lock: &str, places: &Places| {
            std::iter::once(OsString::from(lock)).chain(places.to_args())
        };
        assert_eq!(
            parse_request(args("7", &places)),
            Some((Some(7), places.clone()))
        );
        let without = Places {
            cgroups: None,
            ..places.clone()
        };
        assert_eq!(parse_request(args("-", &without)), Some((None, without)));
        assert_eq!(parse_request(args("1", &places)), None, "stdio is no lock");
        assert_eq!(parse_request(args("7", &places).take(3)), None);
    }

    /// A dead owner's directory goes, a live one's stays, and the stamp is written, by a sweep
    /// in a thread (a library user's).
    #[test]
    fn a_sweep_removes_a_dead_owners_directory_and_stamps() {
        use std::os::unix::fs::PermissionsExt as _;
        let runtime = tempfile::tempdir().expect("runtime");
        let live = crate::OwnedDir::create(runtime.path(), SHELL_DIR_PREFIX).expect("live");
        let dead = runtime.path().join("agentsh-dead00");
        fs::create_dir(&dead).expect("dir");
        fs::set_permissions(&dead, fs::Permissions::from_mode(0o700)).expect("mode");
        fs::write(dead.join(crate::OWNED_MARK), "").expect("mark");
        let places = Places {
            runtime: runtime.path().to_path_buf(),
            temp: runtime.path().to_path_buf(),
            cgroups: None,
        };
        let path = stamp_path(runtime.path(), STAMP_PREFIX);
        let claim = Claim::take(&path, PERIOD).expect("due");
        let (done, finished) = std::sync::mpsc::channel();
        in_thread(claim, move || {
            places.sweep();
            let _ = done.send(());
        });
        finished
            .recv_timeout(Duration::from_secs(60))
            .expect("the sweep ends");
        assert!(!dead.exists());
        assert!(live.path().exists());
        // The stamp comes right after the sweep, in the same thread.
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while fs::metadata(&path).map_or(0, |m| m.len()) == 0 {
            assert!(std::time::Instant::now() < deadline, "no stamp");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(Claim::take(&path, PERIOD).is_none(), "swept lately");
    }
}
