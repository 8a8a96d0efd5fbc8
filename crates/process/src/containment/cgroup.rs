//! The cgroup v2 side of containment: finding the unified hierarchy and agentsh's own place in
//! it, the private parent cgroup, one cgroup per supervised tree, and ending what dead owners
//! left behind (for the sweep, `crate::sweep`).

use std::ffi::CString;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::cgroupfs::{
    PidNamespaces, create_new_private_dir, create_private_dir, is_dead_owners, own_cgroup,
    owner_id, unified_mount,
};

/// The name of agentsh's parent cgroup, inside the cgroup agentsh runs in.
const PARENT_NAME: &str = "agentsh";

/// How long the start-up waits for a dead owner's cgroup to empty after `cgroup.kill`.
const LEFTOVER_WAIT: Duration = Duration::from_secs(1);

/// Where the cgroups of this process are created.
pub(super) struct Root {
    parent: PathBuf,
    /// `<pidns>-<pid>-<start ticks>`: who owns a cgroup, as its name says.
    owner: String,
    next: AtomicU64,
}

impl Root {
    /// Finds the unified hierarchy, creates the private parent cgroup (0700) and checks that
    /// a cgroup can be made there. The error is the reason, for the warning.
    pub(super) fn open() -> Result<Self, String> {
        let parent = parent_dir()?;
        create_private_dir(&parent)
            .map_err(|err| format!("cannot create {}: {err}", parent.display()))?;
        if !parent.join("cgroup.kill").exists() {
            return Err(format!(
                "{} has no cgroup.kill (Linux 5.14 or later is needed)",
                parent.display()
            ));
        }
        let owner = owner_id(std::process::id())
            .ok_or_else(|| "cannot read agentsh's own process identity in /proc".to_owned())?;
        let root = Self {
            parent,
            owner,
            next: AtomicU64::new(0),
        };
        // A first cgroup made and removed: creating them works.
        let probe = root
            .create()
            .map_err(|err| format!("cannot create a cgroup in {}: {err}", root.parent.display()))?;
        drop(probe);
        Ok(root)
    }

    /// The parent cgroup's directory.
    pub(super) fn parent(&self) -> &Path {
        &self.parent
    }

    /// A new, empty cgroup (0700).
    pub(super) fn create(&self) -> io::Result<Cgroup> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let dir = self.parent.join(format!("{}-{n}", self.owner));
        create_new_private_dir(&dir)?;
        Cgroup::at(dir)
    }
}

/// The environment variable that turns cgroups off (any value but empty or `0`): agentsh then
/// falls back to being a subreaper, as on a machine without a writable cgroup v2 hierarchy.
/// Meant for tests of the fallback and for machines whose cgroups misbehave.
pub const NO_CGROUP_VAR: &str = "AGENTSH_NO_CGROUP";

/// The parent cgroup where this process's supervised trees would go, for the sweep of what
/// dead owners left there: `None` where cgroups are not used ([`NO_CGROUP_VAR`], not Linux,
/// no cgroup v2 hierarchy).
pub(crate) fn leftovers_parent() -> Option<PathBuf> {
    if cfg!(not(target_os = "linux"))
        || std::env::var_os(NO_CGROUP_VAR).is_some_and(|v| !v.is_empty() && v != "0")
    {
        return None;
    }
    parent_dir().ok()
}

/// The private parent cgroup of this process (`<agentsh's cgroup>/agentsh` on the unified
/// hierarchy), made or not; the error is the reason there is none.
pub(super) fn parent_dir() -> Result<PathBuf, String> {
    let mount = unified_mount().ok_or_else(|| "no cgroup v2 hierarchy is mounted".to_owned())?;
    let own = own_cgroup().ok_or_else(|| "no cgroup v2 entry in /proc/self/cgroup".to_owned())?;
    Ok(mount
        .dir_of(&own)
        .ok_or_else(|| {
            format!(
                "agentsh's cgroup {own} is outside the mounted {}",
                mount.root
            )
        })?
        .join(PARENT_NAME))
}

/// Ends what is left in the cgroups in `parent` of owners that are gone, as a sweep in pid
/// namespace `namespace` tells (an agentsh that died together with its supervisors, or the
/// namespace of a far side that ran as its PID 1) and removes them. Waits at
/// most [`LEFTOVER_WAIT`] for them to empty; a cgroup that does not stays for the next sweep.
pub(crate) fn end_leftovers_in(parent: &Path, namespace: &str) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    let mut live = PidNamespaces::default();
    let mut left: Vec<Cgroup> = entries
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(|name| is_dead_owners(name, namespace, &mut live))
        })
        .map(|entry| entry.path())
        .filter_map(|dir| Cgroup::at(dir).ok())
        .collect();
    for cgroup in &left {
        let _ = cgroup.kill();
    }
    let deadline = Instant::now() + LEFTOVER_WAIT;
    while !left.is_empty() && Instant::now() < deadline {
        left.retain(|cgroup| cgroup.remove().is_err());
        if !left.is_empty() {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    for cgroup in left {
        // Still populated (a process stuck in the kernel): left for a later sweep.
        cgroup.forget();
    }
}

/// One cgroup of a supervised tree. Dropping it removes the directory if it is empty.
#[derive(Debug)]
pub(crate) struct Cgroup {
    dir: PathBuf,
    /// `<dir>/cgroup.procs`, for the child to join (prepared before the fork).
    procs: CString,
    /// `<dir>/cgroup.kill`.
    kill: CString,
    /// `<dir>` itself, for the supervisor's `rmdir`.
    dir_c: CString,
    /// Removed, or given up on: nothing to do on drop.
    done: bool,
}

impl Cgroup {
    fn at(dir: PathBuf) -> io::Result<Self> {
        let c = |path: &Path| {
            CString::new(path.as_os_str().as_bytes())
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in a cgroup path"))
        };
        Ok(Self {
            procs: c(&dir.join("cgroup.procs"))?,
            kill: c(&dir.join("cgroup.kill"))?,
            dir_c: c(&dir)?,
            dir,
            done: false,
        })
    }

    /// `cgroup.procs`, as a C string.
    pub(crate) fn procs_path(&self) -> &CString {
        &self.procs
    }

    /// `cgroup.kill`, as a C string.
    pub(crate) fn kill_path(&self) -> &CString {
        &self.kill
    }

    /// The directory, as a C string.
    pub(crate) fn dir_path(&self) -> &CString {
        &self.dir_c
    }

    /// SIGKILLs every process in the cgroup (`cgroup.kill`); new forks inside fail meanwhile.
    pub(crate) fn kill(&self) -> io::Result<()> {
        fs::write(self.dir.join("cgroup.kill"), b"1")
    }

    /// Removes the cgroup; `Ok` also when it is gone already. Fails (`EBUSY`) while a process
    /// is inside.
    pub(crate) fn remove(&self) -> io::Result<()> {
        match fs::remove_dir(&self.dir) {
            Err(err) if err.kind() != io::ErrorKind::NotFound => Err(err),
            _ => Ok(()),
        }
    }

    /// Leaves the directory as it is (for a later sweep to clean up).
    pub(crate) fn forget(mut self) {
        self.done = true;
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.remove();
        }
    }
}
