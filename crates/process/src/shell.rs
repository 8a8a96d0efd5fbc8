//! Shell discovery and the command prefix.
//!
//! [`discover_shell`] picks the shell: the `bash.shell` setting, else `$SHELL` when it is bash or
//! zsh, else `bash` on `PATH`, else `/bin/sh`. [`shell_prefix`] and [`apply_prefix`] implement
//! `bash.prefix` / `AGENTSH_SHELL_PREFIX`. The functions read no process state: the environment
//! comes in as a lookup closure (`|name| std::env::var_os(name)` in production), so every case
//! can be tested with a made-up environment.

use std::ffi::OsString;
use std::fmt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The last resort of [`discover_shell`].
pub const FALLBACK_SHELL: &str = "/bin/sh";

/// The environment variable that gives a command prefix when `bash.prefix` is not set.
pub const PREFIX_ENV_VAR: &str = "AGENTSH_SHELL_PREFIX";

/// Which shell language a [`ShellSpec`] speaks; decides the rc snapshot and how it is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShellKind {
    /// GNU bash: rc snapshot from `~/.bashrc`.
    Bash,
    /// zsh: rc snapshot from `~/.zshrc`.
    Zsh,
    /// Any other (POSIX) shell: no rc snapshot.
    Sh,
}

impl ShellKind {
    /// Detects bash or zsh from the file name alone: `bash`, `zsh`, or either followed by a
    /// version suffix of digits, `.` and `-` (`bash5.2`, `zsh-5.9`). Any other name (`sh`,
    /// `dash`, `fish`, …) is `None`. The name decides even where `/bin/sh` is bash in disguise:
    /// such a shell runs in POSIX mode, and is treated as [`ShellKind::Sh`] by callers.
    pub fn from_path(path: &Path) -> Option<Self> {
        let name = path.file_name()?.to_str()?;
        let stem = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
        match stem {
            "bash" => Some(Self::Bash),
            "zsh" => Some(Self::Zsh),
            _ => None,
        }
    }

    /// The flags that start this shell without reading any rc file (the snapshot replaces
    /// them): `--noprofile --norc` (bash), `-f` (zsh), none (sh).
    pub fn no_rc_flags(self) -> &'static [&'static str] {
        match self {
            Self::Bash => &["--noprofile", "--norc"],
            Self::Zsh => &["-f"],
            Self::Sh => &[],
        }
    }

    /// The short name: `bash`, `zsh` or `sh`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Bash => "bash",
            Self::Zsh => "zsh",
            Self::Sh => "sh",
        }
    }
}

impl fmt::Display for ShellKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The shell that runs commands: where it is and what kind it is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ShellSpec {
    /// The program to start (absolute unless `bash.shell` named a relative path).
    pub path: PathBuf,
    /// Its kind, from the file name ([`ShellKind::from_path`]); [`ShellKind::Sh`] for names
    /// that are neither bash nor zsh.
    pub kind: ShellKind,
}

impl ShellSpec {
    /// A spec for `path`, its kind detected from the file name.
    pub fn from_path(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        let kind = ShellKind::from_path(&path).unwrap_or(ShellKind::Sh);
        Self { path, kind }
    }
}

/// Why the `bash.shell` setting cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ShellError {
    /// A bare program name that is on no `PATH` directory.
    #[error(
        "bash.shell = \"{name}\": no executable of that name on PATH; give an absolute path or install it"
    )]
    NotOnPath {
        /// The setting as given.
        name: String,
    },
    /// A path that is not an executable file.
    #[error("bash.shell = \"{}\": not an executable file", path.display())]
    NotExecutable {
        /// The setting as given.
        path: PathBuf,
    },
}

/// Picks the shell: `setting` (`bash.shell`) if given, else `$SHELL` when it names
/// an executable bash or zsh, else `bash` on `PATH`, else [`FALLBACK_SHELL`] (`/bin/sh`).
///
/// `env` looks up environment variables (`SHELL`, `PATH`). A setting without a `/` is looked up
/// on `PATH`; a setting with one must be an executable file. `$SHELL` must be an absolute path;
/// `PATH` entries that are empty or relative are skipped (no lookup in the working directory).
pub fn discover_shell<F>(setting: Option<&Path>, env: F) -> Result<ShellSpec, ShellError>
where
    F: Fn(&str) -> Option<OsString>,
{
    let path_var = env("PATH");
    if let Some(setting) = setting {
        let is_bare_name = !setting.as_os_str().as_encoded_bytes().contains(&b'/');
        if is_bare_name {
            return find_on_path(path_var.as_deref(), setting)
                .map(ShellSpec::from_path)
                .ok_or_else(|| ShellError::NotOnPath {
                    name: setting.display().to_string(),
                });
        }
        if !is_executable_file(setting) {
            return Err(ShellError::NotExecutable {
                path: setting.to_path_buf(),
            });
        }
        return Ok(ShellSpec::from_path(setting));
    }
    if let Some(shell) = env("SHELL").map(PathBuf::from) {
        let bash_or_zsh = matches!(
            ShellKind::from_path(&shell),
            Some(ShellKind::Bash | ShellKind::Zsh)
        );
        if bash_or_zsh && shell.is_absolute() && is_executable_file(&shell) {
            return Ok(ShellSpec::from_path(shell));
        }
    }
    if let Some(bash) = find_on_path(path_var.as_deref(), Path::new("bash")) {
        return Ok(ShellSpec {
            path: bash,
            kind: ShellKind::Bash,
        });
    }
    Ok(ShellSpec {
        path: PathBuf::from(FALLBACK_SHELL),
        kind: ShellKind::Sh,
    })
}

/// The command prefix: `setting` (`bash.prefix`) if given, else the
/// [`PREFIX_ENV_VAR`] (`AGENTSH_SHELL_PREFIX`) variable looked up through `env`. A prefix that is
/// empty or only blanks means no prefix, so `bash.prefix = ""` switches off an inherited one.
pub fn shell_prefix<F>(setting: Option<&str>, env: F) -> Option<String>
where
    F: Fn(&str) -> Option<OsString>,
{
    let prefix = match setting {
        Some(setting) => setting.to_owned(),
        None => env(PREFIX_ENV_VAR)?.into_string().ok()?,
    };
    (!prefix.trim().is_empty()).then_some(prefix)
}

/// The command a shell runs under a prefix: `<prefix> <command>`.
pub fn apply_prefix(prefix: &str, command: &str) -> String {
    format!("{prefix} {command}")
}

/// The first executable file called `name` in an absolute directory of `path_var`.
fn find_on_path(path_var: Option<&std::ffi::OsStr>, name: &Path) -> Option<PathBuf> {
    std::env::split_paths(path_var?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable_file(candidate))
}

/// A regular file (after following links) with an execute bit set.
fn is_executable_file(path: &Path) -> bool {
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}
