//! The cgroup v2 side of the limits: finding a subtree where the `memory` and `pids`
//! controllers can be enabled, the private parent `agentsh-limits`, and the control files of
//! one command's cgroup.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use agentsh_protocol::ResourceLimits;

use crate::cgroupfs::{
    CgroupMount, create_private_dir, keyed_value, move_process, own_cgroup, read_number,
    read_procs, unified_mount,
};

use super::{CgroupEvents, CgroupUsage, PARENT_NAME};

/// The leaf agentsh moves itself into when its own cgroup must have no processes for the
/// controllers to be enabled below it.
const SELF_LEAF: &str = "agentsh-self";

/// The controllers a command's cgroup needs.
const CONTROLLERS: [&str; 2] = ["memory", "pids"];

/// Where this process's command cgroups are created on the unified hierarchy.
#[derive(Debug)]
pub(super) struct Root {
    pub(super) mount: CgroupMount,
    /// `<agentsh's cgroup>/agentsh-limits`, with `+memory +pids` in its `subtree_control`.
    pub(super) parent: PathBuf,
}

impl Root {
    /// Finds a v2 subtree with the memory and pids controllers and prepares the parent; the
    /// error is the reason there is none.
    pub(super) fn open() -> Result<Self, String> {
        let mount =
            unified_mount().ok_or_else(|| "no cgroup v2 hierarchy is mounted".to_owned())?;
        let own_path =
            own_cgroup().ok_or_else(|| "no cgroup v2 entry in /proc/self/cgroup".to_owned())?;
        let own = mount.dir_of(&own_path).ok_or_else(|| {
            format!(
                "agentsh's cgroup {own_path} is outside the mounted {}",
                mount.root
            )
        })?;
        let available = fs::read_to_string(own.join("cgroup.controllers")).map_err(|err| {
            format!(
                "cannot read the cgroup v2 controllers of {}: {err}",
                own.display()
            )
        })?;
        let missing: Vec<&str> = CONTROLLERS
            .into_iter()
            .filter(|c| !available.split_whitespace().any(|a| a == *c))
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "the cgroup v2 hierarchy at {} has no {} controller for agentsh's cgroup \
                 {own_path}",
                mount.mount.display(),
                missing.join(" or ")
            ));
        }
        enable_below(&own, &own_path)?;
        let parent = own.join(PARENT_NAME);
        create_private_dir(&parent)
            .map_err(|err| format!("cannot create {}: {err}", parent.display()))?;
        enable(&parent).map_err(|err| {
            format!(
                "cannot enable the memory and pids controllers in {}: {err}",
                parent.display()
            )
        })?;
        Ok(Self { mount, parent })
    }
}

/// `+memory +pids` in `subtree_control` of agentsh's own cgroup `own`. cgroup v2 lets a
/// cgroup (other than the root) enable controllers for its children only while it has no
/// processes of its own: when agentsh alone is in it, agentsh moves into a leaf
/// ([`SELF_LEAF`]) first; when others are too, there is no way.
fn enable_below(own: &Path, own_path: &str) -> Result<(), String> {
    let err = match enable(own) {
        Ok(()) => return Ok(()),
        Err(err) => err,
    };
    if err.raw_os_error() != Some(libc::EBUSY) {
        return Err(format!(
            "cannot enable the memory and pids controllers below agentsh's cgroup {own_path}: \
             {err}"
        ));
    }
    let me = std::process::id();
    let others = read_procs(&own.join("cgroup.procs"))
        .into_iter()
        .filter(|&pid| pid != me)
        .count();
    if others > 0 {
        return Err(format!(
            "agentsh's cgroup {own_path} holds {others} other process(es), and cgroup v2 \
             enables controllers only for the children of a cgroup without processes"
        ));
    }
    let leaf = own.join(SELF_LEAF);
    create_private_dir(&leaf)
        .and_then(|()| move_process(&leaf, me))
        .map_err(|err| format!("cannot move agentsh into {}: {err}", leaf.display()))?;
    enable(own).map_err(|err| {
        let _ = move_process(own, me);
        let _ = fs::remove_dir(&leaf);
        format!(
            "cannot enable the memory and pids controllers below agentsh's cgroup {own_path}, \
             even with agentsh moved out of it: {err}"
        )
    })
}

/// Writes `+memory +pids` to `dir/cgroup.subtree_control` unless both are enabled already.
fn enable(dir: &Path) -> io::Result<()> {
    let file = dir.join("cgroup.subtree_control");
    let enabled = fs::read_to_string(&file)?;
    if CONTROLLERS
        .iter()
        .all(|c| enabled.split_whitespace().any(|e| e == *c))
    {
        return Ok(());
    }
    fs::write(&file, "+memory +pids")
}

/// Writes the limits into the new command cgroup `dir`: `memory.max` with
/// `memory.swap.max = 0` (where swap is accounted), `memory.oom.group = 0` and `pids.max`.
pub(super) fn set_limits(dir: &Path, limits: &ResourceLimits) -> io::Result<()> {
    write(dir, "memory.max", &limit_text(limits.memory))?;
    if limits.memory.is_some() && dir.join("memory.swap.max").exists() {
        write(dir, "memory.swap.max", "0")?;
    }
    // The shell is in the cgroup while its command runs: an OOM kill of the whole group would
    // end the shell too.
    if dir.join("memory.oom.group").exists() {
        write(dir, "memory.oom.group", "0")?;
    }
    write(dir, "pids.max", &limit_text(limits.processes))
}

/// What the cgroup `dir` uses now.
pub(super) fn usage(dir: &Path) -> io::Result<CgroupUsage> {
    let cpu = fs::read_to_string(dir.join("cpu.stat"))?;
    Ok(CgroupUsage {
        memory_bytes: read_number(&dir.join("memory.current"))?.unwrap_or(0),
        memory_peak_bytes: match read_number(&dir.join("memory.peak")) {
            Ok(peak) => peak,
            Err(err) if err.kind() == io::ErrorKind::NotFound => None,
            Err(err) => return Err(err),
        },
        tasks: read_number(&dir.join("pids.current"))?.unwrap_or(0),
        cpu_usec: keyed_value(&cpu, "usage_usec"),
    })
}

/// The limits the kernel enforced in cgroup `dir`.
pub(super) fn events(dir: &Path) -> io::Result<CgroupEvents> {
    let memory = fs::read_to_string(dir.join("memory.events"))?;
    let pids = fs::read_to_string(dir.join("pids.events"))?;
    Ok(CgroupEvents {
        oom_kills: keyed_value(&memory, "oom_kill").unwrap_or(0),
        pids_refused: keyed_value(&pids, "max").unwrap_or(0),
    })
}

/// Whether a process is in cgroup `dir` or below (`cgroup.events`).
pub(super) fn is_populated(dir: &Path) -> bool {
    fs::read_to_string(dir.join("cgroup.events"))
        .is_ok_and(|text| keyed_value(&text, "populated") == Some(1))
}

/// SIGKILLs everything in cgroup `dir` at once (`cgroup.kill`, Linux 5.14); `false` when the
/// kernel has no `cgroup.kill` and the caller must signal the processes one by one.
pub(super) fn kill(dir: &Path) -> bool {
    fs::write(dir.join("cgroup.kill"), b"1").is_ok()
}

/// A limit as a control file takes it: the number, or `max` for none.
pub(super) fn limit_text(limit: Option<u64>) -> String {
    limit.map_or_else(|| "max".to_owned(), |n| n.to_string())
}

/// Writes `value` to the control file `name` of `dir`, naming the file in the error.
pub(super) fn write(dir: &Path, name: &str, value: &str) -> io::Result<()> {
    let path = dir.join(name);
    fs::write(&path, value).map_err(|err| {
        io::Error::new(
            err.kind(),
            format!("cannot write {value} to {}: {err}", path.display()),
        )
    })
}
