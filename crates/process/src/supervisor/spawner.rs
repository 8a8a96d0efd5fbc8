//! The parent side of a spawn, in agentsh: the fork itself ([`fork_supervisor`], run by the
//! spawner thread of `thread`) of a [`ForkPlan`] that `plan` prepared, and reading how the
//! start-up went.

use std::ffi::c_char;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};

use super::SpawnError;
use super::forked::supervisor_main;
use super::plan::{ChildView, ForkPlan};
use super::report::{REPORT_CHILD_PID, Stage};
use crate::sandbox;

/// A forked supervisor, as the spawner hands it back.
pub(super) struct SpawnedRaw {
    /// Names the supervisor to the spawner thread (pids are reused, ids are not).
    pub(super) id: u64,
    pub(super) pid: i32,
    pub(super) child_pid: i32,
    pub(super) control: OwnedFd,
    pub(super) report: OwnedFd,
    /// The master of the terminal a sandboxed child made inside its sandbox (see
    /// `confine::terminal_inside`); `None` without a sandbox or controlling terminal.
    pub(super) terminal: Option<OwnedFd>,
    /// The listener a sandboxed child with a network allowlist made at `127.0.0.1:<port>` in
    /// its network namespace (see `confine::proxy_listener`); `None` otherwise.
    pub(super) listener: Option<OwnedFd>,
}

pub(super) fn pipe_cloexec() -> io::Result<(OwnedFd, OwnedFd)> {
    #[cfg(target_os = "linux")]
    let pair = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    #[cfg(not(target_os = "linux"))]
    let pair = {
        let pair = rustix::pipe::pipe()?;
        rustix::io::fcntl_setfd(&pair.0, rustix::io::FdFlags::CLOEXEC)?;
        rustix::io::fcntl_setfd(&pair.1, rustix::io::FdFlags::CLOEXEC)?;
        pair
    };
    Ok(pair)
}

/// Reads until EOF or `buf` is full, retrying on EINTR; returns the number of bytes read.
fn read_full_blocking(fd: impl AsFd, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match rustix::io::read(&fd, &mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(err) => return Err(err.into()),
        }
    }
    Ok(got)
}

/// Why [`fork_supervisor`] failed.
pub(super) struct ForkFailure {
    pub(super) error: SpawnError,
    /// The supervisor, when it was forked: its id, pid and report pipe (it exits by itself).
    pub(super) forked: Option<(u64, i32, OwnedFd)>,
    /// The child could not join the plan's cgroup.
    pub(super) cgroup_join: bool,
}

/// Forks the supervisor.
pub(super) fn fork_supervisor(plan: &ForkPlan) -> Result<SpawnedRaw, ForkFailure> {
    let setup = |err| ForkFailure {
        error: SpawnError::Setup(err),
        forked: None,
        cgroup_join: false,
    };
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
    wanted.extend(
        plan.sandbox
            .iter()
            .map(|sandbox| sandbox.ruleset.as_raw_fd()),
    );
    // A sandboxed child sends the listener of a network allowlist and the master of a
    // terminal made inside over this socket.
    let outbox = if plan.outbox() {
        let (ours, theirs) = rustix::net::socketpair(
            rustix::net::AddressFamily::UNIX,
            rustix::net::SocketType::SEQPACKET,
            rustix::net::SocketFlags::CLOEXEC,
            None,
        )
        .map_err(|err| setup(err.into()))?;
        wanted.push(theirs.as_raw_fd());
        Some((ours, theirs))
    } else {
        None
    };
    // The tmpfs of a size-limited temp dir comes last; the child mounts a copy of it.
    wanted.extend(
        plan.sandbox
            .iter()
            .filter_map(|sandbox| sandbox.temp_mount.as_ref())
            .map(|(mount, _)| mount.as_raw_fd()),
    );
    let view = ChildView {
        plan,
        argv: &argv,
        envp: &envp,
        wanted: &wanted,
        parent: rustix::process::getpid().as_raw_nonzero().get(),
    };

    // `fork` itself stays a raw libc call: rustix offers none (a safe wrapper cannot promise
    // what the child may do), and the child is the post-fork code of `forked`.
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
    let outbox = outbox.map(|(ours, _theirs)| ours);
    let id = next_id();
    let started = start_up(plan, &error_r, &report_r).and_then(|child_pid| {
        let received = |wanted: bool, step: &'static str| -> Result<_, (SpawnError, bool)> {
            let Some(socket) = outbox.as_ref().filter(|_| wanted) else {
                return Ok(None);
            };
            receive_fd(socket, step).map(Some).map_err(|error| {
                (
                    SpawnError::Supervisor {
                        program: plan.program_name.clone(),
                        step,
                        error,
                    },
                    false,
                )
            })
        };
        // In the order the child sends them.
        let proxied = plan
            .sandbox
            .as_ref()
            .is_some_and(|sandbox| sandbox.proxy_port.is_some());
        let listener = received(proxied, "network proxy listener")?;
        let terminal = received(plan.controlling_terminal, "controlling terminal")?;
        Ok((child_pid, terminal, listener))
    });
    match started {
        Ok((child_pid, terminal, listener)) => Ok(SpawnedRaw {
            id,
            pid,
            child_pid,
            control: control_w,
            report: report_r,
            terminal,
            listener,
        }),
        Err((error, cgroup_join)) => Err(ForkFailure {
            error,
            forked: Some((id, pid, report_r)),
            cgroup_join,
        }),
    }
}

/// Reads how the start-up of a forked supervisor went: the child's pid, or the error (and
/// whether it was the child joining its cgroup).
fn start_up(
    plan: &ForkPlan,
    error_r: &OwnedFd,
    report_r: &OwnedFd,
) -> Result<i32, (SpawnError, bool)> {
    let setup = |err| (SpawnError::Setup(err), false);
    let mut err_buf = [0u8; 5];
    let got = read_full_blocking(error_r, &mut err_buf).map_err(setup)?;
    if got == 5 {
        let errno = i32::from_ne_bytes([err_buf[1], err_buf[2], err_buf[3], err_buf[4]]);
        let error = io::Error::from_raw_os_error(errno);
        let program = plan.program_name.clone();
        let stage = Stage::from_byte(err_buf[0]);
        if let Some(step) = stage.and_then(Stage::sandbox_step) {
            return Err((
                SpawnError::Sandbox(sandbox::SandboxError::Unavailable(format!(
                    "{step}: {error}"
                ))),
                false,
            ));
        }
        let err = match stage {
            Some(Stage::ChildExec) => SpawnError::Exec { program, error },
            Some(Stage::ChildCwd) => SpawnError::Cwd {
                program,
                cwd: plan.cwd_name.clone(),
                error,
            },
            stage => SpawnError::Supervisor {
                program,
                step: match stage {
                    Some(Stage::SupervisorFork) => "fork",
                    Some(Stage::SupervisorFds) => "descriptor setup",
                    Some(Stage::ChildFds) => "descriptor setup of the child",
                    Some(Stage::ChildTty) => "controlling terminal",
                    Some(Stage::ChildCgroup) => "joining the cgroup",
                    Some(Stage::ChildLimitsCgroup) => "joining the cgroup of its resource limits",
                    _ => "unknown step",
                },
                error,
            },
        };
        return Err((err, matches!(stage, Some(Stage::ChildCgroup))));
    }
    let mut pid_record = [0u8; 8];
    let got = read_full_blocking(report_r, &mut pid_record).map_err(setup)?;
    let kind = i32::from_ne_bytes([pid_record[0], pid_record[1], pid_record[2], pid_record[3]]);
    if got != 8 || kind != REPORT_CHILD_PID {
        return Err(setup(io::Error::other(
            "the supervisor exited during start-up",
        )));
    }
    set_nonblocking(report_r).map_err(setup)?;
    Ok(i32::from_ne_bytes([
        pid_record[4],
        pid_record[5],
        pid_record[6],
        pid_record[7],
    ]))
}

/// The next descriptor the child sent over `socket` before its `execve` (which the start-up
/// has seen happen, so it is there to be read without waiting); `what` names it in the error.
fn receive_fd(socket: &OwnedFd, what: &str) -> io::Result<OwnedFd> {
    use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags};
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let mut byte = [0u8; 1];
    rustix::net::recvmsg(
        socket,
        &mut [io::IoSliceMut::new(&mut byte)],
        &mut control,
        RecvFlags::DONTWAIT | RecvFlags::CMSG_CLOEXEC,
    )?;
    let mut received = None;
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(fds) = message {
            for fd in fds {
                received.get_or_insert(fd);
            }
        }
    }
    received.ok_or_else(|| io::Error::other(format!("the child sent no {what}")))
}

pub(super) fn set_nonblocking(fd: impl AsFd) -> io::Result<()> {
    let flags = rustix::fs::fcntl_getfl(&fd)?;
    rustix::fs::fcntl_setfl(&fd, flags | rustix::fs::OFlags::NONBLOCK)?;
    Ok(())
}

/// A new supervisor id (never reused, unlike pids).
pub(super) fn next_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
