//! Requests: one JSON object per line, read in two passes.
//!
//! The first pass is lenient: it parses the line as JSON and takes the `id` and the `type` out
//! of the object, so that a request rejected later still has its `id` echoed (a number as it
//! was written: [`written_id`]). A byte-order mark at the start of the line is
//! dropped, and what JSON allows but `serde_json` refuses (a lone surrogate escape, a number
//! beyond `f64`) is repaired first ([`repair`]); from a line that is still not JSON
//! (or not UTF-8, or too long) the `id` is read by a tolerant scan of its top level
//! ([`recover_id`]). The second reads
//! the fields of that type with the wire's own types (`Command::from_fields`), which name the
//! field a bad value is in.

use agentsh_jsonl::{Extent, InputLine, is_blank, recover_id, repair, strip_bom, written_id};
use agentsh_protocol::json_kind;
use agentsh_protocol::wire::{Command, PARSE_COMMAND, Request, RequestId, RequestType};
use serde_json::Value;

use crate::error::{ParseError, RpcError};

/// A line that is not a valid request: answered with `success: false`.
#[derive(Debug)]
pub struct RequestError {
    /// The request's `id`, when it could be read.
    pub id: Option<RequestId>,
    /// The request's type, or `parse` when it could not be read.
    pub command: String,
    /// What is wrong.
    pub error: RpcError,
}

impl RequestError {
    fn parse(id: Option<RequestId>, error: ParseError) -> Self {
        Self {
            id,
            command: PARSE_COMMAND.to_owned(),
            error: RpcError::Parse(error),
        }
    }
}

/// Understands one input line. `Ok(None)` for a blank line (ignored).
pub fn parse_input_line(line: &InputLine) -> Result<Option<Request>, RequestError> {
    match line {
        InputLine::Oversized { bytes, head } => Err(RequestError::parse(
            recover_id(&String::from_utf8_lossy(strip_bom(head)), Extent::Prefix),
            ParseError::TooLong { bytes: *bytes },
        )),
        InputLine::Complete(bytes) => parse_line(bytes),
    }
}

/// Understands one line (without its `\n`; a byte-order mark at its start is ignored).
/// `Ok(None)` for a blank line.
pub fn parse_line(bytes: &[u8]) -> Result<Option<Request>, RequestError> {
    let bytes = strip_bom(bytes);
    let text = std::str::from_utf8(bytes).map_err(|err| {
        RequestError::parse(
            recover_id(&String::from_utf8_lossy(bytes), Extent::Whole),
            ParseError::NotUtf8 {
                offset: err.valid_up_to(),
            },
        )
    })?;
    if is_blank(bytes) {
        return Ok(None);
    }
    // The lenient pass: any JSON object, from which `id` and `type` are taken.
    let sent = text;
    let repaired;
    let (text, value) = match serde_json::from_str::<Value>(text) {
        Ok(value) => (text, value),
        Err(err) => {
            let Some(fixed) = repair(text) else {
                return Err(not_json(text, err));
            };
            repaired = fixed;
            match serde_json::from_str::<Value>(&repaired) {
                Ok(value) => (repaired.as_str(), value),
                // Repairs keep lengths: the error's line and column are the sent line's.
                Err(err) => return Err(not_json(&repaired, err)),
            }
        }
    };
    let Value::Object(mut object) = value else {
        return Err(RequestError::parse(
            None,
            ParseError::NotAnObject(json_kind(&value)),
        ));
    };
    let id = object
        .remove("id")
        .filter(|id| !id.is_null())
        .map(|id| written_id(sent, id));
    let type_name = match object.remove("type") {
        None | Some(Value::Null) => return Err(RequestError::parse(id, ParseError::MissingType)),
        Some(Value::String(name)) => name,
        Some(other) => {
            return Err(RequestError::parse(
                id,
                ParseError::TypeNotAString(json_kind(&other)),
            ));
        }
    };
    let command = match RequestType::from_name(&type_name) {
        Ok(kind) => {
            Command::from_fields(kind, Value::Object(object), text).map_err(RpcError::Field)
        }
        Err(expected) => Err(RpcError::UnknownType {
            name: type_name.clone(),
            expected,
        }),
    };
    match command {
        Ok(command) => Ok(Some(Request { id, command })),
        Err(error) => Err(RequestError {
            id,
            command: type_name,
            error,
        }),
    }
}

/// The failure of a line that is not JSON, with the `id` when a scan of `text` can read it.
fn not_json(text: &str, err: serde_json::Error) -> RequestError {
    RequestError::parse(recover_id(text, Extent::Whole), ParseError::Json(err))
}

#[cfg(test)]
mod tests;
