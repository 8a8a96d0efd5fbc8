//! The arguments of the job tools (SPEC §13). Every error names the argument at fault.

use agentsh_protocol::json_kind;
use regex::Regex;
use serde_json::{Map, Value};

/// The longest a job tool waits.
const MAX_WAIT: f64 = 300.0;

/// `job_output {jobId, wait?, until?, head?, tail?}`.
pub(crate) struct OutputArgs {
    pub(crate) job_id: String,
    /// Seconds, clamped to 0–300; default 0, or 30 with `until`.
    pub(crate) wait: f64,
    pub(crate) until: Option<Regex>,
    pub(crate) head: Option<u32>,
    pub(crate) tail: Option<u32>,
}

/// `job_input {jobId, text?, keys?, wait?}`.
pub(crate) struct InputArgs {
    pub(crate) job_id: String,
    pub(crate) text: Option<String>,
    pub(crate) keys: Vec<String>,
    /// Seconds to wait for the output to settle, clamped to 0–300; default 2.
    pub(crate) wait: f64,
}

/// `job_kill {jobId}`.
pub(crate) struct KillArgs {
    pub(crate) job_id: String,
}

fn object<'a>(tool: &str, value: &'a Value) -> Result<&'a Map<String, Value>, String> {
    value.as_object().ok_or_else(|| {
        format!(
            "{tool} arguments must be a JSON object, got {}",
            json_kind(value)
        )
    })
}

/// A field, `null` counting as absent.
fn field<'a>(args: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    args.get(name).filter(|value| !value.is_null())
}

fn job_id(args: &Map<String, Value>) -> Result<String, String> {
    let bad = |got: &str| {
        format!("argument `jobId` must be a job id (a string of digits or a number), got {got}")
    };
    match field(args, "jobId") {
        None => Err("missing required argument `jobId` (the id of a job)".to_owned()),
        Some(Value::String(id)) if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) => {
            Ok(id.trim_start_matches('0').to_owned())
                .map(|id| if id.is_empty() { "0".to_owned() } else { id })
        }
        Some(Value::Number(n)) => n
            .as_u64()
            .map(|n| n.to_string())
            .ok_or_else(|| bad(&n.to_string())),
        Some(Value::String(id)) => Err(bad(&format!("{id:?}"))),
        Some(other) => Err(bad(json_kind(other))),
    }
}

fn seconds(args: &Map<String, Value>, name: &str) -> Result<Option<f64>, String> {
    match field(args, name) {
        None => Ok(None),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(s) if s.is_finite() => Ok(Some(s.clamp(0.0, MAX_WAIT))),
            _ => Err(format!(
                "argument `{name}` must be a number of seconds, got {n}"
            )),
        },
        Some(other) => Err(format!(
            "argument `{name}` must be a number of seconds, got {}",
            json_kind(other)
        )),
    }
}

fn string(args: &Map<String, Value>, name: &str) -> Result<Option<String>, String> {
    match field(args, name) {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(other) => Err(format!(
            "argument `{name}` must be a string, got {}",
            json_kind(other)
        )),
    }
}

fn lines(args: &Map<String, Value>, name: &str) -> Result<Option<u32>, String> {
    match field(args, name) {
        None => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(f))
                    .map(|f| f as u32)
            })
            .map(Some)
            .ok_or_else(|| {
                format!(
                    "argument `{name}` must be a whole number of lines from 0 to {}, got {n}",
                    u32::MAX
                )
            }),
        Some(other) => Err(format!(
            "argument `{name}` must be a whole number of lines, got {}",
            json_kind(other)
        )),
    }
}

impl OutputArgs {
    pub(crate) fn parse(value: &Value) -> Result<Self, String> {
        let args = object("job_output", value)?;
        let until = match string(args, "until")? {
            None => None,
            Some(pattern) => Some(
                Regex::new(&pattern)
                    .map_err(|err| format!("argument `until` is not a valid regex: {err}"))?,
            ),
        };
        let default_wait = if until.is_some() { 30.0 } else { 0.0 };
        Ok(Self {
            job_id: job_id(args)?,
            wait: seconds(args, "wait")?.unwrap_or(default_wait),
            until,
            head: lines(args, "head")?,
            tail: lines(args, "tail")?,
        })
    }
}

impl InputArgs {
    pub(crate) fn parse(value: &Value) -> Result<Self, String> {
        let args = object("job_input", value)?;
        let keys = match field(args, "keys") {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    item.as_str().map(str::to_owned).ok_or_else(|| {
                        format!(
                            "argument `keys[{i}]` must be a key name, got {}",
                            json_kind(item)
                        )
                    })
                })
                .collect::<Result<_, _>>()?,
            Some(other) => {
                return Err(format!(
                    "argument `keys` must be an array of key names, got {}",
                    json_kind(other)
                ));
            }
        };
        Ok(Self {
            job_id: job_id(args)?,
            text: string(args, "text")?,
            keys,
            wait: seconds(args, "wait")?.unwrap_or(2.0),
        })
    }
}

impl KillArgs {
    pub(crate) fn parse(value: &Value) -> Result<Self, String> {
        Ok(Self {
            job_id: job_id(object("job_kill", value)?)?,
        })
    }
}

/// `job_list {}`: any object.
pub(crate) fn parse_list(value: &Value) -> Result<(), String> {
    object("job_list", value).map(drop)
}

/// The job tools as a model is offered them: `(name, description, JSON schema of the arguments)`,
/// for the same arguments the parsers above read.
pub fn job_tool_specs() -> Vec<(&'static str, &'static str, Value)> {
    let job_id = serde_json::json!({
        "type": ["string", "integer"],
        "description": "The job's id, as the result that started it said (\"1\" first)."
    });
    vec![
        (
            "job_output",
            "Read a background job's output that no earlier result showed ((no new output) when none), then its state. wait blocks until new output or the job's end (seconds, 0-300); until (a regex) returns as soon as a complete line matches that no earlier job_output returned (lines the starting result showed count), waiting 30 s by default. Over 50 KB of new output shows its tail and points at the job's log artifact. For a terminal (pty) job the text is the current screen.",
            serde_json::json!({
                "type": "object",
                "properties": {
                    "jobId": job_id,
                    "wait": {"type": "number", "description": "Seconds to wait for new output or the job's end, 0-300. Default 0, or 30 with until."},
                    "until": {"type": "string", "description": "A regex: return as soon as a new complete line matches it."},
                    "head": {"type": "integer", "minimum": 0, "description": "Show only the first N lines of the new output."},
                    "tail": {"type": "integer", "minimum": 0, "description": "Show only the last N lines of the new output."}
                },
                "required": ["jobId"]
            }),
        ),
        (
            "job_input",
            "Type into a terminal (pty) job: text as is (each \\n is Enter), then keys by name (Enter, Tab, Esc, Up, Down, Left, Right, Home, End, PageUp, PageDown, Backspace, Delete, Ctrl+<letter>). Then waits until the output settles (200 ms quiet, at most wait seconds, default 2) and answers with the screen.",
            serde_json::json!({
                "type": "object",
                "properties": {
                    "jobId": job_id,
                    "text": {"type": "string", "description": "Text to type; each \\n is sent as Enter."},
                    "keys": {"type": "array", "items": {"type": "string"}, "description": "Key names to press after the text, e.g. [\"Esc\"] or [\"Ctrl+C\"]."},
                    "wait": {"type": "number", "description": "Longest wait for the output to settle, in seconds. Default 2."}
                },
                "required": ["jobId"]
            }),
        ),
        (
            "job_kill",
            "Stop a background job: its whole process tree (and what it left running) ends, as a timeout ends a command. Answers with its last output.",
            serde_json::json!({
                "type": "object",
                "properties": {"jobId": job_id},
                "required": ["jobId"]
            }),
        ),
        (
            "job_list",
            "List this session's background jobs: id, state, run time, output size and command.",
            serde_json::json!({"type": "object", "properties": {}}),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn errors_name_the_argument() {
        let err = |v: Value| OutputArgs::parse(&v).err().unwrap_or_default();
        assert_eq!(
            err(json!({})),
            "missing required argument `jobId` (the id of a job)"
        );
        assert!(err(json!({"jobId": "x1"})).starts_with("argument `jobId` must be a job id"));
        assert!(
            err(json!({"jobId": 1, "until": "("}))
                .starts_with("argument `until` is not a valid regex")
        );
        assert_eq!(
            err(json!({"jobId": 1, "wait": "5"})),
            "argument `wait` must be a number of seconds, got a string"
        );
        assert!(
            err(json!({"jobId": 1, "head": -1}))
                .starts_with("argument `head` must be a whole number")
        );
        assert_eq!(
            err(json!([1])),
            "job_output arguments must be a JSON object, got an array"
        );
        let keys = InputArgs::parse(&json!({"jobId": "2", "keys": ["Enter", 3]}))
            .err()
            .unwrap_or_default();
        assert_eq!(keys, "argument `keys[1]` must be a key name, got a number");
    }

    #[test]
    fn ids_waits_and_defaults() {
        let args = OutputArgs::parse(&json!({"jobId": "007", "until": "ok"})).expect("valid");
        assert_eq!(
            (args.job_id.as_str(), args.wait.to_string()),
            ("7", "30".into())
        );
        let args = OutputArgs::parse(&json!({"jobId": 3, "wait": 1000})).expect("valid");
        assert_eq!(
            (args.job_id.as_str(), args.wait.to_string()),
            ("3", "300".into())
        );
        let args = InputArgs::parse(&json!({"jobId": 1, "text": "a"})).expect("valid");
        assert_eq!(args.wait.to_string(), "2");
    }
}
