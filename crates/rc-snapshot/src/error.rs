//! Why there is no snapshot: [`SnapshotError`], whose message is the warning to show.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why there is no snapshot. Not fatal: commands run without the rc's aliases, functions and
/// options; the message (its `Display`) is the warning to show the user.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// Sourcing the rc took longer than the time box ([`SnapshotOptions::timeout`](crate::SnapshotOptions::timeout)).
    #[error(
        "no rc snapshot: sourcing {} took longer than {} s, so it was stopped; commands run without its aliases, functions and options (make the rc faster, or allow more time with `bash.snapshot_timeout`)",
        rc.display(), timeout.as_secs_f64()
    )]
    Timeout {
        /// The rc file.
        rc: PathBuf,
        /// The time box.
        timeout: Duration,
    },
    /// Sourcing the rc returned the shell's syntax-error status.
    #[error(
        "no rc snapshot: {} has an error (sourcing it returned status {status}{}); commands run without its aliases, functions and options",
        rc.display(), detail_suffix(detail)
    )]
    Broken {
        /// The rc file.
        rc: PathBuf,
        /// The status `source` returned.
        status: i32,
        /// The shell's messages about the rc (lines of its stderr naming the file), if any.
        detail: String,
    },
    /// The shell ended before the snapshot was written.
    #[error(
        "no rc snapshot: the shell ended ({how}) while sourcing {}, does it call exit or exec?{}; commands run without its aliases, functions and options",
        rc.display(), detail_suffix(detail)
    )]
    ShellEnded {
        /// The rc file.
        rc: PathBuf,
        /// How the shell ended (`exit status 1`, `signal 9`).
        how: String,
        /// The shell's messages about the rc, if any.
        detail: String,
    },
    /// The shell could not be started.
    #[error("no rc snapshot: cannot start {}: {error}", shell.display())]
    Spawn {
        /// The shell program.
        shell: PathBuf,
        /// The error from the operating system (part of the message).
        error: io::Error,
    },
    /// The cache directory exists but is not private to this user.
    #[error(
        "no rc snapshot: cache directory {} is not private (it must be a directory owned by you with mode 0700; remove it or fix its owner)",
        path.display()
    )]
    CacheDirNotPrivate {
        /// The directory.
        path: PathBuf,
    },
    /// The generated snapshot is unreasonably large.
    #[error("no rc snapshot: the functions and aliases of {} take more than {max} bytes", rc.display())]
    TooLarge {
        /// The rc file.
        rc: PathBuf,
        /// The limit in bytes.
        max: u64,
    },
    /// An earlier try to snapshot this rc, as it is now, failed for a reason of the rc's own
    /// (a time-out, an error, an `exit`, too much to carry). It is tried again when the rc
    /// changes, or, after a time-out, when a longer time box is given.
    #[error("{warning} [remembered from an earlier try: tried again when {} changes]", rc.display())]
    Remembered {
        /// The rc file.
        rc: PathBuf,
        /// The earlier failure's message.
        warning: String,
    },
    /// A file system operation on the cache failed.
    #[error("no rc snapshot: cannot {action} {}: {error}", path.display())]
    Io {
        /// What was being done (`create`, `write`, `read`, …).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The error from the operating system (part of the message).
        error: io::Error,
    },
}

fn detail_suffix(detail: &str) -> String {
    if detail.is_empty() {
        String::new()
    } else {
        format!(": {detail}")
    }
}

/// A [`SnapshotError::Io`] for `action` on `path`.
pub(crate) fn io_error(action: &'static str, path: &Path, error: io::Error) -> SnapshotError {
    SnapshotError::Io {
        action,
        path: path.to_path_buf(),
        error,
    }
}
