//! Requests: what a client sends, one JSON object per line.
//!
//! A server reads a line in two passes (the lenient first pass, which takes `id` and `type`
//! out of any JSON object, is the server's); this module is the second: [`RequestType`] is the
//! tag, one struct per type holds its fields, and `serde_path_to_error` names the field a bad
//! value is in, down to the index in an array (`toolNames[1]`). It is not one
//! `#[serde(tag = "type")]` enum on the way in because serde buffers the fields of an
//! internally tagged enum before reading them, which loses the path of a bad value. On the way
//! out (a client building a request) it is: [`Request`] serialises as the line to send.

use serde::Serialize;
use serde::de::{self, Deserialize, DeserializeOwned, Deserializer, IntoDeserializer};
use serde_json::Value;

use super::RequestId;
use crate::{ApprovalDecision, json_kind};

/// One request line, understood.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Request {
    /// `id`, echoed in the response (any JSON value; `null` counts as absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    /// What to do.
    #[serde(flatten)]
    pub command: Command,
}

impl Request {
    /// The request line of `command` with `id` (no `\n`).
    pub fn to_line(&self) -> String {
        // A request holds strings, numbers and JSON values only: it always serialises.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The request types, with their fields.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum Command {
    /// `{"type": "bash", "command", "timeout"?, "streamId"?}`: a user's (bang) command.
    Bash {
        /// The command line.
        command: String,
        /// Seconds; clamped by the session.
        #[serde(skip_serializing_if = "Option::is_none")]
        timeout: Option<f64>,
        /// When given, the output is also sent as it comes, in `bash_output` events with this
        /// `streamId` (a UI that shows the command live from afar).
        #[serde(skip_serializing_if = "Option::is_none")]
        stream_id: Option<String>,
        /// Judge it by the approval policy as a model's command (a local client forwards a
        /// command that arrived on its `--listen` socket).
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        judged: bool,
        /// `false`: this command's own client cannot be asked (a command that needs a yes is
        /// denied at once); absent: as the connection's `capabilities` say.
        #[serde(skip_serializing_if = "Option::is_none")]
        approvals: Option<bool>,
    },
    /// `{"type": "abort_bash"}`.
    AbortBash,
    /// `{"type": "tool_call", "toolCallId", "name", "arguments", "toolNames"?}`.
    ToolCall {
        /// The caller's id of the call, used by `abort` and in every event.
        tool_call_id: String,
        /// The tool (`bash`, or a job tool).
        name: String,
        /// The tool's arguments, checked by the tool itself (bad ones make an error result).
        arguments: Value,
        /// The tools the agent has (interception only suggests tools that exist).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_names: Vec<String>,
        /// `false`: this call's own client cannot be asked (a command that needs a yes is
        /// denied at once); absent: as the connection's `capabilities` say.
        #[serde(skip_serializing_if = "Option::is_none")]
        approvals: Option<bool>,
    },
    /// `{"type": "abort", "toolCallId"}`.
    Abort {
        /// The call to abort.
        tool_call_id: String,
    },
    /// `{"type": "hello", "protocol"?, "settings"?}`: the two sides of remote execution
    /// check each other's protocol; with `settings`, the session is made anew with them.
    Hello {
        /// The protocol the other side speaks; not checked when absent.
        #[serde(skip_serializing_if = "Option::is_none")]
        protocol: Option<u64>,
        /// The other side's execution settings, to apply to a new session (a JSON object of
        /// settings sections; checked by the session's settings).
        #[serde(skip_serializing_if = "Option::is_none")]
        settings: Option<Value>,
        /// What the client can do: `{"approvals": true}` — it answers approval requests.
        #[serde(skip_serializing_if = "Option::is_none")]
        capabilities: Option<Capabilities>,
    },
    /// `{"type": "approval", "requestId", "decision"}`: the answer to an `approval_request`.
    Approval {
        /// The request answered.
        request_id: String,
        /// `allow`, `allow_session` or `deny`.
        decision: ApprovalDecision,
    },
    /// `{"type": "ping"}`.
    Ping,
    /// A question the session answers with data and nothing else (an artifact, its status, a
    /// look at a job, a secret typed at a job): passed on as it came by whatever stands between
    /// the client and the session.
    #[serde(untagged)]
    Query(Query),
}

/// The requests a session answers with data and nothing else. A far side's client sends them
/// as they are, and the RPC server hands them to its session as they came: each is answered in
/// one place, the session's own ([`Query`] in, the JSON of the answer's `data` out).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum Query {
    /// `{"type": "read_artifact", "artifactId", "offset"?, "limit"?}`.
    ReadArtifact {
        /// Digits or an `artifact://` URL.
        artifact_id: String,
        /// First line, 1-based.
        #[serde(skip_serializing_if = "Option::is_none")]
        offset: Option<u64>,
        /// Number of lines.
        #[serde(skip_serializing_if = "Option::is_none")]
        limit: Option<u64>,
    },
    /// `{"type": "list_artifacts"}`.
    ListArtifacts,
    /// `{"type": "status"}`: what a status line shows (the session's cwd, shell, sandbox and
    /// jobs).
    Status,
    /// `{"type": "job_view", "jobId", "bytes"?}`: a UI's look at a job (its last lines, or its
    /// screen), which does not move what `job_output` returns next.
    JobView {
        /// The job: a string of digits or a number.
        job_id: String,
        /// The bytes of output to return at most (default 16 KiB, at most 1 MiB).
        #[serde(skip_serializing_if = "Option::is_none")]
        bytes: Option<u64>,
    },
    /// `{"type": "secret_input", "jobId", "text"}`: what a person typed at a job's hidden
    /// prompt (a password), sent to it followed by Enter; never shown, logged or kept.
    SecretInput {
        /// The job: a string of digits or a number.
        job_id: String,
        /// The text, without CR or LF.
        text: SecretText,
    },
    /// `{"type": "complete", "word", "kind"}`: the names a word typed at a prompt may become:
    /// entries of a directory (relative to the session's directory) or command names (on the
    /// session's `PATH`), as the session's side sees them.
    Complete {
        /// The word as typed so far, unquoted. For a path, the directory part names the
        /// directory listed and the rest is the start of the names returned.
        word: String,
        /// What the word is.
        kind: CompletionKind,
    },
}

/// What a word to complete names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompletionKind {
    /// A file or directory.
    Path,
    /// A command: a function or alias of the session's shells, or a program on their `PATH`.
    Command,
}

impl Query {
    /// The type of this request.
    pub fn request_type(&self) -> RequestType {
        match self {
            Self::ReadArtifact { .. } => RequestType::ReadArtifact,
            Self::ListArtifacts => RequestType::ListArtifacts,
            Self::Status => RequestType::Status,
            Self::JobView { .. } => RequestType::JobView,
            Self::SecretInput { .. } => RequestType::SecretInput,
            Self::Complete { .. } => RequestType::Complete,
        }
    }
}

impl From<Query> for Command {
    fn from(query: Query) -> Self {
        Self::Query(query)
    }
}

/// A secret a person typed: its `Debug` form shows only its length, so no log or error
/// message that prints a request can hold it.
#[derive(Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct SecretText(pub String);

impl std::fmt::Debug for SecretText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretText({} bytes)", self.0.len())
    }
}

impl Command {
    /// The request type, as the `command` of its response.
    pub fn name(&self) -> &'static str {
        self.request_type().name()
    }

    /// The type of this request.
    pub fn request_type(&self) -> RequestType {
        match self {
            Self::Bash { .. } => RequestType::Bash,
            Self::AbortBash => RequestType::AbortBash,
            Self::ToolCall { .. } => RequestType::ToolCall,
            Self::Abort { .. } => RequestType::Abort,
            Self::Hello { .. } => RequestType::Hello,
            Self::Ping => RequestType::Ping,
            Self::Approval { .. } => RequestType::Approval,
            Self::Query(query) => query.request_type(),
        }
    }

    /// The command of type `kind` from the request object's other fields (`fields`: the object
    /// without `id` and `type`; unknown fields are ignored). `line` is the whole request line:
    /// only a request found to be bad is read again from it, to name where.
    pub fn from_fields(kind: RequestType, fields: Value, line: &str) -> Result<Self, FieldError> {
        Ok(match kind {
            RequestType::Bash => {
                let BashFields {
                    command,
                    timeout,
                    stream_id,
                    judged,
                    approvals,
                } = deserialize(fields, line)?;
                Self::Bash {
                    command: required(command, "command")?.0,
                    timeout: timeout.map(|seconds| seconds.0),
                    stream_id: stream_id.map(|id| id.0),
                    judged: judged.unwrap_or(false),
                    approvals,
                }
            }
            RequestType::AbortBash => Self::AbortBash,
            RequestType::ToolCall => {
                let ToolCallFields {
                    tool_call_id,
                    name,
                    arguments,
                    tool_names,
                    approvals,
                } = deserialize(fields, line)?;
                Self::ToolCall {
                    tool_call_id: required(tool_call_id, "toolCallId")?.0,
                    name: required(name, "name")?.0,
                    arguments: required(arguments, "arguments")?.0,
                    tool_names: tool_names.map(|names| names.0).unwrap_or_default(),
                    approvals,
                }
            }
            RequestType::Abort => {
                let AbortFields { tool_call_id } = deserialize(fields, line)?;
                Self::Abort {
                    tool_call_id: required(tool_call_id, "toolCallId")?.0,
                }
            }
            RequestType::ReadArtifact => {
                let ReadArtifactFields {
                    artifact_id,
                    offset,
                    limit,
                } = deserialize(fields, line)?;
                Self::Query(Query::ReadArtifact {
                    artifact_id: required(artifact_id, "artifactId")?.0,
                    offset: offset.map(|count| count.0),
                    limit: limit.map(|count| count.0),
                })
            }
            RequestType::ListArtifacts => Self::Query(Query::ListArtifacts),
            RequestType::Hello => {
                let HelloFields {
                    protocol,
                    settings,
                    capabilities,
                } = deserialize(fields, line)?;
                Self::Hello {
                    protocol: protocol.map(|number| number.0),
                    settings: settings.map(|settings| settings.0),
                    capabilities,
                }
            }
            RequestType::Ping => Self::Ping,
            RequestType::Status => Self::Query(Query::Status),
            RequestType::JobView => {
                let JobViewFields { job_id, bytes } = deserialize(fields, line)?;
                Self::Query(Query::JobView {
                    job_id: required(job_id, "jobId")?.0,
                    bytes: bytes.map(|count| count.0),
                })
            }
            RequestType::Approval => {
                let ApprovalFields {
                    request_id,
                    decision,
                } = deserialize(fields, line)?;
                Self::Approval {
                    request_id: required(request_id, "requestId")?.0,
                    decision: decision.ok_or(FieldError::Missing {
                        field: "decision",
                        expected: "`allow`, `allow_session` or `deny`",
                    })?,
                }
            }
            RequestType::SecretInput => {
                let SecretInputFields { job_id, text } = deserialize(fields, line)?;
                Self::Query(Query::SecretInput {
                    job_id: required(job_id, "jobId")?.0,
                    text: SecretText(required(text, "text")?.0),
                })
            }
            RequestType::Complete => {
                let CompleteFields { word, kind } = deserialize(fields, line)?;
                Self::Query(Query::Complete {
                    word: required(word, "word")?.0,
                    kind: kind.ok_or(FieldError::Missing {
                        field: "kind",
                        expected: "`path` or `command`",
                    })?,
                })
            }
        })
    }
}

/// The `type` of a request. Its serde names are the protocol's; [`RequestType::name`] spells
/// them out for responses (a test keeps the two equal).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestType {
    /// `bash`.
    Bash,
    /// `abort_bash`.
    AbortBash,
    /// `tool_call`.
    ToolCall,
    /// `abort`.
    Abort,
    /// `read_artifact`.
    ReadArtifact,
    /// `list_artifacts`.
    ListArtifacts,
    /// `hello`.
    Hello,
    /// `ping`.
    Ping,
    /// `status`.
    Status,
    /// `job_view`.
    JobView,
    /// `approval`.
    Approval,
    /// `secret_input`.
    SecretInput,
    /// `complete`.
    Complete,
}

impl RequestType {
    /// Every request type.
    pub const ALL: [Self; 13] = [
        Self::Bash,
        Self::AbortBash,
        Self::ToolCall,
        Self::Abort,
        Self::ReadArtifact,
        Self::ListArtifacts,
        Self::Hello,
        Self::Ping,
        Self::Status,
        Self::JobView,
        Self::Approval,
        Self::SecretInput,
        Self::Complete,
    ];

    /// The type named `name`, or every type name when there is none.
    pub fn from_name(name: &str) -> Result<Self, &'static [&'static str]> {
        Self::deserialize(IntoDeserializer::<UnknownType>::into_deserializer(name))
            .map_err(|UnknownType(expected)| expected)
    }

    /// Its name on the wire.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Bash => "bash",
            Self::AbortBash => "abort_bash",
            Self::ToolCall => "tool_call",
            Self::Abort => "abort",
            Self::ReadArtifact => "read_artifact",
            Self::ListArtifacts => "list_artifacts",
            Self::Hello => "hello",
            Self::Ping => "ping",
            Self::Status => "status",
            Self::JobView => "job_view",
            Self::Approval => "approval",
            Self::SecretInput => "secret_input",
            Self::Complete => "complete",
        }
    }
}

/// What serde reports when a name is not a [`RequestType`]: the names that are.
#[derive(Debug)]
struct UnknownType(&'static [&'static str]);

impl std::fmt::Display for UnknownType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "expected one of: {}", self.0.join(", "))
    }
}

impl std::error::Error for UnknownType {}

impl de::Error for UnknownType {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Self(&[])
    }

    fn unknown_variant(_: &str, expected: &'static [&'static str]) -> Self {
        Self(expected)
    }
}

/// A field of a request that is missing or of the wrong type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldError {
    /// A required field is absent or `null`.
    Missing {
        /// The field.
        field: &'static str,
        /// What it must be (`a string`, `an object`).
        expected: &'static str,
    },
    /// A field has a value it cannot have.
    Invalid {
        /// Where: the field, and the index in an array (`toolNames[1]`).
        path: String,
        /// What is wrong (`must be a string, got a number`).
        problem: String,
    },
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Missing { field, expected } => write!(f, "missing field `{field}` ({expected})"),
            Self::Invalid { path, problem } => write!(f, "field `{path}` {problem}"),
        }
    }
}

impl std::error::Error for FieldError {}

/// Reads a type's fields from the request object (without `id` and `type`; other unknown
/// fields are ignored). The object is moved in and nothing is tracked: tracking the path costs
/// time on every request (it keeps each key it passes), so only a request found to be bad is
/// read again, from its `line`, with `serde_path_to_error` to find where.
fn deserialize<T: DeserializeOwned>(fields: Value, line: &str) -> Result<T, FieldError> {
    T::deserialize(fields).map_err(|err| {
        locate::<T>(line).unwrap_or_else(|| FieldError::Invalid {
            path: ".".to_owned(),
            problem: err.to_string(),
        })
    })
}

/// Where and why reading `T` from the request object of `line` fails.
fn locate<T: DeserializeOwned>(line: &str) -> Option<FieldError> {
    let value: Value = serde_json::from_str(line).ok()?;
    let err = serde_path_to_error::deserialize::<_, T>(value).err()?;
    Some(FieldError::Invalid {
        path: err.path().to_string(),
        problem: err.into_inner().to_string(),
    })
}

/// A required field's value; `None` (absent or `null`) is an error naming it.
fn required<T: Expected>(value: Option<T>, field: &'static str) -> Result<T, FieldError> {
    value.ok_or(FieldError::Missing {
        field,
        expected: T::EXPECTED,
    })
}

/// The fields of a `bash` request. (`null` counts as absent for every field: `Option`.)
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct BashFields {
    command: Option<Text>,
    timeout: Option<Number>,
    stream_id: Option<Text>,
    judged: Option<bool>,
    approvals: Option<bool>,
}

/// The fields of a `tool_call` request.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolCallFields {
    tool_call_id: Option<Text>,
    name: Option<Text>,
    arguments: Option<Object>,
    tool_names: Option<Names>,
    approvals: Option<bool>,
}

/// The fields of an `abort` request.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct AbortFields {
    tool_call_id: Option<Text>,
}

/// The fields of a `read_artifact` request.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReadArtifactFields {
    artifact_id: Option<Text>,
    offset: Option<LineCount>,
    limit: Option<LineCount>,
}

/// The fields of a `hello` request.
#[derive(serde::Deserialize)]
struct HelloFields {
    protocol: Option<Whole>,
    settings: Option<Object>,
    capabilities: Option<Capabilities>,
}

/// What a client can do, as its `hello` says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    /// It answers approval requests (`approval_request` events, `approval` requests).
    #[serde(default)]
    pub approvals: bool,
    /// A person answers hidden input through it (`input_request` events, `secret_input`
    /// requests).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub secret_input: bool,
}

/// The fields of a `secret_input` request.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct SecretInputFields {
    job_id: Option<JobId>,
    text: Option<Text>,
}

/// The fields of a `complete` request.
#[derive(serde::Deserialize)]
struct CompleteFields {
    word: Option<Text>,
    kind: Option<CompletionKind>,
}

/// The fields of an `approval` request.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ApprovalFields {
    request_id: Option<Text>,
    decision: Option<ApprovalDecision>,
}

/// The fields of a `job_view` request.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct JobViewFields {
    job_id: Option<JobId>,
    bytes: Option<Whole>,
}

/// A field type, as named in errors.
trait Expected {
    /// What a value must be (`a string`).
    const EXPECTED: &'static str;
}

/// The error for a value of the wrong JSON type: `must be <expected>, got <kind>`; the caller
/// puts the field's path in front.
fn mistyped<T: Expected, E: de::Error>(got: &Value) -> E {
    E::custom(format_args!(
        "must be {}, got {}",
        T::EXPECTED,
        json_kind(got)
    ))
}

/// A string.
struct Text(String);

impl Expected for Text {
    const EXPECTED: &'static str = "a string";
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::String(text) => Ok(Self(text)),
            other => Err(mistyped::<Self, _>(&other)),
        }
    }
}

/// Any JSON number, as `f64`.
struct Number(f64);

impl Expected for Number {
    const EXPECTED: &'static str = "a number";
}

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Number(number) => number
                .as_f64()
                .map(Self)
                .ok_or_else(|| de::Error::custom(format_args!("must be a number, got {number}"))),
            other => Err(mistyped::<Self, _>(&other)),
        }
    }
}

/// A count of lines: a whole number, 0 or more.
struct LineCount(u64);

impl Expected for LineCount {
    const EXPECTED: &'static str = "a whole number";
}

impl<'de> Deserialize<'de> for LineCount {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Number(number) => number.as_u64().map(Self).ok_or_else(|| {
                de::Error::custom(format_args!(
                    "must be a whole number of lines (0 or more), got {number}"
                ))
            }),
            other => Err(mistyped::<Self, _>(&other)),
        }
    }
}

/// A whole number, 0 or more.
struct Whole(u64);

impl Expected for Whole {
    const EXPECTED: &'static str = "a whole number";
}

impl<'de> Deserialize<'de> for Whole {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Number(number) => number.as_u64().map(Self).ok_or_else(|| {
                de::Error::custom(format_args!("must be a whole number, got {number}"))
            }),
            other => Err(mistyped::<Self, _>(&other)),
        }
    }
}

/// A job id: a string, or a whole number (as the job tools take it).
struct JobId(String);

impl Expected for JobId {
    const EXPECTED: &'static str = "a string or a whole number";
}

impl<'de> Deserialize<'de> for JobId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::String(text) => Ok(Self(text)),
            Value::Number(number) if number.is_u64() => Ok(Self(number.to_string())),
            other => Err(mistyped::<Self, _>(&other)),
        }
    }
}

/// A JSON object, kept as it is.
struct Object(Value);

impl Expected for Object {
    const EXPECTED: &'static str = "an object";
}

impl<'de> Deserialize<'de> for Object {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            object @ Value::Object(_) => Ok(Self(object)),
            other => Err(mistyped::<Self, _>(&other)),
        }
    }
}

/// An array of strings. Read element by element (not as a [`Value`] first) so that the path
/// of a bad element has its index.
struct Names(Vec<String>);

impl Expected for Names {
    const EXPECTED: &'static str = "an array of strings";
}

impl<'de> Deserialize<'de> for Names {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NamesVisitor)
    }
}

/// Reads [`Names`]; anything but an array is reported by its JSON type.
struct NamesVisitor;

impl<'de> de::Visitor<'de> for NamesVisitor {
    type Value = Names;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(Names::EXPECTED)
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Names, A::Error> {
        let mut names = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(Text(name)) = seq.next_element()? {
            names.push(name);
        }
        Ok(Names(names))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Names, E> {
        Err(mistyped::<Names, _>(&Value::Bool(false)))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Names, E> {
        Err(mistyped::<Names, _>(&Value::from(value)))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Names, E> {
        Err(mistyped::<Names, _>(&Value::from(value)))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Names, E> {
        Err(mistyped::<Names, _>(&Value::from(value)))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Names, E> {
        Err(mistyped::<Names, _>(&Value::String(String::new())))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Names, E> {
        Err(mistyped::<Names, _>(&Value::Null))
    }

    fn visit_map<A: de::MapAccess<'de>>(self, _: A) -> Result<Names, A::Error> {
        Err(mistyped::<Names, _>(&Value::Object(serde_json::Map::new())))
    }
}
