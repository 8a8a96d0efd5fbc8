//! [`SetupError`]: why a session's sandbox could not be set up.

use std::path::PathBuf;

use agentsh_process::sandbox::SandboxError;

/// Why a session's sandbox could not be set up: nothing of the session runs.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The sandbox cannot be had: `Sandbox unavailable: <reason>` (the kernel, or this build,
    /// cannot enforce it) or `Sandbox refuses a writable root of <path>` (`/` or `$HOME`).
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// The network allowlist cannot be set up (a host the proxy cannot take, a malformed test
    /// resolver map).
    #[error("Sandbox network: {0}")]
    Network(String),
    /// A `sandbox.writable` root (or the session's cwd as one) does not exist or cannot be
    /// resolved.
    #[error("Sandbox cannot use the writable root {}: {error}", path.display())]
    Root {
        /// The root as configured.
        path: PathBuf,
        /// Why it cannot be used.
        error: std::io::Error,
    },
    /// The sandbox's private temp dir could not be created.
    #[error("Sandbox cannot create its private temp dir: {0}")]
    TempDir(std::io::Error),
}
