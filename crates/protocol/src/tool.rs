//! A tool call's result as plain data: what the facade builds, RPC and MCP send, and
//! the renderer draws. With the `serde` feature the JSON field names are camelCase.

use std::path::Path;

use crate::job::JobDetails;
use crate::result::InterceptionDetails;
use crate::timeout::Timeout;

/// A tool result: `{"content": [{"type": "text", "text": …}], "details": {…}, "isError": bool}`.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ToolResult {
    /// The text the model reads, as one text block.
    pub content: Vec<ToolContent>,
    /// Structured facts about the run.
    pub details: ToolDetails,
    /// True for a non-zero exit, a timeout, an abort, a missing exit status, a blocked command
    /// or a bad `cwd`.
    pub is_error: bool,
}

impl ToolResult {
    /// A result with a single text block.
    pub fn new(text: String, details: ToolDetails, is_error: bool) -> Self {
        Self {
            content: vec![ToolContent::Text { text }],
            details,
            is_error,
        }
    }

    /// The first text block, borrowed (a bash tool result has exactly one); empty without one.
    pub fn first_text(&self) -> &str {
        match self.content.first() {
            Some(ToolContent::Text { text }) => text,
            None => "",
        }
    }

    /// The first text block, to change it (a far side's result amended on this side); `None`
    /// without one.
    pub fn text_mut(&mut self) -> Option<&mut String> {
        self.content
            .first_mut()
            .map(|ToolContent::Text { text }| text)
    }

    /// The text of the result (the text blocks, joined).
    pub fn text(&self) -> String {
        self.content
            .iter()
            .map(|ToolContent::Text { text }| text.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// One block of a result's `content`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(tag = "type", rename_all = "lowercase"))]
pub enum ToolContent {
    /// `{"type": "text", "text": …}`.
    Text {
        /// The text.
        text: String,
    },
}

/// `details` of a tool result.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ToolDetails {
    /// The exit code; `null` when none was obtained (or the command never ran).
    pub exit_code: Option<i32>,
    /// Stopped by a timeout or an abort.
    pub cancelled: bool,
    /// Stopped by its timeout.
    pub timed_out: bool,
    /// The shell could not be kept and was replaced.
    pub session_restarted: bool,
    /// The working directory of the call (resolved).
    pub cwd: String,
    /// The timeout in seconds, after clamping.
    pub timeout: Timeout,
    /// What was left out of the text, when anything was.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub meta: Option<ToolMeta>,
    /// Why the command was blocked, for a blocked command.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub interception: Option<InterceptionDetails>,
    /// The background job the result is about: a call that left one running, or a
    /// job tool's answer.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub job: Option<JobDetails>,
    /// The resource limit the command's processes passed (`limits.*`), when one did.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub limit: Option<crate::LimitHit>,
}

impl ToolDetails {
    /// `meta.truncation`, when anything was left out of the text.
    pub fn truncation(&self) -> Option<&Truncation> {
        self.meta.as_ref()?.truncation.as_ref()
    }

    /// `meta.shaped`, when the text is a shaped output.
    pub fn shaped(&self) -> Option<&ShapedMeta> {
        self.meta.as_ref()?.shaped.as_ref()
    }

    /// The artifact holding the whole raw output, when there is one: the shaped output's, or
    /// the truncated one's.
    pub fn raw_artifact(&self) -> Option<(&str, u64)> {
        if let Some(shaped) = self.shaped() {
            return Some((&shaped.artifact_id, shaped.raw_lines));
        }
        let truncation = self.truncation()?;
        Some((truncation.artifact_id.as_deref()?, truncation.total_lines))
    }

    /// Details of a call that never ran: no exit code, nothing stopped.
    pub fn not_run(cwd: &Path, timeout: Timeout) -> Self {
        Self {
            exit_code: None,
            cancelled: false,
            timed_out: false,
            session_restarted: false,
            cwd: cwd.to_string_lossy().into_owned(),
            timeout,
            meta: None,
            interception: None,
            job: None,
            limit: None,
        }
    }
}

/// `details.meta`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ToolMeta {
    /// Present whenever lines or bytes of the output were left out of the text.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub truncation: Option<Truncation>,
    /// Present when the text is the shaped output of a known program (the raw output is the
    /// artifact it names).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub shaped: Option<ShapedMeta>,
}

/// `details.meta.shaped`: the text is a shaped output; the whole one is an artifact.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ShapedMeta {
    /// What shaped it: `<program>[ <subcommand>]` (`git log`, `cargo test`).
    pub shaper: String,
    /// Lines of the raw output.
    pub raw_lines: u64,
    /// Bytes of the raw output.
    pub raw_bytes: u64,
    /// Lines of the raw output the text holds.
    pub kept_lines: u64,
    /// The artifact holding the raw output.
    pub artifact_id: String,
}

/// `details.meta.truncation`: what the text shows of the whole output.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct Truncation {
    /// Which end of the output the text shows: `head` when a head limit was used.
    pub direction: TruncationDirection,
    /// `bytes` when the byte limit decided what is missing (the notice is shown), `lines`
    /// when only the caller's head/tail did.
    pub truncated_by: TruncatedBy,
    /// Lines of the whole output.
    pub total_lines: u64,
    /// Bytes of the whole output.
    pub total_bytes: u64,
    /// Lines shown.
    pub output_lines: u64,
    /// Bytes shown (without the annotation line).
    pub output_bytes: u64,
    /// The lines shown, 1-based inclusive, in the whole output; `{0, 0}` when none are.
    pub shown_range: ShownRange,
    /// The artifact holding the whole output, when output was spilled to one.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub artifact_id: Option<String>,
    /// Why the artifact could not be written (disk full, file removed), when spilling failed:
    /// the whole output was not saved.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub artifact_error: Option<String>,
}

/// `direction` of a [`Truncation`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum TruncationDirection {
    /// The text shows the start of the output.
    Head,
    /// The text shows the end of the output.
    Tail,
}

/// `truncatedBy` of a [`Truncation`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum TruncatedBy {
    /// The byte limit (`output.max_bytes`).
    Bytes,
    /// The caller's `head`/`tail`.
    Lines,
}

/// A 1-based inclusive line range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ShownRange {
    /// First line shown.
    pub start: u64,
    /// Last line shown.
    pub end: u64,
}

/// What a tool call produced: a result, or an abort (the caller aborted). Both carry the full
/// result so an RPC can answer an abort with its text.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    /// The call ran to an end (success or error).
    Finished(ToolResult),
    /// The caller aborted the call; the result's text ends with `Command aborted` (plus the
    /// notice, when due) and `is_error` is true.
    Aborted(ToolResult),
}

impl ToolOutcome {
    /// The result, whichever way the call ended.
    pub fn result(&self) -> &ToolResult {
        match self {
            Self::Finished(result) | Self::Aborted(result) => result,
        }
    }

    /// The result, whichever way the call ended.
    pub fn into_result(self) -> ToolResult {
        match self {
            Self::Finished(result) | Self::Aborted(result) => result,
        }
    }

    /// Whether the caller aborted the call.
    pub fn is_aborted(&self) -> bool {
        matches!(self, Self::Aborted(_))
    }
}

/// The name of the `bash` tool.
pub const BASH_TOOL: &str = "bash";
/// Every tool a session answers: `bash`, then the job tools.
pub const TOOL_NAMES: [&str; 5] = [BASH_TOOL, "job_output", "job_input", "job_kill", "job_list"];

/// The error text for a tool not in [`TOOL_NAMES`], or `None` for one that is.
pub fn unknown_tool(name: &str) -> Option<String> {
    (!TOOL_NAMES.contains(&name)).then(|| crate::unknown_tool_text(name, &TOOL_NAMES))
}
