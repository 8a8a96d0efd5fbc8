//! A command tree's resource limits around the shell: the cgroup a shell's commands run in
//! where the kernel holds them ([`ShellGroup`]), and the watchers of what a command left
//! running after its result was sent. Watching a running command against its limits is
//! `agentsh_process`'s ([`CgroupWatch`], `TreeWatchdog`), shared with the PTY runtime.

use std::sync::Arc;
use std::time::Duration;

use agentsh_process::{
    CgroupEvents, CgroupWatch, CommandCgroup, CommandScope, LIMIT_CHECK, command_usage,
    end_command_with, over_limit,
};
use agentsh_protocol::{LimitHit, LimitKind, ResourceLimits};
use rustix::process::Signal;

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

/// How many checks in a row must find none of a command's leftovers before its watch ends: one
/// pass over `/proc` can miss every process of a tree that forks and exits fast (a child read
/// before its parent ended names a parent the pass no longer has), as `:(){ :|:& };:` does.
const LEFTOVERS_GONE_AFTER: u32 = 3;

/// Watches what a command left running (`&`) after its call's result was sent, every
/// [`LIMIT_CHECK`], until none of it is left: the memory and number of its processes
/// stay under its limits, else they are ended and `late` is told. (Its CPU time was the
/// call's.)
pub(super) async fn watch_leftovers(
    scope: CommandScope,
    resources: ResourceLimits,
    late: LateLimits,
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
        if let Some(hit) = over_limit(&resources, &usage) {
            end_command_with(&scope, Signal::KILL.as_raw(), Duration::ZERO).await;
            late.tell(hit);
            return;
        }
    }
}
