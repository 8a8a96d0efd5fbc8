//! The parent side of a spawn, in agentsh: turning a [`SpawnSpec`] into a [`ForkPlan`] of
//! plain C data, and the fork itself ([`fork_supervisor`], run by the spawner thread of
//! `thread`).
//!
//! Everything the forked code in `forked` reads is prepared here first, containment included:
//! [`ForkPlan::new`] creates the tree's cgroup (see `crate::containment` and the containment
//! stage in `forked`).

use std::ffi::{CString, c_char};
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;

use super::forked::{REPORT_CHILD_PID, Stage, supervisor_main};
use super::thread::{next_id, set_nonblocking};
use super::{ChildStdio, MAX_EXTRA_FD, MIN_EXTRA_FD, SpawnError, SpawnSpec};
use crate::containment::{self, Cgroup};
use crate::sandbox::{self, Kernel, Prepared};

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
    /// The tree's cgroup (see `crate::containment`); the child joins it before `execve`.
    pub(super) cgroup: Option<Cgroup>,
    /// The sandbox, ready for the child's raw system calls.
    pub(super) sandbox: Option<Prepared>,
}

fn cstring(bytes: &[u8], program: &str, what: &'static str) -> Result<CString, SpawnError> {
    CString::new(bytes).map_err(|_| SpawnError::NulByte {
        program: program.to_owned(),
        what,
    })
}

impl ForkPlan {
    /// Checks `spec` and converts it to C data. Containment is prepared here as well (the
    /// cgroup created; later settings: files opened, maps formatted), never after the fork.
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
        let sandbox = spec
            .sandbox
            .as_ref()
            .map(|policy| {
                let kernel = spec.sandbox_kernel.unwrap_or_else(Kernel::probe);
                sandbox::prepare(policy, kernel, spec.remove_on_exit.as_deref())
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
            cgroup: containment::new_cgroup(),
            sandbox,
        })
    }
}

/// The raw data the forked code reads: plain descriptor numbers and pointers into the plan.
pub(super) struct ChildView<'a> {
    pub(super) plan: &'a ForkPlan,
    pub(super) argv: &'a [*const c_char],
    pub(super) envp: &'a [*const c_char],
    /// Descriptor numbers in agentsh (valid in the fork) of control, report, error, then the
    /// payload: stdio descriptors that are `Some`, then the extras, then the sandbox's
    /// Landlock rule set.
    pub(super) wanted: &'a [RawFd],
    pub(super) parent: libc::pid_t,
}

/// A forked supervisor, as the spawner hands it back.
pub(super) struct SpawnedRaw {
    /// Names the supervisor to the spawner thread (pids are reused, ids are not).
    pub(super) id: u64,
    pub(super) pid: i32,
    pub(super) child_pid: i32,
    pub(super) control: OwnedFd,
    pub(super) report: OwnedFd,
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
    let id = next_id();
    match start_up(plan, &error_r, &report_r) {
        Ok(child_pid) => Ok(SpawnedRaw {
            id,
            pid,
            child_pid,
            control: control_w,
            report: report_r,
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
