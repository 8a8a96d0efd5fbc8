#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod approval;
mod args;
mod bang;
mod job;
mod limits;
mod lines;
mod resources;
mod result;
mod screen;
mod ssh_target;
mod status;
mod text;
mod theme;
mod timeout;
mod tool;

#[cfg(feature = "serde")]
mod json;
#[cfg(feature = "wire")]
pub mod wire;
#[cfg(feature = "serde")]
pub use json::json_kind;

pub use job::{
    InputRequest, JobDetails, JobEnd, JobState, JobSummary, JobUsage, JobView, NEXT_CALL_NEW_SHELL,
    NO_JOBS, NO_NEW_OUTPUT, SessionEvent, hidden_input_line, hidden_input_sent_line,
    job_busy_notice, job_has_ended_text, job_has_no_terminal_text, job_started_line,
    job_state_line, no_such_job_text, notice_command, run_time_text, too_many_jobs_text,
};
pub use limits::{
    DEFAULT_IDLE_MINUTES, DEFAULT_MAX_SHELLS, DEFAULT_OUTPUT_MAX_BYTES, DEFAULT_SNAPSHOT_TIMEOUT,
    MAX_SEQUENCE_BYTES, MAX_SNAPSHOT_TIMEOUT,
};

/// The RPC protocol's number: both sides of a remote connection must speak
/// the same one.
pub const RPC_PROTOCOL: u32 = 2;

/// How the error of a remote call whose connection was lost begins:
/// `Remote connection lost: <reason>`.
pub const REMOTE_LOST_PREFIX: &str = "Remote connection lost: ";
pub use lines::{count_lines, lines_of, tail_of};
pub use resources::{LimitHit, LimitKind, ResourceLimits};

pub use approval::{
    Answerer, ApprovalAnswer, ApprovalDecision, ApprovalRequest, ApprovalResolution, AskedSegment,
    approval_declined_text, approval_timeout_text, approval_unavailable_text, policy_denied_text,
};
pub use args::{
    ArgsError, BashArgs, JobInputArgs, JobKillArgs, JobListArgs, JobOutputArgs, MAX_JOB_WAIT,
    limit_text,
};
#[cfg(feature = "schema")]
pub use args::{job_tool_specs, tool_specs};
pub use bang::{BangOptions, BangRun, BangState};
pub use result::{BashResult, InterceptionDetails, OutputSummary};
pub use screen::{Cell, CellAttrs, CellColor, Screen};
pub use ssh_target::{SshTarget, SshTargetError};
pub use status::{SandboxStatus, SessionStatus, ViewSettings};
pub use text::{
    BANG_ALREADY_RUNNING, CANCELLED_ANNOTATION, COMMAND_ABORTED, FullOutput, MISSING_EXIT_STATUS,
    NO_OUTPUT, RECONNECTED_LINE, SHELL_ENDED_LINE, annotation_line, blocked_text,
    cwd_cannot_enter_text, cwd_missing_text, cwd_not_directory_text, exit_code_text, exit_outcome,
    format_seconds, format_size, insert_session_line, needs_terminal_line, timeout_annotation,
    truncation_notice, unknown_tool_text,
};
pub use theme::{Theme, UnknownTheme};
pub use timeout::Timeout;
pub use tool::{
    BASH_TOOL, ShapedMeta, ShownRange, TOOL_NAMES, ToolContent, ToolDetails, ToolMeta, ToolOutcome,
    ToolResult, TruncatedBy, Truncation, TruncationDirection, unknown_tool,
};
