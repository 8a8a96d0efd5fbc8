//! The parent side of a spawn, in agentsh: turning a [`SpawnSpec`] into a [`ForkPlan`] of
//! plain C data, and the *spawner* thread that forks supervisors and reaps the ones that were
//! told to exit.
//!
//! Forking happens on this one long-lived thread, so `PR_SET_PDEATHSIG` — which fires when the
//! forking *thread* exits — fires only when agentsh itself is gone. Everything the forked code
//! in `forked` reads is prepared here first; a future containment setting of [`SpawnSpec`] is
//! prepared in [`ForkPlan::new`] too (see the containment stage in `forked`).

use std::ffi::{CString, c_char};
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::sync::OnceLock;
use std::sync::mpsc;
use std::time::Duration;

use rustix::process::{Pid, WaitOptions};
use tokio::sync::oneshot;

use super::forked::{REPORT_CHILD_PID, Stage, supervisor_main};
use super::{ChildStdio, MAX_EXTRA_FD, MIN_EXTRA_FD, SpawnError, SpawnSpec};

/// Everything the forked processes need, prepared before `fork()`.
pub(super) struct ForkPlan {
    pub(super) program: CString,
    program_name: String,
    argv: Vec<CString>,
    envp: Vec<CString>,
    pub(super) cwd: CString,
    cwd_name: String,
    /// Standard descriptors: `None` = `/dev/null`.
    pub(super) stdio: [Option<OwnedFd>; 3],
    pub(super) extras: Vec<(OwnedFd, RawFd)>,
    pub(super) controlling_terminal: bool,
    pub(super) remove_on_exit: Option<CString>,
}

fn cstring(bytes: &[u8], program: &str, what: &'static str) -> Result<CString, SpawnError> {
    CString::new(bytes).map_err(|_| SpawnError::NulByte {
        program: program.to_owned(),
        what,
    })
}

impl ForkPlan {
    /// Checks `spec` and converts it to C data. Containment settings, when `SpawnSpec` gets
    /// them, are prepared here as well (files opened, maps formatted), never after the fork.
    pub(super) fn new(spec: SpawnSpec) -> Result<Self, SpawnError> {
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
pub(super) struct ChildView<'a> {
    pub(super) plan: &'a ForkPlan,
    pub(super) argv: &'a [*const c_char],
    pub(super) envp: &'a [*const c_char],
    /// Descriptor numbers in agentsh (valid in the fork) of control, report, error, then the
    /// payload: stdio descriptors that are `Some`, then the extras.
    pub(super) wanted: &'a [RawFd],
    pub(super) parent: libc::pid_t,
}

/// A forked supervisor, as the spawner hands it back.
pub(super) struct SpawnedRaw {
    pub(super) pid: i32,
    pub(super) child_pid: i32,
    pub(super) control: OwnedFd,
    pub(super) report: OwnedFd,
}

/// What the spawner thread is asked to do.
pub(super) enum Request {
    /// Fork a supervisor for this plan.
    Spawn(
        Box<ForkPlan>,
        oneshot::Sender<Result<SpawnedRaw, SpawnError>>,
    ),
    /// Reap this supervisor once it has exited (it was told to), then answer.
    Reap(i32, Option<oneshot::Sender<()>>),
}

/// The spawner thread, started on first use.
pub(super) fn spawner() -> Result<&'static mpsc::Sender<Request>, SpawnError> {
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
            let running = Pid::from_raw(*pid).is_some_and(|pid| {
                matches!(
                    rustix::process::waitpid(Some(pid), WaitOptions::NOHANG),
                    Ok(None)
                )
            });
            if running {
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

fn set_nonblocking(fd: impl AsFd) -> io::Result<()> {
    let flags = rustix::fs::fcntl_getfl(&fd)?;
    rustix::fs::fcntl_setfl(&fd, flags | rustix::fs::OFlags::NONBLOCK)?;
    Ok(())
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

/// Forks the supervisor. On error, the supervisor's pid (if it was forked) comes back too so
/// that it can be reaped.
pub(super) fn fork_supervisor(plan: &ForkPlan) -> Result<SpawnedRaw, (SpawnError, Option<i32>)> {
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

    let mut err_buf = [0u8; 5];
    let got = read_full_blocking(&error_r, &mut err_buf)
        .map_err(|err| (SpawnError::Setup(err), Some(pid)))?;
    if got == 5 {
        let errno = i32::from_ne_bytes([err_buf[1], err_buf[2], err_buf[3], err_buf[4]]);
        let error = io::Error::from_raw_os_error(errno);
        let program = plan.program_name.clone();
        let err = match Stage::from_byte(err_buf[0]) {
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
                    _ => "unknown step",
                },
                error,
            },
        };
        return Err((err, Some(pid)));
    }
    let mut pid_record = [0u8; 8];
    let got = read_full_blocking(&report_r, &mut pid_record)
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
    set_nonblocking(&report_r).map_err(|err| (SpawnError::Setup(err), Some(pid)))?;
    Ok(SpawnedRaw {
        pid,
        child_pid,
        control: control_w,
        report: report_r,
    })
}
