//! Turning a [`SpawnSpec`] into a [`ForkPlan`] of plain C data, before the fork: everything the
//! forked code in `forked` reads, containment included ([`ForkPlan::new`] creates the tree's
//! cgroup, see `crate::containment` and the containment stage in `forked`), and the
//! [`ChildView`] of it that the forked code gets.

use std::ffi::{CString, c_char};
use std::os::fd::{OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;

use super::remove::OrphanDir;
use super::{ChildStdio, MAX_EXTRA_FD, MIN_EXTRA_FD, SpawnError, SpawnSpec};
use crate::containment::{self, Cgroup};
use crate::sandbox::{self, Kernel, Prepared};

/// Everything the forked processes need, prepared before `fork()`.
pub(super) struct ForkPlan {
    pub(super) program: CString,
    pub(super) program_name: String,
    pub(super) argv: Vec<CString>,
    pub(super) envp: Vec<CString>,
    pub(super) cwd: CString,
    pub(super) cwd_name: String,
    /// Standard descriptors: `None` = `/dev/null`.
    pub(super) stdio: [Option<OwnedFd>; 3],
    pub(super) extras: Vec<(OwnedFd, RawFd)>,
    pub(super) controlling_terminal: bool,
    pub(super) remove_on_exit: Option<CString>,
    /// The sandbox's temp dir ([`SandboxSpec::temp_dir`](crate::sandbox::SandboxSpec)),
    /// removed when the supervisor ends its tree after agentsh is gone.
    pub(super) orphan_dir: Option<OrphanDir>,
    /// The tree's cgroup (see `crate::containment`); the child joins it before `execve`.
    pub(super) cgroup: Option<Cgroup>,
    /// The sandbox, ready for the child's raw system calls.
    pub(super) sandbox: Option<Prepared>,
    /// The rlimits the child sets before `execve`.
    pub(super) backstops: super::Backstops,
    /// The files of [`SpawnSpec::join_cgroups`], written by the child after the tree's cgroup.
    pub(super) join_cgroups: Vec<CString>,
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
        let orphan_dir = spec
            .sandbox
            .as_ref()
            .and_then(|policy| policy.temp_dir.as_deref())
            .and_then(OrphanDir::prepare);
        let join_cgroups = spec
            .join_cgroups
            .iter()
            .map(|path| {
                cstring(
                    path.as_os_str().as_bytes(),
                    &program_name,
                    "a cgroup to join",
                )
            })
            .collect::<Result<_, _>>()?;
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
            orphan_dir,
            cgroup: containment::new_cgroup(),
            sandbox,
            backstops: spec.backstops,
            join_cgroups,
        })
    }
}

impl ForkPlan {
    /// Whether the child sends descriptors to agentsh over a socket: the listener of a network
    /// allowlist, the master of a terminal made inside the sandbox (in that order).
    pub(super) fn outbox(&self) -> bool {
        self.sandbox
            .as_ref()
            .is_some_and(|sandbox| sandbox.proxy_port.is_some() || self.controlling_terminal)
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
