//! Errors of the executor: only real failures. Timeouts, aborts, non-zero exits and dead shells
//! are results ([`BashResult`](crate::BashResult)), never errors.
//!
//! Each message says its cause in full (callers print one line), so no variant also returns the
//! cause from `source()`.

use std::io;

use agentsh_process::SpawnError;

/// Why a command could not be run at all.
///
/// The message includes the underlying error's text; [`std::error::Error::source`] is `None`.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The shell process could not be started.
    #[error("cannot start the shell: {0}")]
    Spawn(SpawnError),
    /// The shell started but exited before it was ready (a broken snapshot, an odd shell).
    #[error(
        "the shell {shell} exited while starting (status {code}); check `bash.shell` and the rc snapshot"
    )]
    StartupExit {
        /// The shell's path.
        shell: String,
        /// Its exit status (128 + signal when killed).
        code: i32,
    },
    /// The shell started but did not answer within the start-up limit.
    #[error("the shell {shell} did not become ready within {seconds} seconds")]
    StartupTimeout {
        /// The shell's path.
        shell: String,
        /// The limit.
        seconds: u64,
    },
    /// The command text contains a NUL byte, which no shell can run.
    #[error("the command contains a NUL byte, which no shell can run")]
    NulInCommand,
    /// The working directory contains a NUL byte.
    #[error("the working directory contains a NUL byte: {0}")]
    NulInCwd(String),
    /// The shell's private files (command file, FIFO) could not be written.
    #[error("cannot prepare the command in the shell's private directory: {0}")]
    Io(io::Error),
}

impl From<SpawnError> for ExecError {
    fn from(err: SpawnError) -> Self {
        Self::Spawn(err)
    }
}

impl From<io::Error> for ExecError {
    fn from(err: io::Error) -> Self {
        Self::Io(err)
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn messages_carry_their_cause_and_no_source_repeats_it() {
        let err = ExecError::from(io::Error::other("disk full"));
        assert_eq!(
            err.to_string(),
            "cannot prepare the command in the shell's private directory: disk full"
        );
        assert!(err.source().is_none());
    }
}
