//! The agentsh facade: settings and the pure parts of the `bash` tool.
//!
//! This crate composes the leaf crates into what an agent calls. So far it holds the parts
//! that need no shell, each a pure function or plain data:
//!
//! - [`Settings`]: the TOML configuration file (SPEC §12), found by [`config_path`], with every
//!   default in one constant and [`ConfigError`]s that name the file, the key and the reason.
//! - [`BashArgs`]: the tool's arguments parsed from a model's JSON, and their JSON schema.
//! - [`check_cwd`] / [`resolve_cwd`] and [`Timeout`]: the per-call checks of SPEC §3.
//! - [`use_pty`]: whether a tool call runs on the PTY runtime (SPEC §8).
//! - [`build_tool_result`]: the tool result of SPEC §9 from an executor's `BashResult`, with
//!   [`blocked_result`], [`cwd_error_result`] and the bang context text
//!   ([`bang_context_text`], SPEC §10).
//!
//! ```
//! use std::path::Path;
//!
//! use agentsh_agent_session::{
//!     BashArgs, FinishedRun, Settings, Timeout, build_tool_result, check_cwd,
//! };
//! use agentsh_bash_normalize::merge_limits;
//! use agentsh_protocol::{BashResult, OutputSummary};
//!
//! let settings = Settings::from_toml("[bash]\ndefault_timeout = 60\n", Path::new("config.toml"), None)?;
//! let args = BashArgs::from_value(&serde_json::json!({"command": "seq 3", "tail": 2}))?;
//! let timeout = Timeout::from_request(args.timeout, settings.bash.default_timeout);
//! let cwd = check_cwd(args.cwd.as_deref(), Path::new("/"), None)?;
//!
//! // … the executor runs the command and reports:
//! let result = BashResult {
//!     summary: OutputSummary {
//!         output: "1\n2\n3\n".into(),
//!         total_lines: 3, total_bytes: 6, output_lines: 3, output_bytes: 6,
//!         ..OutputSummary::default()
//!     },
//!     exit_code: Some(0),
//!     ..BashResult::default()
//! };
//! let outcome = build_tool_result(&FinishedRun {
//!     result: &result,
//!     head_capture: None,
//!     limits: merge_limits(args.limits(), Default::default()),
//!     max_bytes: settings.output.max_bytes,
//!     aborted: false,
//!     cwd: &cwd,
//!     timeout,
//! });
//! let json = serde_json::to_value(outcome.result())?;
//! assert_eq!(json["content"][0]["text"], "2\n3");
//! assert_eq!(json["isError"], false);
//! assert_eq!(json["details"]["timeout"], 60);
//! assert_eq!(json["details"]["meta"]["truncation"]["shownRange"], serde_json::json!({"start": 2, "end": 3}));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

mod args;
mod cwd;
mod pty_selection;
mod result;
mod session;
mod settings;
mod timeout;
mod tool;

pub use agentsh_artifact_store::ArtifactText;
pub use agentsh_pty_runtime::PtyController;
pub use agentsh_shell_executor::{CancellationToken, ShellExecutor};
pub use args::{ArgsError, BashArgs};
pub use cwd::{CwdError, check_cwd, resolve_cwd};
pub use pty_selection::{COMPAT_NO_PTY_ENV, NO_PTY_ENV, use_pty};
pub use result::{
    BANG_CANCELLED, FinishedRun, HeadCapture, ShownRange, ToolContent, ToolDetails, ToolMeta,
    ToolOutcome, ToolResult, TruncatedBy, Truncation, TruncationDirection, bang_context_text,
    blocked_result, build_tool_result, cwd_error_result,
};
pub use session::{AgentSession, BangOptions, SessionError, SessionOptions};
pub use settings::{
    ArtifactSettings, BashSettings, CONFIG_ENV, ConfigError, ConfigPath,
    DEFAULT_ARTIFACTS_MAX_AGE_DAYS, DEFAULT_ARTIFACTS_MAX_BYTES, DEFAULT_MAX_SHELLS,
    DEFAULT_OUTPUT_MAX_BYTES, DEFAULT_SHELL_IDLE_MINUTES, InterceptorSettings, OutputSettings,
    Settings, VirtualTerminal, config_path,
};
pub use timeout::Timeout;
pub use tool::{BashTool, PtyHost, ToolContext, ToolUpdate};
