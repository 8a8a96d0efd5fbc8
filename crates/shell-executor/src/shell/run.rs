//! Waiting for one command to end: the events of a running command (output ready, the shell's
//! report, timeout, abort, head satisfied, the shell's exit, a stop decided) and what each does.
//!
//! [`CommandRun::until_end`] is one `biased` `select!` over the events, each handled by a method
//! of [`CommandRun`]. Stopping is polled before output: a command flooding its FIFO keeps the
//! output branch ready forever, and must not starve its own timeout, abort or head stop.
//!
//! Output is read as it comes: when the FIFO is readable, everything it holds is read at once
//! (up to [`READ_BUDGET`] per wake-up, so other events are not held up), so a producer faster
//! than agentsh is read in large pieces and one slower than agentsh costs one wake-up per write.
//! The loop's own cost per wake-up stays small: its timers are one
//! [`Sleep`](tokio::time::Sleep) set to the earliest of them and moved only when that changes,
//! and the cancel future lives across wake-ups. (An earlier design read bulk output on a 1 ms
//! timer instead; the timer fired every 2–5 ms on a busy machine, the 1 MiB FIFO filled in
//! between and the producer stalled: 0.5× of pipe speed.)

use std::future::Future;
use std::io;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::Duration;

use agentsh_process::{
    CgroupWatch, ChildExit, CommandScope, ShellShare, Supervisor, TreeWatchdog,
    command_terminal_program,
};
use agentsh_protocol::{LimitHit, ResourceLimits};

use rustix::process::Signal;
use tokio::io::unix::AsyncFd;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::stop::{
    StopMethod, StopReason, Verdict, left_command, send_signal, shell_lacks_fd, stop_command,
};
use crate::bootstrap::{self, ReportItem, UNWOUND_FILE};
use crate::fifo::{Fifo, read_fd};

/// How long a stopped command's shell gets to come back (report a status) after the
/// command's processes were ended, before it is replaced.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(1);
/// The most output taken from the FIFO per wake-up (the FIFO holds 1 MiB).
const READ_BUDGET: usize = 1 << 20;
/// The most read from the report FIFO at once (reports are a few bytes).
const REPORT_READ: usize = 256;
/// While no report came, how often the shell is checked for having left its command (see
/// `shell_left_command`).
const END_CHECK: Duration = Duration::from_millis(250);
/// How long after it left its command the loop gets to report before it counts as wedged.
const REPORT_GRACE: Duration = Duration::from_secs(1);
/// When a running command is looked at for a program that needs a terminal (see
/// `agentsh_process::command_terminal_program`): these intervals from the shell's ready
/// report, then every last one. Early enough to end `vim f` within a second, before it made
/// its swap file; the look is one `/proc` pass, so a long command pays one a second.
const TERMINAL_CHECKS: [Duration; 4] = [
    Duration::from_millis(150),
    Duration::from_millis(250),
    Duration::from_millis(500),
    Duration::from_secs(1),
];

/// The limits a command runs under, and its cgroup where the kernel enforces them.
pub(super) struct CommandLimits {
    pub(super) resources: ResourceLimits,
    pub(super) group: Option<CgroupWatch>,
}

/// Where a command's output goes while it runs.
pub trait Output: Send {
    /// Takes the next raw chunk the command printed (stdout and stderr, merged, in order).
    fn chunk(&mut self, bytes: &[u8]);

    /// Whether enough has come: the command is then stopped as `| head` stops a pipeline
    /// (exit code 0). Asked after each chunk; by default never.
    fn head_satisfied(&self) -> bool {
        false
    }
}

/// How the wait for a command ended.
pub(super) enum CommandEnd {
    /// The loop reported the command's status.
    Reported(i32),
    /// The supervisor reported the shell's exit.
    ShellExited(ChildExit),
    /// The command ended (the shell left it) but the loop did not report: it is wedged (a
    /// `DEBUG` trap skipping every command, a builtin it needs gone).
    Wedged,
    /// The shell did not report ready within its start-up limit.
    StartupTimeout,
    /// The shell cannot be kept.
    Replace,
}

type StopFuture = Pin<Box<dyn Future<Output = Verdict> + Send>>;

/// Whether the shell's loop has reported ready.
#[derive(Debug, Clone, Copy)]
pub(super) enum Readiness {
    /// It has: the command's own timeout applies.
    Ready,
    /// Not yet: the start-up limit, ending at this instant, applies until it does.
    StartingUntil(Instant),
}

/// What the command run needs to stop its command.
pub(super) struct StopPlan {
    pub(super) scope: CommandScope,
    pub(super) method: StopMethod,
    pub(super) stop_file: PathBuf,
    /// The shell's private directory (the stop trap's `unwound` file).
    pub(super) dir: PathBuf,
}

/// One command's state between events.
pub(super) struct CommandRun<'a> {
    /// The command's number (its report carries it).
    seq: u64,
    timeout: Duration,
    stop: StopPlan,
    fifo: &'a mut Fifo,
    out: &'a mut dyn Output,
    buf: &'a mut [u8],
    /// Bytes of a report line received so far.
    report: &'a mut Vec<u8>,
    /// The loop reported ready (the command's own time runs from then).
    pub(super) shell_ready: bool,
    /// When the start-up limit ends (shell not ready yet), then when the command times out.
    deadline: Instant,
    /// Set once the command is being stopped.
    pub(super) stopped: Option<StopReason>,
    /// The stop found the command already over ([`Verdict::Over`]): it ends as if never
    /// stopped, unless its report does not come by this instant (then it is stopped for real).
    over_until: Option<Instant>,
    /// The stop found the command over and its report came: it ended on its own.
    pub(super) ended_on_its_own: bool,
    /// The next look for a program that needs a terminal, and how many came before.
    next_terminal_check: Option<(Instant, usize)>,
    /// The program that needs a terminal the command was stopped for.
    pub(super) needs_terminal: Option<&'static str>,
    stopper: Option<StopFuture>,
    /// After the shell was told to unwind: when to give up waiting for its report.
    grace_until: Option<Instant>,
    /// The next look for the command's end (see [`END_CHECK`]).
    next_end_check: Option<Instant>,
    /// The shell left its command without a report: when to give up waiting for the report.
    wedged_after: Option<Instant>,
    /// A stop let the frozen shell go on after the command's output was taken.
    pub(super) resumed: bool,
    /// Trap lines received since the last status line.
    pending_traps: Vec<u8>,
    /// Measures the command against its resource limits, when it has any.
    watchdog: Option<TreeWatchdog>,
    /// The resource limit the command's processes passed.
    pub(super) limit_hit: Option<LimitHit>,
    /// The limit was enforced by ending the command (the watchdog), not by the kernel refusing
    /// what went over it.
    pub(super) limit_ended: bool,
    /// The user traps the loop saved with the report it was accepted for (see `bootstrap`).
    pub(super) saved_traps: Option<Vec<u8>>,
}

impl<'a> CommandRun<'a> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        seq: u64,
        timeout: Duration,
        limits: CommandLimits,
        stop: StopPlan,
        fifo: &'a mut Fifo,
        out: &'a mut dyn Output,
        buf: &'a mut [u8],
        report: &'a mut Vec<u8>,
        readiness: Readiness,
    ) -> Self {
        let now = Instant::now();
        let (shell_ready, deadline) = match readiness {
            Readiness::Ready => (true, now + timeout),
            Readiness::StartingUntil(limit) => (false, limit),
        };
        // The shell runs one command after another: its share is what it grows by.
        let watchdog = TreeWatchdog::new(limits.resources, limits.group, ShellShare::Growth);
        Self {
            seq,
            timeout,
            stop,
            fifo,
            out,
            buf,
            report,
            shell_ready,
            deadline,
            stopped: None,
            over_until: None,
            ended_on_its_own: false,
            next_terminal_check: shell_ready.then_some((now + TERMINAL_CHECKS[0], 0)),
            needs_terminal: None,
            stopper: None,
            grace_until: None,
            next_end_check: shell_ready.then_some(now + END_CHECK),
            wedged_after: None,
            resumed: false,
            pending_traps: Vec::new(),
            saved_traps: None,
            watchdog,
            limit_hit: None,
            limit_ended: false,
        }
    }

    /// Handles events until the command ends.
    pub(super) async fn until_end(
        &mut self,
        supervisor: &mut Supervisor,
        reports: &AsyncFd<OwnedFd>,
        cancel: &CancellationToken,
    ) -> CommandEnd {
        // Both live across wake-ups: creating a timer entry or a cancel waiter anew for every
        // piece of output would cost more than reading it.
        let mut due = self.next_due();
        let timer = tokio::time::sleep_until(due.unwrap_or_else(Instant::now));
        tokio::pin!(timer);
        let cancelled = cancel.cancelled();
        tokio::pin!(cancelled);
        loop {
            let end = tokio::select! {
                // Stopping comes first: see the module docs.
                biased;
                verdict = poll_stopper(&mut self.stopper) => self.on_stop_decided(verdict),
                () = &mut timer, if due.is_some() => self.on_timer(),
                () = &mut cancelled, if self.stopped.is_none() => {
                    self.begin_stop(StopReason::Abort);
                    None
                }
                // Not while a stop is being decided: the stop must finish what it began (a
                // frozen shell let go), and its verdict says how to take the report.
                ready = reports.readable(), if self.stopper.is_none() => match ready {
                    Ok(mut guard) => {
                        let read = guard.try_io(|fd| {
                            read_fd(fd.get_ref(), &mut self.buf[..REPORT_READ])
                        });
                        match read {
                            // agentsh holds a writer: no EOF, so the FIFO is broken.
                            Ok(Ok(0) | Err(_)) => Some(CommandEnd::Replace),
                            Ok(Ok(n)) => self.on_report_bytes(n),
                            Err(_would_block) => None,
                        }
                    }
                    Err(_) => Some(CommandEnd::Replace),
                },
                exit = supervisor.wait_child() => Some(match exit {
                    Ok(exit) => CommandEnd::ShellExited(exit),
                    Err(_) => CommandEnd::Replace,
                }),
                // Not while a stop is being decided either: a command flooding its FIFO would
                // keep this branch ready, and the stop's own timers would never run. What it
                // writes meanwhile waits in the FIFO, drained once the stop decided.
                read = self.fifo.read_ready(self.buf), if self.stopper.is_none() => match read {
                    // EOF is impossible while agentsh holds a writer: the channel is broken,
                    // and the shell cannot be trusted any more.
                    Ok(0) | Err(_) => Some(CommandEnd::Replace),
                    Ok(n) => self.on_output(n),
                },
            };
            if let Some(end) = end {
                return end;
            }
            let next = self.next_due();
            if next != due {
                due = next;
                if let Some(at) = due {
                    timer.as_mut().reset(at);
                }
            }
        }
    }

    /// The earliest instant a timed event is due, if any is.
    fn next_due(&self) -> Option<Instant> {
        [
            self.live_deadline(),
            self.grace_until,
            self.over_until,
            self.next_terminal_check.map(|(at, _)| at),
            self.next_end_check,
            self.wedged_after,
            self.limit_check_due(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// The watchdog's next look, while the command runs and is not being stopped.
    fn limit_check_due(&self) -> Option<Instant> {
        let watchdog = self.watchdog.as_ref()?;
        (self.shell_ready && self.stopped.is_none()).then_some(watchdog.next())
    }

    /// Measures the command against its limits; ends it when it passed one.
    fn on_limit_check_due(&mut self) {
        let Some(watchdog) = self.watchdog.as_mut() else {
            return;
        };
        match watchdog.check(&self.stop.scope) {
            Some((hit, true)) => {
                self.limit_hit = Some(hit);
                self.limit_ended = true;
                self.begin_stop(StopReason::Limit);
            }
            // Told once; the command goes on without what the kernel refused it.
            Some((hit, false)) => {
                self.limit_hit.get_or_insert(hit);
            }
            None => {}
        }
    }

    /// The start-up limit or the timeout, until the command is being stopped.
    fn live_deadline(&self) -> Option<Instant> {
        self.stopped.is_none().then_some(self.deadline)
    }

    /// The timer fired: handles every timed event that is due, the most final first.
    fn on_timer(&mut self) -> Option<CommandEnd> {
        let now = Instant::now();
        let due = |at: Option<Instant>| at.is_some_and(|at| at <= now);
        if due(self.grace_until) {
            return Some(CommandEnd::Replace);
        }
        if due(self.live_deadline())
            && let Some(end) = self.on_deadline()
        {
            return Some(end);
        }
        if due(self.wedged_after) {
            return Some(CommandEnd::Wedged);
        }
        if due(self.over_until) {
            // Found over, yet no report: the command closed its descriptors and runs on.
            self.over_until = None;
            if let Some(reason) = self.stopped {
                self.start_stopper(reason, false);
            }
        }
        if due(self.limit_check_due()) {
            self.on_limit_check_due();
        }
        if due(self.next_end_check) {
            self.on_end_check_due();
        }
        if due(self.next_terminal_check.map(|(at, _)| at)) {
            self.on_terminal_check_due(now);
        }
        None
    }

    /// Looks for a program that needs a terminal among the command's processes; stops the
    /// command when one runs.
    fn on_terminal_check_due(&mut self, now: Instant) {
        let Some((_, done)) = self.next_terminal_check.take() else {
            return;
        };
        if self.stopped.is_some() {
            return;
        }
        if let Some(program) = command_terminal_program(&self.stop.scope) {
            self.needs_terminal = Some(program);
            self.begin_stop(StopReason::NeedsTerminal);
            return;
        }
        let next = TERMINAL_CHECKS[(done + 1).min(TERMINAL_CHECKS.len() - 1)];
        self.next_terminal_check = Some((now + next, done + 1));
    }

    /// The stop in progress decided whether the shell can be kept.
    fn on_stop_decided(&mut self, verdict: Verdict) -> Option<CommandEnd> {
        self.stopper = None;
        match verdict {
            Verdict::Resume => {
                // The command's processes are gone and the shell is frozen: what the FIFO
                // holds is the whole rest of the command's output. Once the shell goes on,
                // what it writes (its report of a killed process) is not the command's.
                let out = &mut *self.out;
                if self
                    .fifo
                    .drain_now(self.buf, usize::MAX, &mut |bytes| out.chunk(bytes))
                {
                    // EOF although agentsh holds a writer: the FIFO is broken.
                    return Some(CommandEnd::Replace);
                }
                self.resumed = true;
                self.next_end_check = None;
                send_signal(self.stop.scope.shell, Signal::CONT);
                self.grace_until = Some(Instant::now() + STOP_GRACE);
                None
            }
            Verdict::Replace => Some(CommandEnd::Replace),
            Verdict::Over => {
                self.over_until = Some(Instant::now() + REPORT_GRACE);
                None
            }
        }
    }

    /// The start-up limit or the command's timeout passed.
    fn on_deadline(&mut self) -> Option<CommandEnd> {
        if !self.shell_ready {
            return Some(CommandEnd::StartupTimeout);
        }
        self.begin_stop(StopReason::Timeout);
        None
    }

    /// The first `n` bytes of the buffer arrived on the command channel.
    fn on_report_bytes(&mut self, n: usize) -> Option<CommandEnd> {
        self.report.extend_from_slice(&self.buf[..n]);
        // One read can hold the ready line and the command's report.
        loop {
            let item = match bootstrap::next_report_item(self.report) {
                Ok(Some(item)) => item,
                Ok(None) if self.report.len() <= bootstrap::MAX_REPORT_ITEM => return None,
                // Anything else on the loop's own channel: the shell's state is unknown.
                Ok(None) | Err(_) => return Some(CommandEnd::Replace),
            };
            let (done, status) = match item {
                ReportItem::Trap(len) => {
                    self.pending_traps.extend(self.report.drain(..len));
                    continue;
                }
                ReportItem::Unset(len) => {
                    self.report.drain(..len);
                    continue;
                }
                ReportItem::Status { seq, status, len } => {
                    self.report.drain(..len);
                    (seq, status)
                }
            };
            match (done, status) {
                bootstrap::READY if !self.shell_ready => {
                    let now = Instant::now();
                    self.shell_ready = true;
                    self.deadline = now + self.timeout;
                    self.next_end_check = Some(now + END_CHECK);
                    self.next_terminal_check = Some((now + TERMINAL_CHECKS[0], 0));
                    self.saved_traps = Some(std::mem::take(&mut self.pending_traps));
                }
                (done, status) if done == self.seq && self.shell_ready => {
                    // Only the loop reports once the shell has left the command (its fd 2 is
                    // closed; the loop writes reports on fd 1): a command that wrote a report
                    // itself (the FIFO is reachable by path) is still running, stderr open.
                    if !shell_lacks_fd(self.stop.scope.shell, 2) {
                        // What came with it is the command's too.
                        self.pending_traps.clear();
                        continue;
                    }
                    self.saved_traps = Some(std::mem::take(&mut self.pending_traps));
                    // A resumed stop must have been taken by the loop's trap; anything else
                    // (a command that re-trapped the stop signal) may have run on.
                    if self.resumed
                        && !self
                            .stop
                            .dir
                            .join(format!("{UNWOUND_FILE}.{done}"))
                            .exists()
                    {
                        return Some(CommandEnd::Replace);
                    }
                    self.ended_on_its_own = self.over_until.is_some();
                    return Some(CommandEnd::Reported(status));
                }
                // Anything else on the loop's own channel: the shell's state is unknown.
                _ => return Some(CommandEnd::Replace),
            }
        }
    }

    /// Checks whether the shell left its command; once it has, the loop has [`REPORT_GRACE`]
    /// to report.
    fn on_end_check_due(&mut self) {
        self.next_end_check = None;
        if self.stopped.is_some() || self.wedged_after.is_some() {
            return;
        }
        if left_command(self.stop.scope.shell, &self.stop.dir) {
            self.wedged_after = Some(Instant::now() + REPORT_GRACE);
        } else {
            self.next_end_check = Some(Instant::now() + END_CHECK);
        }
    }

    /// The first `n` bytes of the buffer came from the FIFO: passes them on, then whatever
    /// else the FIFO holds, up to [`READ_BUDGET`] in all.
    fn on_output(&mut self, n: usize) -> Option<CommandEnd> {
        self.pass_on(n);
        let mut taken = n;
        while n == self.buf.len() && taken < READ_BUDGET && self.stopped.is_none() {
            match self.fifo.read_now(self.buf) {
                // EOF although agentsh holds a writer: the FIFO is broken.
                Ok(0) => return Some(CommandEnd::Replace),
                Ok(more) => {
                    self.pass_on(more);
                    taken += more;
                    if more < self.buf.len() {
                        break;
                    }
                }
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => break,
                Err(_) => return Some(CommandEnd::Replace),
            }
        }
        None
    }

    /// Passes the first `n` bytes of the buffer on; stops the command once its head limit is
    /// satisfied.
    fn pass_on(&mut self, n: usize) {
        if self.resumed {
            // After a resumed stop, only the shell itself writes here: not the command's.
            return;
        }
        self.out.chunk(&self.buf[..n]);
        if self.stopped.is_none() && self.out.head_satisfied() {
            self.begin_stop(StopReason::Head);
        }
    }

    fn begin_stop(&mut self, reason: StopReason) {
        self.stopped = Some(reason);
        self.start_stopper(reason, true);
    }

    /// Starts stopping the command; `check_over`: see [`stop_command`].
    fn start_stopper(&mut self, reason: StopReason, check_over: bool) {
        // A satisfied head ends the producer like `head` closing its pipe would; a tree over
        // a limit gets no grace to grow further in.
        let signal = match reason {
            StopReason::Head => Signal::PIPE,
            StopReason::Limit => Signal::KILL,
            _ => Signal::TERM,
        };
        self.stopper = Some(Box::pin(stop_command(
            self.stop.scope.clone(),
            self.stop.method,
            self.stop.stop_file.clone(),
            signal,
            check_over,
        )));
    }
}

async fn poll_stopper(stopper: &mut Option<StopFuture>) -> Verdict {
    match stopper {
        Some(future) => future.await,
        None => std::future::pending().await,
    }
}
