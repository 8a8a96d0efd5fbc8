//! One persistent shell: starting it, running a command through the completion protocol
//! (see `bootstrap`), and stopping a command.

mod run;

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agentsh_process::sandbox::SandboxPolicy;
use agentsh_process::shell::ShellSpec;
use agentsh_process::{
    ChildExit, CommandScope, SpawnSpec, StartMark, Supervisor, TERM_GRACE, can_attribute,
    command_processes, descendants, end_command_with, fd_target, process_info, signal_dispositions,
    waits_for_a_child,
};
use rustix::process::{Pid, Signal};
use tokio::io::unix::AsyncFd;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use self::run::{CommandEnd, CommandRun, Readiness, StopPlan};
use crate::bootstrap::{
    self, COMMAND_FILE, HEADER_FILE, HeaderState, PRE_FILE, PRE_PREFIX, REPORT_FIFO, STOP_FILE,
    TRIGGER_FIFO, UNWOUND_FILE, stop_signal,
};
use crate::error::ExecError;
use crate::fifo::{Fifo, FifoPool};

/// How long a new shell gets to source its snapshot and report that it is ready. A command's
/// own timeout starts when the shell is ready.
const STARTUP_LIMIT: Duration = Duration::from_secs(10);
/// A shell that is running (not waiting) with no process of its command alive is busy in a
/// builtin; it is probed twice this far apart before it is judged stuck.
const BUSY_PROBE: Duration = Duration::from_millis(20);
/// Read size for the output FIFO. 64 KiB pieces stay in the CPU's cache while they are
/// sanitised and copied into the spill batch: 256 KiB reads ran 10–15 % slower end to end
/// (measured against the pipe floor, both output shapes of the throughput bench).
const READ_CHUNK: usize = 64 * 1024;
/// How often a job whose command returned is checked for processes it left behind.
const LEFTOVER_CHECK: Duration = Duration::from_millis(250);
/// At most this much is read from a FIFO after its shell died or was replaced.
const DRAIN_LIMIT: usize = 4 << 20;

/// Why a command was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopReason {
    Timeout,
    Abort,
    Head,
}

/// Where a command's output goes while it runs.
pub(crate) trait Output: Send {
    fn chunk(&mut self, bytes: &[u8]);
    fn head_satisfied(&self) -> bool;
}

/// How one command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RunOutcome {
    /// The exit code to report (`None`: none could be obtained or the command was stopped).
    pub exit_code: Option<i32>,
    /// Set when the command was stopped.
    pub stopped: Option<StopReason>,
    /// The shell was replaced because it could not be kept after a stop.
    pub restarted: bool,
}

impl RunOutcome {
    /// Aborted before it started: it never ran.
    pub(crate) fn aborted() -> Self {
        Self {
            exit_code: None,
            stopped: Some(StopReason::Abort),
            restarted: false,
        }
    }

    /// The shell was gone before the command could start.
    fn shell_gone() -> Self {
        Self {
            exit_code: None,
            stopped: None,
            restarted: true,
        }
    }
}

/// How the wait for a command ended, with what the run learnt on the way.
struct Ended {
    end: CommandEnd,
    stopped: Option<StopReason>,
    shell_ready: bool,
    /// A stop let the shell go on after the command's processes were ended and its output
    /// taken: what the FIFO holds since is the shell's, not the command's.
    resumed: bool,
}

/// What stopping a command decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// The command's processes are gone and the frozen shell was told to unwind: take the
    /// output so far, let the shell go on (`SIGCONT`) and expect its report.
    Resume,
    /// The shell cannot be kept: replace it.
    Replace,
}

/// How a command is stopped (see [`stop_command`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StopMethod {
    /// The shell unwinds the command and is kept (bash, where processes can be attributed).
    Unwind,
    /// The shell is frozen so nothing more of the command runs, and replaced.
    Freeze,
}

/// A running shell and its supervisor.
pub(crate) struct ShellProcess {
    spec: ShellSpec,
    /// The sandbox its processes run under, `None` when off.
    sandbox: Option<SandboxPolicy>,
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
    /// When the shell was started (its [`STARTUP_LIMIT`] counts from here).
    started: Instant,
    buf: Vec<u8>,
    // Declared last: removed after the FIFOs above are closed.
    dir: tempfile::TempDir,
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
        sandbox: Option<&SandboxPolicy>,
    ) -> Result<Self, ExecError> {
        // 0700 whatever the umask: the command text and cwd written here are nobody else's.
        let dir = tempfile::Builder::new()
            .prefix("agentsh-")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(private_dir_parent())?;
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
        let supervisor = Supervisor::spawn(spawn).await?;
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
    pub(crate) fn sandbox(&self) -> Option<&SandboxPolicy> {
        self.sandbox.as_ref()
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
    #[cfg(test)]
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
        let mut check = tokio::time::interval(LEFTOVER_CHECK);
        loop {
            if fifo.is_none() && !self.has_background_jobs() {
                return;
            }
            let Self { buf, .. } = self;
            tokio::select! {
                biased;
                () = cancel.cancelled() => return,
                read = read_kept(fifo.as_ref(), buf) => match read {
                    Ok(0) => fifo = None,
                    Ok(n) => out.chunk(&buf[..n]),
                    Err(err) if err.kind() == io::ErrorKind::WouldBlock => {}
                    Err(_) => fifo = None,
                },
                _ = check.tick() => {}
            }
        }
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
    }

    /// Runs one command. `command` is the final text (prefix applied).
    pub(crate) async fn run(
        &mut self,
        command: &str,
        cwd: &Path,
        timeout: Duration,
        cancel: &CancellationToken,
        out: &mut dyn Output,
    ) -> Result<RunOutcome, ExecError> {
        let Some(supervisor) = self.supervisor.as_ref() else {
            return Ok(RunOutcome::shell_gone());
        };
        if cancel.is_cancelled() {
            // Aborted before it started: it never runs.
            return Ok(RunOutcome::aborted());
        }
        let (supervisor_pid, shell_pid) = (supervisor.pid(), supervisor.child_pid());
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
        let mut run = CommandRun::new(seq, timeout, stop, &mut fifo, out, buf, report, readiness);
        let end = if sent.is_err() {
            // The trigger FIFO is broken: the shell cannot be reached.
            CommandEnd::Replace
        } else {
            run.until_end(supervisor, reports, cancel).await
        };
        let (stopped, shell_ready, resumed) = (run.stopped, run.shell_ready, run.resumed);
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
            shell_ready,
            resumed,
        };
        self.finish(ended, fifo, out).await
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
                    None => (None, Some(exit), false),
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
            Some(StopReason::Timeout | StopReason::Abort) => None,
            None => status.or(shell_exit.map(ChildExit::shell_code)),
        };
        Ok(RunOutcome {
            exit_code,
            stopped,
            restarted: replaced || (stopped.is_some() && shell_exit.is_some()),
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

/// Sends `signal` to `pid`, best effort (the process may be gone already).
fn send_signal(pid: u32, signal: Signal) {
    if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
        let _ = rustix::process::kill_process(pid, signal);
    }
}

fn is_running(pid: u32) -> bool {
    process_info(pid).is_some_and(|p| p.state == b'R')
}

/// Stops the command of `scope`. With [`StopMethod::Unwind`], the shell is frozen, asked to
/// unwind the command (stop file + its [`stop_signal`]) and kept once the command's processes are
/// gone — unless it is busy in a builtin with no process of the command alive (a builtin loop
/// cannot be kept safely), or its handling of the stop signal is not provably the loop's. With
/// [`StopMethod::Freeze`], the shell is frozen (SIGSTOP) so that nothing more of the command
/// runs, and replaced.
async fn stop_command(
    scope: CommandScope,
    method: StopMethod,
    stop_file: PathBuf,
    signal: Signal,
) -> Verdict {
    if !can_attribute() {
        return Verdict::Replace;
    }
    let signal = signal.as_raw();
    if method == StopMethod::Unwind {
        let stuck = || command_processes(&scope).is_empty() && is_running(scope.shell);
        if stuck() {
            tokio::time::sleep(BUSY_PROBE).await;
            if stuck() {
                return Verdict::Replace;
            }
        }
    }
    // Frozen first: when the command's processes end, the shell must not go on to the rest of
    // the command before it has taken the stop (or been replaced).
    send_signal(scope.shell, Signal::STOP);
    let stop = stop_signal(&scope.tag);
    let unwind = method == StopMethod::Unwind
        && stop_signal_is_the_loops(scope.shell, stop)
        && write_private(&stop_file, scope.marker().as_bytes()).is_ok();
    if unwind {
        // Pending until the shell goes on; its trap then runs before its next command.
        send_raw_signal(scope.shell, stop);
    }
    end_command_with(&scope, signal, TERM_GRACE).await;
    if unwind {
        Verdict::Resume
    } else {
        Verdict::Replace
    }
}

/// Whether the (frozen) shell still handles its stop signal `stop` with the loop's trap, as far
/// as the kernel can tell: the signal is caught and not ignored, and no other real-time signal
/// is caught (bash catches none of its own, so a command that trapped them all — and with them
/// the loop's — shows). Only a command that read this shell's signal from the loop and
/// re-trapped exactly it is not seen here; its shell then does not confirm the unwind and is
/// replaced after its report (what it ran meanwhile is the one case the timeout cannot stop).
fn stop_signal_is_the_loops(shell: u32, stop: i32) -> bool {
    /// Signals 34–64, the real-time range with glibc.
    const REAL_TIME: u64 = !0u64 << 33;
    let Some(dispositions) = signal_dispositions(shell) else {
        return false;
    };
    let ours = 1u64 << (stop - 1);
    dispositions.catches(stop) && dispositions.caught & REAL_TIME & !ours == 0
}

/// Sends the signal numbered `signal` to `pid`, best effort.
fn send_raw_signal(pid: u32, signal: i32) {
    // SAFETY: `signal` is a real-time signal number agentsh itself does not use; sending it to
    // another process has no effect on this one.
    send_signal(pid, unsafe { Signal::from_raw_unchecked(signal) });
}

/// Where the shells' private directories go: a tmpfs when there is one (the per-command files
/// are rewritten on every call), else the temporary directory.
fn private_dir_parent() -> PathBuf {
    static PARENT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PARENT.get_or_init(find_private_dir_parent).clone()
}

fn find_private_dir_parent() -> PathBuf {
    let candidates = [
        std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from),
        Some(PathBuf::from("/dev/shm")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|dir| {
            dir.is_absolute()
                && std::fs::metadata(dir).is_ok_and(|m| m.is_dir())
                && tempfile::Builder::new()
                    .prefix("agentsh-probe-")
                    .tempdir_in(dir)
                    .is_ok()
        })
        .unwrap_or_else(std::env::temp_dir)
}

/// Writes `bytes` to `path`, created 0600 (the mode holds whatever the umask, and a file that
/// already exists keeps the 0600 it was created with).
fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?
        .write_all(bytes)
}

/// Creates a FIFO (0600) at `path` and opens it read-write, non-blocking, close-on-exec:
/// holding both ends, agentsh never blocks the shell's open and never sees EOF.
fn private_fifo(path: &Path) -> io::Result<OwnedFd> {
    use rustix::fs::{CWD, Mode, OFlags};
    rustix::fs::mkfifoat(CWD, path, Mode::from_raw_mode(0o600))?;
    let flags = OFlags::RDWR | OFlags::NONBLOCK | OFlags::CLOEXEC;
    Ok(rustix::fs::open(path, flags, Mode::empty())?)
}

/// Writes all of `bytes` (a trigger: a few dozen bytes into an empty FIFO).
fn write_all(fd: impl AsFd, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        match rustix::io::write(&fd, bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(rustix::io::Errno::INTR) => {}
            Err(err) => return Err(err.into()),
        }
    }
    Ok(())
}

/// Writes the command file: the text as given, behind [`PRE_PREFIX`] when the loop saved user
/// traps to restore for it (bash).
fn write_command(dir: &Path, restore_traps: bool, command: &str) -> io::Result<()> {
    if restore_traps {
        let mut text = Vec::with_capacity(PRE_PREFIX.len() + command.len());
        text.extend_from_slice(PRE_PREFIX.as_bytes());
        text.extend_from_slice(command.as_bytes());
        write_private(&dir.join(COMMAND_FILE), &text)
    } else {
        write_private(&dir.join(COMMAND_FILE), command.as_bytes())
    }
}

/// What the loop recorded when it gave up after command `seq` (see `bootstrap`).
fn find_gave_up_file(dir: &Path, seq: u64) -> Option<bootstrap::GaveUp> {
    use std::os::unix::ffi::OsStrExt as _;
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .find_map(|entry| bootstrap::parse_gave_up_file(entry.file_name().as_bytes(), seq))
}

/// Whether the shell has left its command, as far as `/proc` can tell (checked while no report
/// came): it holds neither fd 1 nor fd 2, its fd 0 is closed or the trigger FIFO (the command's
/// is `/dev/null` unless it closed it too), and it is not waiting for a child. A command that
/// closed all three descriptors and then loops in builtins looks the same: it is replaced.
fn shell_left_command(shell: u32, dir: &Path) -> bool {
    let input_is_the_loops = match fd_target(shell, 0) {
        Ok(None) => true,
        Ok(Some(input)) => input == dir.join(TRIGGER_FIFO),
        Err(_) => false,
    };
    shell_lacks_fd(shell, 1)
        && shell_lacks_fd(shell, 2)
        && input_is_the_loops
        && !waits_for_a_child(shell)
}

/// Whether the shell has no descriptor `fd` open. Between commands the loop keeps 0, 1 and 2
/// closed (it opens 0 to read a trigger and 1 to write a report, never 2), and the command's
/// `.` sets all three: a shell without fd 2 has finished sourcing its command.
fn shell_lacks_fd(shell: u32, fd: u32) -> bool {
    matches!(fd_target(shell, fd), Ok(None))
}
