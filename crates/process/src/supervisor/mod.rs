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
//! The code is split along the `fork`:
//!
//! - this module: the API ([`Supervisor`], [`SpawnSpec`], [`ChildStdio`], [`ChildExit`],
//!   [`SpawnError`]) and the reading of the supervisor's reports;
//! - `plan`: the preparation in agentsh (`ForkPlan`: the spec as plain C data, and the
//!   `ChildView` of it the forked code reads);
//! - `spawner`: the fork, and reading how the start-up went;
//! - `thread`: the spawner thread that forks supervisors, watches every one until it is gone
//!   and then ends what it left (its cgroup, or what agentsh adopted as subreaper), however
//!   it died;
//! - `blocking`: a supervisor driven without a runtime (`BlockingSupervisor`, for the rc
//!   snapshot's shell);
//! - `confine`: the sandbox steps of the child after the fork (same rule as `forked`);
//! - `forked`: everything that runs after the fork — the supervisor, the child until its
//!   `execve`, the kill sweep — under the rule written at its top (only raw system calls on
//!   data prepared beforehand);
//! - `remove`: removing directories after the fork (the shell's private directory, and the
//!   session's temp dir once agentsh is gone), same rule as `forked`;
//! - `raw`: raw system-call helpers of the forked code (sending a descriptor, writing a file);
//! - `temp_fs`: making the tmpfs of a size-limited sandbox temp dir (a short-lived fork, same
//!   rule as `forked`);
//! - `report`: what the forked processes report and how (the report records, the start-up
//!   [`Stage`](report::Stage)s, the descriptor layout, the raw writes), shared by `forked`,
//!   `confine` and the reading side.
//!
//! Containment (cgroups, namespaces, Landlock, seccomp) has one place on each side: prepared
//! in `ForkPlan::new`, entered in the marked containment stage of the supervisor (before it
//! forks the child) and of the child (before `chdir` and `execve`), described in `forked`.
//! The cgroup per tree (`crate::containment`) is what holds the tree when the supervisor
//! itself is killed.

mod blocking;
#[cfg(target_os = "linux")]
mod confine;
mod forked;
mod plan;
#[cfg(target_os = "linux")]
mod raw;
mod remove;
mod report;
mod spawner;
#[cfg(target_os = "linux")]
pub(crate) mod temp_fs;
mod thread;

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::sync::oneshot;

use crate::kill::EndReport;
use crate::sandbox::{Kernel, NetworkLink, SandboxError, SandboxSpec};
pub use blocking::BlockingSupervisor;
use plan::ForkPlan;
use report::REPORT_CHILD_EXIT;
use spawner::SpawnedRaw;
use thread::{Request, spawner};

/// The lowest descriptor number a [`SpawnSpec::fds`] entry may use in the child.
pub(crate) const MIN_EXTRA_FD: RawFd = 3;
/// The highest descriptor number a [`SpawnSpec::fds`] entry may use in the child.
pub(crate) const MAX_EXTRA_FD: RawFd = 9;

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
    /// Further descriptors handed to the child at the given numbers (3`..=`9,
    /// each once). Every other descriptor is closed in the child.
    pub fds: Vec<(OwnedFd, RawFd)>,
    /// Start the child in a session of its own with its standard input (a terminal) as its
    /// controlling terminal (the PTY runtime). Without it, the child has no controlling
    /// terminal at all. With [`SpawnSpec::sandbox`] the child runs on a copy of that terminal
    /// made inside its sandbox: see [`Supervisor::take_terminal`].
    pub controlling_terminal: bool,
    /// A private directory the supervisor empties (into subdirectories, 16 levels deep) and
    /// removes when it ends the tree — also when agentsh died and nobody else can. The mark
    /// of an [`OwnedDir`](crate::OwnedDir) in it goes last, once nothing else is left.
    pub remove_on_exit: Option<PathBuf>,
    /// Confine the child and everything it starts before its `execve`: a user and a mount
    /// namespace (the policy's read-only paths bound read-only, a private `devpts` instance
    /// at `/dev/pts`), Landlock (writable: the policy's roots,
    /// [`SpawnSpec::remove_on_exit`], `/dev/null`, `/dev/tty`, `/dev/pts`, `/dev/ptmx`),
    /// `no_new_privs`, and unless the network is on a network namespace with loopback only
    /// plus a seccomp filter on `socket(AF_UNIX, …)` (with an allowlist, the proxy's listener
    /// in it: [`Supervisor::network_link`]). The supervisor stays outside. What the kernel cannot enforce is
    /// [`SpawnError::Sandbox`], and nothing runs.
    pub sandbox: Option<SandboxSpec>,
    /// The kernel to assume instead of probing the running one: a test seam to see what a
    /// weaker kernel gets (the sandbox is still only what the running kernel can enforce).
    #[doc(hidden)]
    pub sandbox_kernel: Option<Kernel>,
    /// Backstops of resource limits, set on the child before its `execve` and inherited by
    /// everything it starts (see [`Backstops`]).
    pub backstops: Backstops,
    /// Cgroups the child joins before its `execve`, after the tree's own cgroup and before
    /// the sandbox, so that everything it starts is born inside: the command cgroup of a
    /// tree's resource limits, by the files that move their writer
    /// ([`CommandCgroup::self_join_files`](crate::CommandCgroup::self_join_files): on cgroup
    /// v1 each hierarchy's `tasks`, which spares the kernel's wait for an RCU grace period
    /// that moving the process from outside costs, about 10 ms on a busy machine). A join that
    /// fails is [`SpawnError::Supervisor`], and nothing runs.
    pub join_cgroups: Vec<PathBuf>,
}

/// Resource limits (rlimits) a supervised child and its descendants get, backstops of the
/// limits a watchdog or a cgroup enforces on a whole tree: each counts per process (or per
/// user), so none of them alone bounds a tree.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Backstops {
    /// `RLIMIT_DATA`, bytes: a process's heap and private writable mappings stop growing there
    /// (address-space reservations, as WASM runtimes, the JVM and Go make, are left alone).
    pub data_bytes: Option<u64>,
    /// `RLIMIT_NPROC`, set only inside the sandbox's user namespace and only when the child's
    /// uid is not 0 there: in a user namespace of its own (Linux 5.14 or later) it counts the
    /// tree's tasks rather than the user's, and the kernel exempts uid 0.
    pub sandboxed_tasks: Option<u64>,
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
            sandbox: None,
            sandbox_kernel: None,
            backstops: Backstops::default(),
            join_cgroups: Vec::new(),
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
    /// An extra descriptor number outside 3`..=`9, or given twice.
    #[error("descriptor {0} cannot be handed to a supervised child (allowed: 3..=9, each once)")]
    BadFd(RawFd),
    /// A system call failed before the supervisor existed (pipe, fork, thread start).
    #[error("cannot start a supervisor: {0}")]
    Setup(io::Error),
    /// The working directory could not be entered.
    #[error("cannot start {program}: working directory {cwd}: {error}")]
    Cwd {
        /// The program.
        program: String,
        /// The directory.
        cwd: String,
        /// The error of `chdir` (part of the message).
        error: io::Error,
    },
    /// `execve` failed (missing program, not executable, …).
    #[error("cannot start {program}: {error}")]
    Exec {
        /// The program.
        program: String,
        /// The error of `execve` (part of the message).
        error: io::Error,
    },
    /// The sandbox cannot be had (the kernel cannot enforce it, or confining the child failed):
    /// the program did not run.
    #[error(transparent)]
    Sandbox(SandboxError),
    /// The supervisor failed in a step of its own (its fork, descriptor setup, terminal).
    #[error("the supervisor of {program} failed: {step}: {error}")]
    Supervisor {
        /// The program.
        program: String,
        /// The step that failed.
        step: &'static str,
        /// The error (part of the message).
        error: io::Error,
    },
}

impl From<SandboxError> for SpawnError {
    fn from(err: SandboxError) -> Self {
        Self::Sandbox(err)
    }
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
    /// The spawner thread's name for it; 0 once released.
    id: u64,
    pid: i32,
    child_pid: i32,
    control: Option<OwnedFd>,
    report: AsyncFd<OwnedFd>,
    child_exit: Option<ChildExit>,
    /// The report pipe reached EOF: the supervisor is gone.
    report_closed: bool,
    /// The master of the terminal the sandboxed child made for itself.
    terminal: Option<OwnedFd>,
    /// With a network allowlist: the link of the child's namespace to the proxy (dropped with
    /// the supervisor, which ends the proxy's accepting for it).
    network: Option<NetworkLinkBox>,
}

/// A namespace's link to the proxy, printable.
struct NetworkLinkBox(Box<dyn NetworkLink>);

impl std::fmt::Debug for NetworkLinkBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NetworkLink")
    }
}

impl Supervisor {
    /// Starts a supervisor and, under it, the child described by `spec`.
    ///
    /// Must be called within a tokio runtime (the report pipe is registered with it).
    pub async fn spawn(spec: SpawnSpec) -> Result<Self, SpawnError> {
        let server = spec
            .sandbox
            .as_ref()
            .and_then(|sandbox| sandbox.network.proxy())
            .map(|proxy| Arc::clone(&proxy.server));
        let plan = ForkPlan::new(spec)?;
        let (reply, answer) = oneshot::channel();
        spawner()?.send(Request::Spawn(
            Box::new(plan),
            Box::new(move |result| {
                // The caller gave up waiting: its supervisor ends (the control pipe closes
                // with `raw`) and must still be reaped.
                if let Err(Ok(raw)) = reply.send(result) {
                    end_orderly(&mut Some(raw.control));
                    release(raw.id, Box::new(|()| {}));
                }
            }),
        ))?;
        let raw: SpawnedRaw = answer
            .await
            .map_err(|_| SpawnError::Setup(io::Error::other("the spawner thread is gone")))??;
        // SAFETY: the OwnedFd owns its descriptor for the whole life of the AsyncFd.
        let report = unsafe { AsyncFd::register_with_interest(raw.report, Interest::READABLE) }
            .map_err(|err| SpawnError::Setup(err.into()))?;
        Ok(Self {
            id: raw.id,
            pid: raw.pid,
            child_pid: raw.child_pid,
            control: Some(raw.control),
            report,
            child_exit: None,
            report_closed: false,
            terminal: raw.terminal,
            network: server
                .zip(raw.listener)
                .map(|(server, listener)| NetworkLinkBox(server.attach(listener.into()))),
        })
    }

    /// The link of the child's network namespace to the proxy of a network allowlist
    /// ([`SandboxNetwork::Allowlist`](crate::sandbox::SandboxNetwork)): what the proxy refused
    /// for the tree's connections. `None` without one.
    pub fn network_link(&self) -> Option<&dyn NetworkLink> {
        self.network.as_ref().map(|link| &*link.0)
    }

    /// The master side of the child's terminal when the sandbox made it anew, once (`None`
    /// afterwards, and always without a sandbox or [`SpawnSpec::controlling_terminal`]).
    ///
    /// A sandboxed child gets a private `devpts` instance at `/dev/pts` (no other terminal of
    /// the machine can be opened from inside), where the terminal it was handed has no name:
    /// so it runs on a PTY of that instance instead, with the modes and size of the one it was
    /// handed, on every standard descriptor that was that one. Its input and output go through
    /// this master (close-on-exec, blocking); the handed terminal's master sees none of it.
    pub fn take_terminal(&mut self) -> Option<OwnedFd> {
        self.terminal.take()
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
            match guard.try_io(|fd| read_records(fd.get_ref())) {
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
            && let Ok(records) = read_records(self.report.get_ref())
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

    /// Ends the child and every other process below the supervisor — including the ones it
    /// adopted as subreaper, which [`kill_tree`](crate::kill_tree) on the child would not
    /// find — with the tree-kill loop of [`kill_tree`](crate::kill_tree): SIGSTOP,
    /// SIGTERM + SIGCONT, up to `grace`, then SIGKILL until none is left. The supervisor
    /// itself stays; [`Supervisor::shutdown`] ends it.
    pub async fn kill_tree(&self, grace: Duration) -> EndReport {
        crate::kill::kill_below(self.pid(), grace).await
    }

    /// Ends the whole tree and waits until the supervisor has exited and its tree is gone
    /// (every descendant has been sent SIGKILL and reaped by then, unless one is stuck in the
    /// kernel). Also when the supervisor was killed: its cgroup is killed then (or, without
    /// cgroups, what agentsh adopted from it).
    pub async fn shutdown(mut self) {
        end_orderly(&mut self.control);
        let (done, wait) = oneshot::channel();
        let done: thread::Reply<()> = Box::new(move |()| {
            let _ = done.send(());
        });
        if release(self.id, done) {
            self.id = 0;
            let _ = wait.await;
        }
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        // Closing the control pipe tells the supervisor to end everything and exit; the
        // spawner thread cleans up after it once it is gone, and then reaps it.
        end_orderly(&mut self.control);
        if self.id > 0 {
            release(self.id, Box::new(|()| {}));
        }
    }
}

/// Closes a supervisor's control pipe, which tells it to end its tree, after the byte that
/// says agentsh itself asks (and lives on: see [`report::ORDERLY_END`]).
pub(super) fn end_orderly(control: &mut Option<OwnedFd>) {
    if let Some(control) = control.take() {
        // One byte into a pipe nobody else writes: it never blocks.
        let _ = rustix::io::write(&control, &[report::ORDERLY_END]);
    }
}

/// Tells the spawner thread that the supervisor `id` has no handle any more; `done` runs once
/// it has exited and its tree is gone. False when the spawner thread is gone.
fn release(id: u64, done: thread::Reply<()>) -> bool {
    spawner().is_ok_and(|spawner| spawner.send(Request::Release(id, done)).is_ok())
}

pub(crate) struct Records {
    pub(crate) items: Vec<(i32, i32)>,
    pub(crate) eof: bool,
}

/// Reads every complete 8-byte record available (the pipe is non-blocking). `WouldBlock` when
/// nothing was available at all.
pub(crate) fn read_records(fd: impl AsFd) -> io::Result<Records> {
    let mut items = Vec::new();
    let mut buf = [0u8; 8 * 16];
    loop {
        let n = match rustix::io::read(&fd, &mut buf) {
            Ok(n) => n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(rustix::io::Errno::AGAIN) if !items.is_empty() => {
                return Ok(Records { items, eof: false });
            }
            Err(err) => return Err(err.into()),
        };
        if n == 0 {
            return Ok(Records { items, eof: true });
        }
        // Writes of 8 bytes to a pipe are atomic and reads are whole multiples of 8.
        for record in buf[..n].chunks_exact(8) {
            let kind = i32::from_ne_bytes([record[0], record[1], record[2], record[3]]);
            let value = i32::from_ne_bytes([record[4], record[5], record[6], record[7]]);
            items.push((kind, value));
        }
    }
}
