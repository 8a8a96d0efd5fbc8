//! What a caller asks the executor to run, and the executor's configuration.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use agentsh_process::shell::{ShellSpec, discover_shell};
use tokio_util::sync::CancellationToken;

/// Default of `bash.max_shells`: at most this many persistent shells at once (SPEC §6).
pub const DEFAULT_MAX_SHELLS: usize = 16;
/// Default of `bash.shell_idle_minutes`: shells idle this long are closed (SPEC §6).
pub const DEFAULT_IDLE_MINUTES: u64 = 30;

/// Which surface a command comes from (SPEC §0): tool calls and bang commands of one session
/// never share a shell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Surface {
    /// The model's `bash` tool.
    Tool,
    /// The user's `!cmd` / RPC `bash`.
    User,
}

impl Surface {
    /// `"tool"` or `"user"`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Tool => "tool",
            Self::User => "user",
        }
    }
}

/// The session part of a shell's cache key: `(session id, surface)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionKey {
    /// The agent session's id.
    pub session_id: String,
    /// Tool calls or bang commands.
    pub surface: Surface,
}

impl SessionKey {
    /// The key of `session_id` on `surface`.
    pub fn new(session_id: impl Into<String>, surface: Surface) -> Self {
        Self {
            session_id: session_id.into(),
            surface,
        }
    }
}

/// One command to run.
#[derive(Debug, Clone)]
pub struct ExecRequest {
    /// The command text, run by the shell as if typed (after normalisation, if any).
    pub command: String,
    /// The working directory of this call (SPEC §3: applied per call).
    pub cwd: PathBuf,
    /// Stop the command after this long (the caller clamps it, SPEC §3).
    pub timeout: Duration,
    /// Which session and surface the command belongs to.
    pub session: SessionKey,
    /// The shell to run it in (`process::shell::discover_shell`).
    pub shell: ShellSpec,
    /// The user's `bash.env` extras (on top of the hardened environment, SPEC §7).
    pub env: BTreeMap<String, String>,
    /// `bash.prefix` / `AGENTSH_SHELL_PREFIX`: the command runs as `<prefix> <command>`.
    pub prefix: Option<String>,
    /// The rc snapshot to source when the shell starts (`process::snapshot`).
    pub snapshot: Option<PathBuf>,
    /// Cancelling it aborts the command (result `cancelled: true`).
    pub cancel: CancellationToken,
}

impl ExecRequest {
    /// A request with the discovered shell (`$SHELL` if bash/zsh, else bash, else sh), no
    /// extra environment, no prefix, no snapshot and a fresh cancellation token.
    pub fn new(
        command: impl Into<String>,
        cwd: impl Into<PathBuf>,
        timeout: Duration,
        session: SessionKey,
    ) -> Self {
        let shell = discover_shell(None, |name| std::env::var_os(name))
            .unwrap_or_else(|_| ShellSpec::from_path(agentsh_process::shell::FALLBACK_SHELL));
        Self {
            command: command.into(),
            cwd: cwd.into(),
            timeout,
            session,
            shell,
            env: BTreeMap::new(),
            prefix: None,
            snapshot: None,
            cancel: CancellationToken::new(),
        }
    }
}

/// Configuration of a [`ShellExecutor`](crate::ShellExecutor).
#[derive(Debug, Clone)]
pub struct ExecutorConfig {
    /// `bash.max_shells`.
    pub max_shells: usize,
    /// `bash.shell_idle_minutes`, as a duration.
    pub idle_timeout: Duration,
    /// The environment shells start from before hardening; `None` = the agentsh process
    /// environment at the time of each call.
    pub base_env: Option<Vec<(OsString, OsString)>>,
}

impl Default for ExecutorConfig {
    fn default() -> Self {
        Self {
            max_shells: DEFAULT_MAX_SHELLS,
            idle_timeout: Duration::from_secs(DEFAULT_IDLE_MINUTES * 60),
            base_env: None,
        }
    }
}
