//! The rc snapshot (SPEC §6): the aliases, functions, shell options and `PATH` that the user's
//! rc file sets up, captured once in a time-boxed child shell and cached on disk, so that every
//! new command shell can `source` them without running the rc itself.
//!
//! [`snapshot_for`] returns the path of a snapshot file for a [`ShellSpec`] (bash: `~/.bashrc`,
//! zsh: `~/.zshrc`; `sh` gets none). The executor sources that file into each new shell. The
//! file is valid to `source` in a non-interactive shell of the same kind; for bash it ends with
//! `shopt -s expand_aliases` so that the aliases work there.
//!
//! # How a snapshot is made
//!
//! The shell is started as an *interactive* shell (`bash --norc --noprofile -i -c …`,
//! `zsh -f -i -c …`) so that rc files guarded by "if not running interactively, stop here" (the
//! Debian/Ubuntu default `~/.bashrc`) give their aliases too. It runs in a session of its own
//! with no controlling terminal, stdin and stdout on `/dev/null`, and `HOME` set to the given
//! home. It notes the shell options, sources the rc, notes the options again and writes, between
//! lines carrying a random marker, every function (`declare -f` / `functions`), every alias
//! (`alias` / `alias -L`) and `export PATH=…` (quoted by the shell itself: `printf %q` /
//! `${(qq)…}`). agentsh then keeps:
//!
//! - the options the rc *changed* (so interactive-only defaults of the generating shell are not
//!   carried), except [`UNCARRIED_OPTIONS_BASH`] / [`UNCARRIED_OPTIONS_ZSH`];
//! - functions, except those named in [`SHADOWED_NAMES`], starting with `_`, or in
//!   [`HOOK_FUNCTIONS`] (zsh `TRAP*` functions are skipped too: they are signal handlers);
//! - aliases, except those named in [`SHADOWED_NAMES`] or starting with `_` — an alias such as
//!   `rm='rm -i'` would make `rm` silently do nothing with stdin on `/dev/null`;
//! - `PATH`.
//!
//! The snapshot file lists, in this order: options (before functions, because `extglob` and
//! the like change how function bodies parse), functions, aliases (after functions, so that
//! alias text already expanded in a body is not expanded twice), `shopt -s expand_aliases`
//! (bash) and `PATH`.
//!
//! # Broken and slow rc files
//!
//! The child has [`SNAPSHOT_TIMEOUT`] to finish; then it and everything in its session and
//! process group is killed with SIGKILL, and there is no snapshot ([`SnapshotError::Timeout`]).
//! Leftover processes of the session are killed after a normal end too (an rc that starts
//! `sleep 100 &` leaves nothing behind); only a process that left the session with `setsid`
//! escapes. An rc counts as broken when sourcing it returns the shell's syntax-error status
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

use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write as _};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};
use sha2::{Digest, Sha256};

use crate::shell::{ShellKind, ShellSpec};

/// How long the child that sources the rc may run before it is killed (SPEC §6: 2 s).
pub const SNAPSHOT_TIMEOUT: Duration = Duration::from_secs(2);

/// Names of common tools and shell builtins. A function or alias of such a name is not
/// carried into command shells: the agent relies on these behaving as documented (and
/// `rm -i` style aliases would wait for an answer that never comes). Language runtimes and
/// package managers (`node`, `python`, `npm`, …) are deliberately not listed: rc functions of
/// those names are usually version-manager shims the user needs.
pub const SHADOWED_NAMES: &[&str] = &[
    "[", "awk", "basename", "builtin", "cat", "cd", "chmod", "chown", "command", "cp", "curl",
    "cut", "date", "diff", "dirname", "du", "echo", "egrep", "env", "eval", "exec", "exit",
    "export", "false", "fd", "fgrep", "find", "git", "grep", "head", "kill", "less", "ln", "ls",
    "mkdir", "more", "mv", "patch", "popd", "printf", "pushd", "pwd", "read", "readlink",
    "realpath", "rg", "rm", "rmdir", "sed", "set", "shopt", "sleep", "sort", "source", "stat",
    "tail", "tar", "tee", "test", "time", "touch", "tr", "trap", "true", "type", "uniq", "unset",
    "wc", "wget", "which", "xargs",
];

/// Functions the shell calls by itself (hooks). Not carried: they would run around every
/// command (`precmd`, `preexec`, `chpwd`, …) or replace "command not found" with suggestions.
pub const HOOK_FUNCTIONS: &[&str] = &[
    "command_not_found_handle",
    "command_not_found_handler",
    "precmd",
    "preexec",
    "chpwd",
    "periodic",
    "zshexit",
    "zshaddhistory",
];

/// bash options (`set -o` and `shopt` names) never carried. The first seven are SPEC §6;
/// `noexec` would stop the command shell from running anything, and `history` / `histexpand`
/// are interactive-only (a snapshot is generated in an interactive shell; `!` must stay a
/// plain character in commands).
pub const UNCARRIED_OPTIONS_BASH: &[&str] = &[
    "errexit",
    "nounset",
    "xtrace",
    "verbose",
    "onecmd",
    "monitor",
    "restricted",
    "noexec",
    "history",
    "histexpand",
];

/// zsh options never carried, in zsh's normalised spelling (lower case, no `_`, without a
/// `no` prefix: `nounset` is the option `unset` turned off). The SPEC §6 list in zsh names
/// (`unset` for nounset, `singlecommand` for onecmd), plus `exec` (`-n`), `errreturn` (like
/// errexit, for functions) and options that only describe how the shell was started.
pub const UNCARRIED_OPTIONS_ZSH: &[&str] = &[
    "errexit",
    "unset",
    "xtrace",
    "verbose",
    "singlecommand",
    "monitor",
    "restricted",
    "exec",
    "errreturn",
    "interactive",
    "shinstdin",
    "zle",
    "login",
    "privileged",
    "rcs",
    "globalrcs",
];

/// Version of the snapshot format and script, part of the cache key: a change to what a
/// snapshot contains bumps it, so old cached files are not reused.
const FORMAT_VERSION: &str = "agentsh-rc-snapshot-1";

/// Largest generated dump read back; beyond it there is no snapshot.
const MAX_DUMP_BYTES: u64 = 32 * 1024 * 1024;

/// How much of the child's stderr is kept for a warning.
const MAX_STDERR_BYTES: u64 = 64 * 1024;

/// `$0` of the generating shell, shown in its own error messages.
const GENERATOR_NAME: &str = "agentsh-snapshot";

/// Sources the rc (`$2`) and writes the dump to `$1`, each section introduced by a line
/// `$3 <section>`. Builtins are called through `\builtin` so that rc functions or aliases of
/// the same names do not interfere.
const BASH_SCRIPT: &str = r#"__agentsh_snap_out=$1 __agentsh_snap_rc=$2 __agentsh_snap_mark=$3
\builtin unset HISTFILE
\builtin set --
{ \builtin printf '%s options-before\n' "$__agentsh_snap_mark"; \builtin set +o; \builtin shopt -p; } >>"$__agentsh_snap_out"
__agentsh_snap_status=0
\builtin source -- "$__agentsh_snap_rc" </dev/null || __agentsh_snap_status=$?
{ \builtin printf '%s options-after\n' "$__agentsh_snap_mark"; \builtin set +o; \builtin shopt -p; } >>"$__agentsh_snap_out"
\builtin shopt -u expand_aliases
\builtin set +o errexit +o nounset +o xtrace +o verbose +o noglob
\builtin trap - DEBUG RETURN ERR EXIT
IFS=$' \t\n'
{
  \builtin printf '%s status %s\n' "$__agentsh_snap_mark" "$__agentsh_snap_status"
  while IFS= \builtin read -r __agentsh_snap_name; do
    \builtin printf '%s function %s\n' "$__agentsh_snap_mark" "$__agentsh_snap_name"
    \builtin declare -f -- "$__agentsh_snap_name"
  done < <(\builtin compgen -A function)
  while IFS= \builtin read -r __agentsh_snap_name; do
    \builtin printf '%s alias %s\n' "$__agentsh_snap_mark" "$__agentsh_snap_name"
    \builtin alias -- "$__agentsh_snap_name"
  done < <(\builtin compgen -a)
  \builtin printf '%s path\n' "$__agentsh_snap_mark"
  \builtin printf 'export PATH=%q\n' "$PATH"
  \builtin printf '%s end\n' "$__agentsh_snap_mark"
} >>"$__agentsh_snap_out"
\builtin unset HISTFILE
\builtin exit 0
"#;

/// The zsh counterpart of [`BASH_SCRIPT`]. `emulate zsh` after the options are noted gives the
/// rest of the script default options whatever the rc set.
const ZSH_SCRIPT: &str = r#"__agentsh_snap_out=$1 __agentsh_snap_rc=$2 __agentsh_snap_mark=$3
\builtin unset HISTFILE
\builtin set --
{ \builtin print -r -- "$__agentsh_snap_mark options-before"; \builtin setopt; } >>"$__agentsh_snap_out"
__agentsh_snap_status=0
\builtin source "$__agentsh_snap_rc" </dev/null || __agentsh_snap_status=$?
{ \builtin print -r -- "$__agentsh_snap_mark options-after"; \builtin setopt; } >>"$__agentsh_snap_out"
\builtin emulate zsh
\builtin unsetopt aliases
\builtin trap - EXIT ZERR DEBUG
{
  \builtin print -r -- "$__agentsh_snap_mark status $__agentsh_snap_status"
  for __agentsh_snap_name in ${(ok)functions}; do
    \builtin print -r -- "$__agentsh_snap_mark function $__agentsh_snap_name"
    \builtin functions -- "$__agentsh_snap_name"
  done
  for __agentsh_snap_name in ${(ok)aliases}; do
    \builtin print -r -- "$__agentsh_snap_mark alias $__agentsh_snap_name"
    \builtin alias -L -- "$__agentsh_snap_name"
  done
  \builtin print -r -- "$__agentsh_snap_mark path"
  \builtin print -r -- "export PATH=${(qq)PATH}"
  \builtin print -r -- "$__agentsh_snap_mark end"
} >>"$__agentsh_snap_out"
\builtin unset HISTFILE
\builtin exit 0
"#;

/// How a snapshot is made for one kind of shell.
struct Generator {
    /// Flags before the script: no startup files, interactive, command string.
    flags: &'static [&'static str],
    /// The script, given `$1` dump file, `$2` rc file, `$3` marker.
    script: &'static str,
    /// The status `source` returns when the file has a syntax error.
    syntax_error_status: i32,
}

impl Generator {
    fn for_kind(kind: ShellKind) -> Option<Self> {
        match kind {
            ShellKind::Bash => Some(Self {
                flags: &["--norc", "--noprofile", "-i", "-c"],
                script: BASH_SCRIPT,
                syntax_error_status: 2,
            }),
            ShellKind::Zsh => Some(Self {
                flags: &["-f", "-i", "-c"],
                script: ZSH_SCRIPT,
                // zsh's `source` returns 128 - SOURCE_ERROR (2) when sourcing aborts on an error.
                syntax_error_status: 126,
            }),
            ShellKind::Sh => None,
        }
    }
}

/// A usable snapshot file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The file to `source` in a new shell of the same kind.
    pub path: PathBuf,
    /// True when the file was already cached and no shell was started to make it.
    pub from_cache: bool,
}

/// Why there is no snapshot. Not fatal: commands run without the rc's aliases, functions and
/// options; the message (its `Display`) is the warning to show the user.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// Sourcing the rc took longer than [`SNAPSHOT_TIMEOUT`].
    #[error(
        "no rc snapshot: sourcing {} took longer than {} s, so it was stopped; commands run without its aliases, functions and options (make the rc faster)",
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
    #[error("no rc snapshot: cannot start {}: {source}", shell.display())]
    Spawn {
        /// The shell program.
        shell: PathBuf,
        /// The error from the operating system.
        source: io::Error,
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
    /// A file system operation on the cache failed.
    #[error("no rc snapshot: cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done (`create`, `write`, `read`, …).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The error from the operating system.
        source: io::Error,
    },
}

fn detail_suffix(detail: &str) -> String {
    if detail.is_empty() {
        String::new()
    } else {
        format!(": {detail}")
    }
}

/// The rc file a snapshot is made from: `~/.bashrc` for bash, `~/.zshrc` for zsh, none for sh.
pub fn rc_file(kind: ShellKind, home: &Path) -> Option<PathBuf> {
    match kind {
        ShellKind::Bash => Some(home.join(".bashrc")),
        ShellKind::Zsh => Some(home.join(".zshrc")),
        ShellKind::Sh => None,
    }
}

/// The files whose size and mtime key the cache: the rc file and, for bash, `~/.bash_aliases`.
fn key_files(kind: ShellKind, home: &Path) -> Vec<PathBuf> {
    match kind {
        ShellKind::Bash => vec![home.join(".bashrc"), home.join(".bash_aliases")],
        ShellKind::Zsh => vec![home.join(".zshrc")],
        ShellKind::Sh => Vec::new(),
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

/// Returns the rc snapshot for `shell`, making it if the cache has none.
///
/// - `home`: the user's home directory; the rc file is found there and the generating shell
///   gets it as `HOME`.
/// - `cache_dir`: where snapshots are kept ([`default_cache_dir`] normally); created private
///   (0700) if missing.
/// - `env`: the environment the command shells start with (the output of
///   [`hardened_env`](crate::env::hardened_env)); the generating shell gets the same, so the
///   `PATH` it exports is the one the command shells would have computed.
///
/// `Ok(None)` for `sh` or when the rc file does not exist. Blocks for at most about
/// [`SNAPSHOT_TIMEOUT`] when the snapshot has to be made; a cache hit starts no process.
pub fn snapshot_for(
    shell: &ShellSpec,
    home: &Path,
    cache_dir: &Path,
    env: &[(OsString, OsString)],
) -> Result<Option<Snapshot>, SnapshotError> {
    let (Some(generator), Some(rc)) = (Generator::for_kind(shell.kind), rc_file(shell.kind, home))
    else {
        return Ok(None);
    };
    if !rc.is_file() {
        return Ok(None);
    }
    let path_var = env
        .iter()
        .rev()
        .find(|(name, _)| name == "PATH")
        .map(|(_, value)| value.as_os_str());
    let name = format!(
        "{}-{}.sh",
        shell.kind.name(),
        cache_key(shell, &key_files(shell.kind, home), path_var)
    );
    let target = cache_dir.join(name);

    ensure_private_dir(cache_dir)?;
    if target.is_file() {
        return Ok(Some(Snapshot {
            path: target,
            from_cache: true,
        }));
    }

    let content = generate(&generator, shell, &rc, home, cache_dir, env)?;
    let mut file = tempfile::Builder::new()
        .prefix(".snapshot-")
        .tempfile_in(cache_dir)
        .map_err(|source| io_error("create a file in", cache_dir, source))?;
    file.write_all(&content)
        .and_then(|()| file.as_file().sync_all())
        .map_err(|source| io_error("write", file.path(), source))?;
    // Temporary files are created 0600 already; say so explicitly, it is the contract.
    fs::set_permissions(file.path(), fs::Permissions::from_mode(0o600))
        .map_err(|source| io_error("set permissions of", file.path(), source))?;
    file.persist(&target)
        .map_err(|err| io_error("write", &target, err.error))?;
    Ok(Some(Snapshot {
        path: target,
        from_cache: false,
    }))
}

fn io_error(action: &'static str, path: &Path, source: io::Error) -> SnapshotError {
    SnapshotError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// Hex SHA-256 (first 128 bits) of everything a snapshot depends on.
fn cache_key(shell: &ShellSpec, files: &[PathBuf], path_var: Option<&OsStr>) -> String {
    let mut hasher = Sha256::new();
    let mut field = |bytes: &[u8]| {
        // Length-prefixed, so that field boundaries cannot shift.
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    };
    field(FORMAT_VERSION.as_bytes());
    field(shell.kind.name().as_bytes());
    field(shell.path.as_os_str().as_bytes());
    field(&file_stamp(&shell.path));
    for file in files {
        field(file.as_os_str().as_bytes());
        field(&file_stamp(file));
    }
    match path_var {
        Some(path) => field(path.as_bytes()),
        None => field(b"\0no PATH"),
    }
    let digest = hasher.finalize();
    let mut hex = String::with_capacity(32);
    for byte in &digest[..16] {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

/// Size and mtime (nanoseconds) of a file, or a fixed stamp for a missing one.
fn file_stamp(path: &Path) -> Vec<u8> {
    match fs::metadata(path) {
        Ok(meta) => {
            let mut stamp = Vec::with_capacity(24);
            stamp.extend_from_slice(&meta.size().to_le_bytes());
            stamp.extend_from_slice(&meta.mtime().to_le_bytes());
            stamp.extend_from_slice(&meta.mtime_nsec().to_le_bytes());
            stamp
        }
        Err(_) => b"missing".to_vec(),
    }
}

/// Creates `dir` (and missing parents) with mode 0700 and checks that it is a real directory
/// owned by this user that no one else can enter; a directory of ours with a wider mode is
/// narrowed to 0700.
fn ensure_private_dir(dir: &Path) -> Result<(), SnapshotError> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|source| io_error("create", dir, source))?;
    let meta = fs::symlink_metadata(dir).map_err(|source| io_error("inspect", dir, source))?;
    if !meta.is_dir() || meta.uid() != rustix::process::geteuid().as_raw() {
        return Err(SnapshotError::CacheDirNotPrivate {
            path: dir.to_path_buf(),
        });
    }
    if meta.mode() & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
            .map_err(|source| io_error("set permissions of", dir, source))?;
    }
    Ok(())
}

/// Runs the generating shell and turns its dump into snapshot text.
fn generate(
    generator: &Generator,
    shell: &ShellSpec,
    rc: &Path,
    home: &Path,
    cache_dir: &Path,
    env: &[(OsString, OsString)],
) -> Result<Vec<u8>, SnapshotError> {
    let dump_file = tempfile::Builder::new()
        .prefix(".dump-")
        .tempfile_in(cache_dir)
        .map_err(|source| io_error("create a file in", cache_dir, source))?;
    let mut stderr_file = tempfile::tempfile_in(cache_dir)
        .map_err(|source| io_error("create a file in", cache_dir, source))?;
    let child_stderr = stderr_file
        .try_clone()
        .map_err(|source| io_error("create a file in", cache_dir, source))?;
    let marker = new_marker();

    let mut command = Command::new(&shell.path);
    command
        .args(generator.flags)
        .arg(generator.script)
        .arg(GENERATOR_NAME)
        .arg(dump_file.path())
        .arg(rc)
        .arg(&marker)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env("HOME", home)
        .current_dir(home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(child_stderr));
    // SAFETY: `setsid` is async-signal-safe and touches no memory of the parent; it is the only
    // thing done between fork and exec. It gives the child a session of its own without a
    // controlling terminal, so the rc cannot read from or write to the user's terminal, and
    // everything it starts can be found (and killed) by session id.
    unsafe {
        command.pre_exec(|| {
            rustix::process::setsid()?;
            Ok(())
        });
    }
    let child = command.spawn().map_err(|source| SnapshotError::Spawn {
        shell: shell.path.clone(),
        source,
    })?;
    let status = wait_time_boxed(child, SNAPSHOT_TIMEOUT);

    let stderr = read_stderr(&mut stderr_file);
    let detail = rc_messages(&stderr, rc);
    let Some(status) = status else {
        return Err(SnapshotError::Timeout {
            rc: rc.to_path_buf(),
            timeout: SNAPSHOT_TIMEOUT,
        });
    };

    let len = dump_file
        .as_file()
        .metadata()
        .map_err(|source| io_error("read", dump_file.path(), source))?
        .len();
    if len > MAX_DUMP_BYTES {
        return Err(SnapshotError::TooLarge {
            rc: rc.to_path_buf(),
            max: MAX_DUMP_BYTES,
        });
    }
    let mut raw = Vec::with_capacity(len as usize);
    File::open(dump_file.path())
        .and_then(|mut f| f.read_to_end(&mut raw))
        .map_err(|source| io_error("read", dump_file.path(), source))?;
    let dump = Dump::parse(&raw, marker.as_bytes());
    if !dump.complete {
        return Err(SnapshotError::ShellEnded {
            rc: rc.to_path_buf(),
            how: describe_status(status),
            detail,
        });
    }
    if dump.status == Some(generator.syntax_error_status) {
        return Err(SnapshotError::Broken {
            rc: rc.to_path_buf(),
            status: generator.syntax_error_status,
            detail,
        });
    }
    Ok(render(shell.kind, &dump, rc))
}

/// A marker line prefix that rc content cannot contain by accident (96 random bits).
fn new_marker() -> String {
    format!("__agentsh_snapshot_{}", crate::random_hex(12))
}

/// Waits for `child` at most `timeout`. On time-out kills its session and process group and
/// returns `None`; either way, whatever is left of its session is killed before returning.
fn wait_time_boxed(mut child: Child, timeout: Duration) -> Option<ExitStatus> {
    let Some(sid) = i32::try_from(child.id()).ok().and_then(Pid::from_raw) else {
        // Unreachable on Linux (pids fit in i32 and are > 0); do not risk killing anything else.
        return child.wait().ok();
    };
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(1);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        let now = Instant::now();
        if now >= deadline {
            break None;
        }
        std::thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(10));
    };
    kill_session(sid);
    if status.is_none() {
        // SIGKILL has been sent; reap the shell so it does not stay a zombie.
        let _ = child.wait();
    }
    status
}

/// Sends SIGKILL to the process group `sid` and to every process whose session or process
/// group is `sid`, until none is left (bounded). `sid` is a session leader we started, so it
/// is never 1 (kill(-1) would signal everything).
fn kill_session(sid: Pid) {
    if sid == Pid::INIT {
        return;
    }
    let _ = rustix::process::kill_process_group(sid, Signal::KILL);
    for _ in 0..50 {
        let members = session_members(sid.as_raw_nonzero().get());
        if members.is_empty() {
            return;
        }
        for pid in members {
            if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
                let _ = rustix::process::kill_process(pid, Signal::KILL);
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Live processes (not zombies) whose session id or process group id is `sid`, read from
/// `/proc/<pid>/stat`.
fn session_members(sid: i32) -> Vec<u32> {
    let own = std::process::id();
    let Ok(pids) = crate::tree::proc_pids() else {
        return Vec::new();
    };
    let mut members = Vec::new();
    for pid in pids.filter(|&pid| pid > 1 && pid != own) {
        let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the command name (which may contain spaces and parentheses):
        // state ppid pgrp session …
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let mut fields = rest.split_ascii_whitespace();
        let state = fields.next().unwrap_or("Z");
        let _ppid = fields.next();
        let pgrp = fields.next().and_then(|f| f.parse::<i32>().ok());
        let session = fields.next().and_then(|f| f.parse::<i32>().ok());
        let dead = state.starts_with(['Z', 'X', 'x']);
        if !dead && (pgrp == Some(sid) || session == Some(sid)) {
            members.push(pid);
        }
    }
    members
}

fn read_stderr(file: &mut File) -> Vec<u8> {
    let mut bytes = Vec::new();
    if file.seek(SeekFrom::Start(0)).is_ok() {
        let _ = file.take(MAX_STDERR_BYTES).read_to_end(&mut bytes);
    }
    bytes
}

/// The first few stderr lines that name the rc file (the shell's own error messages), joined
/// with ` / `.
fn rc_messages(stderr: &[u8], rc: &Path) -> String {
    let text = String::from_utf8_lossy(stderr);
    let rc = rc.to_string_lossy();
    text.lines()
        .filter(|line| line.contains(rc.as_ref()))
        .take(3)
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" / ")
}

fn describe_status(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        (None, None) => status.to_string(),
    }
}

/// The generating shell's output, split at marker lines.
#[derive(Debug, Default)]
struct Dump {
    options_before: Vec<Vec<u8>>,
    options_after: Vec<Vec<u8>>,
    status: Option<i32>,
    functions: Vec<(String, Vec<u8>)>,
    aliases: Vec<(String, Vec<u8>)>,
    path: Vec<u8>,
    complete: bool,
}

#[derive(Clone, Copy)]
enum Section {
    None,
    OptionsBefore,
    OptionsAfter,
    Function,
    Alias,
    Path,
}

impl Dump {
    fn parse(raw: &[u8], marker: &[u8]) -> Self {
        let mut dump = Self::default();
        let mut section = Section::None;
        let mut lines = raw.split(|&b| b == b'\n').peekable();
        while let Some(line) = lines.next() {
            // `split` yields an empty piece after a final newline; it is not a line.
            if line.is_empty() && lines.peek().is_none() {
                break;
            }
            if let Some(header) = line
                .strip_prefix(marker)
                .and_then(|rest| rest.strip_prefix(b" "))
            {
                let header = String::from_utf8_lossy(header);
                let (kind, arg) = header.split_once(' ').unwrap_or((&header, ""));
                section = match kind {
                    "options-before" => Section::OptionsBefore,
                    "options-after" => Section::OptionsAfter,
                    "status" => {
                        dump.status = arg.trim().parse().ok();
                        Section::None
                    }
                    "function" => {
                        dump.functions.push((arg.to_owned(), Vec::new()));
                        Section::Function
                    }
                    "alias" => {
                        dump.aliases.push((arg.to_owned(), Vec::new()));
                        Section::Alias
                    }
                    "path" => Section::Path,
                    "end" => {
                        dump.complete = true;
                        Section::None
                    }
                    _ => Section::None,
                };
                continue;
            }
            let append = |body: &mut Vec<u8>| {
                body.extend_from_slice(line);
                body.push(b'\n');
            };
            match section {
                Section::None => {}
                Section::OptionsBefore => dump.options_before.push(line.to_vec()),
                Section::OptionsAfter => dump.options_after.push(line.to_vec()),
                Section::Function => {
                    if let Some((_, body)) = dump.functions.last_mut() {
                        append(body);
                    }
                }
                Section::Alias => {
                    if let Some((_, body)) = dump.aliases.last_mut() {
                        append(body);
                    }
                }
                Section::Path => append(&mut dump.path),
            }
        }
        dump
    }
}

/// Whether a function or alias `name` is carried into command shells.
fn carries_name(kind: ShellKind, name: &str, is_function: bool) -> bool {
    if name.is_empty() || name.starts_with('_') || SHADOWED_NAMES.contains(&name) {
        return false;
    }
    if is_function {
        if HOOK_FUNCTIONS.contains(&name) {
            return false;
        }
        // zsh runs `TRAPINT`, `TRAPEXIT`, … as signal and exit handlers.
        if kind == ShellKind::Zsh && name.starts_with("TRAP") {
            return false;
        }
    }
    true
}

/// The option lines to replay: those whose state the rc changed, minus the uncarried ones.
fn changed_options(kind: ShellKind, before: &[Vec<u8>], after: &[Vec<u8>]) -> Vec<String> {
    match kind {
        ShellKind::Bash => {
            // Lines are `set -o NAME`, `set +o NAME`, `shopt -s NAME`, `shopt -u NAME`.
            let before: std::collections::HashSet<&[u8]> =
                before.iter().map(Vec::as_slice).collect();
            after
                .iter()
                .filter(|line| !before.contains(line.as_slice()))
                .filter_map(|line| {
                    let line = std::str::from_utf8(line).ok()?;
                    let mut words = line.split(' ');
                    let (cmd, flag, name) = (words.next()?, words.next()?, words.next()?);
                    let known =
                        matches!((cmd, flag), ("set", "-o" | "+o") | ("shopt", "-s" | "-u"));
                    (known && words.next().is_none() && !UNCARRIED_OPTIONS_BASH.contains(&name))
                        .then(|| line.to_owned())
                })
                .collect()
        }
        ShellKind::Zsh => {
            // `setopt` lists the options that differ from zsh's defaults, one per line.
            let normalise = |line: &Vec<u8>| {
                String::from_utf8_lossy(line)
                    .trim()
                    .to_ascii_lowercase()
                    .replace('_', "")
            };
            let before: Vec<String> = before.iter().map(normalise).collect();
            let after: Vec<String> = after.iter().map(normalise).collect();
            let carried = |token: &str| {
                let base = token.strip_prefix("no").unwrap_or(token);
                !token.is_empty()
                    && token.bytes().all(|b| b.is_ascii_alphanumeric())
                    && !UNCARRIED_OPTIONS_ZSH.contains(&token)
                    && !UNCARRIED_OPTIONS_ZSH.contains(&base)
            };
            let set = after
                .iter()
                .filter(|t| !before.contains(t) && carried(t))
                .map(|t| format!("setopt {t}"));
            let unset = before
                .iter()
                .filter(|t| !after.contains(t) && carried(t))
                .map(|t| format!("unsetopt {t}"));
            set.chain(unset).collect()
        }
        ShellKind::Sh => Vec::new(),
    }
}

/// The snapshot file: options, functions, aliases, `expand_aliases` (bash), `PATH`.
fn render(kind: ShellKind, dump: &Dump, rc: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    let rc_name = rc.to_string_lossy().replace(['\n', '\r'], "?");
    out.extend_from_slice(
        format!("# agentsh rc snapshot of {rc_name} ({kind}); generated, do not edit\n").as_bytes(),
    );
    for line in changed_options(kind, &dump.options_before, &dump.options_after) {
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    for (name, body) in &dump.functions {
        if carries_name(kind, name, true) {
            out.extend_from_slice(body);
        }
    }
    for (name, body) in &dump.aliases {
        if carries_name(kind, name, false) {
            out.extend_from_slice(body);
        }
    }
    if kind == ShellKind::Bash {
        out.extend_from_slice(b"shopt -s expand_aliases\n");
    }
    out.extend_from_slice(&dump.path);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<Vec<u8>> {
        text.lines().map(|l| l.as_bytes().to_vec()).collect()
    }

    #[test]
    fn bash_options_carry_only_changes_outside_the_uncarried_list() {
        let before = lines(
            "set +o errexit\nset -o histexpand\nset +o noclobber\nset +o pipefail\nshopt -u extglob\nshopt -s cmdhist",
        );
        let after = lines(
            "set -o errexit\nset +o histexpand\nset -o noclobber\nset +o pipefail\nshopt -s extglob\nshopt -u cmdhist",
        );
        assert_eq!(
            changed_options(ShellKind::Bash, &before, &after),
            ["set -o noclobber", "shopt -s extglob", "shopt -u cmdhist"]
        );
    }

    #[test]
    fn zsh_options_carry_set_and_unset_changes_outside_the_uncarried_list() {
        let before = lines("interactive\nzle\nnohashdirs\nautocd");
        let after = lines("interactive\nzle\nnounset\nerrexit\nextended_glob\nnotify\nautocd");
        assert_eq!(
            changed_options(ShellKind::Zsh, &before, &after),
            [
                "setopt extendedglob",
                "setopt notify",
                "unsetopt nohashdirs"
            ]
        );
    }

    #[test]
    fn dump_parsing_keeps_bodies_apart_and_needs_the_end_marker() {
        let raw = b"M options-before\nset +o errexit\nM status 0\nM function f\nf () \n{ \n    echo 'M function g'\n}\nM alias ll\nalias ll='ls -l'\nM path\nexport PATH=/a:/b\n";
        let dump = Dump::parse(raw, b"M");
        assert!(!dump.complete);
        assert_eq!(dump.status, Some(0));
        assert_eq!(dump.functions.len(), 1);
        assert_eq!(dump.functions[0].0, "f");
        assert_eq!(
            dump.functions[0].1,
            b"f () \n{ \n    echo 'M function g'\n}\n".to_vec()
        );
        assert_eq!(dump.aliases[0].1, b"alias ll='ls -l'\n".to_vec());
        assert_eq!(dump.path, b"export PATH=/a:/b\n".to_vec());
        let complete = [raw.as_slice(), b"M end\n"].concat();
        assert!(Dump::parse(&complete, b"M").complete);
    }

    #[test]
    fn render_orders_options_functions_aliases_then_path() {
        let raw = b"M options-before\nshopt -u extglob\nM options-after\nshopt -s extglob\nM status 0\nM function ls\nls () { :; }\nM function f\nf () { :; }\nM alias ll\nalias ll='ls -l'\nM alias rm\nalias rm='rm -i'\nM path\nexport PATH=/x\nM end\n";
        let text = render(
            ShellKind::Bash,
            &Dump::parse(raw, b"M"),
            Path::new("/h/.bashrc"),
        );
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "# agentsh rc snapshot of /h/.bashrc (bash); generated, do not edit\n\
             shopt -s extglob\nf () { :; }\nalias ll='ls -l'\nshopt -s expand_aliases\nexport PATH=/x\n"
        );
    }

    #[test]
    fn names_filter() {
        assert!(carries_name(ShellKind::Bash, "greet", true));
        assert!(!carries_name(ShellKind::Bash, "ls", true));
        assert!(!carries_name(ShellKind::Bash, "_private", true));
        assert!(!carries_name(
            ShellKind::Bash,
            "command_not_found_handle",
            true
        ));
        assert!(!carries_name(ShellKind::Zsh, "TRAPINT", true));
        assert!(carries_name(ShellKind::Bash, "TRAPINT", true));
        assert!(!carries_name(ShellKind::Bash, "rm", false));
        assert!(carries_name(ShellKind::Bash, "precmd", false));
    }

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
