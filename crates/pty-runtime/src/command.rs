//! [`PtyCommand`]: one command to run on a PTY, and how its shell is started.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::time::Duration;

use agentsh_process::env::{TerminalKind, hardened_env};
use agentsh_process::sandbox::SandboxSpec;
use agentsh_process::shell::{FALLBACK_SHELL, ShellSpec, apply_prefix, discover_shell};
use agentsh_process::{Backstops, ChildStdio, CommandCgroup, SpawnSpec};
use agentsh_protocol::ResourceLimits;

use crate::terminal::{SCROLLBACK_LINES, TerminalSize};

/// Environment variables of agentsh's own terminal that would contradict the PTY's size.
const SIZE_VARS: &[&str] = &["COLUMNS", "LINES"];

/// The script the shell runs: source the snapshot (if any), then the command via `eval`, so
/// that the snapshot's aliases apply. `$1` = snapshot path (may be empty), `$2` = command.
const RUN_SCRIPT: &str = r#"if [ -n "$1" ]; then . "$1" </dev/null >/dev/null 2>&1; fi
__agentsh_command=$2
shift 2
eval "unset __agentsh_command; $__agentsh_command""#;

/// One command to run on a PTY.
#[derive(Debug, Clone)]
pub struct PtyCommand {
    /// The command text, run by the shell as if typed.
    pub command: String,
    /// The working directory.
    pub cwd: PathBuf,
    /// Stop the command after this long. Not clamped here: agentsh's callers bound it before.
    pub timeout: Duration,
    /// The shell to run it in (`process::shell::discover_shell`).
    pub shell: ShellSpec,
    /// The user's `bash.env` extras, on top of the hardened environment of `agentsh-process`
    /// (pagers set to `cat`, editors to `true`, prompts off, `TERM=xterm-256color`); an extra
    /// wins over a hardened variable of the same name.
    pub env: BTreeMap<String, String>,
    /// The environment before hardening; `None` = the agentsh process environment.
    pub base_env: Option<Vec<(OsString, OsString)>>,
    /// `bash.prefix` / `AGENTSH_SHELL_PREFIX`: the command runs as `<prefix> <command>`.
    pub prefix: Option<String>,
    /// The rc snapshot to source before the command (`agentsh-rc-snapshot`).
    pub snapshot: Option<PathBuf>,
    /// The terminal size (clamped when the session starts).
    pub size: TerminalSize,
    /// Lines of scrollback of the headless terminal.
    pub scrollback: usize,
    /// A job's terminal: the environment keeps none of the variables that make
    /// programs skip their questions (`CI`, `npm_config_yes`, …). Default `false`.
    pub answers_prompts: bool,
    /// The session's sandbox for every process on the terminal; `None` (default):
    /// off.
    pub sandbox: Option<SandboxSpec>,
    /// The resource limits of the command's whole tree, the shell included (`[limits]`);
    /// default: none. A tree over its memory or CPU time limit is ended, and the result's
    /// [`BashResult::limit`](agentsh_protocol::BashResult::limit) says which limit it passed,
    /// as for a piped command.
    pub limits: ResourceLimits,
}

impl PtyCommand {
    /// A command with the discovered shell (`$SHELL` if bash/zsh, else bash, else sh), no
    /// extra environment, no prefix, no snapshot, a 120×40 terminal, 10,000 lines of
    /// scrollback and no sandbox.
    pub fn new(command: impl Into<String>, cwd: impl Into<PathBuf>, timeout: Duration) -> Self {
        let shell = discover_shell(None, |name| std::env::var_os(name))
            .unwrap_or_else(|_| ShellSpec::from_path(FALLBACK_SHELL));
        Self {
            command: command.into(),
            cwd: cwd.into(),
            timeout,
            shell,
            env: BTreeMap::new(),
            base_env: None,
            prefix: None,
            snapshot: None,
            size: TerminalSize::default(),
            scrollback: SCROLLBACK_LINES,
            answers_prompts: false,
            sandbox: None,
            limits: ResourceLimits::default(),
        }
    }

    /// What starts the shell on `slave`, inside `cgroup` where the kernel holds its tree.
    pub(crate) fn spawn_spec(
        &self,
        slave: &OwnedFd,
        cgroup: Option<&CommandCgroup>,
    ) -> io::Result<SpawnSpec> {
        let mut spec = SpawnSpec::new(&self.shell.path);
        let mut args: Vec<OsString> = self
            .shell
            .kind
            .no_rc_flags()
            .iter()
            .map(Into::into)
            .collect();
        let command = match self.prefix.as_deref() {
            Some(prefix) => apply_prefix(prefix, &self.command),
            None => self.command.clone(),
        };
        args.extend([
            "-c".into(),
            RUN_SCRIPT.into(),
            self.shell.kind.name().into(),
            self.snapshot
                .as_ref()
                .map(|path| path.as_os_str().to_owned())
                .unwrap_or_default(),
            command.into(),
        ]);
        spec.args = args;
        let base = self
            .base_env
            .clone()
            .unwrap_or_else(|| std::env::vars_os().collect())
            .into_iter()
            .filter(|(name, _)| !SIZE_VARS.iter().any(|v| name == v));
        let terminal = if self.answers_prompts {
            TerminalKind::PtyJob
        } else {
            TerminalKind::Pty
        };
        spec.env = hardened_env(base, &self.env, terminal);
        spec.cwd.clone_from(&self.cwd);
        spec.stdio = [
            ChildStdio::Fd(slave.try_clone()?),
            ChildStdio::Fd(slave.try_clone()?),
            ChildStdio::Fd(slave.try_clone()?),
        ];
        spec.controlling_terminal = true;
        spec.sandbox.clone_from(&self.sandbox);
        spec.backstops = Backstops::for_limits(&self.limits);
        if let Some(cgroup) = cgroup {
            spec.join_cgroups = cgroup.self_join_files();
        }
        Ok(spec)
    }
}
