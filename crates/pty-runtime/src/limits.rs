//! A PTY session's tree under resource limits ([`PtyCommand::limits`](crate::PtyCommand)):
//! its command cgroup where the kernel holds trees, and the watchdog the driver asks every
//! `LIMIT_CHECK` (`agentsh_process`'s [`TreeWatchdog`], shared with the piped runtime).
//!
//! The shell on a terminal is started for its one command, so it is part of the tree from its
//! start ([`ShellShare::Whole`]): it joins the cgroup before its `execve`, and the watchdog
//! counts its memory and all its CPU time with the rest.

use std::sync::Arc;

use agentsh_process::{
    CgroupWatch, CommandCgroup, CommandScope, LimitFound, ShellShare, StartMark, TreeWatchdog,
};
use agentsh_protocol::{LimitHit, ResourceLimits};

/// The command cgroup the shell of a tree under `limits` starts in: `None` where the kernel
/// does not hold trees (or no cgroup can be had: the watchdog then measures).
pub(crate) fn command_cgroup(limits: &ResourceLimits) -> Option<Arc<CommandCgroup>> {
    CommandCgroup::for_shell_tree(limits).map(Arc::new)
}

/// One PTY session's tree under resource limits: its watchdog, and which processes it is.
pub(crate) struct TreeLimits {
    watchdog: TreeWatchdog,
    scope: CommandScope,
}

impl TreeLimits {
    /// The limits of the tree below `supervisor` whose shell is `shell`, started after
    /// `started` (inside `cgroup` where there is one); `None` without limits.
    pub(crate) fn new(
        limits: ResourceLimits,
        cgroup: Option<Arc<CommandCgroup>>,
        supervisor: u32,
        shell: u32,
        started: StartMark,
    ) -> Option<Self> {
        let group = cgroup.map(|cgroup| CgroupWatch::new(cgroup, limits));
        let watchdog = TreeWatchdog::new(limits, group, ShellShare::Whole)?;
        Some(Self {
            watchdog,
            scope: CommandScope {
                supervisor,
                shell,
                tag: String::new(),
                seq: 0,
                started,
            },
        })
    }

    /// Looks at the tree: the limit it passed and whether it must end for it.
    pub(crate) fn check(&mut self) -> Option<LimitFound> {
        self.watchdog.check(&self.scope)
    }

    /// What the kernel enforced in the tree's cgroup since it started, if it has one.
    pub(crate) fn enforced(&self) -> Option<LimitHit> {
        self.watchdog.group().and_then(CgroupWatch::enforced)
    }

    /// Ends what is left in the tree's cgroup and removes it, off the async threads (removing
    /// it may wait for the last zombies).
    pub(crate) fn release(self) {
        if let Some(group) = self.watchdog.into_group() {
            tokio::task::spawn_blocking(move || drop(group));
        }
    }
}

/// Completes when the tree's next look against its limits is due; never without limits.
pub(crate) async fn limit_check_due(limits: Option<&TreeLimits>) {
    match limits {
        Some(limits) => tokio::time::sleep_until(limits.watchdog.next()).await,
        None => std::future::pending().await,
    }
}
