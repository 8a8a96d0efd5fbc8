#![doc = include_str!("../README.md")]
//!
//! # Modules, for contributors
//!
//! The crate's modules are private; everything public is re-exported below, in one block.
//! `session` holds [`AgentSession`] and the bang surface (`session/snapshot.rs` the rc snapshot
//! at start, `session/reports.rs` what it shares with its outputs and surfaces: secrets and
//! events, `session/jobs.rs` what it gives `agentsh-jobs`, which runs every piped call, its
//! jobs and its result); `tool` holds [`BashTool`] and depends on `session` (never the other
//! way round) through a narrow crate-internal API; `cwd` and `pty_selection` are pure steps of
//! a tool call; `approval` is the approval gate that judges a call before it runs; `audit` is the
//! audit log; `handle` is [`LocalHandle`], the session behind the surfaces' seam; `error` is
//! [`SessionError`]. The configuration is `agentsh-config`'s and the sandbox's preparation
//! `agentsh-sandbox`'s.
#![deny(missing_docs)]

mod approval;
mod audit;
mod complete;
mod cwd;
mod error;
mod handle;
mod pty_selection;
mod session;
mod tool;

// The whole public surface: what some other crate, test, example or README example uses.
// Types from other agentsh crates (and `serde_json::json`) are re-exported where a user of the
// facade names them through it.
pub use agentsh_artifact_store::ArtifactStore;
pub use agentsh_bash_normalize::Limits;
pub use agentsh_config::{SandboxMode, Settings};
pub use agentsh_jobs::{FinishedRun, build_tool_result};
pub use agentsh_process::sandbox::{
    Kernel as SandboxKernel, SandboxError, SandboxNetwork, SandboxSpec,
};
pub use agentsh_protocol::BASH_TOOL;
pub use agentsh_protocol::{
    BangOptions, BashArgs, BashResult, JobState, JobView, OutputSummary, Theme, Timeout,
    ToolDetails, ToolOutcome, ToolResult,
};
pub use agentsh_pty_runtime::PtyController;
pub use agentsh_seam::{PtyAttachment, PtyHost};
pub use agentsh_shell_executor::CancellationToken;
pub use cwd::{CwdError, check_cwd};
pub use error::SessionError;
pub use handle::{LocalHandle, POLICY_TIERS_KEY};
pub use serde_json::json;
pub use session::{AgentSession, SessionOptions, SnapshotOutcome};
pub use tool::{BashTool, ToolContext};
