//! The one error type of the crate; the `artifact://` messages are fixed texts.

use std::io;
use std::path::PathBuf;

/// Why an artifact could not be allocated, resolved or read, or a store not opened.
///
/// The first three variants carry the exact texts of the `artifact://` contract; the others name
/// the path involved so a user can act on them.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArtifactError {
    /// `artifact://` without an id (or an empty id string).
    #[error("artifact:// URL requires a numeric ID: {url}")]
    MissingId {
        /// The URL (or id string) as given.
        url: String,
    },
    /// An id that is not made of ASCII digits only.
    #[error("artifact:// ID must be numeric, got: {got}")]
    NotNumeric {
        /// The id part as given (everything after `artifact://`).
        got: String,
    },
    /// A numeric id with no artifact in the store.
    #[error("Artifact {id} not found. Available: {}", format_available(available))]
    NotFound {
        /// The id as given.
        id: String,
        /// The ids present in the store, ascending.
        available: Vec<u64>,
    },
    /// Neither `XDG_STATE_HOME` nor `HOME` gives an absolute directory for the default store.
    #[error(
        "cannot locate the artifact store: XDG_STATE_HOME and HOME are unset or not absolute; \
         set artifacts.dir"
    )]
    NoStateDir,
    /// Every id up to `u64::MAX` is taken (a store that was tampered with).
    #[error("no artifact id left in {}: the highest id is taken", dir.display())]
    IdsExhausted {
        /// The store directory.
        dir: PathBuf,
    },
    /// An operating-system error on a named path. The message includes the error's text, so
    /// [`source`](std::error::Error::source) is `None` (a chain printer would repeat it).
    #[error("cannot {action} {}: {error}", path.display())]
    Io {
        /// What was being done, e.g. `create artifact store` (reads as `cannot <action> <path>`).
        action: &'static str,
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        error: io::Error,
    },
}

impl ArtifactError {
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, error: io::Error) -> Self {
        Self::Io {
            action,
            path: path.into(),
            error,
        }
    }
}

/// `1, 2, 5`, or `none` for an empty store (the original's `ids.join(", ") || "none"`).
fn format_available(ids: &[u64]) -> String {
    if ids.is_empty() {
        return "none".to_owned();
    }
    ids.iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn io_error_is_printed_once_not_also_chained() {
        let err = ArtifactError::io(
            "open artifact",
            "/store/1.bash.log",
            io::Error::from_raw_os_error(13),
        );
        assert_eq!(
            err.to_string(),
            "cannot open artifact /store/1.bash.log: Permission denied (os error 13)"
        );
        assert!(err.source().is_none());
    }
}
