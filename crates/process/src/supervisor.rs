//! The per-shell supervisor: a small process between agentsh and a shell that owns the shell's
//! whole process tree.
//!
//! ```text
//! agentsh ──fork (spawner thread)──► supervisor ──fork──► child (execve: the shell)
//!    │  control pipe (write end, only in agentsh) ──► EOF = "end everything"
//!    ◄── report pipe: child pid, child wait status
//! ```
//!
//! The supervisor calls `setsid()` (own session, no controlling terminal), becomes a child
//! subreaper (Linux: every orphan of the tree is reparented to it, even after `setsid` or a
//! double fork), forks the child, and then only waits: it reaps every process it adopts (no
//! zombies), reports the child's exit status, and when the control pipe reaches EOF — agentsh
//! closed it, or agentsh died, even by SIGKILL — or when its parent-death signal arrives (or any
//! SIGTERM, SIGHUP or SIGINT), it kills every descendant and exits.
//!
//! Forking happens on one long-lived thread (the *spawner*), so `PR_SET_PDEATHSIG` — which fires
//! when the forking *thread* exits — fires only when agentsh itself is gone. Between `fork()`
//! and `execve()` only raw syscalls on prepared data run (see `sys`). The spawner thread also
//! reaps supervisors that were told to exit.

use std::ffi::{CString, OsStr, OsString, c_char, c_int};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::sync::oneshot;

use crate::sys;

/// The lowest descriptor number a [`SpawnSpec::fds`] entry may use in the child.
pub const MIN_EXTRA_FD: RawFd = 3;
/// The highest descriptor number a [`SpawnSpec::fds`] entry may use in the child.
pub const MAX_EXTRA_FD: RawFd = 9;

/// Where one of the child's standard descriptors (0, 1, 2) comes from.
#[derive(Debug, Default)]
pub enum ChildStdio {
    /// `/dev/null`, opened read-write.
    #[default]
    Null,
    /// This descriptor (it is duplicated into the child; agentsh's copy is closed after the
    /// fork).
    Fd(OwnedFd),
}

/// What the supervisor starts.
#[derive(Debug)]
pub struct SpawnSpec {
    /// The program to execute (not searched on `PATH`; a relative path is taken relative to
    /// the current directory of agentsh).
    pub program: PathBuf,
    /// `argv[0]`.
    pub arg0: OsString,
    /// `argv[1..]`.
    pub args: Vec<OsString>,
    /// The complete environment of the child.
    pub env: Vec<(OsString, OsString)>,
    /// The child's working directory.
    pub cwd: PathBuf,
    /// Standard input, output and error of the child.
    pub stdio: [ChildStdio; 3],
    /// Further descriptors handed to the child at the given numbers
    /// ([`MIN_EXTRA_FD`]`..=`[`MAX_EXTRA_FD`]). Every other descriptor is closed in the child.
    pub fds: Vec<(OwnedFd, RawFd)>,
    /// Start the child in a session of its own with its standard input (a terminal) as its
    /// controlling terminal (the PTY runtime). Without it, the child has no controlling
    /// terminal at all.
    pub controlling_terminal: bool,
    /// A private directory of flat files (no subdirectories) the supervisor empties and
    /// removes when it ends the tree — also when agentsh died and nobody else can.
    pub remove_on_exit: Option<PathBuf>,
}

impl SpawnSpec {
    /// A spec for `program` with `argv[0]` = its file name, no arguments, an empty environment,
    /// `/` as working directory, `/dev/null` as standard descriptors and no extra descriptors.
    pub fn new(program: impl Into<PathBuf>) -> Self {
        let program = program.into();
        let arg0 = program
            .file_name()
            .map_or_else(|| program.as_os_str().to_owned(), OsStr::to_owned);
        Self {
            program,
            arg0,
            args: Vec::new(),
            env: Vec::new(),
            cwd: PathBuf::from("/"),
            stdio: Default::default(),
            fds: Vec::new(),
            controlling_terminal: false,
            remove_on_exit: None,
        }
    }
}

/// Why a supervised child could not be started.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// An argument, environment entry or path contains a NUL byte.
    #[error("cannot start {program}: {what} contains a NUL byte")]
    NulByte {
        /// The program.
        program: String,
        /// Which part (`an argument`, `the environment`, …).
        what: &'static str,
    },
    /// An extra descriptor number outside [`MIN_EXTRA_FD`]`..=`[`MAX_EXTRA_FD`], or given twice.
    #[error("descriptor {0} cannot be handed to a supervised child (allowed: 3..=9, each once)")]
    BadFd(RawFd),
    /// A system call failed before the supervisor existed (pipe, fork, thread start).
    #[error("cannot start a supervisor: {0}")]
    Setup(#[source] io::Error),
    /// The working directory could not be entered.
    #[error("cannot start {program}: working directory {cwd}: {source}")]
    Cwd {
        /// The program.
        program: String,
        /// The directory.
        cwd: String,
        /// The error of `chdir`.
        #[source]
        source: io::Error,
    },
    /// `execve` failed (missing program, not executable, …).
    #[error("cannot start {program}: {source}")]
    Exec {
        /// The program.
        program: String,
        /// The error of `execve`.
        #[source]
        source: io::Error,
    },
    /// The supervisor failed in a step of its own (its fork, descriptor setup, terminal).
    #[error("the supervisor of {program} failed: {step}: {source}")]
    Supervisor {
        /// The program.
        program: String,
        /// The step that failed.
        step: &'static str,
        /// The error.
        #[source]
        source: io::Error,
    },
}

/// How a supervised child ended: its raw `waitpid` status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChildExit(i32);

impl ChildExit {
    /// Wraps a raw `waitpid` status.
    pub fn from_raw(status: i32) -> Self {
        Self(status)
    }

    /// The raw `waitpid` status.
    pub fn into_raw(self) -> i32 {
        self.0
    }

    /// The exit code, when the child exited normally.
    pub fn code(self) -> Option<i32> {
        libc::WIFEXITED(self.0).then(|| libc::WEXITSTATUS(self.0))
    }

    /// The signal that killed the child, when it was killed by one.
    pub fn signal(self) -> Option<i32> {
        libc::WIFSIGNALED(self.0).then(|| libc::WTERMSIG(self.0))
    }

    /// The status as a shell reports it: the exit code, or 128 + the signal number.
    pub fn shell_code(self) -> i32 {
        match (self.code(), self.signal()) {
            (Some(code), _) => code,
            (None, Some(signal)) => 128 + signal,
            (None, None) => 128,
        }
    }
}

/// A running supervisor and its child. Dropping it (or [`Supervisor::shutdown`]) ends the whole
/// process tree: the supervisor kills every descendant and exits.
#[derive(Debug)]
pub struct Supervisor {
    pid: i32,
    child_pid: i32,
    control: Option<OwnedFd>,
    report: AsyncFd<OwnedFd>,
    child_exit: Option<ChildExit>,
    /// The report pipe reached EOF: the supervisor is gone.
    report_closed: bool,
}

// Report records: 8 bytes, `[kind: i32][value: i32]` in native byte order.
const REPORT_CHILD_PID: i32 = 1;
const REPORT_CHILD_EXIT: i32 = 2;

// Error-pipe records: `[stage: u8][errno: i32]`.
const STAGE_SUPERVISOR_FORK: u8 = 1;
const STAGE_SUPERVISOR_FDS: u8 = 2;
const STAGE_CHILD_FDS: u8 = 3;
const STAGE_CHILD_TTY: u8 = 4;
const STAGE_CHILD_CWD: u8 = 5;
const STAGE_CHILD_EXEC: u8 = 6;

// Descriptor layout inside the supervisor.
const SUP_CONTROL: RawFd = 10;
const SUP_REPORT: RawFd = 11;
const SUP_ERROR: RawFd = 12;
const SUP_PAYLOAD: RawFd = 13;

impl Supervisor {
    /// Starts a supervisor and, under it, the child described by `spec`.
    ///
    /// Must be called within a tokio runtime (the report pipe is registered with it).
    pub async fn spawn(spec: SpawnSpec) -> Result<Self, SpawnError> {
        let plan = ForkPlan::new(spec)?;
        let (reply, answer) = oneshot::channel();
        spawner()?
            .send(Request::Spawn(Box::new(plan), reply))
            .map_err(|_| SpawnError::Setup(io::Error::other("the spawner thread is gone")))?;
        let raw = answer
            .await
            .map_err(|_| SpawnError::Setup(io::Error::other("the spawner thread is gone")))??;
        // SAFETY: the OwnedFd owns its descriptor for the whole life of the AsyncFd.
        let report = unsafe { AsyncFd::register_with_interest(raw.report, Interest::READABLE) }
            .map_err(|err| SpawnError::Setup(err.into()))?;
        Ok(Self {
            pid: raw.pid,
            child_pid: raw.child_pid,
            control: Some(raw.control),
            report,
            child_exit: None,
            report_closed: false,
        })
    }

    /// The supervisor's process id.
    pub fn pid(&self) -> u32 {
        self.pid as u32
    }

    /// The child's process id.
    pub fn child_pid(&self) -> u32 {
        self.child_pid as u32
    }

    /// Waits until the child has exited and returns how. Cancel-safe.
    pub async fn wait_child(&mut self) -> io::Result<ChildExit> {
        loop {
            if let Some(exit) = self.child_exit {
                return Ok(exit);
            }
            let mut guard = self.report.readable().await?;
            match guard.try_io(|fd| read_records(fd.get_ref().as_raw_fd())) {
                Ok(Ok(records)) => {
                    self.absorb(&records.items);
                    if records.eof && self.child_exit.is_none() {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "the supervisor exited without reporting its child's status",
                        ));
                    }
                }
                Ok(Err(err)) => return Err(err),
                Err(_would_block) => {}
            }
        }
    }

    /// The child's exit status if it has already been reported, without waiting.
    pub fn try_child_exit(&mut self) -> Option<ChildExit> {
        if self.child_exit.is_none()
            && !self.report_closed
            && let Ok(records) = read_records(self.report.get_ref().as_raw_fd())
        {
            self.absorb(&records.items);
            self.report_closed = records.eof;
        }
        self.child_exit
    }

    /// Whether the child is still running as far as the supervisor has reported: false once
    /// its exit was reported, or once the supervisor itself is gone (killed, or told to end
    /// the tree with SIGTERM).
    pub fn child_running(&mut self) -> bool {
        self.try_child_exit().is_none() && !self.report_closed
    }

    fn absorb(&mut self, items: &[(i32, i32)]) {
        for &(kind, value) in items {
            if kind == REPORT_CHILD_EXIT {
                self.child_exit = Some(ChildExit(value));
            }
        }
    }

    /// Ends the whole tree and waits until the supervisor has exited (every descendant has
    /// been sent SIGKILL and reaped by then, unless one is stuck in the kernel).
    pub async fn shutdown(mut self) {
        self.control = None;
        let (done, wait) = oneshot::channel();
        if let Ok(spawner) = spawner()
            && spawner.send(Request::Reap(self.pid, Some(done))).is_ok()
        {
            self.pid = 0;
            let _ = wait.await;
        }
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        // Closing the control pipe tells the supervisor to end everything and exit.
        self.control = None;
        if self.pid > 0
            && let Ok(spawner) = spawner()
        {
            let _ = spawner.send(Request::Reap(self.pid, None));
        }
    }
}

struct Records {
    items: Vec<(i32, i32)>,
    eof: bool,
}

/// Reads every complete 8-byte record available (the pipe is non-blocking). `WouldBlock` when
/// nothing was available at all.
fn read_records(fd: RawFd) -> io::Result<Records> {
    let mut items = Vec::new();
    let mut buf = [0u8; 8 * 16];
    loop {
        // SAFETY: `buf` is writable for its length.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            let err = io::Error::last_os_error();
            match err.kind() {
                io::ErrorKind::Interrupted => continue,
                io::ErrorKind::WouldBlock if !items.is_empty() => {
                    return Ok(Records { items, eof: false });
                }
                _ => return Err(err),
            }
        }
        if n == 0 {
            return Ok(Records { items, eof: true });
        }
        // Writes of 8 bytes to a pipe are atomic and reads are whole multiples of 8.
        for record in buf[..n as usize].chunks_exact(8) {
            let kind = i32::from_ne_bytes([record[0], record[1], record[2], record[3]]);
            let value = i32::from_ne_bytes([record[4], record[5], record[6], record[7]]);
            items.push((kind, value));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Preparation (in agentsh, before the fork)

/// Everything the forked processes need, prepared before `fork()`.
struct ForkPlan {
    program: CString,
    program_name: String,
    argv: Vec<CString>,
    envp: Vec<CString>,
    cwd: CString,
    cwd_name: String,
    /// Standard descriptors: `None` = `/dev/null`.
    stdio: [Option<OwnedFd>; 3],
    extras: Vec<(OwnedFd, RawFd)>,
    controlling_terminal: bool,
    remove_on_exit: Option<CString>,
}

fn cstring(bytes: &[u8], program: &str, what: &'static str) -> Result<CString, SpawnError> {
    CString::new(bytes).map_err(|_| SpawnError::NulByte {
        program: program.to_owned(),
        what,
    })
}

impl ForkPlan {
    fn new(spec: SpawnSpec) -> Result<Self, SpawnError> {
        let program_name = spec.program.display().to_string();
        let program_path = if spec.program.is_relative() && spec.program.components().count() > 1 {
            std::env::current_dir()
                .map_or_else(|_| spec.program.clone(), |dir| dir.join(&spec.program))
        } else {
            spec.program.clone()
        };
        let program = cstring(
            program_path.as_os_str().as_bytes(),
            &program_name,
            "the program path",
        )?;
        let mut argv = vec![cstring(spec.arg0.as_bytes(), &program_name, "argv[0]")?];
        for arg in &spec.args {
            argv.push(cstring(arg.as_bytes(), &program_name, "an argument")?);
        }
        let mut envp = Vec::with_capacity(spec.env.len());
        for (name, value) in &spec.env {
            let mut entry = Vec::with_capacity(name.len() + value.len() + 1);
            entry.extend_from_slice(name.as_bytes());
            entry.push(b'=');
            entry.extend_from_slice(value.as_bytes());
            envp.push(cstring(&entry, &program_name, "the environment")?);
        }
        let cwd = cstring(
            spec.cwd.as_os_str().as_bytes(),
            &program_name,
            "the working directory",
        )?;
        let mut seen = [false; 10];
        for &(_, target) in &spec.fds {
            let slot = usize::try_from(target)
                .ok()
                .filter(|&t| (MIN_EXTRA_FD as usize..=MAX_EXTRA_FD as usize).contains(&t));
            match slot {
                Some(slot) if !seen[slot] => seen[slot] = true,
                _ => return Err(SpawnError::BadFd(target)),
            }
        }
        let remove_on_exit = spec
            .remove_on_exit
            .as_ref()
            .map(|dir| {
                cstring(
                    dir.as_os_str().as_bytes(),
                    &program_name,
                    "the directory to remove",
                )
            })
            .transpose()?;
        let [a, b, c] = spec.stdio;
        let take = |s: ChildStdio| match s {
            ChildStdio::Null => None,
            ChildStdio::Fd(fd) => Some(fd),
        };
        Ok(Self {
            program,
            program_name,
            argv,
            envp,
            cwd,
            cwd_name: spec.cwd.display().to_string(),
            stdio: [take(a), take(b), take(c)],
            extras: spec.fds,
            controlling_terminal: spec.controlling_terminal,
            remove_on_exit,
        })
    }
}

/// The raw data the forked code reads: plain descriptor numbers and pointers into the plan.
struct ChildView<'a> {
    plan: &'a ForkPlan,
    argv: &'a [*const c_char],
    envp: &'a [*const c_char],
    /// Descriptor numbers in agentsh (valid in the fork) of control, report, error, then the
    /// payload: stdio descriptors that are `Some`, then the extras.
    wanted: &'a [RawFd],
    parent: libc::pid_t,
}

struct SpawnedRaw {
    pid: i32,
    child_pid: i32,
    control: OwnedFd,
    report: OwnedFd,
}

enum Request {
    Spawn(
        Box<ForkPlan>,
        oneshot::Sender<Result<SpawnedRaw, SpawnError>>,
    ),
    Reap(i32, Option<oneshot::Sender<()>>),
}

fn spawner() -> Result<&'static mpsc::Sender<Request>, SpawnError> {
    static SPAWNER: OnceLock<mpsc::Sender<Request>> = OnceLock::new();
    if let Some(sender) = SPAWNER.get() {
        return Ok(sender);
    }
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("agentsh-spawner".into())
        .spawn(move || spawner_loop(&rx))
        .map_err(SpawnError::Setup)?;
    // Two first callers at once: one sender is kept, the other thread sees its channel close.
    Ok(SPAWNER.get_or_init(|| tx))
}

/// The spawner thread: forks supervisors (so their parent-death signal is tied to a thread
/// that lives as long as agentsh) and reaps the ones that were told to exit.
fn spawner_loop(requests: &mpsc::Receiver<Request>) {
    let mut pending: Vec<(i32, Option<oneshot::Sender<()>>)> = Vec::new();
    loop {
        let request = if pending.is_empty() {
            match requests.recv() {
                Ok(request) => Some(request),
                Err(_) => return,
            }
        } else {
            match requests.recv_timeout(Duration::from_millis(5)) {
                Ok(request) => Some(request),
                Err(mpsc::RecvTimeoutError::Timeout) => None,
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
        };
        match request {
            Some(Request::Spawn(plan, reply)) => {
                let result = fork_supervisor(&plan);
                if let Err(Some(pid)) = result.as_ref().map_err(|(_, pid)| *pid) {
                    pending.push((pid, None));
                }
                let _ = reply.send(result.map_err(|(err, _)| err));
            }
            Some(Request::Reap(pid, done)) => pending.push((pid, done)),
            None => {}
        }
        pending.retain_mut(|(pid, done)| {
            let mut status = 0;
            // SAFETY: waitpid on our own child; `status` is a valid out-pointer.
            let r = unsafe { libc::waitpid(*pid, &raw mut status, libc::WNOHANG) };
            if r == 0 {
                return true;
            }
            if let Some(done) = done.take() {
                let _ = done.send(());
            }
            false
        });
    }
}

fn pipe_cloexec() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as c_int; 2];
    #[cfg(target_os = "linux")]
    // SAFETY: `fds` has room for two descriptors.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    #[cfg(not(target_os = "linux"))]
    // SAFETY: `fds` has room for two descriptors.
    let rc = unsafe {
        let rc = libc::pipe(fds.as_mut_ptr());
        if rc == 0 {
            sys::set_cloexec(fds[0]);
            sys::set_cloexec(fds[1]);
        }
        rc
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Reads until EOF or `buf` is full, retrying on EINTR; returns the number of bytes read.
fn read_full_blocking(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        // SAFETY: the slice after `got` is writable.
        let n = unsafe { libc::read(fd, buf[got..].as_mut_ptr().cast(), buf.len() - got) };
        if n < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err);
        }
        if n == 0 {
            break;
        }
        got += n as usize;
    }
    Ok(got)
}

/// Forks the supervisor. On error, the supervisor's pid (if it was forked) comes back too so
/// that it can be reaped.
fn fork_supervisor(plan: &ForkPlan) -> Result<SpawnedRaw, (SpawnError, Option<i32>)> {
    let setup = |err| (SpawnError::Setup(err), None);
    let (control_r, control_w) = pipe_cloexec().map_err(setup)?;
    let (report_r, report_w) = pipe_cloexec().map_err(setup)?;
    let (error_r, error_w) = pipe_cloexec().map_err(setup)?;

    let argv: Vec<*const c_char> = plan
        .argv
        .iter()
        .map(|arg| arg.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect();
    let envp: Vec<*const c_char> = plan
        .envp
        .iter()
        .map(|entry| entry.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect();
    let mut wanted = vec![
        control_r.as_raw_fd(),
        report_w.as_raw_fd(),
        error_w.as_raw_fd(),
    ];
    wanted.extend(plan.stdio.iter().flatten().map(AsRawFd::as_raw_fd));
    wanted.extend(plan.extras.iter().map(|(fd, _)| fd.as_raw_fd()));
    let view = ChildView {
        plan,
        argv: &argv,
        envp: &envp,
        wanted: &wanted,
        // SAFETY: getpid has no preconditions.
        parent: unsafe { libc::getpid() },
    };

    // SAFETY: the child runs only `supervisor_main`, which uses raw syscalls on prepared data
    // and never returns.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(setup(io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: we are the freshly forked child.
        unsafe { supervisor_main(&view) }
    }
    drop((control_r, report_w, error_w));

    let mut err_buf = [0u8; 5];
    let got = read_full_blocking(error_r.as_raw_fd(), &mut err_buf)
        .map_err(|err| (SpawnError::Setup(err), Some(pid)))?;
    if got == 5 {
        let errno = i32::from_ne_bytes([err_buf[1], err_buf[2], err_buf[3], err_buf[4]]);
        let source = io::Error::from_raw_os_error(errno);
        let program = plan.program_name.clone();
        let err = match err_buf[0] {
            STAGE_CHILD_EXEC => SpawnError::Exec { program, source },
            STAGE_CHILD_CWD => SpawnError::Cwd {
                program,
                cwd: plan.cwd_name.clone(),
                source,
            },
            stage => SpawnError::Supervisor {
                program,
                step: match stage {
                    STAGE_SUPERVISOR_FORK => "fork",
                    STAGE_SUPERVISOR_FDS => "descriptor setup",
                    STAGE_CHILD_FDS => "descriptor setup of the child",
                    STAGE_CHILD_TTY => "controlling terminal",
                    _ => "unknown step",
                },
                source,
            },
        };
        return Err((err, Some(pid)));
    }
    let mut pid_record = [0u8; 8];
    let got = read_full_blocking(report_r.as_raw_fd(), &mut pid_record)
        .map_err(|err| (SpawnError::Setup(err), Some(pid)))?;
    let kind = i32::from_ne_bytes([pid_record[0], pid_record[1], pid_record[2], pid_record[3]]);
    if got != 8 || kind != REPORT_CHILD_PID {
        return Err((
            SpawnError::Setup(io::Error::other("the supervisor exited during start-up")),
            Some(pid),
        ));
    }
    let child_pid =
        i32::from_ne_bytes([pid_record[4], pid_record[5], pid_record[6], pid_record[7]]);
    set_nonblocking(report_r.as_raw_fd()).map_err(|err| (SpawnError::Setup(err), Some(pid)))?;
    Ok(SpawnedRaw {
        pid,
        child_pid,
        control: control_w,
        report: report_r,
    })
}

// ---------------------------------------------------------------------------------------------
// The forked processes. Nothing below may allocate, lock, or touch std's global state.

/// The write end of the supervisor's self-pipe, for its signal handler.
static SIGNAL_PIPE: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(signal: c_int) {
    let saved = sys::errno();
    let byte = signal as u8;
    let fd = SIGNAL_PIPE.load(Ordering::Relaxed);
    // SAFETY: write(2) is async-signal-safe; `byte` is a valid one-byte buffer.
    unsafe { libc::write(fd, (&raw const byte).cast(), 1) };
    set_errno(saved);
}

fn set_errno(value: c_int) {
    // SAFETY: the errno location is thread-local and always valid.
    unsafe {
        #[cfg(target_os = "linux")]
        {
            *libc::__errno_location() = value;
        }
        #[cfg(any(target_os = "macos", target_os = "ios", target_os = "freebsd"))]
        {
            *libc::__error() = value;
        }
    }
}

fn report_error(fd: RawFd, stage: u8, errno: c_int) {
    let e = errno.to_ne_bytes();
    sys::write_all_raw(fd, &[stage, e[0], e[1], e[2], e[3]]);
}

fn write_record(fd: RawFd, kind: i32, value: i32) {
    let k = kind.to_ne_bytes();
    let v = value.to_ne_bytes();
    sys::write_all_raw(fd, &[k[0], k[1], k[2], k[3], v[0], v[1], v[2], v[3]]);
}

/// Every catchable signal back to its default action, nothing blocked.
unsafe fn reset_signals() {
    // SAFETY: plain signal-disposition syscalls on valid arguments.
    unsafe {
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &raw const empty, std::ptr::null_mut());
        for signal in 1..32 {
            if signal != libc::SIGKILL && signal != libc::SIGSTOP {
                libc::signal(signal, libc::SIG_DFL);
            }
        }
    }
}

unsafe fn install_handler(signal: c_int) {
    // SAFETY: `action` is fully initialised; `on_signal` is async-signal-safe.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal as *const () as usize;
        action.sa_flags = libc::SA_RESTART
            | if signal == libc::SIGCHLD {
                libc::SA_NOCLDSTOP
            } else {
                0
            };
        libc::sigemptyset(&raw mut action.sa_mask);
        libc::sigaction(signal, &raw const action, std::ptr::null_mut());
    }
}

/// The supervisor. Never returns.
unsafe fn supervisor_main(view: &ChildView<'_>) -> ! {
    // SAFETY: raw syscalls only, on descriptors and buffers prepared before the fork.
    unsafe {
        libc::setsid();
        #[cfg(target_os = "linux")]
        {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM, 0, 0, 0);
            if libc::getppid() != view.parent {
                // agentsh died between fork and prctl: nothing to supervise.
                libc::_exit(0);
            }
        }
        reset_signals();
        // Writing a report after agentsh died must not kill us before we clean up.
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);

        // Move the descriptors we need to a fixed layout: 10 control, 11 report, 12 error,
        // 13.. payload. First above everything (so no move overwrites a source), then down.
        let count = view.wanted.len() as RawFd;
        let highest = view.wanted.iter().copied().max().unwrap_or(0);
        let above = (highest + 1).max(SUP_CONTROL + count);
        let mut temp = [0 as RawFd; 16];
        if view.wanted.len() > temp.len() {
            report_error(view.wanted[2], STAGE_SUPERVISOR_FDS, libc::EMFILE);
            libc::_exit(126);
        }
        for (i, &fd) in view.wanted.iter().enumerate() {
            let copy = libc::fcntl(fd, libc::F_DUPFD, above);
            if copy < 0 {
                report_error(view.wanted[2], STAGE_SUPERVISOR_FDS, sys::errno());
                libc::_exit(126);
            }
            temp[i] = copy;
        }
        for (i, &copy) in temp[..view.wanted.len()].iter().enumerate() {
            libc::dup2(copy, SUP_CONTROL + i as RawFd);
        }
        sys::close_from(SUP_CONTROL + count);
        for fd in 3..SUP_CONTROL {
            libc::close(fd);
        }
        // Our own standard descriptors must not keep agentsh's terminal or pipes open.
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            for fd in 0..3 {
                libc::dup2(null, fd);
            }
            if null > 2 {
                libc::close(null);
            }
        }
        for fd in SUP_CONTROL..SUP_CONTROL + count {
            sys::set_cloexec(fd);
        }

        // Self-pipe for signals: the handler writes the signal number, poll wakes up.
        let mut sp = [0 as c_int; 2];
        if libc::pipe(sp.as_mut_ptr()) != 0 {
            report_error(SUP_ERROR, STAGE_SUPERVISOR_FDS, sys::errno());
            libc::_exit(126);
        }
        for &fd in &sp {
            sys::set_cloexec(fd);
            let flags = libc::fcntl(fd, libc::F_GETFL);
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
        SIGNAL_PIPE.store(sp[1], Ordering::Relaxed);
        for signal in [libc::SIGCHLD, libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
            install_handler(signal);
        }

        let child = libc::fork();
        if child < 0 {
            report_error(SUP_ERROR, STAGE_SUPERVISOR_FORK, sys::errno());
            libc::_exit(126);
        }
        if child == 0 {
            child_main(view, sp);
        }
        write_record(SUP_REPORT, REPORT_CHILD_PID, child);
        libc::close(SUP_ERROR);
        sys::close_from(SUP_PAYLOAD);
        // The payload range is gone; the self-pipe lives below SUP_CONTROL (3 and 4).

        let mut fds = [
            libc::pollfd {
                fd: SUP_CONTROL,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: sp[0],
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        loop {
            let rc = libc::poll(fds.as_mut_ptr(), 2, -1);
            let mut end = false;
            if rc < 0 && sys::errno() != libc::EINTR {
                end = true;
            }
            let mut signals = [0u8; 64];
            loop {
                let n = libc::read(sp[0], signals.as_mut_ptr().cast(), signals.len());
                if n <= 0 {
                    break;
                }
                for &s in &signals[..n as usize] {
                    if c_int::from(s) != libc::SIGCHLD {
                        end = true;
                    }
                }
            }
            reap(child);
            if fds[0].revents != 0 {
                end = true;
            }
            if end {
                kill_everything(child);
                if let Some(dir) = &view.plan.remove_on_exit {
                    sys::remove_flat_dir(dir);
                }
                libc::_exit(0);
            }
        }
    }
}

/// Reaps every exited child; reports the supervised child's status. Returns whether children
/// are left (false once `waitpid` says there is none: `ECHILD`).
unsafe fn reap(child: libc::pid_t) -> bool {
    loop {
        let mut status = 0;
        // SAFETY: `status` is a valid out-pointer.
        let pid = unsafe { libc::waitpid(-1, &raw mut status, libc::WNOHANG) };
        if pid <= 0 {
            return pid == 0;
        }
        if pid == child {
            write_record(SUP_REPORT, REPORT_CHILD_EXIT, status);
        }
    }
}

/// Sleeps `nanos` nanoseconds (less than a second).
#[cfg(target_os = "linux")]
fn nap(nanos: libc::c_long) {
    let pause = libc::timespec {
        tv_sec: 0,
        tv_nsec: nanos,
    };
    // SAFETY: `pause` is a valid timespec; no remainder is asked for.
    unsafe { libc::nanosleep(&raw const pause, std::ptr::null_mut()) };
}

/// Kills every descendant (stopping them first so that none can fork during the sweep) and
/// reaps them, until none is left or about two seconds have passed.
///
/// The child goes first, without a scan: as a subreaper we adopt whatever it leaves, so every
/// remaining descendant has one of our children as its ancestor, and a supervisor without
/// children has no descendants at all. That is the usual end (an idle shell with no background
/// jobs), and it then costs no `/proc` scan — which reads every process's `stat`, often several
/// times, and was most of the CPU time of a short `agentsh exec`.
#[cfg(target_os = "linux")]
unsafe fn kill_everything(child: libc::pid_t) {
    // SAFETY: raw syscalls only.
    unsafe {
        libc::kill(child, libc::SIGKILL);
        // A SIGKILLed process can take a moment to die (or stay in uninterruptible sleep):
        // wait for it a bounded time, then leave it to the sweep.
        for _ in 0..2000 {
            let mut status = 0;
            let r = libc::waitpid(child, &raw mut status, libc::WNOHANG);
            if r == child {
                write_record(SUP_REPORT, REPORT_CHILD_EXIT, status);
                break;
            }
            if r < 0 {
                break; // Already reaped.
            }
            nap(100_000);
        }
        if !reap(child) {
            return; // No child, hence no descendant, is left.
        }
        // Something still runs: sweep.
        let me = libc::getpid() as u64;
        for round in 0..2000 {
            let mut found = 0u32;
            sys::for_each_pid(|pid| {
                if pid != me && sys::is_live_descendant(pid, me) {
                    libc::kill(pid as libc::pid_t, libc::SIGSTOP);
                    found += 1;
                }
            });
            sys::for_each_pid(|pid| {
                if pid != me && sys::is_live_descendant(pid, me) {
                    libc::kill(pid as libc::pid_t, libc::SIGKILL);
                }
            });
            let children_left = reap(child);
            if found == 0 && !children_left {
                return; // Nothing left at all.
            }
            if round > 0 {
                nap(1_000_000);
            }
        }
    }
}

/// Without `/proc` and a subreaper, the reach is the supervisor's process group (the session it
/// created): processes that moved to another group or session are not found.
#[cfg(not(target_os = "linux"))]
unsafe fn kill_everything(child: libc::pid_t) {
    // SAFETY: raw syscalls only.
    unsafe {
        libc::kill(child, libc::SIGKILL);
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
        libc::kill(0, libc::SIGKILL);
    }
}

/// The supervised child. Never returns.
unsafe fn child_main(view: &ChildView<'_>, self_pipe: [c_int; 2]) -> ! {
    // SAFETY: raw syscalls only, on descriptors and buffers prepared before the fork.
    unsafe {
        reset_signals();
        libc::close(self_pipe[0]);
        libc::close(self_pipe[1]);
        let plan = view.plan;
        if plan.controlling_terminal && libc::setsid() < 0 {
            report_error(SUP_ERROR, STAGE_CHILD_TTY, sys::errno());
            libc::_exit(127);
        }
        // Payload descriptors sit at SUP_PAYLOAD.. in the order: stdio (Some), extras.
        let mut next = SUP_PAYLOAD;
        for (target, slot) in plan.stdio.iter().enumerate() {
            let source = if slot.is_some() {
                let fd = next;
                next += 1;
                fd
            } else {
                libc::open(c"/dev/null".as_ptr(), libc::O_RDWR)
            };
            if source < 0 || libc::dup2(source, target as RawFd) < 0 {
                report_error(SUP_ERROR, STAGE_CHILD_FDS, sys::errno());
                libc::_exit(127);
            }
            if slot.is_none() && source != target as RawFd {
                libc::close(source);
            }
        }
        let mut used = [false; 10];
        for (_, target) in &plan.extras {
            if libc::dup2(next, *target) < 0 {
                report_error(SUP_ERROR, STAGE_CHILD_FDS, sys::errno());
                libc::_exit(127);
            }
            used[*target as usize] = true;
            next += 1;
        }
        for fd in 3..SUP_CONTROL {
            if !used[fd as usize] {
                libc::close(fd);
            }
        }
        libc::close(SUP_CONTROL);
        libc::close(SUP_REPORT);
        sys::close_from(SUP_PAYLOAD);
        sys::set_cloexec(SUP_ERROR);
        if plan.controlling_terminal {
            #[allow(clippy::useless_conversion)]
            if libc::ioctl(0, libc::TIOCSCTTY.into(), 0) < 0 {
                report_error(SUP_ERROR, STAGE_CHILD_TTY, sys::errno());
                libc::_exit(127);
            }
        }
        if libc::chdir(plan.cwd.as_ptr()) != 0 {
            report_error(SUP_ERROR, STAGE_CHILD_CWD, sys::errno());
            libc::_exit(127);
        }
        libc::execve(
            plan.program.as_ptr(),
            view.argv.as_ptr(),
            view.envp.as_ptr(),
        );
        report_error(SUP_ERROR, STAGE_CHILD_EXEC, sys::errno());
        libc::_exit(127);
    }
}
