//! The session's rc snapshot: made (or taken from the cache) when the session starts, and
//! what happened, for `agentsh doctor` and the session's warnings.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agentsh_process::env::{TerminalKind, hardened_env};
use agentsh_process::sandbox::SandboxSpec;
use agentsh_process::shell::ShellSpec;
use agentsh_rc_snapshot::{SnapshotOptions, rc_file, snapshot_with};

use agentsh_config::Settings;

/// How a session got its rc snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SnapshotOutcome {
    /// There is nothing to snapshot: no home or cache directory, a shell without an rc
    /// (`sh`), or no rc file.
    NoRc,
    /// Made now, by sourcing `rc`.
    Made {
        /// The rc file.
        rc: PathBuf,
        /// How long making it took (waiting for another process making it included).
        took: Duration,
    },
    /// Taken from the cache: no shell was started.
    Cached {
        /// The rc file.
        rc: PathBuf,
    },
    /// There is none: the warning the session reported.
    Failed(String),
}

/// Makes or finds the snapshot of `shell`'s rc for a session: its file, and what happened.
pub(super) fn session_snapshot(
    shell: &ShellSpec,
    home: Option<&Path>,
    cache_dir: Option<&Path>,
    settings: &Settings,
    sandbox: Option<SandboxSpec>,
) -> (Option<PathBuf>, SnapshotOutcome) {
    let (Some(home), Some(cache)) = (home, cache_dir) else {
        return (None, SnapshotOutcome::NoRc);
    };
    let env: Vec<(OsString, OsString)> =
        hardened_env(std::env::vars_os(), &settings.bash.env, TerminalKind::Pipe);
    let options = SnapshotOptions {
        sandbox,
        timeout: settings.bash.snapshot_timeout,
    };
    let started = Instant::now();
    match snapshot_with(shell, home, cache, &env, &options) {
        Ok(None) => (None, SnapshotOutcome::NoRc),
        Ok(Some(snapshot)) => {
            let rc = rc_file(shell.kind, home).unwrap_or_default();
            let outcome = if snapshot.from_cache {
                SnapshotOutcome::Cached { rc }
            } else {
                SnapshotOutcome::Made {
                    rc,
                    took: started.elapsed(),
                }
            };
            (Some(snapshot.path), outcome)
        }
        Err(err) => (None, SnapshotOutcome::Failed(err.to_string())),
    }
}
