//! One persistent shell: starting it, running a command through the completion protocol
//! (see `bootstrap`), and stopping a command.

mod run;

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agentsh_process::shell::ShellSpec;
use agentsh_process::{
    ChildExit, CommandScope, SpawnSpec, StartMark, Supervisor, TERM_GRACE, can_attribute,
    command_processes, descendants, end_command_with, process_info,
};
use rustix::process::{Pid, Signal};
use tokio::io::unix::AsyncFd;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use self::run::{CommandEnd, CommandRun, Readiness, STOP_GRACE, StopPlan};
use crate::bootstrap::{self, COMMAND_FD, COMMAND_FILE, HEADER_FILE, HeaderState, STOP_FILE};
use crate::error::ExecError;
use crate::fifo::{Fifo, FifoPool};

/// How long a new shell gets to source its snapshot and report that it is ready. A command's
/// own timeout starts when the shell is ready.
const STARTUP_LIMIT: Duration = Duration::from_secs(10);
/// A shell that is running (not waiting) with no process of its command alive is busy in a
/// builtin; it is probed twice this far apart before it is judged stuck.
const BUSY_PROBE: Duration = Duration::from_millis(20);
/// Read size for the output FIFO.
const READ_CHUNK: usize = 256 * 1024;
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

/// What stopping a command decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// The command's processes are gone and the shell was told to unwind: expect its report.
    AwaitReport,
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
    /// `None` once the shell died or was replaced.
    supervisor: Option<Supervisor>,
    /// agentsh's end of the command channel (the shell's fd 3): triggers out, reports in.
    commands: AsyncFd<OwnedFd>,
    /// Bytes of a report line received so far.
    report: Vec<u8>,
    fifos: FifoPool,
    tag: String,
    seq: u64,
    /// The working directory the header file holds.
    header_cwd: Option<PathBuf>,
    /// A command was started and its `run` did not finish (the caller dropped the future): the
    /// shell is in an unknown state and must not be used again.
    in_flight: bool,
    /// The loop reported ready (see `bootstrap`).
    ready: bool,
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
    pub(crate) async fn start(
        spec: &ShellSpec,
        env: Vec<(OsString, OsString)>,
        snapshot: Option<&Path>,
        cwd: &Path,
    ) -> Result<Self, ExecError> {
        // 0700 whatever the umask: the command text and cwd written here are nobody else's.
        let dir = tempfile::Builder::new()
            .prefix("agentsh-")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(private_dir_parent())?;
        let (ours, theirs) = socket_pair()?;
        let tag = agentsh_process::random_hex(6);
        let mut spawn = SpawnSpec::new(&spec.path);
        spawn.args = bootstrap::shell_args(spec.kind, dir.path(), snapshot, &tag);
        spawn.env = env;
        spawn.cwd = cwd.to_path_buf();
        spawn.fds = vec![(theirs, COMMAND_FD)];
        // The supervisor removes the directory even when agentsh dies without cleaning up.
        spawn.remove_on_exit = Some(dir.path().to_path_buf());
        let supervisor = Supervisor::spawn(spawn).await?;
        Ok(Self {
            spec: spec.clone(),
            supervisor: Some(supervisor),
            commands: register_socket(ours)?,
            report: Vec::new(),
            fifos: FifoPool::new(dir.path().to_path_buf()),
            tag,
            seq: 0,
            header_cwd: None,
            in_flight: false,
            ready: false,
            started: Instant::now(),
            buf: vec![0; READ_CHUNK],
            dir,
        })
    }

    /// The shell this process runs.
    pub(crate) fn spec(&self) -> &ShellSpec {
        &self.spec
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
        write_private(&dir.join(COMMAND_FILE), command.as_bytes())?;
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
        };
        let trigger = bootstrap::trigger(seq, fifo.id(), header);
        self.in_flight = true;
        let mut kill_on_drop = KillTreeOnDrop {
            supervisor: supervisor_pid,
            armed: true,
        };
        let sent = send_all(self.commands.get_ref(), trigger.as_bytes());

        let readiness = if self.ready {
            Readiness::Ready
        } else {
            Readiness::StartingUntil(self.started + STARTUP_LIMIT)
        };
        let Self {
            supervisor,
            buf,
            commands,
            report,
            ..
        } = self;
        let Some(supervisor) = supervisor.as_mut() else {
            return Ok(RunOutcome::shell_gone());
        };
        let mut run = CommandRun::new(seq, timeout, stop, &mut fifo, out, buf, report, readiness);
        let end = if sent.is_err() {
            // The shell is gone (its end of the channel is closed).
            CommandEnd::ChannelClosed
        } else {
            run.until_end(supervisor, commands, cancel).await
        };
        let (stopped, shell_ready) = (run.stopped, run.shell_ready);
        drop(run);
        // From here on the supervisor is either kept or shut down through `replace`, which ends
        // the tree even if this future is dropped (and may reap the supervisor: no pid to signal).
        kill_on_drop.armed = false;
        self.finish(end, fifo, stopped, shell_ready, out).await
    }

    /// After the wait for a command ended: takes the rest of its output, keeps or replaces the
    /// shell, and says how the command ended.
    async fn finish(
        &mut self,
        end: CommandEnd,
        mut fifo: Fifo,
        stopped: Option<StopReason>,
        shell_ready: bool,
        out: &mut dyn Output,
    ) -> Result<RunOutcome, ExecError> {
        let (status, shell_exit, replaced) = match end {
            CommandEnd::Reported(status) => {
                // Everything the command wrote is buffered now; later bytes are not its own.
                let pending = fifo.pending();
                fifo.take_buffered(pending, &mut self.buf, &mut |bytes| out.chunk(bytes));
                self.fifos.give_back(fifo);
                (Some(status), None, false)
            }
            CommandEnd::ShellExited(exit) => {
                self.drain_after_end(&mut fifo, out);
                self.replace().await;
                (None, Some(exit), false)
            }
            CommandEnd::ChannelClosed => {
                // The shell closed its end: it exited (or is exiting); its status follows.
                let exit = match self.supervisor.as_mut() {
                    Some(supervisor) => tokio::time::timeout(STOP_GRACE, supervisor.wait_child())
                        .await
                        .ok()
                        .and_then(Result::ok),
                    None => None,
                };
                self.drain_after_end(&mut fifo, out);
                self.replace().await;
                (None, exit, exit.is_none())
            }
            CommandEnd::Replace => {
                self.replace().await;
                self.drain_after_end(&mut fifo, out);
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

/// Stops the command of `scope`. With [`StopMethod::Unwind`], the shell is asked to unwind the
/// command (stop file + SIGUSR1) and kept, unless it is busy in a builtin with no process of the
/// command alive (a builtin loop cannot be kept safely). With [`StopMethod::Freeze`], the shell
/// is frozen (SIGSTOP) so that nothing more of the command runs, and replaced.
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
    match method {
        StopMethod::Unwind => {
            let stuck = || command_processes(&scope).is_empty() && is_running(scope.shell);
            if stuck() {
                tokio::time::sleep(BUSY_PROBE).await;
                if stuck() {
                    return Verdict::Replace;
                }
            }
            if write_private(&stop_file, scope.marker().as_bytes()).is_err() {
                send_signal(scope.shell, Signal::STOP);
                end_command_with(&scope, signal, TERM_GRACE).await;
                return Verdict::Replace;
            }
            send_signal(scope.shell, Signal::USR1);
            end_command_with(&scope, signal, TERM_GRACE).await;
            Verdict::AwaitReport
        }
        StopMethod::Freeze => {
            send_signal(scope.shell, Signal::STOP);
            end_command_with(&scope, signal, TERM_GRACE).await;
            Verdict::Replace
        }
    }
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

/// A connected pair of Unix stream sockets, close-on-exec: agentsh's end and the shell's.
/// A socket rather than a pipe so that writing to a dead shell gives `EPIPE` without raising
/// SIGPIPE in agentsh (`MSG_NOSIGNAL` / `SO_NOSIGPIPE`).
fn socket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    use rustix::net::{AddressFamily, SocketFlags, SocketType, socketpair};
    #[cfg(target_os = "linux")]
    let flags = SocketFlags::CLOEXEC;
    #[cfg(not(target_os = "linux"))]
    let flags = SocketFlags::empty();
    let (ours, theirs) = socketpair(AddressFamily::UNIX, SocketType::STREAM, flags, None)?;
    #[cfg(not(target_os = "linux"))]
    {
        use rustix::io::{FdFlags, fcntl_setfd};
        fcntl_setfd(&ours, FdFlags::CLOEXEC)?;
        fcntl_setfd(&theirs, FdFlags::CLOEXEC)?;
        rustix::net::sockopt::set_socket_nosigpipe(&ours, true)?;
    }
    Ok((ours, theirs))
}

fn register_socket(fd: OwnedFd) -> io::Result<AsyncFd<OwnedFd>> {
    use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
    let flags = fcntl_getfl(&fd)?;
    fcntl_setfl(&fd, flags | OFlags::NONBLOCK)?;
    crate::fifo::register(fd)
}

/// Sends all of `bytes` (a few dozen; the socket buffer is empty between commands).
fn send_all(fd: impl AsFd, mut bytes: &[u8]) -> io::Result<()> {
    use rustix::net::{SendFlags, send};
    #[cfg(target_os = "linux")]
    let flags = SendFlags::NOSIGNAL;
    #[cfg(not(target_os = "linux"))]
    let flags = SendFlags::empty();
    while !bytes.is_empty() {
        match send(&fd, bytes, flags) {
            Ok(n) => bytes = &bytes[n..],
            Err(rustix::io::Errno::INTR) => {}
            Err(err) => return Err(err.into()),
        }
    }
    Ok(())
}
