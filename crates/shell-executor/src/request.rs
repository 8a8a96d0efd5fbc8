//! What a caller asks the executor to run, and the executor's configuration.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use agentsh_process::sandbox::SandboxSpec;
use agentsh_process::shell::{ShellSpec, discover_shell};
use agentsh_protocol::{DEFAULT_IDLE_MINUTES, DEFAULT_MAX_SHELLS, LimitHit, ResourceLimits};
use tokio_util::sync::CancellationToken;

/// Default of [`ExecutorConfig::max_total_shells`]: however many sessions one executor serves,
/// it keeps at most this many shells in all.
pub const DEFAULT_MAX_TOTAL_SHELLS: usize = 256;

/// Which surface a command comes from: tool calls and bang commands of one session
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
    /// The working directory of this call (applied per call: a `cd` inside a command does not
    /// carry over to the next call).
    pub cwd: PathBuf,
    /// Stop the command after this long (the caller bounds it).
    pub timeout: Duration,
    /// Which session and surface the command belongs to.
    pub session: SessionKey,
    /// The shell to run it in (`process::shell::discover_shell`).
    pub shell: ShellSpec,
    /// The user's `bash.env` extras, on top of the hardened environment
    /// (`agentsh_process::env::hardened_env`: pagers off, no prompts, `TERM=dumb`, …).
    pub env: BTreeMap<String, String>,
    /// `bash.prefix` / `AGENTSH_SHELL_PREFIX`: the command runs as `<prefix> <command>`.
    pub prefix: Option<String>,
    /// The rc snapshot to source when the shell starts (`agentsh-rc-snapshot`).
    pub snapshot: Option<PathBuf>,
    /// Cancelling it aborts the command (result `cancelled: true`).
    pub cancel: CancellationToken,
    /// The session's own cache limits (`bash.max_shells`, `bash.shell_idle_minutes`).
    pub limits: ShellLimits,
    /// The session's sandbox, `None` when off. Part of the shell's cache key: two
    /// sessions with different sandboxes never share a shell, and a job's shell gets it too.
    pub sandbox: Option<SandboxSpec>,
    /// The resource limits of the command's tree (`[limits]`, resolved): a tree that passes
    /// one is ended and its result says which.
    pub resources: ResourceLimits,
    /// Where a limit passed after the result was sent goes (by processes the command left
    /// running with `&`); `None`: such processes are not watched.
    pub late_limits: Option<LateLimits>,
}

/// Told each limit that processes a command left running (`&`) passed after its call's result
/// was sent: they are ended, and the session says so on its next result. Cheap to clone.
#[derive(Clone)]
pub struct LateLimits(Arc<dyn Fn(LimitHit) + Send + Sync>);

impl LateLimits {
    /// Calls `tell` with each late limit.
    pub fn new(tell: impl Fn(LimitHit) + Send + Sync + 'static) -> Self {
        Self(Arc::new(tell))
    }

    /// Tells `hit`.
    pub(crate) fn tell(&self, hit: LimitHit) {
        (self.0)(hit);
    }
}

impl std::fmt::Debug for LateLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LateLimits")
    }
}

impl ExecRequest {
    /// A request with the discovered shell (`$SHELL` if bash/zsh, else bash, else sh), no
    /// extra environment, no prefix, no snapshot, a fresh cancellation token, the default
    /// [`ShellLimits`] and no sandbox.
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
            limits: ShellLimits::default(),
            sandbox: None,
            resources: ResourceLimits::default(),
            late_limits: None,
        }
    }
}

/// How many shells one session keeps and how long its idle ones live: each session's own
/// settings govern its own shells (both surfaces together).
///
/// A session that needs one more shell than `max_shells` first closes its least recently used
/// idle one; a busy shell is never closed, so a session whose every shell is busy goes over its
/// limit until a call ends. Shells with live background (`&`) children are closed last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShellLimits {
    /// `bash.max_shells`: at most this many shells for the session (at least 1 is kept).
    pub max_shells: usize,
    /// `bash.shell_idle_minutes`, as a duration: the session's shells unused this long are
    /// closed, ending their whole process trees.
    pub idle_timeout: Duration,
}

impl Default for ShellLimits {
    fn default() -> Self {
        Self {
            max_shells: DEFAULT_MAX_SHELLS,
            idle_timeout: Duration::from_secs(DEFAULT_IDLE_MINUTES * 60),
        }
    }
}

/// Configuration of a [`ShellExecutor`](crate::ShellExecutor): what holds for every session it
/// serves. Each session's own limits travel in its requests ([`ExecRequest::limits`]).
#[derive(Debug, Clone)]
pub struct ExecutorConfig {
    /// The hard cap on shells in all, whatever the sessions' own limits (at least 1): one more
    /// closes the least recently used idle shell of any session.
    pub max_total_shells: usize,
    /// The environment shells start from before hardening; `None` = the agentsh process
    /// environment at the time of each call.
    pub base_env: Option<Vec<(OsString, OsString)>>,
}

impl Default for ExecutorConfig {
    fn default() -> Self {
        Self {
            max_total_shells: DEFAULT_MAX_TOTAL_SHELLS,
            base_env: None,
        }
    }
}
