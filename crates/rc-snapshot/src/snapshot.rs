//! The rc snapshot: the aliases, functions, shell options and `PATH` that the user's
//! rc file sets up, captured once in a time-boxed child shell and cached on disk, so that every
//! new command shell can `source` them without running the rc itself.
//!
//! [`snapshot_for`] (or [`snapshot_with`], which takes a sandbox and a time box) returns the
//! path of a snapshot file for a [`ShellSpec`] (bash: `~/.bashrc`,
//! zsh: `~/.zshrc`; `sh` gets none). The executor sources that file into each new shell. The
//! file is valid to `source` in a non-interactive shell of the same kind; for bash it ends with
//! `shopt -s expand_aliases` so that the aliases work there.
//!
//! # How a snapshot is made
//!
//! The shell is started as an *interactive* shell (`bash --norc --noprofile -i -c …`,
//! `zsh -f -i -c …`) so that rc files guarded by "if not running interactively, stop here" (the
//! Debian/Ubuntu default `~/.bashrc`) give their aliases too. It runs in a session of its own
//! (its supervisor's) with no controlling terminal, stdin and stdout on `/dev/null`, and `HOME`
//! set to the given home. It notes the shell options, sources the rc, notes the options again and writes, between
//! lines carrying a random marker, every function (`declare -f` / `functions`), every alias
//! (`alias` / `alias -L`) and `export PATH=…` (quoted by the shell itself: `printf %q` /
//! `${(qq)…}`). agentsh then keeps:
//!
//! - the options the rc *changed* (so interactive-only defaults of the generating shell are not
//!   carried), except those that would break a command shell or only make sense interactively
//!   (`errexit`, `nounset`, `xtrace`, `verbose`, `onecmd`, `monitor`, `restricted`, `noexec`,
//!   `history`, `histexpand` and their zsh counterparts, plus zsh's start-up options such as
//!   `interactive`, `zle` or `login`);
//! - functions, except those named like a common tool or builtin (`ls`, `cd`, `git`, `grep`,
//!   `rm`, …), starting with `_`, or shell hooks (`precmd`, `preexec`, `chpwd`,
//!   `command_not_found_handle`, …); zsh `TRAP*` functions are skipped too: they are signal
//!   handlers;
//! - aliases, except those named like a common tool or builtin or starting with `_` — an alias
//!   such as `rm='rm -i'` would make `rm` silently do nothing with stdin on `/dev/null`;
//! - `PATH`.
//!
//! The snapshot file lists, in this order: options (before functions, because `extglob` and
//! the like change how function bodies parse), functions, aliases (after functions, so that
//! alias text already expanded in a body is not expanded twice), `shopt -s expand_aliases`
//! (bash) and `PATH`.
//!
//! # Broken and slow rc files
//!
//! The child has its time box ([`SnapshotOptions::timeout`], default
//! [`DEFAULT_SNAPSHOT_TIMEOUT`], at most [`MAX_SNAPSHOT_TIMEOUT`]) to finish, counted from its
//! start; then it and its whole tree are killed with SIGKILL, and there is no snapshot
//! ([`SnapshotError::Timeout`]). It runs under a supervisor
//! with the same containment as every shell (a cgroup of its own, or agentsh as subreaper;
//! see [`agentsh_process::containment()`]), so what it leaves is killed after a normal end
//! too: an rc that starts `sleep 100 &`, `(setsid sleep 100 &)` or `eval $(ssh-agent)` leaves
//! nothing behind. An rc counts as broken when sourcing it returns the shell's syntax-error status
//! (bash `2`, zsh `126`: zsh's "sourcing aborted by an error") or when the shell ends before
//! the snapshot is written (`exit` or `exec` in the rc). Any other non-zero status is normal:
//! rc files commonly end with `[ -f ~/.x ] && . ~/.x`, which returns 1. Errors while sourcing
//! do not stop the snapshot; a syntax error in a file the rc sources is not detected. The rc
//! is sourced on the left of `||`, so a `set -e` in it does not end the generating shell early.
//! The rc's stdout is discarded; the shell's messages that name the rc file go into the warning.
//!
//! # Cache
//!
//! Snapshots live in a private directory (mode 0700, owned by the user; default
//! [`default_cache_dir`]) as mode 0600 files named `<kind>-<hash>.sh`, the hash (SHA-256) taken
//! over the snapshot format version, the shell's path, size and mtime, the rc files' paths,
//! sizes and mtimes (bash also keys `~/.bash_aliases`, which the default `~/.bashrc` sources),
//! and the `PATH` the shell starts with (the snapshot exports the `PATH` the rc computed from
//! it). A file is written to a temporary name and renamed, so no process sees a partial
//! snapshot; a cache hit spawns nothing. Stale snapshots are not removed.
//!
//! A snapshot is made at most once at a time on a host: the process that makes it holds an
//! exclusive `flock` on `<kind>-<hash>.lock` (0600, next to the snapshot) while the shell runs;
//! the others wait for the lock, then find the snapshot (or the failure) and use it. Sessions
//! started together thus run the rc once instead of once each, and the time box of the one
//! making it is not eaten by waiting. The kernel releases the lock when its holder ends, even
//! by SIGKILL, so the file that stays never blocks; a holder that is stopped is waited for at
//! most [`MAX_SNAPSHOT_TIMEOUT`] and a grace period, and then the waiter makes the snapshot
//! itself.
//!
//! When the rc itself is why there is no snapshot (a time-out, a syntax error, an `exit`, too
//! much to carry), the warning is kept in `<kind>-<hash>.failed` (0600) and later sessions give
//! it at once ([`SnapshotError::Remembered`]) instead of running the rc again. Editing the rc
//! changes the key, so it is tried afresh; a remembered time-out is also tried again with a
//! longer time box than the one that ran out. Failures of the host (the shell cannot start,
//! the cache cannot be written) are not remembered.
//!
//! # Layout
//!
//! This module (the entry points, the options and the error), and beside it `cache` (the key,
//! its files and the private directory), `lock` (one maker at a time), `failure` (remembered
//! failures), `script` (the generating scripts per shell), `run` (the time-boxed run of the
//! generating shell, under `agentsh-process`'s supervisor) and `dump` (parsing its output and
//! rendering the snapshot file).

use std::ffi::OsString;
use std::fs;
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agentsh_process::sandbox::SandboxSpec;
use agentsh_process::shell::{ShellKind, ShellSpec};

use crate::cache::{self, Snapshot};
use crate::error::{SnapshotError, io_error};
use crate::script::Generator;
use crate::{failure, lock, run};

/// How long the child that sources the rc may run before it is killed, unless
/// [`SnapshotOptions::timeout`] says otherwise (10 s); the longest time box a snapshot is given
/// (60 s), a longer [`SnapshotOptions::timeout`] being cut to it. The configuration shares both.
pub use agentsh_protocol::{DEFAULT_SNAPSHOT_TIMEOUT, MAX_SNAPSHOT_TIMEOUT};

/// How long a process waits for another one making the same snapshot before it makes it
/// itself: the longest time box and a grace period for ending the shell and writing the file.
/// Only a holder that is stopped or hung is waited for this long.
const LOCK_WAIT: Duration = MAX_SNAPSHOT_TIMEOUT.saturating_add(Duration::from_secs(30));

/// The rc file a snapshot is made from: `~/.bashrc` for bash, `~/.zshrc` for zsh, none for sh.
pub fn rc_file(kind: ShellKind, home: &Path) -> Option<PathBuf> {
    match kind {
        ShellKind::Bash => Some(home.join(".bashrc")),
        ShellKind::Zsh => Some(home.join(".zshrc")),
        ShellKind::Sh => None,
    }
}

/// The default cache directory: `$XDG_CACHE_HOME/agentsh/snapshots`, else
/// `$HOME/.cache/agentsh/snapshots` (a relative `XDG_CACHE_HOME` is ignored, as the XDG spec
/// says). `None` when neither variable gives an absolute path. `env` looks up variables.
pub fn default_cache_dir<F>(env: F) -> Option<PathBuf>
where
    F: Fn(&str) -> Option<OsString>,
{
    let absolute = |name: &str| env(name).map(PathBuf::from).filter(|p| p.is_absolute());
    let base = absolute("XDG_CACHE_HOME").or_else(|| absolute("HOME").map(|h| h.join(".cache")))?;
    Some(base.join("agentsh").join("snapshots"))
}

/// How a snapshot is made: the sandbox its shell runs under and its time box.
#[derive(Debug, Clone)]
pub struct SnapshotOptions {
    /// The sandbox of the session the snapshot is for: the generating shell runs under it (with
    /// the cache directory writable too, for its dump), and its snapshot is cached apart from
    /// unsandboxed ones (the rc may behave differently when it cannot write). `None`: no
    /// sandbox.
    pub sandbox: Option<SandboxSpec>,
    /// How long the generating shell may run, counted from its start (not from when this
    /// process began to wait for another one making the same snapshot). At most
    /// [`MAX_SNAPSHOT_TIMEOUT`]; longer is cut to it. Default [`DEFAULT_SNAPSHOT_TIMEOUT`].
    pub timeout: Duration,
}

impl Default for SnapshotOptions {
    fn default() -> Self {
        Self {
            sandbox: None,
            timeout: DEFAULT_SNAPSHOT_TIMEOUT,
        }
    }
}

/// Returns the rc snapshot for `shell`, making it if the cache has none, with the default
/// [`SnapshotOptions`] (no sandbox, [`DEFAULT_SNAPSHOT_TIMEOUT`]); see [`snapshot_with`].
pub fn snapshot_for(
    shell: &ShellSpec,
    home: &Path,
    cache_dir: &Path,
    env: &[(OsString, OsString)],
) -> Result<Option<Snapshot>, SnapshotError> {
    snapshot_with(shell, home, cache_dir, env, &SnapshotOptions::default())
}

/// Returns the rc snapshot for `shell`, making it if the cache has none.
///
/// - `home`: the user's home directory; the rc file is found there and the generating shell
///   gets it as `HOME`.
/// - `cache_dir`: where snapshots are kept ([`default_cache_dir`] normally); created private
///   (0700) if missing.
/// - `env`: the environment the command shells start with (the output of
///   [`hardened_env`](agentsh_process::env::hardened_env)); the generating shell gets the same, so the
///   `PATH` it exports is the one the command shells would have computed.
/// - `options`: the sandbox and the time box. A sandbox the kernel cannot enforce is
///   [`SnapshotError::Spawn`] with the `Sandbox unavailable: …` message, and the rc does not
///   run.
///
/// `Ok(None)` for `sh` or when the rc file does not exist. A cache hit, or a failure
/// remembered for this rc ([`SnapshotError::Remembered`]), starts no process. Otherwise only
/// one process on the host makes a given snapshot at a time: the others wait for it (at most
/// [`MAX_SNAPSHOT_TIMEOUT`] and a grace period) and take its result; the one making it blocks
/// for at most about `options.timeout`.
pub fn snapshot_with(
    shell: &ShellSpec,
    home: &Path,
    cache_dir: &Path,
    env: &[(OsString, OsString)],
    options: &SnapshotOptions,
) -> Result<Option<Snapshot>, SnapshotError> {
    let (Some(generator), Some(rc)) = (Generator::for_kind(shell.kind), rc_file(shell.kind, home))
    else {
        return Ok(None);
    };
    if !rc.is_file() {
        return Ok(None);
    }
    let timeout = options.timeout.min(MAX_SNAPSHOT_TIMEOUT);
    let path_var = env
        .iter()
        .rev()
        .find(|(name, _)| name == "PATH")
        .map(|(_, value)| value.as_os_str());
    let entry = cache::Entry::new(
        cache_dir,
        &format!(
            "{}-{}{}",
            shell.kind.name(),
            cache::cache_key(shell, &cache::key_files(shell.kind, home), path_var),
            if options.sandbox.is_some() {
                "-sandboxed"
            } else {
                ""
            }
        ),
    );

    cache::ensure_private_dir(cache_dir)?;
    if let Some(found) = entry.lookup(&rc, timeout) {
        return found;
    }
    // Held to the end of this function: closing the file releases the lock.
    let _lock = lock::lock(&entry.lock, LOCK_WAIT)?;
    // Whoever held the lock may have made the snapshot (or failed to) in the meantime.
    if let Some(found) = entry.lookup(&rc, timeout) {
        return found;
    }

    let content = match run::generate(
        &generator,
        shell,
        &rc,
        home,
        cache_dir,
        env,
        options.sandbox.as_ref(),
        timeout,
    ) {
        Ok(content) => content,
        Err(error) => {
            if let Some(failure) = failure::Failure::of(&error) {
                // Best effort: without the record the next session only tries again.
                let _ = write_private(cache_dir, &entry.failed, failure.render().as_bytes());
            }
            return Err(error);
        }
    };
    write_private(cache_dir, &entry.snapshot, &content)?;
    // A record of an earlier time-out with a shorter time box is moot now.
    let _ = fs::remove_file(&entry.failed);
    Ok(Some(Snapshot {
        path: entry.snapshot,
        from_cache: false,
    }))
}

/// Writes `content` to `target` in `dir` as a private (0600) file, through a temporary name
/// and a rename, so no process sees a partial file.
fn write_private(dir: &Path, target: &Path, content: &[u8]) -> Result<(), SnapshotError> {
    let mut file = tempfile::Builder::new()
        .prefix(".snapshot-")
        .tempfile_in(dir)
        .map_err(|error| io_error("create a file in", dir, error))?;
    file.write_all(content)
        .and_then(|()| file.as_file().sync_all())
        .map_err(|error| io_error("write", file.path(), error))?;
    // Temporary files are created 0600 already; say so explicitly, it is the contract.
    fs::set_permissions(file.path(), fs::Permissions::from_mode(0o600))
        .map_err(|error| io_error("set permissions of", file.path(), error))?;
    file.persist(target)
        .map_err(|err| io_error("write", target, err.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_cache_dir_prefers_absolute_xdg() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        assert_eq!(
            default_cache_dir(env(&[("XDG_CACHE_HOME", "/c"), ("HOME", "/h")])),
            Some(PathBuf::from("/c/agentsh/snapshots"))
        );
        assert_eq!(
            default_cache_dir(env(&[("XDG_CACHE_HOME", "rel"), ("HOME", "/h")])),
            Some(PathBuf::from("/h/.cache/agentsh/snapshots"))
        );
        assert_eq!(default_cache_dir(env(&[("HOME", "")])), None);
    }
}
