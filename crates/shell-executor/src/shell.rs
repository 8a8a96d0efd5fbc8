//! One persistent shell: starting it, running a command through the completion protocol
//! (see `bootstrap`), and stopping a command.
//!
//! - `run`: waiting for one command to end, and where its output goes ([`Output`]);
//! - `stop`: stopping a command ([`StopReason`], `stop_command`);
//! - `files`: the shell's private directory and the files agentsh writes there;
//! - `limits`: the cgroup a shell's commands run in, and what a command left running.

mod files;
mod limits;
mod names;
mod run;
mod stop;

use std::ffi::OsString;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agentsh_process::sandbox::SandboxSpec;
use agentsh_process::shell::ShellSpec;
use agentsh_process::{
    Backstops, CgroupWatch, ChildExit, CommandCgroup, CommandScope, OwnedDir, SpawnSpec, StartMark,
    Supervisor, can_attribute, children, descendants, limits_kernel_enforced,
};
use agentsh_protocol::{LimitHit, ResourceLimits};
use rustix::process::Signal;
use tokio::io::unix::AsyncFd;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::request::LateLimits;

use self::files::{
    PRIVATE_DIR_PREFIX, find_gave_up_file, private_dir_parent, private_fifo, write_all,
    write_command, write_private,
};
pub(crate) use self::limits::TreeLimits;
use self::limits::{LeftoversTold, ShellGroup, enforced_since, watch_leftovers, watch_retired};
use self::names::ErrorNames;
pub use self::run::Output;
use self::run::{CommandEnd, CommandLimits, CommandRun, Readiness, StopPlan};
pub(crate) use self::stop::StopReason;
use self::stop::{StopMethod, send_signal};
use crate::bootstrap::{
    self, COMMAND_FILE, HEADER_FILE, HeaderState, PRE_FILE, REPORT_FIFO, STOP_FILE, TRIGGER_FIFO,
    UNWOUND_FILE,
};
use crate::error::ExecError;
use crate::fifo::{Fifo, FifoPool};

/// A command that succeeds within this long is not asked what the kernel enforced at its end:
/// an OOM kill would have made it fail, and forks refused this soon are told with the next
/// result (the kernel's counts are kept until then).
const QUICK_COMMAND: std::time::Duration = std::time::Duration::from_millis(5);
/// How long a new shell gets to source its snapshot and report that it is ready. A command's
/// own timeout starts when the shell is ready.
const STARTUP_LIMIT: Duration = Duration::from_secs(10);
/// Read size for the output FIFO. 64 KiB pieces stay in the CPU's cache while they are
/// sanitised and copied into the spill batch: 256 KiB reads ran 10–15 % slower end to end
/// (measured against the pipe floor, both output shapes of the throughput bench).
const READ_CHUNK: usize = 64 * 1024;
/// How often a job whose command returned is checked for processes it left behind.
const LEFTOVER_CHECK: Duration = Duration::from_millis(250);
/// At most this much is read from a FIFO after its shell died or was replaced.
const DRAIN_LIMIT: usize = 4 << 20;

/// How one command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RunOutcome {
    /// The exit code to report (`None`: none could be obtained or the command was stopped).
    pub exit_code: Option<i32>,
    /// Set when the command was stopped.
    pub stopped: Option<StopReason>,
    /// The program that needs a terminal the command was stopped for
    /// ([`StopReason::NeedsTerminal`]).
    pub needs_terminal: Option<&'static str>,
    /// The resource limit the command's processes passed, when one did.
    pub limit: Option<LimitHit>,
    /// The shell ended during the command (the command ended it, it crashed) or was replaced
    /// (it could not be kept after a stop): the next command runs in a new shell.
    pub restarted: bool,
}

impl RunOutcome {
    /// Aborted before it started: it never ran.
    pub(crate) fn aborted() -> Self {
        Self {
            exit_code: None,
            stopped: Some(StopReason::Abort),
            needs_terminal: None,
            limit: None,
            restarted: false,
        }
    }

    /// The shell was gone before the command could start.
    fn shell_gone() -> Self {
        Self {
            exit_code: None,
            stopped: None,
            needs_terminal: None,
            limit: None,
            restarted: true,
        }
    }
}

/// How the wait for a command ended, with what the run learnt on the way.
struct Ended {
    end: CommandEnd,
    stopped: Option<StopReason>,
    needs_terminal: Option<&'static str>,
    limit: Option<LimitHit>,
    shell_ready: bool,
    /// A stop let the shell go on after the command's processes were ended and its output
    /// taken: what the FIFO holds since is the shell's, not the command's.
    resumed: bool,
}

/// A running shell and its supervisor.
pub(crate) struct ShellProcess {
    spec: ShellSpec,
    /// The sandbox its processes run under, `None` when off.
    sandbox: Option<SandboxSpec>,
    /// `None` once the shell died or was replaced.
    supervisor: Option<Supervisor>,
    /// The report FIFO, held read-write (never EOF): the loop's reports come in here.
    reports: AsyncFd<OwnedFd>,
    /// The trigger FIFO, held read-write (opening it never blocks the loop): triggers go out.
    triggers: OwnedFd,
    /// Bytes of a report line received so far.
    report: Vec<u8>,
    fifos: FifoPool,
    tag: String,
    seq: u64,
    /// The working directory the header file holds.
    header_cwd: Option<PathBuf>,
    /// The user's `DEBUG`/`ERR` traps as the loop last reported them (`trap -p` lines, bash),
    /// also in [`PRE_FILE`] while not empty.
    traps: Vec<u8>,
    /// A command was started and its `run` did not finish (the caller dropped the future): the
    /// shell is in an unknown state and must not be used again.
    in_flight: bool,
    /// The loop reported ready (see `bootstrap`).
    ready: bool,
    /// A job's shell: after a command's report its output FIFO is kept for what the processes
    /// it left behind write ([`follow_leftovers`](Self::follow_leftovers)).
    job: bool,
    /// The output FIFO of the last command, kept for a job.
    kept: Option<Fifo>,
    /// The cgroup the shell's commands run in, where the kernel enforces resource limits.
    group: Option<ShellGroup>,
    /// The kinds of limit told for what the shell's commands left running, shared by their
    /// watchers while any runs: one runaway tree is told once, however many commands' scopes
    /// its processes count in (orphans a tree leaves count for the command they started under).
    leftovers_told: LeftoversTold,
    /// When the shell was started (its [`STARTUP_LIMIT`] counts from here).
    started: Instant,
    buf: Vec<u8>,
    // Declared last: removed after the FIFOs above are closed.
    dir: OwnedDir,
}

impl ShellProcess {
    /// Starts `spec` with `env`; the shell sources `snapshot` while the first command is
    /// prepared. Whether it became ready is learnt by the first [`run`](Self::run): a shell that
    /// exits or hangs before it reports ready makes that run fail with
    /// [`ExecError::StartupExit`] or [`ExecError::StartupTimeout`].
    ///
    /// `sandbox` is the policy every process of the shell is to run under; the shell
    /// keeps it, so that a slot's shell is only reused for requests with the same one.
    pub(crate) async fn start(
        spec: &ShellSpec,
        env: Vec<(OsString, OsString)>,
        snapshot: Option<&Path>,
        cwd: &Path,
        sandbox: Option<&SandboxSpec>,
        resources: ResourceLimits,
    ) -> Result<Self, ExecError> {
        // 0700 whatever the umask: the command text and cwd written here are nobody else's.
        // Locked while agentsh runs: a later agentsh removes it if nothing else did.
        let dir = OwnedDir::create(&private_dir_parent(), PRIVATE_DIR_PREFIX)?;
        let reports = private_fifo(&dir.path().join(REPORT_FIFO))?;
        let triggers = private_fifo(&dir.path().join(TRIGGER_FIFO))?;
        let tag = agentsh_process::random_hex(6);
        let mut spawn = SpawnSpec::new(&spec.path);
        spawn.args = bootstrap::shell_args(spec.kind, dir.path(), snapshot, &tag);
        spawn.env = env;
        spawn.cwd = cwd.to_path_buf();
        // The supervisor removes the directory even when agentsh dies without cleaning up.
        spawn.remove_on_exit = Some(dir.path().to_path_buf());
        // The session's sandbox; the spawner adds the shell's own directory
        // (`remove_on_exit`) to the writable roots.
        spawn.sandbox = sandbox.cloned();
        // Where only the watchdog measures the tree, per-process backstops.
        spawn.backstops = Backstops::for_limits(&resources);
        // Where the kernel holds the tree, the shell is born in its first commands' cgroup:
        // moving it there from here later would make the kernel wait for an RCU grace period
        // (about 10 ms on a busy machine, most of a short `agentsh exec`), which a process
        // joining by itself on cgroup v1 does not. No cgroup to be had: the watchdog measures.
        let born_in = CommandCgroup::for_shell_tree(&resources);
        if let Some(cgroup) = &born_in {
            spawn.join_cgroups = cgroup.self_join_files();
        }
        let supervisor = Supervisor::spawn(spawn).await?;
        let group = born_in.map(|cgroup| ShellGroup::new(Arc::new(cgroup), resources));
        Ok(Self {
            spec: spec.clone(),
            sandbox: sandbox.cloned(),
            supervisor: Some(supervisor),
            reports: crate::fifo::register(reports)?,
            triggers,
            report: Vec::new(),
            fifos: FifoPool::new(dir.path().to_path_buf()),
            tag,
            seq: 0,
            header_cwd: None,
            traps: Vec::new(),
            in_flight: false,
            ready: false,
            job: false,
            kept: None,
            group,
            leftovers_told: LeftoversTold::default(),
            started: Instant::now(),
            buf: vec![0; READ_CHUNK],
            dir,
        })
    }

    /// The shell this process runs.
    pub(crate) fn spec(&self) -> &ShellSpec {
        &self.spec
    }

    /// The sandbox the shell was started with.
    pub(crate) fn sandbox(&self) -> Option<&SandboxSpec> {
        self.sandbox.as_ref()
    }

    /// With a network allowlist: a mark of now on the link of the shell's namespace to the
    /// sandbox's proxy, for [`blocked_since`](Self::blocked_since).
    pub(crate) fn network_mark(&self) -> Option<u64> {
        self.network_link()
            .map(agentsh_process::sandbox::NetworkLink::mark)
    }

    /// The `host:port`s the proxy refused for the shell's connections since `mark` (from
    /// [`network_mark`](Self::network_mark)); empty without an allowlist.
    pub(crate) fn blocked_since(&self, mark: Option<u64>) -> Vec<String> {
        self.network_link()
            .zip(mark)
            .map(|(link, mark)| link.refused_since(mark))
            .unwrap_or_default()
    }

    fn network_link(&self) -> Option<&dyn agentsh_process::sandbox::NetworkLink> {
        self.supervisor.as_ref().and_then(Supervisor::network_link)
    }

    /// Whether the shell is still there to take the next command.
    pub(crate) fn is_alive(&mut self) -> bool {
        !self.in_flight
            && self
                .supervisor
                .as_mut()
                .is_some_and(Supervisor::child_running)
    }

    /// Whether processes other than the shell live under its supervisor (background jobs).
    pub(crate) fn has_background_jobs(&self) -> bool {
        self.supervisor.as_ref().is_some_and(|supervisor| {
            descendants(supervisor.pid())
                .iter()
                .any(|p| p.pid != supervisor.child_pid() && !p.is_exited())
        })
    }

    /// The supervisor's pid.
    pub(crate) fn supervisor_pid(&self) -> Option<u32> {
        self.supervisor.as_ref().map(Supervisor::pid)
    }

    /// The shell's pid.
    #[cfg(test)]
    pub(crate) fn shell_pid(&self) -> Option<u32> {
        self.supervisor.as_ref().map(Supervisor::child_pid)
    }

    /// Makes this a job's shell: its commands' output FIFOs are kept after their reports.
    pub(crate) fn for_job(&mut self) {
        self.job = true;
    }

    /// After a job's command returned: passes on what the processes it left behind write to its
    /// output, until none of them holds the output any more and none is left, or `cancel`.
    pub(crate) async fn follow_leftovers(
        &mut self,
        cancel: &CancellationToken,
        out: &mut dyn Output,
    ) {
        let mut fifo = self.kept.take();
        if let Some(fifo) = fifo.as_mut() {
            fifo.release();
        }
        let mut out = ErrorNames::new(out, self.spec.kind, &self.dir.path().join(COMMAND_FILE));
        let mut check = tokio::time::interval(LEFTOVER_CHECK);
        loop {
            if fifo.is_none() && !self.has_background_jobs() {
                break;
            }
            let Self { buf, .. } = self;
            tokio::select! {
                biased;
                () = cancel.cancelled() => break,
                read = read_kept(fifo.as_ref(), buf) => match read {
                    Ok(0) => fifo = None,
                    Ok(n) => out.chunk(&buf[..n]),
                    Err(err) if err.kind() == io::ErrorKind::WouldBlock => {}
                    Err(_) => fifo = None,
                },
                _ = check.tick() => {}
            }
        }
        out.finish();
    }

    /// Ends the shell and its whole process tree, and waits until they are gone.
    pub(crate) async fn close(mut self) {
        self.replace().await;
    }

    /// Ends the shell and its whole process tree; `self` stays, dead (not [`is_alive`]).
    ///
    /// [`is_alive`]: Self::is_alive
    async fn replace(&mut self) {
        if let Some(supervisor) = self.supervisor.take() {
            supervisor.shutdown().await;
        }
        // Its commands' cgroup goes with it, off the async threads and without holding up the
        // end (the tree is ended already; removing the cgroup may wait for the last zombies).
        if let Some(group) = self.group.take() {
            tokio::task::spawn_blocking(move || drop(group));
        }
    }

    /// Runs one command. `command` is the final text (prefix applied).
    pub(crate) async fn run(
        &mut self,
        command: &str,
        cwd: &Path,
        timeout: Duration,
        limits: TreeLimits<'_>,
        cancel: &CancellationToken,
        out: &mut dyn Output,
    ) -> Result<RunOutcome, ExecError> {
        let resources = limits.resources;
        let Some(supervisor) = self.supervisor.as_ref() else {
            return Ok(RunOutcome::shell_gone());
        };
        if cancel.is_cancelled() {
            // Aborted before it started: it never runs.
            return Ok(RunOutcome::aborted());
        }
        let (supervisor_pid, shell_pid) = (supervisor.pid(), supervisor.child_pid());
        let group = if resources.any() {
            self.command_group(resources, shell_pid, limits.late)
        } else {
            None
        };
        // The shell's messages name its command file: they are rewritten as `-c` prints them.
        let mut out = ErrorNames::new(out, self.spec.kind, &self.dir.path().join(COMMAND_FILE));
        let out = &mut out;
        self.seq += 1;
        let seq = self.seq;
        let mut fifo = self.fifos.take()?;
        let dir = self.dir.path();
        let header = if self.header_cwd.as_deref() == Some(cwd) {
            HeaderState::Unchanged
        } else {
            write_private(&dir.join(HEADER_FILE), &bootstrap::header(cwd))?;
            self.header_cwd = Some(cwd.to_path_buf());
            HeaderState::Changed
        };
        write_command(dir, !self.traps.is_empty(), command)?;
        let stop = StopPlan {
            scope: CommandScope {
                supervisor: supervisor_pid,
                shell: shell_pid,
                tag: self.tag.clone(),
                seq,
                started: StartMark::now(),
            },
            method: if bootstrap::can_unwind(self.spec.kind) && can_attribute() {
                StopMethod::Unwind
            } else {
                StopMethod::Freeze
            },
            stop_file: dir.join(STOP_FILE),
            dir: dir.to_path_buf(),
        };
        let trigger = bootstrap::trigger(seq, fifo.id(), header);
        self.in_flight = true;
        let mut kill_on_drop = KillTreeOnDrop {
            supervisor: supervisor_pid,
            armed: true,
        };
        let sent = write_all(&self.triggers, trigger.as_bytes());
        let began = std::time::Instant::now();

        let readiness = if self.ready {
            Readiness::Ready
        } else {
            Readiness::StartingUntil(self.started + STARTUP_LIMIT)
        };
        let Self {
            supervisor,
            buf,
            reports,
            report,
            ..
        } = self;
        let Some(supervisor) = supervisor.as_mut() else {
            return Ok(RunOutcome::shell_gone());
        };
        let scope = stop.scope.clone();
        let mut run = CommandRun::new(
            seq,
            timeout,
            CommandLimits {
                resources,
                group: group.clone(),
            },
            stop,
            &mut fifo,
            out,
            buf,
            report,
            readiness,
        );
        let end = if sent.is_err() {
            // The trigger FIFO is broken: the shell cannot be reached.
            CommandEnd::Replace
        } else {
            run.until_end(supervisor, reports, cancel).await
        };
        // A stop that found the command already over leaves it ended on its own.
        let stopped = run.stopped.filter(|_| !run.ended_on_its_own);
        let (shell_ready, resumed) = (run.shell_ready, run.resumed);
        let needs_terminal = run.needs_terminal.filter(|_| stopped.is_some());
        // A limit that stopped the command counts only if the stop did (not a command that was
        // over already); one the kernel enforced (refused forks) counts however it ended.
        let mut limit = run
            .limit_hit
            .filter(|_| stopped.is_some() || !run.limit_ended);
        // What the kernel enforced after the last look (an OOM kill that ended the command
        // within its first 100 ms). Not asked after a command that succeeded within
        // QUICK_COMMAND (the kernel's counts are two reads, a tenth of a quick call): none of
        // it was killed, and refused forks it met are still told, on the next result.
        let quick_success =
            matches!(end, CommandEnd::Reported(0)) && began.elapsed() < QUICK_COMMAND;
        if let Some(group) = group.as_ref().filter(|_| !quick_success)
            && let Some(hit) = enforced_since(group, &mut self.group)
        {
            limit = limit.or(Some(hit));
        }
        let traps = run.saved_traps.take();
        drop(run);
        if let Some(traps) = traps {
            self.keep_traps(traps)?;
        }
        // From here on the supervisor is either kept or shut down through `replace`, which ends
        // the tree even if this future is dropped (and may reap the supervisor: no pid to signal).
        kill_on_drop.armed = false;
        let ended = Ended {
            end,
            stopped,
            needs_terminal,
            limit,
            shell_ready,
            resumed,
        };
        let outcome = self.finish(ended, fifo, out).await;
        out.finish();
        // What it left running stays under its limits: measured here unless a cgroup holds
        // it, and its CPU time measured everywhere (no kernel mechanism holds that).
        let kernel_holds = group.is_some();
        if let (Ok(outcome), Some(late)) = (&outcome, limits.late)
            && (resources.cpu_time.is_some() || (resources.any() && !kernel_holds))
            && !outcome.restarted
            && self.left_processes(&scope)
        {
            tokio::spawn(watch_leftovers(
                scope,
                resources,
                kernel_holds,
                late.clone(),
                self.leftovers_told.for_watcher(),
            ));
        }
        outcome
    }

    /// The cgroup the next command runs in, where the kernel enforces resource limits: the
    /// shell's, kept from command to command while nothing but the shell is in it. When a
    /// command left processes running there (`&`), that cgroup stays theirs, watched until
    /// they end (a limit they pass is told to `late`), and the shell moves to a new one.
    /// `None` on the watchdog, or when a cgroup cannot be had (the watchdog then measures).
    fn command_group(
        &mut self,
        resources: ResourceLimits,
        shell: u32,
        late: Option<&LateLimits>,
    ) -> Option<CgroupWatch> {
        if !limits_kernel_enforced() {
            return None;
        }
        if let Some(group) = &mut self.group {
            match group.cgroup.tasks() {
                // Only the shell: the command starts in it, as the last one did. What earlier
                // commands were told is theirs: this one's own hits are all told.
                Ok(tasks) if tasks <= 1 => {
                    group.told.clear();
                    return Some(group.for_command());
                }
                _ => {
                    let retired = self.group.take()?;
                    tokio::spawn(watch_retired(retired, late.cloned()));
                }
            }
        }
        // The watchdog measures instead when none can be had.
        let cgroup = Arc::new(CommandCgroup::for_shell_tree(&resources)?);
        if cgroup.enter(shell).is_err() {
            return None;
        }
        let group = ShellGroup::new(cgroup, resources);
        let command = group.for_command();
        self.group = Some(group);
        Some(command)
    }

    /// Whether the command `scope` ended with processes of it still running (`&`), as far as
    /// the cheap look tells: the shell has children, or its supervisor has some other than the
    /// shell (orphans it reaped as a subreaper).
    fn left_processes(&self, scope: &CommandScope) -> bool {
        let shell_children = children(scope.shell);
        let supervisor_children = children(scope.supervisor);
        match (shell_children, supervisor_children) {
            (Some(shell), Some(supervisor)) => {
                !shell.is_empty() || supervisor.iter().any(|&pid| pid != scope.shell)
            }
            // The kernel does not tell: the full look.
            _ => self.has_background_jobs(),
        }
    }

    /// Records the user traps the loop saved, in [`PRE_FILE`] for the next command when they
    /// changed.
    fn keep_traps(&mut self, traps: Vec<u8>) -> io::Result<()> {
        if traps != self.traps {
            let pre = self.dir.path().join(PRE_FILE);
            if traps.is_empty() {
                match std::fs::remove_file(pre) {
                    Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
                    _ => {}
                }
            } else {
                write_private(&pre, &traps)?;
            }
            self.traps = traps;
        }
        Ok(())
    }

    /// After the wait for a command ended: takes the rest of its output, keeps or replaces the
    /// shell, and says how the command ended.
    async fn finish(
        &mut self,
        ended: Ended,
        mut fifo: Fifo,
        out: &mut dyn Output,
    ) -> Result<RunOutcome, ExecError> {
        let Ended {
            end,
            stopped,
            needs_terminal,
            limit,
            shell_ready,
            resumed,
        } = ended;
        let (status, shell_exit, replaced) = match end {
            CommandEnd::Reported(status) => {
                // Everything the command wrote is buffered now; later bytes are not its own.
                // After a stop that let the shell go on, everything since is the shell's own
                // (its report of a process agentsh killed, `Terminated`): dropped.
                let pending = fifo.pending();
                if resumed {
                    fifo.take_buffered(pending, &mut self.buf, &mut |_| {});
                } else {
                    fifo.take_buffered(pending, &mut self.buf, &mut |bytes| out.chunk(bytes));
                }
                if self.job && stopped.is_none() {
                    self.kept = Some(fifo);
                } else {
                    self.fifos.give_back(fifo);
                }
                if stopped.is_some() {
                    let unwound = format!("{UNWOUND_FILE}.{}", self.seq);
                    let _ = std::fs::remove_file(self.dir.path().join(unwound));
                }
                (Some(status), None, false)
            }
            CommandEnd::ShellExited(exit) => {
                // With a give-up file, the command had finished and the loop could not go on
                // (it could not repair itself): the recorded status, and a new shell.
                let gave_up = find_gave_up_file(self.dir.path(), self.seq);
                if !resumed {
                    self.drain_after_end(&mut fifo, out);
                }
                self.replace().await;
                match gave_up {
                    Some(gave_up) => (gave_up.status(), None, true),
                    // The command ended the shell (`exit 3`, `exec true`, `kill -9 $$`).
                    None => (None, Some(exit), true),
                }
            }
            CommandEnd::Wedged => {
                // The loop may still record why it stopped: a give-up file names the status.
                let gave_up = find_gave_up_file(self.dir.path(), self.seq);
                self.replace().await;
                if !resumed {
                    self.drain_after_end(&mut fifo, out);
                }
                (gave_up.and_then(bootstrap::GaveUp::status), None, true)
            }
            CommandEnd::Replace => {
                self.replace().await;
                if !resumed {
                    self.drain_after_end(&mut fifo, out);
                }
                (None, None, true)
            }
            CommandEnd::StartupTimeout => {
                self.replace().await;
                self.in_flight = false;
                return Err(ExecError::StartupTimeout {
                    shell: self.spec.path.display().to_string(),
                    seconds: STARTUP_LIMIT.as_secs(),
                });
            }
        };
        self.in_flight = false;
        self.ready = shell_ready;
        if !shell_ready && stopped.is_none() {
            // It ended before its loop ran: the snapshot or the shell is broken, not the
            // command (which never started).
            return Err(ExecError::StartupExit {
                shell: self.spec.path.display().to_string(),
                code: shell_exit.map_or(-1, ChildExit::shell_code),
            });
        }
        let exit_code = match stopped {
            Some(StopReason::Head) => Some(0),
            Some(
                StopReason::Timeout
                | StopReason::Abort
                | StopReason::NeedsTerminal
                | StopReason::Limit,
            ) => None,
            None => status.or(shell_exit.map(ChildExit::shell_code)),
        };
        Ok(RunOutcome {
            exit_code,
            stopped,
            needs_terminal,
            limit,
            restarted: replaced,
        })
    }

    /// After the shell died or was replaced: passes on what is still buffered in the FIFO.
    fn drain_after_end(&mut self, fifo: &mut Fifo, out: &mut dyn Output) {
        fifo.release();
        fifo.drain_now(&mut self.buf, DRAIN_LIMIT, &mut |bytes| out.chunk(bytes));
    }
}

/// Reads once from a kept FIFO when it is readable; never ready without one.
async fn read_kept(fifo: Option<&Fifo>, buf: &mut [u8]) -> io::Result<usize> {
    match fifo {
        Some(fifo) => fifo.read_ready(buf).await,
        None => std::future::pending().await,
    }
}

/// Ends the shell's whole tree when a `run` future is dropped before the command finished
/// (SIGTERM makes the supervisor kill every descendant and exit).
struct KillTreeOnDrop {
    supervisor: u32,
    armed: bool,
}

impl Drop for KillTreeOnDrop {
    fn drop(&mut self) {
        if self.armed {
            send_signal(self.supervisor, Signal::TERM);
        }
    }
}
