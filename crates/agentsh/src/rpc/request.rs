//! Requests: one JSON object per line, checked field by field so every error names its field.

use agentsh_agent_session::json_kind;
use serde_json::{Map, Value};

use super::framing::{Frame, MAX_LINE_BYTES};

/// The `command` of a response to a line whose type could not be read.
pub const PARSE_COMMAND: &str = "parse";

/// Every request type, as listed in errors.
const REQUEST_TYPES: &str = "bash, abort_bash, tool_call, abort, read_artifact";

/// One request line, understood.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// `id`, echoed in the response (any JSON value; `null` counts as absent).
    pub id: Option<Value>,
    /// What to do.
    pub command: Command,
}

/// The request types of SPEC §11.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// `{"type": "bash", "command", "timeout"?}`: a user bang command.
    Bash {
        /// The command line.
        command: String,
        /// Seconds; clamped by the session.
        timeout: Option<f64>,
    },
    /// `{"type": "abort_bash"}`.
    AbortBash,
    /// `{"type": "tool_call", "toolCallId", "name", "arguments", "toolNames"?}`.
    ToolCall {
        /// The caller's id of the call, used by `abort` and in every event.
        tool_call_id: String,
        /// The tool; only `bash` exists.
        name: String,
        /// The tool's arguments, checked by the tool itself (bad ones make an error result).
        arguments: Value,
        /// The tools the agent has (interception only suggests tools that exist).
        tool_names: Vec<String>,
    },
    /// `{"type": "abort", "toolCallId"}`.
    Abort {
        /// The call to abort.
        tool_call_id: String,
    },
    /// `{"type": "read_artifact", "artifactId", "offset"?, "limit"?}`.
    ReadArtifact {
        /// Digits or an `artifact://` URL.
        artifact_id: String,
        /// First line, 1-based.
        offset: Option<u64>,
        /// Number of lines.
        limit: Option<u64>,
    },
}

impl Command {
    /// The request type, as the `command` of its response.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Bash { .. } => "bash",
            Self::AbortBash => "abort_bash",
            Self::ToolCall { .. } => "tool_call",
            Self::Abort { .. } => "abort",
            Self::ReadArtifact { .. } => "read_artifact",
        }
    }
}

/// A line that is not a valid request: answered with `success: false`.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestError {
    /// The request's `id`, when it could be read.
    pub id: Option<Value>,
    /// The request's type, or `parse` when it could not be read.
    pub command: String,
    /// What is wrong.
    pub error: String,
}

impl RequestError {
    fn parse(id: Option<Value>, reason: impl std::fmt::Display) -> Self {
        Self {
            id,
            command: PARSE_COMMAND.to_owned(),
            error: format!("Failed to parse command: {reason}"),
        }
    }
}

/// Understands one input line. `Ok(None)` for a blank line (ignored).
pub fn parse_frame(frame: &Frame) -> Result<Option<Request>, RequestError> {
    match frame {
        Frame::TooLong { bytes } => Err(RequestError::parse(
            None,
            format_args!(
                "line exceeds {} MiB ({bytes} bytes)",
                MAX_LINE_BYTES / (1024 * 1024)
            ),
        )),
        Frame::Line(bytes) => parse_line(bytes),
    }
}

/// Understands one line (without its `\n`). `Ok(None)` for a blank line.
pub fn parse_line(bytes: &[u8]) -> Result<Option<Request>, RequestError> {
    let text = std::str::from_utf8(bytes).map_err(|err| {
        RequestError::parse(
            None,
            format_args!(
                "line is not valid UTF-8 (invalid byte at offset {})",
                err.valid_up_to()
            ),
        )
    })?;
    if text.trim().is_empty() {
        return Ok(None);
    }
    let value: Value = serde_json::from_str(text).map_err(|err| RequestError::parse(None, err))?;
    let Value::Object(map) = value else {
        return Err(RequestError::parse(
            None,
            format_args!("expected a JSON object, got {}", json_kind(&value)),
        ));
    };
    let id = map.get("id").filter(|id| !id.is_null()).cloned();
    let kind_name = match map.get("type") {
        None | Some(Value::Null) => {
            return Err(RequestError::parse(id, "missing field `type`"));
        }
        Some(Value::String(name)) => name.clone(),
        Some(other) => {
            return Err(RequestError::parse(
                id,
                format_args!("field `type` must be a string, got {}", json_kind(other)),
            ));
        }
    };
    let fields = Fields(&map);
    let command = match kind_name.as_str() {
        "bash" => fields.bash(),
        "abort_bash" => Ok(Command::AbortBash),
        "tool_call" => fields.tool_call(),
        "abort" => fields.abort(),
        "read_artifact" => fields.read_artifact(),
        other => Err(format!(
            "Unknown command type `{other}` (expected one of: {REQUEST_TYPES})"
        )),
    }
    .map_err(|error| RequestError {
        id: id.clone(),
        command: kind_name.clone(),
        error,
    })?;
    Ok(Some(Request { id, command }))
}

/// The fields of a request object; each getter's error names the field.
struct Fields<'a>(&'a Map<String, Value>);

impl Fields<'_> {
    fn bash(&self) -> Result<Command, String> {
        Ok(Command::Bash {
            command: self.string("command")?,
            timeout: self.optional_number("timeout")?,
        })
    }

    fn tool_call(&self) -> Result<Command, String> {
        let tool_call_id = self.string("toolCallId")?;
        let name = self.string("name")?;
        let arguments = match self.get("arguments") {
            None => return Err(missing("arguments", "an object")),
            Some(value @ Value::Object(_)) => value.clone(),
            Some(other) => return Err(mistyped("arguments", "an object", other)),
        };
        let tool_names = match self.get("toolNames") {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(index, item)| match item {
                    Value::String(name) => Ok(name.clone()),
                    other => Err(mistyped(&format!("toolNames[{index}]"), "a string", other)),
                })
                .collect::<Result<_, _>>()?,
            Some(other) => return Err(mistyped("toolNames", "an array of strings", other)),
        };
        Ok(Command::ToolCall {
            tool_call_id,
            name,
            arguments,
            tool_names,
        })
    }

    fn abort(&self) -> Result<Command, String> {
        Ok(Command::Abort {
            tool_call_id: self.string("toolCallId")?,
        })
    }

    fn read_artifact(&self) -> Result<Command, String> {
        Ok(Command::ReadArtifact {
            artifact_id: self.string("artifactId")?,
            offset: self.optional_count("offset")?,
            limit: self.optional_count("limit")?,
        })
    }

    /// A field; `null` counts as absent.
    fn get(&self, name: &str) -> Option<&Value> {
        self.0.get(name).filter(|value| !value.is_null())
    }

    fn string(&self, name: &str) -> Result<String, String> {
        match self.get(name) {
            None => Err(missing(name, "a string")),
            Some(Value::String(text)) => Ok(text.clone()),
            Some(other) => Err(mistyped(name, "a string", other)),
        }
    }

    fn optional_number(&self, name: &str) -> Result<Option<f64>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Number(number)) => Ok(number.as_f64()),
            Some(other) => Err(mistyped(name, "a number", other)),
        }
    }

    fn optional_count(&self, name: &str) -> Result<Option<u64>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Number(number)) => number.as_u64().map(Some).ok_or_else(|| {
                format!("field `{name}` must be a whole number of lines (0 or more), got {number}")
            }),
            Some(other) => Err(mistyped(name, "a whole number", other)),
        }
    }
}

fn missing(name: &str, expected: &str) -> String {
    format!("missing field `{name}` ({expected})")
}

fn mistyped(name: &str, expected: &str, got: &Value) -> String {
    format!("field `{name}` must be {expected}, got {}", json_kind(got))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ok(line: &str) -> Request {
        parse_line(line.as_bytes())
            .expect("valid request")
            .expect("not blank")
    }

    fn err(line: &[u8]) -> RequestError {
        parse_line(line).expect_err("invalid request")
    }

    fn check_err(line: &str, id: Option<Value>, command: &str, error: &str) {
        assert_eq!(
            err(line.as_bytes()),
            RequestError {
                id,
                command: command.to_owned(),
                error: error.to_owned()
            },
            "{line}"
        );
    }

    #[test]
    fn blank_lines_are_ignored() {
        for line in ["", "   ", "\t\r"] {
            assert_eq!(parse_line(line.as_bytes()), Ok(None));
        }
    }

    #[test]
    fn each_request_type() {
        assert_eq!(
            ok(r#"{"id":"1","type":"bash","command":"ls","timeout":2.5}"#),
            Request {
                id: Some(json!("1")),
                command: Command::Bash {
                    command: "ls".into(),
                    timeout: Some(2.5)
                }
            }
        );
        assert_eq!(
            ok(r#"{"type":"bash","command":"ls","timeout":null,"extra":1}"#).command,
            Command::Bash {
                command: "ls".into(),
                timeout: None
            }
        );
        assert_eq!(ok(r#"{"id":7,"type":"abort_bash"}"#).id, Some(json!(7)));
        assert_eq!(
            ok(r#"{"type":"tool_call","toolCallId":"c1","name":"bash","arguments":{"command":"x"},"toolNames":["read"]}"#)
                .command,
            Command::ToolCall {
                tool_call_id: "c1".into(),
                name: "bash".into(),
                arguments: json!({"command": "x"}),
                tool_names: vec!["read".into()],
            }
        );
        assert_eq!(
            ok(r#"{"type":"abort","toolCallId":"c1"}"#).command,
            Command::Abort {
                tool_call_id: "c1".into()
            }
        );
        assert_eq!(
            ok(r#"{"type":"read_artifact","artifactId":"artifact://3","offset":2,"limit":0}"#)
                .command,
            Command::ReadArtifact {
                artifact_id: "artifact://3".into(),
                offset: Some(2),
                limit: Some(0)
            }
        );
    }

    #[test]
    fn unparsable_lines() {
        check_err(
            "{not json",
            None,
            "parse",
            "Failed to parse command: key must be a string at line 1 column 2",
        );
        check_err(
            "[1]",
            None,
            "parse",
            "Failed to parse command: expected a JSON object, got an array",
        );
        check_err(
            "{}",
            None,
            "parse",
            "Failed to parse command: missing field `type`",
        );
        check_err(
            r#"{"id":"a","type":3}"#,
            Some(json!("a")),
            "parse",
            "Failed to parse command: field `type` must be a string, got a number",
        );
        assert_eq!(
            err(b"{\"type\":\"bash\",\"command\":\"\xff\"}").error,
            "Failed to parse command: line is not valid UTF-8 (invalid byte at offset 26)"
        );
        assert_eq!(
            parse_frame(&Frame::TooLong { bytes: 40_000_000 })
                .expect_err("too long")
                .error,
            "Failed to parse command: line exceeds 32 MiB (40000000 bytes)"
        );
    }

    #[test]
    fn bad_fields_are_named_and_the_id_echoed() {
        check_err(
            r#"{"id":"x","type":"frobnicate"}"#,
            Some(json!("x")),
            "frobnicate",
            "Unknown command type `frobnicate` (expected one of: bash, abort_bash, tool_call, abort, read_artifact)",
        );
        check_err(
            r#"{"id":"x","type":"bash"}"#,
            Some(json!("x")),
            "bash",
            "missing field `command` (a string)",
        );
        check_err(
            r#"{"id":"x","type":"bash","command":1}"#,
            Some(json!("x")),
            "bash",
            "field `command` must be a string, got a number",
        );
        check_err(
            r#"{"type":"bash","command":"ls","timeout":"5"}"#,
            None,
            "bash",
            "field `timeout` must be a number, got a string",
        );
        check_err(
            r#"{"type":"tool_call","toolCallId":"c","name":"bash"}"#,
            None,
            "tool_call",
            "missing field `arguments` (an object)",
        );
        check_err(
            r#"{"type":"tool_call","toolCallId":"c","name":"bash","arguments":{},"toolNames":["a",2]}"#,
            None,
            "tool_call",
            "field `toolNames[1]` must be a string, got a number",
        );
        check_err(
            r#"{"type":"abort"}"#,
            None,
            "abort",
            "missing field `toolCallId` (a string)",
        );
        check_err(
            r#"{"type":"read_artifact","artifactId":"1","offset":-1}"#,
            None,
            "read_artifact",
            "field `offset` must be a whole number of lines (0 or more), got -1",
        );
    }
}
