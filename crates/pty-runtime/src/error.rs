//! Why a PTY session failed. Its `Display` is the `<reason>` of the `PTY error: <reason>` line.

use std::io;

/// A PTY start or runtime failure. The session does not return it: it ends with the line
/// `PTY error: <reason>` in its output and no exit code (`exitCode: null` in JSON).
#[derive(Debug, thiserror::Error)]
pub enum PtyError {
    /// No pseudo-terminal could be opened or set up.
    #[error("cannot open a pseudo-terminal: {0}")]
    Open(io::Error),
    /// The shell could not be started under its supervisor.
    #[error("{0}")]
    Spawn(agentsh_process::SpawnError),
    /// Reading the command's output from the terminal failed.
    #[error("cannot read the terminal: {0}")]
    Read(io::Error),
    /// The terminal could not be resized.
    #[error("cannot resize the terminal: {0}")]
    Resize(io::Error),
    /// The supervisor ended without reporting the shell's exit status.
    #[error("the exit status of the command was lost: {0}")]
    ExitStatus(io::Error),
}
