//! The `cwd` argument of one call: `@`, `~`, relative paths, then a check.

use std::io;
use std::path::{Path, PathBuf};

use agentsh_protocol::{
    Timeout, ToolDetails, ToolResult, cwd_cannot_enter_text, cwd_missing_text,
    cwd_not_directory_text,
};
use thiserror::Error;

/// Why a `cwd` argument cannot be used. Each message is the text of the tool result the model
/// reads, naming the resolved path.
#[derive(Debug, Error)]
pub enum CwdError {
    /// Nothing exists at the path (or a component of it is not a directory).
    #[error("{}", cwd_missing_text(&path.to_string_lossy()))]
    Missing {
        /// The resolved path.
        path: PathBuf,
    },
    /// The path exists but is not a directory.
    #[error("{}", cwd_not_directory_text(&path.to_string_lossy()))]
    NotDirectory {
        /// The resolved path.
        path: PathBuf,
    },
    /// The path is a directory this user cannot enter (no search permission): nothing can run
    /// there, and no file in it (a project policy) can be read.
    #[error("{}", cwd_cannot_enter_text(&path.to_string_lossy(), &os_reason(error)))]
    CannotEnter {
        /// The resolved path.
        path: PathBuf,
        /// Why it cannot be entered.
        error: io::Error,
    },
    /// The path could not be examined (for example, permission denied on a parent). The text
    /// includes the reason, so the error has no separate `source()`.
    #[error("Working directory is not accessible: {} ({error})", path.to_string_lossy())]
    Inaccessible {
        /// The resolved path.
        path: PathBuf,
        /// Why `stat` failed.
        error: io::Error,
    },
}

impl CwdError {
    /// The resolved path the error is about (reported as `details.cwd`).
    pub fn path(&self) -> &Path {
        match self {
            Self::Missing { path }
            | Self::NotDirectory { path }
            | Self::CannotEnter { path, .. }
            | Self::Inaccessible { path, .. } => path,
        }
    }
}

/// Resolves a `cwd` argument to an absolute path, without touching the file system.
///
/// - `None` → `session_cwd`.
/// - One leading `@` is stripped (models copy `@path` mentions): `@src` → `src`, `@@x` → `@x`.
/// - `~` → `home`; `~/rest` → `home/rest`. `~user` forms are not expanded (they stay a relative
///   name, as no shell runs here); without a `home`, `~` stays literal too.
/// - A relative path is joined to `session_cwd`.
/// - `.` components and repeated or trailing slashes are removed; `..` is kept (removing it
///   lexically would be wrong across symlinks).
pub fn resolve_cwd(requested: Option<&str>, session_cwd: &Path, home: Option<&Path>) -> PathBuf {
    let Some(requested) = requested else {
        return session_cwd.to_path_buf();
    };
    let requested = requested.strip_prefix('@').unwrap_or(requested);
    let expanded: PathBuf = match (requested, home) {
        ("~", Some(home)) => home.to_path_buf(),
        (_, Some(home)) if requested.starts_with("~/") => home.join(&requested[2..]),
        _ => PathBuf::from(requested),
    };
    let joined = if expanded.is_absolute() {
        expanded
    } else {
        session_cwd.join(expanded)
    };
    joined.components().collect()
}

/// Resolves a `cwd` argument (`resolve_cwd`) and checks that it is a directory (following
/// symlinks) that this user may enter, returning the resolved path.
pub fn check_cwd(
    requested: Option<&str>,
    session_cwd: &Path,
    home: Option<&Path>,
) -> Result<PathBuf, CwdError> {
    let path = resolve_cwd(requested, session_cwd, home);
    match std::fs::metadata(&path) {
        Ok(meta) if meta.is_dir() => match can_enter(&path) {
            Ok(()) => Ok(path),
            Err(error) => Err(CwdError::CannotEnter { path, error }),
        },
        Ok(_) => Err(CwdError::NotDirectory { path }),
        Err(err)
            if matches!(
                err.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            Err(CwdError::Missing { path })
        }
        Err(error) => Err(CwdError::Inaccessible { path, error }),
    }
}

/// Whether this process may search (enter) the directory `path`: `access(X_OK)` with the real
/// ids, which is what the shell started here will have.
fn can_enter(path: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt as _;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `c_path` is a valid NUL-terminated string that outlives the call.
    if unsafe { libc::access(c_path.as_ptr(), libc::X_OK) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// An I/O error's reason as a person reads it: `Permission denied`, without `(os error 13)`.
fn os_reason(error: &io::Error) -> String {
    let text = error.to_string();
    match text.find(" (os error ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

/// The result of a call whose `cwd` cannot be used; `details.cwd` is the resolved
/// path.
pub fn cwd_error_result(error: &CwdError, timeout: Timeout) -> ToolResult {
    ToolResult::new(
        error.to_string(),
        ToolDetails::not_run(error.path(), timeout),
        true,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(requested: Option<&str>) -> String {
        resolve_cwd(
            requested,
            Path::new("/work/proj"),
            Some(Path::new("/home/ann")),
        )
        .to_string_lossy()
        .into_owned()
    }

    #[test]
    fn resolution_rules() {
        let cases: &[(Option<&str>, &str)] = &[
            (None, "/work/proj"),
            (Some(""), "/work/proj"),
            (Some("."), "/work/proj"),
            (Some("src"), "/work/proj/src"),
            (Some("./src/"), "/work/proj/src"),
            (Some("src//lib/./x"), "/work/proj/src/lib/x"),
            (Some("../other"), "/work/proj/../other"),
            (Some("/abs/dir"), "/abs/dir"),
            (Some("@src"), "/work/proj/src"),
            (Some("@/abs"), "/abs"),
            (Some("@@src"), "/work/proj/@src"),
            (Some("~"), "/home/ann"),
            (Some("~/"), "/home/ann"),
            (Some("~/code/x"), "/home/ann/code/x"),
            (Some("@~/code"), "/home/ann/code"),
            (Some("~bob/x"), "/work/proj/~bob/x"),
            (Some("a~/b"), "/work/proj/a~/b"),
        ];
        for &(requested, want) in cases {
            assert_eq!(resolve(requested), want, "{requested:?}");
        }
    }

    #[test]
    fn tilde_without_home_stays_literal() {
        let got = resolve_cwd(Some("~/x"), Path::new("/p"), None);
        assert_eq!(got, Path::new("/p/~/x"));
    }

    #[test]
    fn checks_existence_and_kind() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("file.txt"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("sub"), root.join("link")).unwrap();

        assert_eq!(
            check_cwd(Some("sub"), root, None).unwrap(),
            root.join("sub")
        );
        assert_eq!(
            check_cwd(Some("@link"), root, None).unwrap(),
            root.join("link")
        );
        assert_eq!(check_cwd(None, root, None).unwrap(), root);

        let err = check_cwd(Some("nope"), root, None).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("Working directory does not exist: {}/nope", root.display())
        );
        assert_eq!(err.path(), root.join("nope"));

        let err = check_cwd(Some("file.txt"), root, None).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "Working directory is not a directory: {}/file.txt",
                root.display()
            )
        );

        // A path through a file: ENOTDIR is reported as missing, like a missing component.
        let err = check_cwd(Some("file.txt/x"), root, None).unwrap_err();
        assert!(matches!(err, CwdError::Missing { .. }), "{err:?}");
    }

    #[test]
    fn cwd_errors() {
        let dir = tempfile::tempdir().unwrap();
        let err = check_cwd(Some("missing"), dir.path(), None).unwrap_err();
        let result = cwd_error_result(&err, Timeout::DEFAULT);
        let missing = dir.path().join("missing");
        assert_eq!(
            result.text(),
            format!("Working directory does not exist: {}", missing.display())
        );
        assert!(result.is_error);
        assert_eq!(result.details.cwd, missing.to_string_lossy());
        assert_eq!(result.details.exit_code, None);
        assert_eq!(result.details.meta, None);
    }
}
