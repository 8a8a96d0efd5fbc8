//! [`SessionError`]: why a session could not be set up, or a session call failed (used by the
//! session and the `bash` tool; the sandbox's own errors come from `agentsh-sandbox`).

use std::path::PathBuf;

use agentsh_artifact_store::ArtifactError;
use agentsh_process::sandbox::SandboxError;
use agentsh_process::shell::ShellError;
use agentsh_sandbox::SetupError;
use agentsh_shell_executor::ExecError;

use crate::cwd::CwdError;

/// Why a session could not be set up, or a session call failed. Timeouts, aborted calls and
/// failing commands are results, not errors.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// [`SessionOptions::cwd`](crate::SessionOptions::cwd) is not an absolute path (an empty one included).
    #[error("Working directory must be an absolute path, got {path:?}")]
    CwdNotAbsolute {
        /// The path as given.
        path: PathBuf,
    },
    /// [`SessionOptions::cwd`](crate::SessionOptions::cwd) does not exist, is not a directory or cannot be examined.
    #[error(transparent)]
    Cwd(CwdError),
    /// The approval policy cannot be used (a file that cannot be read, a bad rule, a failing
    /// example, a project file that would loosen it): nothing runs.
    #[error(transparent)]
    Policy(agentsh_config::ConfigError),
    /// A bang command (`!cmd` / RPC `bash`) is already running in this session.
    #[error("{}", agentsh_protocol::BANG_ALREADY_RUNNING)]
    AlreadyRunning,
    /// The configured shell cannot be used.
    #[error(transparent)]
    Shell(#[from] ShellError),
    /// An artifact could not be read.
    #[error(transparent)]
    Artifact(#[from] ArtifactError),
    /// Artifacts are unavailable in this session: the store could not be opened (the reason
    /// was also reported as a warning).
    #[error("artifacts are unavailable: {reason}")]
    NoArtifactStore {
        /// Why the store could not be opened.
        reason: String,
    },
    /// No job of the session has the id asked for, in the job tools' words (`No job 9. Jobs:
    /// 1, 2`).
    #[error("{0}")]
    NoSuchJob(String),
    /// The session's sandbox cannot be had: `Sandbox unavailable: <reason>` (the
    /// kernel, or this build, cannot enforce it: the session is not made, nothing runs) or
    /// `Sandbox refuses a writable root of <path>` (`/` or `$HOME`).
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// The sandbox's network allowlist, a writable root or its private temp dir cannot be set
    /// up (`Sandbox network: …`, `Sandbox cannot use the writable root …`, `Sandbox cannot
    /// create its private temp dir: …`).
    #[error(transparent)]
    SandboxSetup(SetupError),
    /// The command could not be run at all. The text includes the executor's reason, so the
    /// error has no separate `source()`.
    #[error("cannot run the command: {0}")]
    Exec(ExecError),
}

impl From<SetupError> for SessionError {
    /// A sandbox that cannot be had stays [`SessionError::Sandbox`].
    fn from(error: SetupError) -> Self {
        match error {
            SetupError::Sandbox(error) => Self::Sandbox(error),
            other => Self::SandboxSetup(other),
        }
    }
}

impl From<ExecError> for SessionError {
    fn from(error: ExecError) -> Self {
        Self::Exec(error)
    }
}
