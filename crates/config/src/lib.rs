#![doc = include_str!("../README.md")]
//!
//! # Modules, for contributors
//!
//! The modules are private; everything public is re-exported below, in one block.
//!
//! - `types`: the checked settings, with every default in one constant, and how the
//!   execution sections were written;
//! - `load`: finding the file (`--config`, `AGENTSH_CONFIG`, the XDG default), reading and
//!   checking it;
//! - `error`: [`ConfigError`], and how a TOML or serde error becomes one;
//! - `key_path`: which key a serde error is about, how a key path is written, and the bad
//!   value at a key that every check reports;
//! - `keys`: every key the file accepts ([`Settings::config_keys`]), read off the loader's types;
//! - `network`: `sandbox.network` (off, on, or an allowlist of hosts);
//! - `secrets`: `[secrets]`, the values and patterns the output redacts;
//! - `remote`: `[remote]` and the `ssh://` target;
//! - `limits`: `[limits]`, the resources one command tree may use, and the sizes they are
//!   written in;
//! - `policy`: the approval policy's tiers (the managed files, the user's `[policy]`, the
//!   project's file) and the [`Policy`](agentsh_bash_policy::Policy) they make;
//! - `execution`: the sections that shape execution as they travel in a remote session's
//!   hello, and applying them on the far side.
#![deny(missing_docs)]

mod error;
mod execution;
mod key_path;
mod keys;
mod limits;
mod load;
mod network;
mod policy;
mod remote;
mod secrets;
mod types;

#[cfg(test)]
mod tests;

// The sandbox mode is `agentsh-process`'s (the spawner enforces it); `sandbox.mode` holds one.
pub use agentsh_process::sandbox::SandboxMode;
pub use error::ConfigError;
pub use execution::HELLO_SETTINGS_SOURCE;
pub use limits::{
    DEFAULT_LIMITS_MEMORY_PERCENT, DEFAULT_LIMITS_PROCESSES, LimitSettings, MemoryLimit,
};
pub use load::{CONFIG_ENV, ConfigPath, config_path};
pub use network::NetworkSetting;
pub use policy::{
    DEFAULTS_ORIGIN, MANAGED_POLICY_ENV, MANAGED_POLICY_PATH, PROJECT_POLICY_PATH,
    managed_policy_tiers, policy_from_tiers, project_policy_tier,
};
pub use remote::{DEFAULT_AGENTSH_PATH, DEFAULT_SSH_COMMAND, RemoteSettings};
pub use secrets::{DEFAULT_PATTERN_MAX_BYTES, DEFAULT_SECRET_ENV, PatternSetting, SecretsSettings};
pub use types::{
    ArtifactSettings, AuditSettings, BashSettings, DEFAULT_ARTIFACTS_MAX_AGE_DAYS,
    DEFAULT_ARTIFACTS_MAX_BYTES, DEFAULT_JOBS_MAX_LOG_BYTES, DEFAULT_JOBS_MAX_RUNNING,
    DEFAULT_MAX_SHELLS, DEFAULT_MCP_YIELD_AFTER, DEFAULT_OUTPUT_MAX_BYTES,
    DEFAULT_SHELL_IDLE_MINUTES, DEFAULT_SNAPSHOT_TIMEOUT, EXECUTION_SECTIONS, InterceptorSettings,
    JobSettings, MAX_SNAPSHOT_TIMEOUT, McpSettings, OutputSettings, SandboxSettings, Settings,
    ShapeSettings, UiSettings, VirtualTerminal, default_audit_path,
};
