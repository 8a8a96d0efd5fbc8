//! A command tree's resource limits around the shell: the cgroup a shell's commands run in
//! where the kernel holds them ([`ShellGroup`]), and the watchers of what a command left
//! running after its result was sent. Watching a running command against its limits is
//! `agentsh_process`'s ([`CgroupWatch`], `TreeWatchdog`), shared with the PTY runtime.

use std::sync::{Arc, Mutex, PoisonError};

use agentsh_process::{
    CgroupEvents, CgroupWatch, CommandCgroup, CommandScope, LIMIT_CHECK, command_usage,
    cpu_over_limit, end_runaway, over_limit, ticks_per_second,
};
use agentsh_protocol::{LimitHit, LimitKind, ResourceLimits};

use crate::request::LateLimits;

/// The limits a command's tree runs under, and where one passed after its result goes.
#[derive(Clone, Copy, Default)]
pub(crate) struct TreeLimits<'a> {
    pub(crate) resources: ResourceLimits,
    pub(crate) late: Option<&'a LateLimits>,
}

/// The cgroup a shell's commands run in (see [`ShellProcess::command_group`]), and what the
/// kernel had enforced in it when last looked at.
pub(super) struct ShellGroup {
    pub(super) cgroup: Arc<CommandCgroup>,
    pub(super) seen: CgroupEvents,
    pub(super) resources: ResourceLimits,
    /// The kinds of limit a result already told for this cgroup: what its processes keep
    /// running into later is not told again.
    pub(super) told: Vec<LimitKind>,
}

impl ShellGroup {
    /// The group of a shell in `cgroup` under `resources`, counting from the kernel's counts
    /// now.
    pub(super) fn new(cgroup: Arc<CommandCgroup>, resources: ResourceLimits) -> Self {
        Self {
            seen: cgroup.events().unwrap_or_default(),
            cgroup,
            resources,
            told: Vec::new(),
        }
    }

    /// What one command gets to watch it with.
    pub(super) fn for_command(&self) -> CgroupWatch {
        CgroupWatch {
            cgroup: Arc::clone(&self.cgroup),
            seen: self.seen,
            resources: self.resources,
        }
    }
}

/// What the kernel enforced in `command`'s cgroup during the command, at its end: the shell's
/// group (when it is still that cgroup) then counts from now, and knows the kind told.
pub(super) fn enforced_since(
    command: &CgroupWatch,
    group: &mut Option<ShellGroup>,
) -> Option<LimitHit> {
    let now = command.cgroup.events().ok()?;
    let hit = command.enforced_in(now);
    if let Some(group) = group.as_mut()
        && Arc::ptr_eq(&group.cgroup, &command.cgroup)
    {
        group.seen = now;
        if let Some(hit) = hit {
            group.told.push(hit.kind);
        }
    }
    hit
}

/// Watches a cgroup the shell left because a command's processes still run in it: the kernel
/// holds them to its limits; each limit it enforces from now on is told to `late` (once per
/// kind), until they are gone and the cgroup is removed. The session's end ends them.
pub(super) async fn watch_retired(group: ShellGroup, late: Option<LateLimits>) {
    let mut watched = CgroupWatch {
        cgroup: group.cgroup,
        seen: group.seen,
        resources: group.resources,
    };
    let mut check = tokio::time::interval(LIMIT_CHECK);
    check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut told = group.told;
    loop {
        check.tick().await;
        if !watched.cgroup.is_populated() {
            break;
        }
        if let Some(hit) = watched.enforced() {
            if let Ok(now) = watched.cgroup.events() {
                watched.seen = now;
            }
            if !told.contains(&hit.kind) {
                told.push(hit.kind);
                if let Some(late) = &late {
                    late.tell(hit);
                }
            }
        }
    }
    // Removing it may wait for the last zombies: off the async threads.
    let cgroup = watched.cgroup;
    tokio::task::spawn_blocking(move || drop(cgroup));
}

/// The kinds of limit told for what a shell's commands left running, shared by the watchers
/// of those leftovers ([`watch_leftovers`]) while any of them runs.
#[derive(Default)]
pub(super) struct LeftoversTold(Arc<Mutex<Vec<LimitKind>>>);

impl LeftoversTold {
    /// The share of a new watcher: when no other watcher runs, what was told before is
    /// forgotten (those leftovers are gone).
    pub(super) fn for_watcher(&self) -> Self {
        if Arc::strong_count(&self.0) == 1 {
            self.0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clear();
        }
        Self(Arc::clone(&self.0))
    }

    /// Whether `kind` is told for the first time (and now counts as told).
    fn first(&self, kind: LimitKind) -> bool {
        let mut told = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let first = !told.contains(&kind);
        if first {
            told.push(kind);
        }
        first
    }
}

/// How many checks in a row must find none of a command's leftovers before its watch ends: one
/// pass over `/proc` can miss every process of a tree that forks and exits fast (a child read
/// before its parent ended names a parent the pass no longer has), as `:(){ :|:& };:` does.
const LEFTOVERS_GONE_AFTER: u32 = 3;

/// Watches what a command left running (`&`) after its call's result was sent, every
/// [`LIMIT_CHECK`], until none of it is left: the memory and number of its processes stay
/// under its limits (unless `kernel_holds` them: its cgroup does), and so does the CPU time
/// they use from now on (a spinning `yes > /dev/null &` would otherwise burn a core until the
/// session ends); else they are ended and `late` is told.
pub(super) async fn watch_leftovers(
    scope: CommandScope,
    resources: ResourceLimits,
    kernel_holds: bool,
    late: LateLimits,
    told: LeftoversTold,
) {
    let mut check = tokio::time::interval(LIMIT_CHECK);
    check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut none_seen = 0;
    loop {
        check.tick().await;
        let usage = command_usage(&scope);
        if usage.processes == 0 {
            none_seen += 1;
            if none_seen == LEFTOVERS_GONE_AFTER {
                return;
            }
            continue;
        }
        none_seen = 0;
        let hit = if kernel_holds {
            None
        } else {
            over_limit(&resources, &usage)
        };
        if let Some(hit) = hit.or_else(|| {
            resources
                .cpu_time
                .and_then(|limit| cpu_over_limit(limit, usage.cpu_ticks, ticks_per_second()))
        }) {
            // A tree over its limit after its call returned may be forking without end.
            end_runaway(&scope).await;
            if told.first(hit.kind) {
                late.tell(hit);
            }
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use agentsh_process::shell::ShellSpec;
    use agentsh_protocol::ResourceLimits;

    use crate::shell::ShellProcess;
    use crate::test_helpers::runtime;

    #[test]
    fn a_kind_is_told_once_while_a_watcher_of_the_shells_leftovers_runs() {
        use agentsh_protocol::LimitKind;

        use super::LeftoversTold;

        let shell = LeftoversTold::default();
        let first = shell.for_watcher();
        let second = shell.for_watcher();
        assert!(first.first(LimitKind::Processes));
        assert!(
            !second.first(LimitKind::Processes),
            "one runaway, told once"
        );
        assert!(second.first(LimitKind::Memory));
        drop(second);
        // A watcher still runs: what it told stays told.
        let third = shell.for_watcher();
        assert!(!third.first(LimitKind::Processes));
        drop((first, third));
        // None runs: new leftovers are told afresh.
        assert!(shell.for_watcher().first(LimitKind::Processes));
    }

    #[test]
    fn where_the_kernel_holds_the_limits_a_shell_is_born_in_its_commands_cgroup() {
        if !agentsh_process::limits_kernel_enforced() {
            eprintln!("skipped: the resource limits of this host are not kernel-enforced");
            return;
        }
        runtime().block_on(async {
            let limits = ResourceLimits {
                memory: Some(1 << 30),
                processes: Some(64),
                cpu_time: None,
            };
            let path = std::env::var_os("PATH").unwrap_or_default();
            let shell = ShellProcess::start(
                &ShellSpec::from_path("/bin/bash"),
                vec![("PATH".into(), path)],
                None,
                Path::new("/"),
                None,
                limits,
            )
            .await
            .expect("a shell");
            let pid = shell.shell_pid().expect("its pid");
            // Before any command: it joined the cgroup itself, before its `execve`.
            let group = shell.group.as_ref().expect("a cgroup it was born in");
            assert!(group.cgroup.holds(pid), "shell {pid} not inside");
            shell.close().await;
        });
    }
}
