//! The one tree-kill loop: how every set of processes agentsh ends gracefully is ended —
//! a command's processes ([`end_command`]), a process and its descendants ([`kill_tree`]),
//! and everything below a supervisor
//! ([`Supervisor::kill_tree`](crate::Supervisor::kill_tree)).
//!
//! Each round re-reads which processes are still alive and acts on them:
//!
//! 1. until the grace period ends, every process not signalled yet gets SIGSTOP (a fork loop
//!    is frozen before it can outrun the scan), then the first signal (SIGTERM) and SIGCONT;
//! 2. after it, every process still alive gets SIGSTOP and SIGKILL, round after round, until
//!    none is left or [`MAX_KILL_SWEEPS`] rounds have passed.
//!
//! Each signal is sent only while the process's start time still matches what the scan saw,
//! so a pid reused in the meantime is not hit. The loop is a state machine ([`TreeKill`]) driven
//! on tokio's timer.
//!
//! The supervisor's own end (after `fork`, on SIGKILL only, see `supervisor::forked`) cannot
//! use this loop: it must not allocate. It shares the `/proc` reading of `procfs` instead.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

use crate::tree::{
    CommandScope, ProcessInfo, command_processes, descendants_in, process_info, process_table,
};

/// How long processes get between SIGTERM and SIGKILL.
pub const TERM_GRACE: Duration = Duration::from_millis(500);

/// How often the loop re-scans while waiting for processes to exit.
const POLL_INTERVAL: Duration = Duration::from_millis(5);

/// Upper bound of SIGKILL sweeps after the grace period.
const MAX_KILL_SWEEPS: u32 = 400;

/// What [`end_command`] or [`kill_tree`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EndReport {
    /// Processes sent the first signal (SIGTERM).
    pub terminated: usize,
    /// Processes that were still alive after the grace period and were sent SIGKILL.
    pub killed: usize,
    /// Whether something was still alive when the sweeps gave up.
    pub survivors: bool,
}

/// The state of one run of the tree-kill loop.
struct TreeKill {
    first_signal: Option<Signal>,
    deadline: Instant,
    in_grace: bool,
    sweeps: u32,
    termed: HashSet<(u32, u64)>,
    killed: HashSet<(u32, u64)>,
    report: EndReport,
}

impl TreeKill {
    /// A run that sends `first_signal` (a raw signal number; an unknown one is not sent) and
    /// waits up to `grace` before SIGKILL.
    fn new(first_signal: i32, grace: Duration) -> Self {
        Self {
            first_signal: Signal::from_named_raw(first_signal),
            deadline: Instant::now() + grace,
            in_grace: true,
            sweeps: 0,
            termed: HashSet::new(),
            killed: HashSet::new(),
            report: EndReport::default(),
        }
    }

    /// One round over the processes `alive` now: signals them and returns how long to wait
    /// before the next scan, or `None` when the run is over (see [`TreeKill::report`]).
    fn round(&mut self, alive: &[ProcessInfo]) -> Option<Duration> {
        if alive.is_empty() {
            self.report.killed = self.killed.len();
            return None;
        }
        if self.in_grace {
            let now = Instant::now();
            if now < self.deadline {
                let fresh: Vec<&ProcessInfo> = alive
                    .iter()
                    .filter(|p| !self.termed.contains(&(p.pid, p.start_ticks)))
                    .collect();
                for process in &fresh {
                    signal(process, Some(Signal::STOP));
                }
                for process in &fresh {
                    signal(process, self.first_signal);
                    signal(process, Some(Signal::CONT));
                    self.termed.insert((process.pid, process.start_ticks));
                }
                self.report.terminated += fresh.len();
                return Some(POLL_INTERVAL.min(self.deadline - now));
            }
            self.in_grace = false;
        }
        if self.sweeps == MAX_KILL_SWEEPS {
            self.report.killed = self.killed.len();
            self.report.survivors = true;
            return None;
        }
        self.sweeps += 1;
        for process in alive {
            signal(process, Some(Signal::STOP));
        }
        for process in alive {
            signal(process, Some(Signal::KILL));
            self.killed.insert((process.pid, process.start_ticks));
        }
        Some(POLL_INTERVAL)
    }

    /// What the run did.
    fn report(&self) -> EndReport {
        self.report
    }

    /// Runs the loop to its end on tokio's timer; `alive` lists the targets each round.
    async fn run(mut self, mut alive: impl FnMut() -> Vec<ProcessInfo>) -> EndReport {
        while let Some(pause) = self.round(&alive()) {
            tokio::time::sleep(pause).await;
        }
        self.report()
    }
}

/// Sends `signal` to `process` if it is still the process the scan saw (same start time).
pub(crate) fn signal(process: &ProcessInfo, signal: Option<Signal>) {
    let Some(signal) = signal else { return };
    let Some(pid) = i32::try_from(process.pid).ok().and_then(Pid::from_raw) else {
        return;
    };
    if process_info(process.pid).is_some_and(|now| now.start_ticks == process.start_ticks) {
        let _ = rustix::process::kill_process(pid, signal);
    }
}

/// Ends every process of the command `scope`: SIGSTOP, SIGTERM + SIGCONT, up to `grace` for
/// them to exit, then SIGKILL, re-scanning until none is left (new processes found during the
/// grace period get SIGTERM too; after it, SIGKILL).
pub async fn end_command(scope: &CommandScope, grace: Duration) -> EndReport {
    end_command_with(scope, Signal::TERM.as_raw(), grace).await
}

/// [`end_command`] with another first signal: SIGPIPE ends a producer the way `head` closing
/// its pipe does (and, unlike SIGTERM, bash does not report the death on stderr).
pub async fn end_command_with(
    scope: &CommandScope,
    first_signal: i32,
    grace: Duration,
) -> EndReport {
    TreeKill::new(first_signal, grace)
        .run(|| command_processes(scope))
        .await
}

/// Ends the processes of the command `scope` at once (SIGKILL, no grace), with its shell's
/// process group stopped meanwhile: for a tree that forks faster than passes over `/proc` can
/// stop it, as `:(){ :|:& };:` does (tried as root, where no rlimit holds it: over 30,000
/// processes outran the plain loop).
///
/// `kill(-group, SIGSTOP)` reaches every process of the group in one call, and a `fork` that
/// races it either gives a child that is stopped too or fails: once it returns, nothing of the
/// group forks. The command's processes are then ended while they stand still, and SIGCONT to
/// the group lets what is left of it (the shell, and what other commands left running) go on.
/// Only where the shell leads a group of its own (as agentsh's supervisor starts it); else,
/// and for what left the group (`setsid`), the plain loop alone.
pub async fn end_runaway(scope: &CommandScope) -> EndReport {
    let group = Pid::from_raw(scope.shell.cast_signed())
        .filter(|shell| rustix::process::getpgid(Some(*shell)).is_ok_and(|group| group == *shell));
    let frozen =
        group.filter(|group| rustix::process::kill_process_group(*group, Signal::STOP).is_ok());
    let report = end_command_with(scope, Signal::KILL.as_raw(), Duration::ZERO).await;
    if let Some(group) = frozen {
        let _ = rustix::process::kill_process_group(group, Signal::CONT);
    }
    report
}

/// Ends the process `root` and every descendant of it, with the same loop as
/// [`end_command`]: SIGSTOP, SIGTERM + SIGCONT, up to `grace`, then SIGKILL, re-scanning until
/// none is left. A process found in the tree once stays a target after its parent died and it
/// was reparented (to init or a subreaper); one that was orphaned before the first scan is no
/// longer below `root` and is not found.
pub async fn kill_tree(root: u32, grace: Duration) -> EndReport {
    let mut tree = Tree::new(root, TreeRoot::Included);
    TreeKill::new(Signal::TERM.as_raw(), grace)
        .run(|| tree.alive())
        .await
}

/// [`kill_tree`] for everything below `root`, but not `root` itself (a supervisor's tree).
pub(crate) async fn kill_below(root: u32, grace: Duration) -> EndReport {
    let mut tree = Tree::new(root, TreeRoot::Spared);
    TreeKill::new(Signal::TERM.as_raw(), grace)
        .run(|| tree.alive())
        .await
}

/// Whether the root of a [`Tree`] is one of its targets.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TreeRoot {
    /// The root is ended too ([`kill_tree`]).
    Included,
    /// Only what is below the root is ended (a supervisor's tree).
    Spared,
}

/// The targets of one tree kill: what is below the root now, plus every process found in an
/// earlier round that still runs (its parent may have died since, moving it out from under the
/// root), plus what is below those.
struct Tree {
    /// The root, when it is spared (it is searched below but never a target).
    spared_root: Option<u32>,
    members: HashSet<(u32, u64)>,
}

impl Tree {
    fn new(root: u32, with: TreeRoot) -> Self {
        let mut members = HashSet::new();
        if with == TreeRoot::Included
            && let Some(info) = process_info(root)
        {
            members.insert((info.pid, info.start_ticks));
        }
        Self {
            spared_root: (with == TreeRoot::Spared).then_some(root),
            members,
        }
    }

    /// The live targets now.
    fn alive(&mut self) -> Vec<ProcessInfo> {
        let Ok(table) = process_table() else {
            return Vec::new();
        };
        // Known members are matched by pid and start time, so a reused pid is not one.
        let known: Vec<ProcessInfo> = table
            .iter()
            .filter(|p| self.members.contains(&(p.pid, p.start_ticks)))
            .copied()
            .collect();
        let roots: Vec<u32> = known
            .iter()
            .map(|p| p.pid)
            .chain(self.spared_root)
            .collect();
        let below = descendants_in(&table, &roots);
        let alive: Vec<ProcessInfo> = known
            .into_iter()
            .chain(below)
            .filter(|p| !p.is_exited())
            .collect();
        self.members
            .extend(alive.iter().map(|p| (p.pid, p.start_ticks)));
        alive
    }
}
