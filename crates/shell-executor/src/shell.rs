//! One persistent shell: starting it, running a command through the completion protocol
//! (see `bootstrap`), and stopping a command.

use std::ffi::OsString;
use std::future::Future;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::pin::Pin;
use std::time::Duration;

use agentsh_process::shell::ShellSpec;
use agentsh_process::{
    ChildExit, CommandScope, SpawnSpec, StartMark, Supervisor, TERM_GRACE, can_attribute,
    command_processes, descendants, end_command_with, process_info,
};
use tokio::io::unix::AsyncFd;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::bootstrap::{self, COMMAND_FD, COMMAND_FILE, HEADER_FILE, STOP_FILE};
use crate::error::ExecError;
use crate::fifo::{Fifo, FifoPool, read_fd};

/// How long a stopped command's shell gets to come back (report a status) after the
/// command's processes were ended, before it is replaced.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(1);
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
/// Once a command has printed this much, the FIFO leaves the epoll set and is read every
/// [`COALESCE`] while output keeps coming: the producer then fills it without waking agentsh for
/// every small write (a pipeline writes 4–8 KiB at a time), which costs far more than the bytes.
/// Small outputs stream at once; when the flow stops, the FIFO is polled again.
const BULK_OUTPUT: u64 = 1 << 20;
/// The pause of a bulk reader (the FIFO holds 1 MiB, so a fast producer is not held up).
const COALESCE: Duration = Duration::from_millis(1);
/// Reads per timer tick of a bulk reader, each up to [`READ_CHUNK`].
const MAX_READS_PER_TICK: usize = 16;

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
}

/// What stopping a command decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// The command's processes are gone and the shell was told to unwind: expect its report.
    AwaitReport,
    /// The shell cannot be kept: replace it.
    Replace,
}

enum Ending {
    /// The loop reported the command's status.
    Reported(i32),
    /// The supervisor reported the shell's exit.
    ShellExited(ChildExit),
    /// The shell closed the command channel (it exited).
    ChannelClosed,
    /// The shell did not report ready within [`STARTUP_LIMIT`].
    StartupTimeout,
    /// The shell cannot be kept.
    Replace,
}

type StopFuture = Pin<Box<dyn Future<Output = Verdict> + Send>>;

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
    header_cwd: Option<std::path::PathBuf>,
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
        let dir = tempfile::Builder::new()
            .prefix("agentsh-")
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
            return Ok(RunOutcome {
                exit_code: None,
                stopped: None,
                restarted: true,
            });
        };
        if cancel.is_cancelled() {
            // Aborted before it started: it never runs.
            return Ok(RunOutcome {
                exit_code: None,
                stopped: Some(StopReason::Abort),
                restarted: false,
            });
        }
        let (supervisor_pid, shell_pid) = (supervisor.pid(), supervisor.child_pid());
        self.seq += 1;
        let seq = self.seq;
        let mut fifo = self.fifos.take()?;
        let dir = self.dir.path();
        let header_changed = self.header_cwd.as_deref() != Some(cwd);
        if header_changed {
            std::fs::write(dir.join(HEADER_FILE), bootstrap::header(cwd))?;
            self.header_cwd = Some(cwd.to_path_buf());
        }
        std::fs::write(dir.join(COMMAND_FILE), command)?;
        let scope = CommandScope {
            supervisor: supervisor_pid,
            shell: shell_pid,
            tag: self.tag.clone(),
            seq,
            started: StartMark::now(),
        };
        let trigger = bootstrap::trigger(seq, fifo.id(), header_changed);
        self.in_flight = true;
        let mut abandoned = Abandoned {
            supervisor: supervisor_pid,
            armed: true,
        };
        let sent = send_all(self.commands.get_ref().as_raw_fd(), trigger.as_bytes());

        let mut shell_ready = self.ready;
        // Until the shell is ready, the start-up limit applies; the command's own time starts
        // when it is.
        let mut deadline = if shell_ready {
            Instant::now() + timeout
        } else {
            self.started + STARTUP_LIMIT
        };
        let mut stopped: Option<StopReason> = None;
        let mut stopper: Option<StopFuture> = None;
        let mut grace_until: Option<Instant> = None;
        let mut coalesce_until: Option<Instant> = None;
        let mut output_bytes: u64 = 0;
        let unwind = bootstrap::can_unwind(self.spec.kind) && can_attribute();
        let stop_file = dir.join(STOP_FILE);
        let begin_stop = |reason: StopReason,
                          stopped: &mut Option<StopReason>,
                          stopper: &mut Option<StopFuture>| {
            *stopped = Some(reason);
            // A satisfied head ends the producer like `head` closing its pipe would.
            let signal = if reason == StopReason::Head {
                libc::SIGPIPE
            } else {
                libc::SIGTERM
            };
            *stopper = Some(Box::pin(stop_command(
                scope.clone(),
                unwind,
                stop_file.clone(),
                signal,
            )));
        };
        let ending = if sent.is_err() {
            // The shell is gone (its end of the channel is closed).
            Ending::ChannelClosed
        } else {
            let Self {
                supervisor,
                buf,
                commands,
                report,
                ..
            } = self;
            let Some(supervisor) = supervisor.as_mut() else {
                return Ok(RunOutcome {
                    exit_code: None,
                    stopped: None,
                    restarted: true,
                });
            };
            'events: loop {
                tokio::select! {
                    // Stopping comes first: a command flooding its FIFO keeps that branch
                    // ready forever, and must not starve its own timeout, abort or head stop.
                    biased;
                    verdict = poll_stopper(&mut stopper) => {
                        stopper = None;
                        match verdict {
                            Verdict::AwaitReport => grace_until = Some(Instant::now() + STOP_GRACE),
                            Verdict::Replace => break Ending::Replace,
                        }
                    }
                    () = sleep_until_opt(grace_until) => break Ending::Replace,
                    () = tokio::time::sleep_until(deadline), if stopped.is_none() => {
                        if !shell_ready {
                            break Ending::StartupTimeout;
                        }
                        begin_stop(StopReason::Timeout, &mut stopped, &mut stopper);
                    }
                    () = cancel.cancelled(), if stopped.is_none() => {
                        begin_stop(StopReason::Abort, &mut stopped, &mut stopper);
                    }
                    ready = commands.readable() => {
                        let Ok(mut guard) = ready else { break Ending::Replace };
                        match guard.try_io(|fd| read_fd(fd.get_ref().as_raw_fd(), &mut buf[..256])) {
                            Ok(Ok(0) | Err(_)) => break Ending::ChannelClosed,
                            Ok(Ok(n)) => {
                                report.extend_from_slice(&buf[..n]);
                                // One read can hold the ready line and the command's report.
                                while let Some(end) = report.iter().position(|&b| b == b'\n') {
                                    let line: Vec<u8> = report.drain(..=end).collect();
                                    match bootstrap::parse_report(&line[..end]) {
                                        Some(bootstrap::READY) if !shell_ready => {
                                            shell_ready = true;
                                            deadline = Instant::now() + timeout;
                                        }
                                        Some((done, status)) if done == seq && shell_ready => {
                                            break 'events Ending::Reported(status);
                                        }
                                        // Anything else on the loop's own channel: the shell's
                                        // state is unknown.
                                        _ => break 'events Ending::Replace,
                                    }
                                }
                            }
                            Err(_would_block) => {}
                        }
                    }
                    exit = supervisor.wait_child() => {
                        match exit {
                            Ok(exit) => break Ending::ShellExited(exit),
                            Err(_) => break Ending::Replace,
                        }
                    }
                    read = fifo.read_ready(buf), if fifo.is_polled() => {
                        match read {
                            // EOF is impossible while agentsh holds a writer: the channel
                            // is broken, and the shell cannot be trusted any more.
                            Ok(0) | Err(_) => break Ending::Replace,
                            Ok(n) => {
                                out.chunk(&buf[..n]);
                                output_bytes += n as u64;
                                if stopped.is_none() && out.head_satisfied() {
                                    begin_stop(StopReason::Head, &mut stopped, &mut stopper);
                                }
                                if n < buf.len() && output_bytes >= BULK_OUTPUT {
                                    // Bulk output: read on a timer instead (see `fifo`).
                                    fifo.unpoll();
                                    coalesce_until = Some(Instant::now() + COALESCE);
                                }
                            }
                        }
                    }
                    () = sleep_until_opt(coalesce_until) => {
                        coalesce_until = None;
                        let mut flowing = false;
                        let mut broken = false;
                        for _ in 0..MAX_READS_PER_TICK {
                            match fifo.read_now(buf) {
                                Ok(0) => broken = true,
                                Ok(n) => {
                                    flowing = true;
                                    out.chunk(&buf[..n]);
                                    if stopped.is_none() && out.head_satisfied() {
                                        begin_stop(StopReason::Head, &mut stopped, &mut stopper);
                                    }
                                    if n == buf.len() {
                                        continue;
                                    }
                                }
                                Err(err) => broken = err.kind() != io::ErrorKind::WouldBlock,
                            }
                            break;
                        }
                        if broken {
                            break Ending::Replace;
                        }
                        if flowing {
                            coalesce_until = Some(Instant::now() + COALESCE);
                        } else if fifo.poll().is_err() {
                            break Ending::Replace;
                        }
                    }
                }
            }
        };
        drop(stopper);
        // From here on the supervisor is either kept or shut down through `replace`, which ends
        // the tree even if this future is dropped (and may reap the supervisor: no pid to signal).
        abandoned.armed = false;

        let (status, shell_exit, replaced) = match ending {
            Ending::Reported(status) => {
                // Everything the command wrote is buffered now; later bytes are not its own.
                let pending = fifo.pending();
                fifo.take_buffered(pending, &mut self.buf, &mut |bytes| out.chunk(bytes));
                self.fifos.give_back(fifo);
                (Some(status), None, false)
            }
            Ending::ShellExited(exit) => {
                self.drain_after_end(&mut fifo, out);
                self.replace().await;
                (None, Some(exit), false)
            }
            Ending::ChannelClosed => {
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
            Ending::Replace => {
                self.replace().await;
                self.drain_after_end(&mut fifo, out);
                (None, None, true)
            }
            Ending::StartupTimeout => {
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
struct Abandoned {
    supervisor: u32,
    armed: bool,
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        if self.armed {
            send_signal(self.supervisor, libc::SIGTERM);
        }
    }
}

async fn poll_stopper(stopper: &mut Option<StopFuture>) -> Verdict {
    match stopper {
        Some(future) => future.await,
        None => std::future::pending().await,
    }
}

async fn sleep_until_opt(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn send_signal(pid: u32, signal: i32) {
    // SAFETY: kill(2) has no memory effects.
    unsafe { libc::kill(pid as libc::pid_t, signal) };
}

fn is_running(pid: u32) -> bool {
    process_info(pid).is_some_and(|p| p.state == b'R')
}

/// Stops the command of `scope`. With `unwind` (bash), the shell is asked to unwind the
/// command (stop file + SIGUSR1) and kept, unless it is busy in a builtin with no process of the
/// command alive (a builtin loop cannot be kept safely). Without it, the shell is frozen
/// (SIGSTOP) so that nothing more of the command runs, and replaced.
async fn stop_command(
    scope: CommandScope,
    unwind: bool,
    stop_file: std::path::PathBuf,
    signal: i32,
) -> Verdict {
    if !can_attribute() {
        return Verdict::Replace;
    }
    if unwind {
        let stuck = || command_processes(&scope).is_empty() && is_running(scope.shell);
        if stuck() {
            tokio::time::sleep(BUSY_PROBE).await;
            if stuck() {
                return Verdict::Replace;
            }
        }
        if std::fs::write(&stop_file, scope.marker()).is_err() {
            send_signal(scope.shell, libc::SIGSTOP);
            end_command_with(&scope, signal, TERM_GRACE).await;
            return Verdict::Replace;
        }
        send_signal(scope.shell, libc::SIGUSR1);
        end_command_with(&scope, signal, TERM_GRACE).await;
        Verdict::AwaitReport
    } else {
        send_signal(scope.shell, libc::SIGSTOP);
        end_command_with(&scope, signal, TERM_GRACE).await;
        Verdict::Replace
    }
}

/// Where the shells' private directories go: a tmpfs when there is one (the per-command files
/// are rewritten on every call), else the temporary directory.
fn private_dir_parent() -> std::path::PathBuf {
    static PARENT: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    PARENT.get_or_init(find_private_dir_parent).clone()
}

fn find_private_dir_parent() -> std::path::PathBuf {
    let candidates = [
        std::env::var_os("XDG_RUNTIME_DIR").map(std::path::PathBuf::from),
        Some(std::path::PathBuf::from("/dev/shm")),
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

/// A connected pair of Unix stream sockets, close-on-exec: agentsh's end and the shell's.
/// A socket rather than a pipe so that writing to a dead shell gives `EPIPE` without raising
/// SIGPIPE in agentsh (`MSG_NOSIGNAL` / `SO_NOSIGPIPE`).
fn socket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    #[cfg(target_os = "linux")]
    let kind = libc::SOCK_STREAM | libc::SOCK_CLOEXEC;
    #[cfg(not(target_os = "linux"))]
    let kind = libc::SOCK_STREAM;
    // SAFETY: `fds` has room for two descriptors.
    if unsafe { libc::socketpair(libc::AF_UNIX, kind, 0, fds.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    let pair = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    #[cfg(not(target_os = "linux"))]
    // SAFETY: fcntl/setsockopt on descriptors we own, with valid option buffers.
    unsafe {
        for fd in [fds[0], fds[1]] {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
        let on: libc::c_int = 1;
        libc::setsockopt(
            fds[0],
            libc::SOL_SOCKET,
            libc::SO_NOSIGPIPE,
            (&raw const on).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
    Ok(pair)
}

fn register_socket(fd: OwnedFd) -> io::Result<AsyncFd<OwnedFd>> {
    let flags = {
        // SAFETY: fcntl on a descriptor we own.
        unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) }
    };
    // SAFETY: as above.
    if flags < 0
        || unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0
    {
        return Err(io::Error::last_os_error());
    }
    crate::fifo::register(fd)
}

/// Sends all of `bytes` (a few dozen; the socket buffer is empty between commands).
fn send_all(fd: RawFd, mut bytes: &[u8]) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    let flags = libc::MSG_NOSIGNAL;
    #[cfg(not(target_os = "linux"))]
    let flags = 0;
    while !bytes.is_empty() {
        // SAFETY: `bytes` is readable for its length.
        let n = unsafe { libc::send(fd, bytes.as_ptr().cast(), bytes.len(), flags) };
        if n < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err);
        }
        bytes = &bytes[n as usize..];
    }
    Ok(())
}
