//! The sandbox of a session's processes (SPEC §16): what a policy allows, as plain data the
//! spawner enforces in the child before `execve` (user namespace, Landlock, `no_new_privs`,
//! and for `network = false` a network namespace with loopback and a seccomp filter on
//! `socket(AF_UNIX, …)`).

use std::fmt;
use std::path::PathBuf;

/// What a sandbox lets commands write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SandboxMode {
    /// Only the private temp dir (and the always-writable devices) is writable.
    ReadOnly,
    /// The session's cwd, its private temp dir and the configured `writable` paths.
    WorkspaceWrite,
}

impl SandboxMode {
    /// The mode as the configuration and the denial line write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::WorkspaceWrite => "workspace-write",
        }
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A sandbox for every process of a shell, PTY session or job: enforced by the kernel in the
/// child before it executes, inherited by everything it starts, never lifted.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SandboxPolicy {
    /// What may be written.
    pub mode: SandboxMode,
    /// The writable roots, absolute, already resolved by the session (its cwd in
    /// `workspace-write`, its private temp dir, `sandbox.writable`). The spawner adds the
    /// always-writable ones (`/dev/null`, `/dev/tty`, `/dev/pts`, the shell's own private
    /// directory).
    pub writable: Vec<PathBuf>,
    /// Whether the network is reachable (`false`: a private network namespace with loopback
    /// only, and no `socket(AF_UNIX, …)`).
    pub network: bool,
}

/// Why a sandbox cannot be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxError {
    /// The kernel cannot enforce what the policy asks for: nothing runs.
    #[error("Sandbox unavailable: {0}")]
    Unavailable(String),
    /// A writable root that would make the sandbox meaningless (`/`, `$HOME`).
    #[error("Sandbox refuses a writable root of {}", .0.display())]
    RefusedRoot(PathBuf),
}
