//! Watching one command tree against its resource limits while it runs, for every runtime
//! that runs command trees (the piped shell executor and the PTY runtime): what the kernel
//! enforced in the tree's cgroup ([`CgroupWatch`]), or where no cgroup holds it what a look at
//! its processes finds ([`over_limit`]), and its CPU time on every mechanism; all three
//! looked at every [`LIMIT_CHECK`] by a [`TreeWatchdog`].
//!
//! The runtimes differ in one thing only, which processes make the tree ([`ShellShare`]): a
//! long-lived shell runs one command after another, so a command is its processes plus what
//! the shell's CPU time grows by while it runs; a shell started for one command (a PTY run) is
//! the command's from its start, its memory and CPU time included.

use std::sync::Arc;
use std::time::Duration;

use agentsh_protocol::{LimitHit, LimitKind, ResourceLimits};
use tokio::time::Instant;

use super::{CgroupEvents, CommandCgroup, limits_kernel_enforced};
use crate::supervisor::Backstops;
use crate::tree::{CommandScope, cpu_ticks};
use crate::usage::{CommandUsage, command_usage, process_usage, ticks_per_second};

/// How often a command tree under resource limits is looked at: its processes measured where
/// no cgroup holds it (the watchdog), the kernel's counts read where one does, and its CPU
/// time on both.
pub const LIMIT_CHECK: Duration = Duration::from_millis(100);

/// The memory or process limit `usage` is over (memory first), as the watchdog measures a
/// tree: its processes' own memory and their number.
pub fn over_limit(resources: &ResourceLimits, usage: &CommandUsage) -> Option<LimitHit> {
    let processes = usage.processes as u64;
    let memory = resources
        .memory
        .filter(|&limit| usage.memory_bytes > limit)
        .map(|limit| LimitHit {
            kind: LimitKind::Memory,
            limit,
            used: usage.memory_bytes,
        });
    memory.or_else(|| {
        resources
            .processes
            .filter(|&limit| processes > limit)
            .map(|limit| LimitHit {
                kind: LimitKind::Processes,
                limit,
                used: processes,
            })
    })
}

/// The CPU time limit `limit`, when `ticks` (clock ticks, `per_second` of them a second)
/// reached it; `used` in whole seconds.
pub fn cpu_over_limit(limit: Duration, ticks: u64, per_second: u64) -> Option<LimitHit> {
    let per_second = per_second.max(1);
    (ticks >= limit.as_secs().saturating_mul(per_second)).then(|| LimitHit {
        kind: LimitKind::CpuTime,
        limit: limit.as_secs(),
        used: ticks / per_second,
    })
}

/// The limits a command cgroup is made with for a tree whose shell is inside it: the shell is
/// one of its tasks, so the command's own processes get the whole process limit.
pub fn cgroup_limits_with_shell(resources: &ResourceLimits) -> ResourceLimits {
    ResourceLimits {
        processes: resources.processes.map(|tasks| tasks.saturating_add(1)),
        ..*resources
    }
}

impl Backstops {
    /// The backstops of a tree under `resources` on this host's mechanism: none where the
    /// kernel holds the tree (they would only get in its way); on the watchdog, a heap stops
    /// at twice the tree's memory limit (the watchdog ends the tree first), and in the sandbox
    /// the tree's tasks at its process limit.
    pub fn for_limits(resources: &ResourceLimits) -> Self {
        if !resources.any() || limits_kernel_enforced() {
            return Self::default();
        }
        Self {
            data_bytes: resources.memory.map(|bytes| bytes.saturating_mul(2)),
            sandboxed_tasks: resources.processes,
        }
    }
}

/// A command tree's cgroup as its run watches it: what the kernel had enforced in it when the
/// command started, so that what grows past that is the command's.
#[derive(Debug, Clone)]
pub struct CgroupWatch {
    /// The cgroup the tree runs in.
    pub cgroup: Arc<CommandCgroup>,
    /// The kernel's counts when the command started.
    pub seen: CgroupEvents,
    /// The limits the tree runs under (not those the cgroup was made with: the process limit
    /// told is the command's own).
    pub resources: ResourceLimits,
}

impl CgroupWatch {
    /// Watches `cgroup` from now on.
    pub fn new(cgroup: Arc<CommandCgroup>, resources: ResourceLimits) -> Self {
        Self {
            seen: cgroup.events().unwrap_or_default(),
            cgroup,
            resources,
        }
    }

    /// The limit the kernel enforced since [`seen`](Self::seen), if any: an OOM kill (memory)
    /// before refused forks (processes).
    pub fn enforced(&self) -> Option<LimitHit> {
        self.enforced_in(self.cgroup.events().ok()?)
    }

    /// [`enforced`](Self::enforced) given the kernel's counts `now`.
    pub fn enforced_in(&self, now: CgroupEvents) -> Option<LimitHit> {
        enforced_between(&self.resources, self.seen, now, || {
            self.cgroup
                .usage()
                .ok()
                .and_then(|usage| usage.memory_peak_bytes)
        })
    }
}

/// The limit the kernel enforced between its counts `seen` and `now` on a tree under
/// `resources`: an OOM kill (memory; `used` the cgroup's peak from `peak`, at least the
/// limit) before refused forks (processes).
fn enforced_between(
    resources: &ResourceLimits,
    seen: CgroupEvents,
    now: CgroupEvents,
    peak: impl FnOnce() -> Option<u64>,
) -> Option<LimitHit> {
    if now.oom_kills > seen.oom_kills
        && let Some(limit) = resources.memory
    {
        return Some(LimitHit {
            kind: LimitKind::Memory,
            limit,
            used: peak().unwrap_or(limit).max(limit),
        });
    }
    if now.pids_refused > seen.pids_refused
        && let Some(limit) = resources.processes
    {
        return Some(LimitHit {
            kind: LimitKind::Processes,
            limit,
            used: limit,
        });
    }
    None
}

/// Which processes of a supervised shell make the tree a [`TreeWatchdog`] measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellShare {
    /// A long-lived shell that runs one command after another: the tree is the command's
    /// processes, the shell aside, plus what the shell's CPU time grows by from the first look
    /// on (its builtins, the children it waited for).
    Growth,
    /// A shell started for this command alone (a PTY run): it is part of the tree, its
    /// memory and all its CPU time count. The process limit is for the processes it starts,
    /// as in a cgroup made with [`cgroup_limits_with_shell`].
    Whole,
}

/// The watchdog of one command tree's resource limits: every [`LIMIT_CHECK`] it reads what
/// the kernel enforced in the tree's cgroup, or where none holds it measures the tree's
/// processes against the memory and process limits, and on both measures its CPU time.
#[derive(Debug)]
pub struct TreeWatchdog {
    limits: ResourceLimits,
    group: Option<CgroupWatch>,
    shell: ShellShare,
    /// The next look.
    next: Instant,
    /// With [`ShellShare::Growth`], the shell's CPU time (its own and its waited children's) at
    /// the first look: what it grows by is the command's. Read at the first look, not at the
    /// start, so that a command ending sooner costs no read; what the shell itself burnt
    /// before then (at most one look's interval) is not counted.
    shell_ticks: Option<u64>,
}

/// What a look found: the limit passed, and whether the tree must be ended for it (not when
/// the kernel refused forks over the process limit: the command goes on without them).
pub type LimitFound = (LimitHit, bool);

impl TreeWatchdog {
    /// A watchdog for a tree under `limits`, held by the kernel in `group` where there is one;
    /// `None` when no limit is set.
    pub fn new(
        limits: ResourceLimits,
        group: Option<CgroupWatch>,
        shell: ShellShare,
    ) -> Option<Self> {
        limits.any().then(|| Self {
            limits,
            group,
            shell,
            next: Instant::now() + LIMIT_CHECK,
            shell_ticks: None,
        })
    }

    /// When the next look is due.
    pub fn next(&self) -> Instant {
        self.next
    }

    /// The tree's cgroup, where the kernel holds it.
    pub fn group(&self) -> Option<&CgroupWatch> {
        self.group.as_ref()
    }

    /// The tree's cgroup, where the kernel holds it, for its owner to end and remove once the
    /// tree is over.
    pub fn into_group(self) -> Option<CgroupWatch> {
        self.group
    }

    /// Looks at the tree of `scope`: the limit it passed, if any (memory first, then
    /// processes, then CPU time), and whether it must end for it. The next look is due
    /// [`LIMIT_CHECK`] from now.
    pub fn check(&mut self, scope: &CommandScope) -> Option<LimitFound> {
        self.next = Instant::now() + LIMIT_CHECK;
        if let Some(group) = &self.group {
            if let Some(hit) = group.enforced() {
                // The OOM killer ended the biggest process: the rest of the tree ends too.
                return Some((hit, hit.kind == LimitKind::Memory));
            }
            return self.cpu_check(scope, None).map(|hit| (hit, true));
        }
        let usage = self.usage(scope);
        over_limit(&self.limits, &usage)
            .or_else(|| self.cpu_check(scope, Some(usage.cpu_ticks)))
            .map(|hit| (hit, true))
    }

    /// What the tree's processes use now (the shell's share as [`ShellShare`] says).
    fn usage(&self, scope: &CommandScope) -> CommandUsage {
        let usage = command_usage(scope);
        match self.shell {
            ShellShare::Growth => usage,
            ShellShare::Whole => with_shell(usage, process_usage(scope.shell)),
        }
    }

    /// The CPU time limit, when the tree's CPU time passed it; `tree_ticks` is that of its
    /// processes (measured here when `None`).
    fn cpu_check(&mut self, scope: &CommandScope, tree_ticks: Option<u64>) -> Option<LimitHit> {
        let limit = self.limits.cpu_time?;
        let tree_ticks = tree_ticks.unwrap_or_else(|| self.usage(scope).cpu_ticks);
        let ticks = match self.shell {
            ShellShare::Whole => tree_ticks,
            ShellShare::Growth => {
                let now = cpu_ticks(scope.shell);
                let start = *self.shell_ticks.get_or_insert(now.unwrap_or(0));
                now.unwrap_or(start)
                    .saturating_sub(start)
                    .saturating_add(tree_ticks)
            }
        };
        cpu_over_limit(limit, ticks, ticks_per_second())
    }
}

/// A command's `usage` with its shell's own, `shell`: its memory and CPU time count; it is
/// not one of the processes the process limit counts (the command's own are).
fn with_shell(usage: CommandUsage, shell: CommandUsage) -> CommandUsage {
    CommandUsage {
        memory_bytes: usage.memory_bytes.saturating_add(shell.memory_bytes),
        processes: usage.processes,
        cpu_ticks: usage.cpu_ticks.saturating_add(shell.cpu_ticks),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn usage(memory_bytes: u64, processes: usize) -> CommandUsage {
        CommandUsage {
            memory_bytes,
            processes,
            cpu_ticks: 0,
        }
    }

    #[test]
    fn memory_is_over_before_processes_and_only_above_the_limit() {
        let limits = ResourceLimits {
            memory: Some(256 * MIB),
            processes: Some(10),
            cpu_time: None,
        };
        assert_eq!(over_limit(&limits, &usage(256 * MIB, 10)), None);
        assert_eq!(
            over_limit(&limits, &usage(300 * MIB, 11)),
            Some(LimitHit {
                kind: LimitKind::Memory,
                limit: 256 * MIB,
                used: 300 * MIB,
            })
        );
        assert_eq!(
            over_limit(&limits, &usage(MIB, 11)),
            Some(LimitHit {
                kind: LimitKind::Processes,
                limit: 10,
                used: 11,
            })
        );
        assert_eq!(
            over_limit(&ResourceLimits::default(), &usage(u64::MAX, 100_000)),
            None
        );
    }

    #[test]
    fn cpu_time_is_over_once_its_ticks_reach_the_limit() {
        let two = Duration::from_secs(2);
        assert_eq!(cpu_over_limit(two, 199, 100), None);
        assert_eq!(
            cpu_over_limit(two, 200, 100),
            Some(LimitHit {
                kind: LimitKind::CpuTime,
                limit: 2,
                used: 2,
            })
        );
        assert_eq!(cpu_over_limit(two, 350, 100).map(|hit| hit.used), Some(3));
        // A clock that reports no ticks per second does not divide by zero.
        assert_eq!(cpu_over_limit(two, 2, 0).map(|hit| hit.used), Some(2));
    }

    #[test]
    fn a_shell_started_for_its_command_adds_its_memory_and_cpu_not_a_process() {
        let command = CommandUsage {
            memory_bytes: 100 * MIB,
            processes: 3,
            cpu_ticks: 150,
        };
        let shell = CommandUsage {
            memory_bytes: 2 * MIB,
            processes: 1,
            cpu_ticks: 60,
        };
        assert_eq!(
            with_shell(command, shell),
            CommandUsage {
                memory_bytes: 102 * MIB,
                processes: 3,
                cpu_ticks: 210,
            }
        );
        // A shell that is gone adds nothing.
        assert_eq!(with_shell(command, CommandUsage::default()), command);
    }

    #[test]
    fn the_shell_is_one_task_more_of_its_cgroup() {
        let limits = ResourceLimits {
            memory: Some(MIB),
            processes: Some(256),
            cpu_time: Some(Duration::from_secs(2)),
        };
        assert_eq!(
            cgroup_limits_with_shell(&limits),
            ResourceLimits {
                processes: Some(257),
                ..limits
            }
        );
        let none = ResourceLimits::default();
        assert_eq!(cgroup_limits_with_shell(&none), none);
    }

    #[test]
    fn the_kernel_enforced_what_its_counts_grew_by() {
        let limits = ResourceLimits {
            memory: Some(256 * MIB),
            processes: Some(256),
            cpu_time: None,
        };
        let seen = CgroupEvents {
            oom_kills: 1,
            pids_refused: 5,
        };
        assert_eq!(enforced_between(&limits, seen, seen, || None), None);
        let oom = CgroupEvents {
            oom_kills: 2,
            ..seen
        };
        // The peak, never below the limit (a kernel without a peak tells the limit).
        assert_eq!(
            enforced_between(&limits, seen, oom, || Some(300 * MIB)).map(|hit| hit.used),
            Some(300 * MIB)
        );
        assert_eq!(
            enforced_between(&limits, seen, oom, || None),
            Some(LimitHit {
                kind: LimitKind::Memory,
                limit: 256 * MIB,
                used: 256 * MIB,
            })
        );
        let refused = CgroupEvents {
            pids_refused: 6,
            ..seen
        };
        assert_eq!(
            enforced_between(&limits, seen, refused, || None),
            Some(LimitHit {
                kind: LimitKind::Processes,
                limit: 256,
                used: 256,
            })
        );
        // Memory first when both grew.
        let both = CgroupEvents {
            oom_kills: 2,
            pids_refused: 6,
        };
        assert_eq!(
            enforced_between(&limits, seen, both, || None).map(|hit| hit.kind),
            Some(LimitKind::Memory)
        );
        // A kind without a limit is not told.
        assert_eq!(
            enforced_between(&ResourceLimits::default(), seen, both, || None),
            None
        );
    }
}
