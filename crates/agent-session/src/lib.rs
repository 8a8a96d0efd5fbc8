#![doc = include_str!("../README.md")]
//!
//! # Modules, for contributors
//!
//! The crate's modules are private; everything public is re-exported below, in one block.
//! `session` holds [`AgentSession`] and the bang surface; `tool` holds [`BashTool`] and depends
//! on `session` (never the other way round) through a narrow crate-internal API; `cwd` and
//! `pty_selection` are pure steps of a tool call (the argument, timeout and result types
//! themselves are `agentsh-protocol`'s; the run of a piped call, its jobs and its result are
//! `agentsh-jobs`', which meets the session through `session/jobs.rs`); `settings` is the
//! configuration file (`types`, `load`, `key_path`) and the approval policy's tiers (`policy`);
//! `audit` is the audit log.
#![deny(missing_docs)]

mod audit;
mod cwd;
mod error;
mod handle;
mod network;
mod policy;
mod pty_selection;
mod sandbox;
mod session;
mod settings;
mod tool;

// The whole public surface. Types from other agentsh crates (and `serde_json::Value`) are
// re-exported because this crate's public signatures use them: a user of the facade needs no
// other agentsh crate.
pub use agentsh_artifact_store::{ArtifactError, ArtifactInfo, ArtifactStore, ArtifactText};
pub use agentsh_bash_interceptor::{Interception, Rule};
pub use agentsh_bash_normalize::Limits;
pub use agentsh_bash_policy::{
    Decision as PolicyDecision, Policy, PolicyConfig, RuleConfig, TierKind, TierSource,
};
pub use agentsh_jobs::{
    BANG_CANCELLED, DENIAL_MARKERS, FinishedRun, HeadCapture, ToolUpdate, bang_context_text,
    blocked_result, build_tool_result, sandbox_denial_line, sandbox_line, shows_denial,
};
pub use agentsh_process::sandbox::{
    Kernel as SandboxKernel, MIN_LANDLOCK_ABI, SandboxError, SandboxMode, SandboxNetwork,
    SandboxPolicy,
};
pub use agentsh_process::shell::ShellError;
pub use agentsh_protocol::{
    Answerer, ArgsError, BangOptions, BashArgs, BashResult, Cell, CellAttrs, CellColor,
    InterceptionDetails, JobDetails, JobInputArgs, JobKillArgs, JobListArgs, JobOutputArgs,
    JobState, JobSummary, JobView, OutputSummary, SandboxStatus, Screen, SessionStatus, ShownRange,
    SshTarget, Theme, Timeout, ToolContent, ToolDetails, ToolMeta, ToolOutcome, ToolResult,
    TruncatedBy, Truncation, TruncationDirection, ViewSettings, job_tool_specs,
};
pub use agentsh_protocol::{BASH_TOOL, TOOL_NAMES, unknown_tool};
pub use agentsh_pty_runtime::{
    Key, KeyAction, MIN_DRAW_INTERVAL as PTY_MIN_DRAW_INTERVAL, Modifiers, PtyController, Terminal,
    TerminalSize, encode_key,
};
pub use agentsh_seam::{
    EventHub, PtyAttachment, PtyHost, SessionEvent, SessionHandle, Subscription,
};
pub use agentsh_shell_executor::{CancellationToken, ExecError, ExecutorConfig, ShellExecutor};
pub use audit::{
    AUDIT_ROTATE_BYTES, AUDIT_ROTATED_FILES, AuditDecision, AuditEnd, AuditLog, AuditSource,
};
pub use cwd::{CwdError, check_cwd, cwd_error_result, resolve_cwd};
pub use error::SessionError;
pub use handle::{LocalSession, POLICY_TIERS_KEY};
pub use network::probe_network_allowlist;
pub use pty_selection::{COMPAT_NO_PTY_ENV, HostUi, NO_PTY_ENV, use_pty};
pub use sandbox::SANDBOX_KERNEL_LIMIT_ENV;
pub use serde_json::{Value, json};
pub use session::{AgentSession, SessionOptions, SessionPolicy, SnapshotOutcome};
pub use settings::{
    ArtifactSettings, AuditSettings, BashSettings, CONFIG_ENV, ConfigError, ConfigPath,
    DEFAULT_AGENTSH_PATH, DEFAULT_ARTIFACTS_MAX_AGE_DAYS, DEFAULT_ARTIFACTS_MAX_BYTES,
    DEFAULT_JOBS_MAX_LOG_BYTES, DEFAULT_JOBS_MAX_RUNNING, DEFAULT_MAX_SHELLS,
    DEFAULT_MCP_YIELD_AFTER, DEFAULT_OUTPUT_MAX_BYTES, DEFAULT_PATTERN_MAX_BYTES,
    DEFAULT_SECRET_ENV, DEFAULT_SHELL_IDLE_MINUTES, DEFAULT_SNAPSHOT_TIMEOUT, DEFAULT_SSH_COMMAND,
    DEFAULTS_ORIGIN, EXECUTION_SECTIONS, HELLO_SETTINGS_SOURCE, InterceptorSettings, JobSettings,
    MANAGED_POLICY_ENV, MANAGED_POLICY_PATH, MAX_SNAPSHOT_TIMEOUT, McpSettings, NetworkSetting,
    OutputSettings, PROJECT_POLICY_PATH, PatternSetting, RemoteSettings, SandboxSettings,
    SecretsSettings, Settings, UiSettings, VirtualTerminal, config_path, default_audit_path,
    managed_policy_tiers, policy_from_tiers, project_policy_tier,
};
pub use tool::{BashTool, ToolContext};
