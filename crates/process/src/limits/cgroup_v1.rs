//! The cgroup v1 side of the limits: the writable `memory` and `pids` hierarchies (with
//! `cpuacct` for CPU time and `freezer`, only ever thawed, where they are writable too), the
//! private parent `agentsh-limits` in agentsh's own place in each, and the control files of
//! one command's groups.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use agentsh_protocol::ResourceLimits;

use crate::cgroupfs::{
    CgroupMount, cgroup_dir_of, cgroup_mounts, create_private_dir, keyed_value, read_number,
};

use super::cgroup_v2::{limit_text, write};
use super::{CgroupEvents, CgroupUsage, PARENT_NAME};

/// One v1 hierarchy a command's groups are made in.
#[derive(Debug, Clone)]
pub(super) struct Hierarchy {
    pub(super) mount: CgroupMount,
    /// `<agentsh's group in it>/agentsh-limits`.
    pub(super) parent: PathBuf,
}

/// Which of a command's places (by index, one per hierarchy) holds which controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Roles {
    pub(super) memory: usize,
    pub(super) pids: usize,
    pub(super) cpuacct: Option<usize>,
    pub(super) freezer: Option<usize>,
}

/// Where this process's command groups are created on the v1 hierarchies.
#[derive(Debug)]
pub(super) struct Root {
    /// The distinct hierarchies (co-mounted controllers share one).
    pub(super) hierarchies: Vec<Hierarchy>,
    pub(super) roles: Roles,
    /// Whether `memory.memsw.limit_in_bytes` exists (swap is accounted), so swap does not
    /// extend the memory limit.
    pub(super) memsw: bool,
}

impl Root {
    /// Finds the writable memory and pids hierarchies and creates the parents; the error is
    /// the reason there are none.
    pub(super) fn open() -> Result<Self, String> {
        let mounts: Vec<CgroupMount> = cgroup_mounts().into_iter().filter(|m| !m.unified).collect();
        let mut hierarchies: Vec<Hierarchy> = Vec::new();
        let mut place = |controller: &str, required: bool| -> Result<Option<usize>, String> {
            let Some(mount) = mounts.iter().find(|m| m.has(controller)) else {
                return if required {
                    Err(format!("no cgroup v1 {controller} hierarchy is mounted"))
                } else {
                    Ok(None)
                };
            };
            if let Some(i) = hierarchies
                .iter()
                .position(|h| h.mount.mount == mount.mount)
            {
                return Ok(Some(i));
            }
            let made = cgroup_dir_of(mount, None)
                .ok_or_else(|| {
                    format!(
                        "agentsh's group in the cgroup v1 {controller} hierarchy at {} is not \
                         known",
                        mount.mount.display()
                    )
                })
                .and_then(|own| {
                    let parent = own.join(PARENT_NAME);
                    create_private_dir(&parent)
                        .map(|()| parent.clone())
                        .map_err(|err| format!("cannot create {}: {err}", parent.display()))
                });
            match made {
                Ok(parent) => {
                    hierarchies.push(Hierarchy {
                        mount: mount.clone(),
                        parent,
                    });
                    Ok(Some(hierarchies.len() - 1))
                }
                Err(reason) if required => Err(reason),
                Err(_) => Ok(None),
            }
        };
        let memory = place("memory", true)?.unwrap_or_default();
        let pids = place("pids", true)?.unwrap_or_default();
        let cpuacct = place("cpuacct", false)?;
        let freezer = place("freezer", false)?;
        // The parent is a memory group too: its files are those every group has.
        let memsw = hierarchies[memory]
            .parent
            .join("memory.memsw.limit_in_bytes")
            .exists();
        Ok(Self {
            hierarchies,
            roles: Roles {
                memory,
                pids,
                cpuacct,
                freezer,
            },
            memsw,
        })
    }
}

/// Writes the limits into a new command's memory and pids groups: `memory.limit_in_bytes`
/// (and `memory.memsw.limit_in_bytes` equal to it where swap is accounted, so swap does not
/// extend it), the OOM killer on (`memory.oom_control`), `pids.max`.
pub(super) fn set_limits(memory: &Path, pids: &Path, limits: &ResourceLimits) -> io::Result<()> {
    if let Some(bytes) = limits.memory {
        // memsw may not be below the plain limit: the plain one first.
        write(memory, "memory.limit_in_bytes", &bytes.to_string())?;
        if memory.join("memory.memsw.limit_in_bytes").exists() {
            write(memory, "memory.memsw.limit_in_bytes", &bytes.to_string())?;
        }
    }
    write(memory, "memory.oom_control", "0")?;
    write(pids, "pids.max", &limit_text(limits.processes))
}

/// What the groups use now.
pub(super) fn usage(memory: &Path, pids: &Path, cpuacct: Option<&Path>) -> io::Result<CgroupUsage> {
    let cpu_usec = match cpuacct {
        Some(dir) => read_number(&dir.join("cpuacct.usage"))?.map(|ns| ns / 1000),
        None => None,
    };
    Ok(CgroupUsage {
        memory_bytes: read_number(&memory.join("memory.usage_in_bytes"))?.unwrap_or(0),
        memory_peak_bytes: read_number(&memory.join("memory.max_usage_in_bytes"))?,
        tasks: read_number(&pids.join("pids.current"))?.unwrap_or(0),
        cpu_usec,
    })
}

/// The limits the kernel enforced in the groups.
pub(super) fn events(memory: &Path, pids: &Path) -> io::Result<CgroupEvents> {
    let oom = fs::read_to_string(memory.join("memory.oom_control"))?;
    let refused = fs::read_to_string(pids.join("pids.events"))?;
    Ok(CgroupEvents {
        oom_kills: keyed_value(&oom, "oom_kill").unwrap_or(0),
        pids_refused: keyed_value(&refused, "max").unwrap_or(0),
    })
}

/// Freezes (`true`) or thaws the freezer group `dir`; for freezing, waits until the kernel
/// says `FROZEN` or `until` passes. `false` when it cannot be frozen.
pub(super) fn freeze(dir: &Path, frozen: bool, until: std::time::Instant) -> bool {
    let state = dir.join("freezer.state");
    let wanted = if frozen { "FROZEN" } else { "THAWED" };
    if fs::write(&state, wanted).is_err() {
        return false;
    }
    if !frozen {
        return true;
    }
    loop {
        match fs::read_to_string(&state) {
            Ok(text) if text.trim() == wanted => return true,
            Ok(_) if std::time::Instant::now() < until => {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            _ => return false,
        }
    }
}
