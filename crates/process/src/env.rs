//! Environment hardening: the one table of variables injected into every shell so
//! that pagers, editors, prompts, progress bars and update checks never wait for a human.
//!
//! [`hardened_env`] builds the final, sorted environment of a shell from the agentsh process
//! environment, [`HARDENED_ENV`], the terminal-dependent part ([`TerminalKind::vars`]) and the
//! user's `bash.env`; [`env_cache_key`] renders it as the `K=V` list that keys the shell cache.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;

use crate::MARKER_VAR;

/// The hardened variables, `(name, value)`, injected into every shell unless the
/// user's `bash.env` sets the same name. Independent of the terminal; see
/// [`TerminalKind::vars`] for `TERM` and `NO_COLOR`.
pub const HARDENED_ENV: &[(&str, &str)] = &[
    // Pagers: print instead of waiting for a keypress.
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("MANPAGER", "cat"),
    ("SYSTEMD_PAGER", "cat"),
    ("BAT_PAGER", "cat"),
    ("DELTA_PAGER", "cat"),
    ("GH_PAGER", "cat"),
    ("GLAB_PAGER", "cat"),
    ("PSQL_PAGER", "cat"),
    ("MYSQL_PAGER", "cat"),
    ("HOMEBREW_PAGER", "cat"),
    ("AWS_PAGER", ""),
    ("LESS", "FRX"),
    // Editors: `git commit` without `-m` ends at once instead of opening an editor.
    ("GIT_EDITOR", "true"),
    ("VISUAL", "true"),
    ("EDITOR", "true"),
    // Credential prompts fail instead of hanging.
    ("GIT_TERMINAL_PROMPT", "0"),
    ("SSH_ASKPASS", "/usr/bin/false"),
    ("GPG_TTY", "not a tty"),
    // Tools that look for CI or have their own non-interactive switches.
    ("CI", "1"),
    ("npm_config_yes", "true"),
    ("npm_config_update_notifier", "false"),
    ("npm_config_fund", "false"),
    ("npm_config_audit", "false"),
    ("npm_config_progress", "false"),
    ("PNPM_DISABLE_SELF_UPDATE_CHECK", "true"),
    ("PNPM_UPDATE_NOTIFIER", "false"),
    ("YARN_ENABLE_TELEMETRY", "0"),
    ("YARN_ENABLE_PROGRESS_BARS", "0"),
    ("CARGO_TERM_PROGRESS_WHEN", "never"),
    ("DEBIAN_FRONTEND", "noninteractive"),
    ("PIP_NO_INPUT", "1"),
    ("PIP_DISABLE_PIP_VERSION_CHECK", "1"),
    ("TF_INPUT", "0"),
    ("TF_IN_AUTOMATION", "1"),
    ("GH_PROMPT_DISABLED", "1"),
    ("COMPOSER_NO_INTERACTION", "1"),
    ("CLOUDSDK_CORE_DISABLE_PROMPTS", "1"),
    ("PYTHONUNBUFFERED", "1"),
];

/// Variables of non-PTY runs (output goes to a pipe): no colours, no cursor tricks.
const PIPE_VARS: &[(&str, &str)] = &[("TERM", "dumb"), ("NO_COLOR", "1")];

/// Variables of PTY runs (output goes to the headless terminal of the PTY runtime).
const PTY_VARS: &[(&str, &str)] = &[("TERM", "xterm-256color")];

/// Where a shell's output goes, which decides `TERM` and `NO_COLOR`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TerminalKind {
    /// The non-PTY executor: stdout and stderr are one pipe. `TERM=dumb`, `NO_COLOR=1`.
    Pipe,
    /// The PTY runtime: a pseudo-terminal. `TERM=xterm-256color`.
    Pty,
    /// A PTY job: a pseudo-terminal that exists to answer prompts. `TERM=xterm-256color`,
    /// and none of the [`PROMPT_SUPPRESSORS`], inherited or hardened (the user's `bash.env` still
    /// sets what it names).
    PtyJob,
}

/// The variables that make programs skip their questions; a PTY job's environment has none of
/// them.
pub const PROMPT_SUPPRESSORS: &[&str] = &[
    "CI",
    "npm_config_yes",
    "DEBIAN_FRONTEND",
    "PIP_NO_INPUT",
    "TF_INPUT",
    "GH_PROMPT_DISABLED",
    "COMPOSER_NO_INTERACTION",
    "CLOUDSDK_CORE_DISABLE_PROMPTS",
    "GIT_TERMINAL_PROMPT",
    "SSH_ASKPASS",
    "GPG_TTY",
];

impl TerminalKind {
    /// The terminal-dependent variables, `(name, value)`, injected on top of [`HARDENED_ENV`]
    /// (and, like it, only where the user's `bash.env` does not set the name).
    pub fn vars(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Self::Pipe => PIPE_VARS,
            Self::Pty | Self::PtyJob => PTY_VARS,
        }
    }
}

/// Builds the environment of a shell: `base` (normally the agentsh process environment,
/// `std::env::vars_os()`) without an inherited command marker ([`MARKER_VAR`]: agentsh run
/// inside an agentsh shell must not hand its own command's marker on), then every [`HARDENED_ENV`] and [`TerminalKind::vars`] entry whose
/// name the user's `bash.env` does not set, then the user's `bash.env` itself.
///
/// The result is sorted by name (byte order) with one entry per name, so equal inputs give
/// equal outputs whatever the order of `base`. A later duplicate in `base` wins, as it does
/// when a process environment is built from a list.
pub fn hardened_env<I>(
    base: I,
    user_env: &BTreeMap<String, String>,
    terminal: TerminalKind,
) -> Vec<(OsString, OsString)>
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    let mut env: BTreeMap<OsString, OsString> = base.into_iter().collect();
    env.remove(OsStr::new(MARKER_VAR));
    let answers_prompts = terminal == TerminalKind::PtyJob;
    if answers_prompts {
        for name in PROMPT_SUPPRESSORS {
            env.remove(OsStr::new(name));
        }
    }
    for &(name, value) in HARDENED_ENV.iter().chain(terminal.vars()) {
        if answers_prompts && PROMPT_SUPPRESSORS.contains(&name) {
            continue;
        }
        if !user_env.contains_key(name) {
            env.insert(name.into(), value.into());
        }
    }
    for (name, value) in user_env {
        env.insert(name.into(), value.into());
    }
    env.into_iter().collect()
}

/// Renders an environment as the sorted `K=V` list used in the shell cache key:
/// entries sorted by name (byte order), each `K=V` followed by a NUL byte. NUL cannot occur in
/// a name or a value, so two different environments never render the same. A name given twice
/// keeps the later value, as in [`hardened_env`].
///
/// Takes anything that yields name/value pairs: the output of [`hardened_env`] (via
/// `.iter().map(|(k, v)| (k, v))`) or a `&BTreeMap<String, String>` such as `bash.env`.
pub fn env_cache_key<I, K, V>(env: I) -> Vec<u8>
where
    I: IntoIterator<Item = (K, V)>,
    K: AsRef<OsStr>,
    V: AsRef<OsStr>,
{
    let mut entries: Vec<(K, V)> = env.into_iter().collect();
    // Stable: among equal names the later entry stays last, and is the one kept below.
    entries.sort_by(|a, b| a.0.as_ref().as_bytes().cmp(b.0.as_ref().as_bytes()));
    let mut key = Vec::new();
    for (i, (name, value)) in entries.iter().enumerate() {
        let name = name.as_ref().as_bytes();
        if entries
            .get(i + 1)
            .is_some_and(|next| next.0.as_ref().as_bytes() == name)
        {
            continue;
        }
        key.extend_from_slice(name);
        key.push(b'=');
        key.extend_from_slice(value.as_ref().as_bytes());
        key.push(0);
    }
    key
}
