//! The checked settings: what every key means once the file has been read, and its default.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

use agentsh_bash_interceptor::Rule;
use agentsh_bash_policy::PolicyConfig;
use agentsh_process::sandbox::SandboxMode;
use agentsh_protocol::Theme;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::remote::RemoteSettings;
use agentsh_protocol::Timeout;

/// Default of `bash.max_shells`: at most this many persistent shells are cached.
pub const DEFAULT_MAX_SHELLS: usize = agentsh_protocol::DEFAULT_MAX_SHELLS;
/// Default of `bash.shell_idle_minutes`: idle shells are closed after this many minutes.
pub const DEFAULT_SHELL_IDLE_MINUTES: u64 = agentsh_protocol::DEFAULT_IDLE_MINUTES;
/// Default of `bash.snapshot_timeout`: the rc snapshot's shell may run this long.
pub use agentsh_protocol::DEFAULT_SNAPSHOT_TIMEOUT;
/// The largest `bash.snapshot_timeout`.
pub use agentsh_protocol::MAX_SNAPSHOT_TIMEOUT;
/// Default of `artifacts.max_bytes`: 1 GiB in total.
pub const DEFAULT_ARTIFACTS_MAX_BYTES: u64 = agentsh_artifact_store::DEFAULT_RETENTION_MAX_BYTES;
/// Default of `artifacts.max_age_days`.
pub const DEFAULT_ARTIFACTS_MAX_AGE_DAYS: u32 =
    agentsh_artifact_store::DEFAULT_RETENTION_MAX_AGE_DAYS;
/// Default of `output.max_bytes`: the in-memory tail is 50 KB.
pub const DEFAULT_OUTPUT_MAX_BYTES: u64 = agentsh_protocol::DEFAULT_OUTPUT_MAX_BYTES;

/// The sections that shape how commands run, and travel in a remote session's hello: `bash`,
/// `bash_interceptor`, `output`, `jobs`, `sandbox`, `secrets`, `shape`, `limits`. (`artifacts`,
/// `mcp`, `ui` and `remote` stay with the side that reads them.)
pub const EXECUTION_SECTIONS: [&str; 8] = [
    "bash",
    "bash_interceptor",
    "output",
    "jobs",
    "sandbox",
    "secrets",
    "shape",
    "limits",
];

/// How the execution sections of a configuration were written, and the home its `~` expanded
/// against.
#[derive(Debug, Clone, Default)]
pub(crate) struct Written {
    /// The execution sections present in the file (or applied from a hello), as written.
    pub(super) sections: Map<String, Value>,
    /// The home `~` was expanded against; `$HOME` when `None`.
    pub(super) home: Option<PathBuf>,
}

impl Written {
    /// The execution sections of `document` (a whole configuration, as JSON), and `home`.
    pub(super) fn new(document: &Value, home: Option<&Path>) -> Self {
        let sections = document
            .as_object()
            .map(|document| {
                EXECUTION_SECTIONS
                    .iter()
                    .filter_map(|&name| Some((name.to_owned(), document.get(name)?.clone())))
                    .collect()
            })
            .unwrap_or_default();
        Self {
            sections,
            home: home.map(Path::to_path_buf),
        }
    }
}

/// Everything the configuration file can set, with defaults filled in.
///
/// Two settings are equal when every section is: how they were written (which the
/// [`execution_settings`](Settings::execution_settings) keep) and which file they came from do
/// not count.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// `[bash]`: the shells and the tool.
    pub bash: BashSettings,
    /// `[bash_interceptor]`: blocking commands that have a better tool.
    pub bash_interceptor: InterceptorSettings,
    /// `[artifacts]`: where full outputs are kept, and for how long.
    pub artifacts: ArtifactSettings,
    /// `[output]`: the in-memory output bound.
    pub output: OutputSettings,
    /// `[jobs]`: background jobs.
    pub jobs: JobSettings,
    /// `[mcp]`: the MCP server.
    pub mcp: McpSettings,
    /// `[ui]`: the interactive mode.
    pub ui: UiSettings,
    /// `[sandbox]`: kernel-enforced limits on what commands may write and reach.
    pub sandbox: SandboxSettings,
    /// `[remote]`: running every command on another machine.
    pub remote: RemoteSettings,
    /// `[policy]`: the user's tier of the approval policy, as written (and checked when the file
    /// was read). The other tiers are files of their own; see
    /// [`load_policy`](Settings::load_policy).
    pub policy: PolicyConfig,
    /// `[audit]`: the audit log of commands and decisions.
    pub audit: AuditSettings,
    /// `[secrets]`: what is redacted from every output.
    pub secrets: super::SecretsSettings,
    /// `[shape]`: what the model reads of known programs' output.
    pub shape: ShapeSettings,
    /// `[limits]`: the resources one command tree may use.
    pub limits: super::LimitSettings,
    /// The configuration file these settings were read from; `None` for defaults (no file, or
    /// a missing default file). The user tier of the policy is named after it.
    pub config_file: Option<PathBuf>,
    /// The execution sections as written, for the hello of a remote session.
    pub(super) written: Written,
}

impl Settings {
    /// What a UI draws a session with: the theme, the output limit and the sandbox asked for.
    pub fn view_settings(&self) -> agentsh_protocol::ViewSettings {
        agentsh_protocol::ViewSettings {
            theme: self.ui.theme,
            output_max_bytes: self.output.max_bytes,
            sandbox: self
                .sandbox
                .mode
                .map(|mode| agentsh_protocol::SandboxStatus {
                    mode: mode.to_string(),
                    network: self.sandbox.network == super::NetworkSetting::On,
                    hosts: self.sandbox.network.hosts().map(<[String]>::to_vec),
                }),
        }
    }
}

impl PartialEq for Settings {
    fn eq(&self, other: &Self) -> bool {
        // Spelled out, so that a new section cannot be forgotten here.
        let Self {
            bash,
            bash_interceptor,
            artifacts,
            output,
            jobs,
            mcp,
            ui,
            sandbox,
            remote,
            policy,
            audit,
            secrets,
            shape,
            limits,
            config_file: _,
            written: _,
        } = self;
        *bash == other.bash
            && *bash_interceptor == other.bash_interceptor
            && *artifacts == other.artifacts
            && *output == other.output
            && *jobs == other.jobs
            && *mcp == other.mcp
            && *ui == other.ui
            && *sandbox == other.sandbox
            && *shape == other.shape
            && *limits == other.limits
            && *remote == other.remote
            && *policy == other.policy
            && *audit == other.audit
            && *secrets == other.secrets
    }
}

/// `[bash]`.
#[derive(Debug, Clone, PartialEq)]
pub struct BashSettings {
    /// `virtual_terminal`: whether tool calls may run on a pseudo-terminal (only when the host
    /// has an interactive UI to show it; see `use_pty` in `agentsh-agent-session`). Default `off`.
    pub virtual_terminal: VirtualTerminal,
    /// `shell`: the shell to run (a path, or a name looked up on `PATH`). Default: discovered.
    pub shell: Option<PathBuf>,
    /// `prefix`: put before every command (`<prefix> <command>`). `Some("")` switches off an
    /// inherited `AGENTSH_SHELL_PREFIX`. Default: none.
    pub prefix: Option<String>,
    /// `default_timeout`: seconds, for calls that give none. Default 300.
    pub default_timeout: Timeout,
    /// `max_shells`: the most persistent shells kept at once. Default 16.
    pub max_shells: usize,
    /// `shell_idle_minutes`: idle shells are closed after this long. Default 30.
    pub shell_idle_minutes: u64,
    /// `[bash.env]`: extra environment variables for every shell; they also override the
    /// defaults agentsh sets so that commands never wait for a user (`PAGER=cat`,
    /// `GIT_TERMINAL_PROMPT=0`, `CI=1`, …).
    pub env: BTreeMap<String, String>,
    /// `yield_after`: seconds after which a tool call still running returns with the output so
    /// far and goes on as a background job. Default: never.
    pub yield_after: Option<f64>,
    /// `snapshot_timeout`: how long the shell that makes the rc snapshot may source the rc,
    /// from 1 s to 60 s. Default 10 s.
    pub snapshot_timeout: std::time::Duration,
}

impl Default for BashSettings {
    fn default() -> Self {
        Self {
            virtual_terminal: VirtualTerminal::default(),
            shell: None,
            prefix: None,
            default_timeout: Timeout::DEFAULT,
            max_shells: DEFAULT_MAX_SHELLS,
            shell_idle_minutes: DEFAULT_SHELL_IDLE_MINUTES,
            env: BTreeMap::new(),
            yield_after: None,
            snapshot_timeout: DEFAULT_SNAPSHOT_TIMEOUT,
        }
    }
}

impl BashSettings {
    /// `shell_idle_minutes` as a duration.
    pub fn shell_idle_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.shell_idle_minutes.saturating_mul(60))
    }
}

/// `bash.virtual_terminal`: `"off"` (default) or `"on"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum VirtualTerminal {
    /// Never run tool calls on a PTY.
    #[default]
    Off,
    /// Run tool calls on a PTY when the context has an interactive UI to show it.
    On,
}

/// Accepts exactly `"off"` or `"on"`. (Derived enum parsing would answer a non-string with
/// "wanted string or table", which names no valid value.)
impl<'de> Deserialize<'de> for VirtualTerminal {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        const VALUES: &[&str] = &["off", "on"];
        struct ModeVisitor;
        impl Visitor<'_> for ModeVisitor {
            type Value = VirtualTerminal;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("`off` or `on`")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<VirtualTerminal, E> {
                match v {
                    "off" => Ok(VirtualTerminal::Off),
                    "on" => Ok(VirtualTerminal::On),
                    other => Err(E::unknown_variant(other, VALUES)),
                }
            }
        }
        deserializer.deserialize_any(ModeVisitor)
    }
}

/// `[bash_interceptor]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InterceptorSettings {
    /// `enabled`: default false.
    pub enabled: bool,
    /// `[[bash_interceptor.rules]]`, as written; an empty list means the default rules. Their
    /// regexes are not checked here: an invalid one becomes a session warning and is skipped.
    pub rules: Vec<Rule>,
}

/// `[artifacts]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactSettings {
    /// `dir`: the store directory (absolute, `~/` expanded). Default: `$XDG_STATE_HOME/agentsh/artifacts`.
    pub dir: Option<PathBuf>,
    /// `max_bytes`: total size kept. Default 1 GiB.
    pub max_bytes: u64,
    /// `max_age_days`: older artifacts are removed. Default 7.
    pub max_age_days: u32,
}

impl Default for ArtifactSettings {
    fn default() -> Self {
        Self {
            dir: None,
            max_bytes: DEFAULT_ARTIFACTS_MAX_BYTES,
            max_age_days: DEFAULT_ARTIFACTS_MAX_AGE_DAYS,
        }
    }
}

/// `[output]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSettings {
    /// `max_bytes`: the tail of the output kept in memory and shown. Default 51,200 (50 KB).
    pub max_bytes: u64,
}

impl Default for OutputSettings {
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_OUTPUT_MAX_BYTES,
        }
    }
}

/// `[shape]`: output shaping.
#[derive(Debug, Clone)]
pub struct ShapeSettings {
    /// `enabled`: shape the output of known programs (default on).
    pub enabled: bool,
    /// `except`: programs never shaped (default none).
    pub except: Vec<String>,
    /// `[[shape.filters]]`: the user's shapers, as written (checked when read).
    pub filters: Vec<agentsh_shape::FilterConfig>,
    /// The shapers these mean.
    pub(super) shaping: agentsh_shape::Shaping,
}

impl ShapeSettings {
    /// The shapers a session uses, `None` when shaping is off.
    pub fn shaping(&self) -> Option<&agentsh_shape::Shaping> {
        self.enabled.then_some(&self.shaping)
    }
}

impl Default for ShapeSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            except: Vec::new(),
            filters: Vec::new(),
            shaping: agentsh_shape::Shaping::default(),
        }
    }
}

impl PartialEq for ShapeSettings {
    fn eq(&self, other: &Self) -> bool {
        self.enabled == other.enabled
            && self.except == other.except
            && self.filters == other.filters
    }
}

/// Default of `jobs.max_running`: running background jobs per session.
pub const DEFAULT_JOBS_MAX_RUNNING: usize = 16;
/// Default of `jobs.max_log_bytes`: a job's log artifact stops growing here (256 MiB).
pub const DEFAULT_JOBS_MAX_LOG_BYTES: u64 = 256 << 20;

/// `[jobs]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobSettings {
    /// `max_running`: background jobs one session may run at once. Default 16.
    pub max_running: usize,
    /// `max_log_bytes`: the most a job's log artifact holds; past it the log stops growing (the
    /// in-memory tail goes on). Default 256 MiB.
    pub max_log_bytes: u64,
}

impl Default for JobSettings {
    fn default() -> Self {
        Self {
            max_running: DEFAULT_JOBS_MAX_RUNNING,
            max_log_bytes: DEFAULT_JOBS_MAX_LOG_BYTES,
        }
    }
}

/// Default of `mcp.yield_after`: below common clients' 60 s request limits.
pub const DEFAULT_MCP_YIELD_AFTER: f64 = 45.0;

/// `[mcp]`.
#[derive(Debug, Clone, PartialEq)]
pub struct McpSettings {
    /// `yield_after`: seconds after which an MCP `bash` call still running returns and goes on
    /// as a job; it wins over `bash.yield_after` in MCP mode. `None` (set as 0): never.
    /// Default 45.
    pub yield_after: Option<f64>,
}

impl Default for McpSettings {
    fn default() -> Self {
        Self {
            yield_after: Some(DEFAULT_MCP_YIELD_AFTER),
        }
    }
}

/// `[ui]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UiSettings {
    /// `theme`: the glyphs the interactive mode draws with, `"unicode"` (default), `"nerd"`
    /// or `"ascii"`.
    pub theme: Theme,
}

/// `[sandbox]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxSettings {
    /// `mode`: `"off"` (default, `None`), `"read-only"` or `"workspace-write"`.
    pub mode: Option<SandboxMode>,
    /// `writable`: more writable roots in `workspace-write` (ignored in `read-only`), absolute:
    /// `~`/`~/…` expanded against the home, a relative path resolved against the directory of
    /// the configuration file. Default: none.
    pub writable: Vec<PathBuf>,
    /// `network`: whether sandboxed commands may reach the network, or which hosts. Default
    /// false (a private network namespace with loopback only, no `socket(AF_UNIX, …)`).
    pub network: super::NetworkSetting,
}

/// `[audit]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditSettings {
    /// `enabled`: whether the audit log is written. Default false.
    pub enabled: bool,
    /// `path`: the log file (absolute, `~/` expanded). `None`: the default,
    /// [`default_audit_path`].
    pub path: Option<PathBuf>,
    /// `required`: whether a call whose decision line cannot be written is denied (else the
    /// failure is a warning, once). Default false.
    pub required: bool,
}

impl AuditSettings {
    /// The log file: [`path`](Self::path), else [`default_audit_path`]; `None` when neither
    /// `XDG_STATE_HOME` nor `HOME` gives one.
    pub fn resolved_path(&self, env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
        self.path.clone().or_else(|| default_audit_path(env))
    }
}

/// The default audit log: `$XDG_STATE_HOME/agentsh/audit.jsonl` (when `XDG_STATE_HOME` is an
/// absolute path), else `$HOME/.local/state/agentsh/audit.jsonl`; `None` without either. Empty
/// variables count as unset.
///
/// `env` looks a variable up (pass `std::env::var_os` in production).
pub fn default_audit_path(env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let var = |name: &str| {
        env(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
            .filter(|dir| dir.is_absolute())
    };
    let state_home = var("XDG_STATE_HOME")
        .or_else(|| var("HOME").map(|home| home.join(".local").join("state")))?;
    Some(state_home.join("agentsh").join("audit.jsonl"))
}
