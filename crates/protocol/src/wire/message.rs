//! What a server writes: responses and events, one JSON object per line.
//!
//! [`Message`] serialises as the line a server writes; a client reads a line back with
//! `serde_json::from_str::<Message>` (through [`ServerLine`], a flat struct of every field a
//! line can have: a response's `data` and an end event's `result` stay as they were written,
//! never parsed into a tree).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::RequestId;
use crate::AskedSegment;

/// One line of a server's output.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase",
    try_from = "ServerLine"
)]
pub enum Message {
    /// The answer to a request: `{"id"?, "type": "response", "command", "success", "data"?, "error"?}`.
    Response {
        /// The request's `id`, when it could be read (a number as it was written).
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
        /// The request type, or `parse`.
        command: String,
        /// Whether the request was carried out.
        success: bool,
        /// The result, for requests that have one (already serialised).
        #[serde(skip_serializing_if = "Option::is_none")]
        data: Option<Box<RawValue>>,
        /// Why the request failed.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// A tool call started.
    ToolExecutionStart {
        /// The call.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// The call's arguments, as given.
        args: Value,
    },
    /// A live snapshot of a running tool call's output.
    ToolExecutionUpdate {
        /// The call.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// `{"content": [{"type": "text", "text": …}]}`.
        partial_result: PartialResult,
    },
    /// A tool call ended (also when it was aborted).
    ToolExecutionEnd {
        /// The call.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// The tool result (already serialised).
        result: Box<RawValue>,
        /// The result's `isError`.
        is_error: bool,
    },
    /// Output of a `bash` request that asked for it (`streamId`), as it is committed.
    BashOutput {
        /// The request's `streamId`.
        stream_id: String,
        /// The output's next piece (sanitised, as the result keeps it).
        text: String,
    },
    /// A session warning, reported once.
    Warning {
        /// The warning.
        message: String,
    },
    /// A command needs a yes (sent only to a client that said `capabilities.approvals`).
    ApprovalRequest {
        /// The request, answered by an `approval` request naming it.
        request_id: String,
        /// The call the command belongs to.
        tool_call_id: String,
        /// The whole command line.
        command: String,
        /// The segments that need a yes, with their reasons.
        segments: Vec<AskedSegment>,
    },
    /// An approval request was resolved: answered (by anyone), timed out, or its call aborted.
    ApprovalResolved {
        /// The request.
        request_id: String,
        /// The call the command belongs to.
        tool_call_id: String,
        /// `allow`, `allow_session`, `deny`, `timeout`, `aborted` or `unanswered`.
        decision: String,
        /// Who answered (`rpc`, `mcp`, `interactive`), when someone did.
        #[serde(skip_serializing_if = "Option::is_none")]
        answered_by: Option<String>,
    },
    /// A PTY job asks for hidden input (sent only to a client that said
    /// `capabilities.secretInput`), answered by a `secret_input` request naming the job.
    InputRequest {
        /// The job.
        job_id: String,
        /// The prompt (`Password: `).
        prompt: String,
        /// The command line of the program that asks.
        command: String,
        /// Always `true`: the input is not echoed.
        hidden: bool,
    },
    /// A background job ended (exited or was killed): sent to every client at once.
    JobEnd {
        /// The job.
        job_id: String,
        /// `exited` or `killed`.
        state: crate::JobState,
        /// Its command's exit status (`null` when it was killed).
        exit_code: Option<i32>,
        /// How long it ran, in milliseconds.
        run_time_ms: u64,
        /// The resource limit its processes passed: `{kind, limit, used}`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<crate::LimitHit>,
    },
}

impl Message {
    /// The wire event of a session's `event`: `input_request` (always `"hidden": true`),
    /// `job_end`.
    pub fn event(event: &crate::SessionEvent) -> Self {
        match event {
            crate::SessionEvent::InputRequest(request) => Self::InputRequest {
                job_id: request.job_id.clone(),
                prompt: request.prompt.clone(),
                command: request.command.clone(),
                hidden: true,
            },
            crate::SessionEvent::JobEnd(end) => Self::job_end(end),
        }
    }

    /// The session event this line is, or the line back when it is none (a response, a
    /// call's event).
    pub fn into_event(self) -> Result<crate::SessionEvent, Self> {
        match self {
            Self::InputRequest {
                job_id,
                prompt,
                command,
                ..
            } => Ok(crate::SessionEvent::InputRequest(crate::InputRequest {
                job_id,
                prompt,
                command,
            })),
            Self::JobEnd {
                job_id,
                state,
                exit_code,
                run_time_ms,
                reason,
            } => Ok(crate::SessionEvent::JobEnd(crate::JobEnd {
                job_id,
                state,
                exit_code,
                run_time: std::time::Duration::from_millis(run_time_ms),
                reason,
            })),
            other => Err(other),
        }
    }

    /// The `job_end` event of `end`.
    pub fn job_end(end: &crate::JobEnd) -> Self {
        Self::JobEnd {
            job_id: end.job_id.clone(),
            state: end.state,
            exit_code: end.exit_code,
            run_time_ms: u64::try_from(end.run_time.as_millis()).unwrap_or(u64::MAX),
            reason: end.reason,
        }
    }

    /// A successful response.
    pub fn success(id: Option<RequestId>, command: &str, data: Option<Box<RawValue>>) -> Self {
        Self::Response {
            id,
            command: command.to_owned(),
            success: true,
            data,
            error: None,
        }
    }

    /// A failed response whose `error` is `error`.
    pub fn failure(id: Option<RequestId>, command: &str, error: impl std::fmt::Display) -> Self {
        Self::Response {
            id,
            command: command.to_owned(),
            success: false,
            data: None,
            error: Some(error.to_string()),
        }
    }

    /// A successful response carrying `data`, serialised now; a failure naming why when it
    /// cannot be.
    pub fn with_data(id: Option<RequestId>, command: &str, data: &impl Serialize) -> Self {
        match serde_json::value::to_raw_value(data) {
            Ok(data) => Self::success(id, command, Some(data)),
            Err(err) => Self::failure(id, command, format_args!("internal error: {err}")),
        }
    }

    /// The call or stream an event belongs to: its `toolCallId`, or a `bash_output`'s
    /// `streamId`; `None` for a response or a warning.
    pub fn stream(&self) -> Option<&str> {
        match self {
            Self::ToolExecutionStart { tool_call_id, .. }
            | Self::ToolExecutionUpdate { tool_call_id, .. }
            | Self::ToolExecutionEnd { tool_call_id, .. }
            | Self::ApprovalRequest { tool_call_id, .. }
            | Self::ApprovalResolved { tool_call_id, .. } => Some(tool_call_id),
            Self::BashOutput { stream_id, .. } => Some(stream_id),
            Self::Response { .. }
            | Self::Warning { .. }
            | Self::InputRequest { .. }
            | Self::JobEnd { .. } => None,
        }
    }
}

/// `partialResult` of an update: `{"content": [{"type": "text", "text": …}]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartialResult {
    /// One text block.
    pub content: [TextBlock; 1],
}

impl PartialResult {
    /// A partial result holding `text`.
    pub fn text(text: String) -> Self {
        Self {
            content: [TextBlock {
                kind: TextKind::Text,
                text,
            }],
        }
    }

    /// Its text.
    pub fn as_text(&self) -> &str {
        &self.content[0].text
    }
}

/// `{"type": "text", "text": …}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextBlock {
    #[serde(rename = "type")]
    kind: TextKind,
    text: String,
}

/// The one kind of block a partial result holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum TextKind {
    Text,
}

/// The `type` of a server's line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LineType {
    /// `response`.
    Response,
    /// `tool_execution_start`.
    ToolExecutionStart,
    /// `tool_execution_update`.
    ToolExecutionUpdate,
    /// `tool_execution_end`.
    ToolExecutionEnd,
    /// `bash_output`.
    BashOutput,
    /// `warning`.
    Warning,
    /// `approval_request`.
    ApprovalRequest,
    /// `approval_resolved`.
    ApprovalResolved,
    /// `input_request`.
    InputRequest,
    /// `job_end`.
    JobEnd,
}

/// A server's line as read: its `type` and every field some line has, each as it came (a
/// response's `data` and an end's `result` unparsed). Read into a [`Message`] by its
/// `TryFrom`, which checks that the fields of its type are there.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerLine {
    #[serde(rename = "type")]
    kind: LineType,
    id: Option<Value>,
    command: Option<String>,
    success: Option<bool>,
    data: Option<Box<RawValue>>,
    error: Option<String>,
    tool_call_id: Option<String>,
    tool_name: Option<String>,
    args: Option<Value>,
    partial_result: Option<PartialResult>,
    result: Option<Box<RawValue>>,
    is_error: Option<bool>,
    stream_id: Option<String>,
    text: Option<String>,
    message: Option<String>,
    request_id: Option<String>,
    segments: Option<Vec<AskedSegment>>,
    decision: Option<String>,
    answered_by: Option<String>,
    job_id: Option<String>,
    prompt: Option<String>,
    hidden: Option<bool>,
    state: Option<crate::JobState>,
    exit_code: Option<i32>,
    run_time_ms: Option<u64>,
    reason: Option<crate::LimitHit>,
}

/// A server's line that lacks a field its type must have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingField {
    /// The line's type.
    pub kind: LineType,
    /// The field.
    pub field: &'static str,
}

impl std::fmt::Display for MissingField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a {:?} line without `{}`", self.kind, self.field)
    }
}

impl std::error::Error for MissingField {}

impl TryFrom<ServerLine> for Message {
    type Error = MissingField;

    fn try_from(line: ServerLine) -> Result<Self, MissingField> {
        let kind = line.kind;
        let need = |field: &'static str| MissingField { kind, field };
        Ok(match kind {
            LineType::Response => Self::Response {
                id: line.id.filter(|id| !id.is_null()).map(RequestId::from),
                command: line.command.ok_or_else(|| need("command"))?,
                success: line.success.ok_or_else(|| need("success"))?,
                data: line.data,
                error: line.error,
            },
            LineType::ToolExecutionStart => Self::ToolExecutionStart {
                tool_call_id: line.tool_call_id.ok_or_else(|| need("toolCallId"))?,
                tool_name: line.tool_name.ok_or_else(|| need("toolName"))?,
                args: line.args.unwrap_or(Value::Null),
            },
            LineType::ToolExecutionUpdate => Self::ToolExecutionUpdate {
                tool_call_id: line.tool_call_id.ok_or_else(|| need("toolCallId"))?,
                tool_name: line.tool_name.ok_or_else(|| need("toolName"))?,
                partial_result: line.partial_result.ok_or_else(|| need("partialResult"))?,
            },
            LineType::ToolExecutionEnd => Self::ToolExecutionEnd {
                tool_call_id: line.tool_call_id.ok_or_else(|| need("toolCallId"))?,
                tool_name: line.tool_name.ok_or_else(|| need("toolName"))?,
                result: line.result.ok_or_else(|| need("result"))?,
                is_error: line.is_error.ok_or_else(|| need("isError"))?,
            },
            LineType::BashOutput => Self::BashOutput {
                stream_id: line.stream_id.ok_or_else(|| need("streamId"))?,
                text: line.text.ok_or_else(|| need("text"))?,
            },
            LineType::Warning => Self::Warning {
                message: line.message.ok_or_else(|| need("message"))?,
            },
            LineType::ApprovalRequest => Self::ApprovalRequest {
                request_id: line.request_id.ok_or_else(|| need("requestId"))?,
                tool_call_id: line.tool_call_id.ok_or_else(|| need("toolCallId"))?,
                command: line.command.ok_or_else(|| need("command"))?,
                segments: line.segments.unwrap_or_default(),
            },
            LineType::ApprovalResolved => Self::ApprovalResolved {
                request_id: line.request_id.ok_or_else(|| need("requestId"))?,
                tool_call_id: line.tool_call_id.ok_or_else(|| need("toolCallId"))?,
                decision: line.decision.ok_or_else(|| need("decision"))?,
                answered_by: line.answered_by,
            },
            LineType::InputRequest => Self::InputRequest {
                job_id: line.job_id.ok_or_else(|| need("jobId"))?,
                prompt: line.prompt.unwrap_or_default(),
                command: line.command.ok_or_else(|| need("command"))?,
                hidden: line.hidden.unwrap_or(true),
            },
            LineType::JobEnd => Self::JobEnd {
                job_id: line.job_id.ok_or_else(|| need("jobId"))?,
                state: line.state.ok_or_else(|| need("state"))?,
                exit_code: line.exit_code,
                run_time_ms: line.run_time_ms.ok_or_else(|| need("runTimeMs"))?,
                reason: line.reason,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::{InputRequest, JobEnd, JobState, SessionEvent};

    /// Every session event written as its line and read back is itself: what the RPC server
    /// writes is what a far side's client hands its subscribers.
    #[test]
    fn a_session_event_survives_its_line() {
        let events = [
            SessionEvent::InputRequest(InputRequest {
                job_id: "2".into(),
                prompt: "Password: ".into(),
                command: "sudo true".into(),
            }),
            SessionEvent::JobEnd(JobEnd {
                job_id: "1".into(),
                state: JobState::Exited,
                exit_code: Some(3),
                run_time: Duration::from_millis(1500),
                reason: None,
            }),
            SessionEvent::JobEnd(JobEnd {
                job_id: "4".into(),
                state: JobState::Killed,
                exit_code: None,
                run_time: Duration::from_millis(20),
                reason: None,
            }),
            SessionEvent::JobEnd(JobEnd {
                job_id: "5".into(),
                state: JobState::Exited,
                exit_code: None,
                run_time: Duration::from_millis(900),
                reason: Some(crate::LimitHit {
                    kind: crate::LimitKind::Memory,
                    limit: 256 << 20,
                    used: 300 << 20,
                }),
            }),
        ];
        for event in events {
            let line = serde_json::to_string(&Message::event(&event)).unwrap();
            let read: Message = serde_json::from_str(&line).unwrap();
            assert_eq!(read.into_event().ok(), Some(event), "{line}");
        }
        let line =
            r#"{"type":"input_request","jobId":"2","prompt":"P: ","command":"c","hidden":true}"#;
        let read: Message = serde_json::from_str(line).unwrap();
        assert!(
            read.into_event()
                .is_ok_and(|event| event.for_answerers_only())
        );
        let warning: Message = serde_json::from_str(r#"{"type":"warning","message":"m"}"#).unwrap();
        assert!(warning.into_event().is_err());
    }
}
