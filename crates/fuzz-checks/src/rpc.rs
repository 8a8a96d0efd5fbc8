//! `agentsh rpc`'s reading of its input lines.

use agentsh_jsonl::{is_blank, strip_bom};
use serde_json::Value;

use crate::{lenient_json, number_token, written_answer_id};

/// Every line of `data` (split at `\n`, as the server frames its input), read as
/// `agentsh rpc` reads it:
///
/// - a blank line (JSON whitespace only, after a byte-order mark) is ignored, every other line
///   is a request or answered;
/// - an answer is one line of JSON: a failed response of `type` `response`;
/// - the `id` of a line that is a JSON object (as JSON allows) is carried by its request or
///   echoed by its answer: the same value, and a number as the line wrote it.
pub fn rpc_line(data: &[u8]) {
    for line in data.split(|&byte| byte == b'\n') {
        check_line(line);
    }
}

fn check_line(line: &[u8]) {
    let outcome = agentsh_rpc::read_line_for_checks(line);
    let body = strip_bom(line);
    if is_blank(body) {
        assert!(matches!(outcome, Ok(None)), "a blank line is not ignored");
        return;
    }
    let text = std::str::from_utf8(body).ok();
    let object = text.and_then(lenient_json).and_then(|value| match value {
        Value::Object(object) => Some(object),
        _ => None,
    });
    let id = object
        .as_ref()
        .and_then(|object| object.get("id"))
        .filter(|id| !id.is_null());
    let token = text.zip(id).and_then(|(text, id)| number_token(text, id));
    match outcome {
        Ok(None) => panic!("a line that is not blank is ignored: {line:?}"),
        Ok(Some(request)) => {
            let carried = request
                .id
                .as_ref()
                .map(|id| (id.value().clone(), id.to_json()));
            assert_eq!(
                carried.as_ref().map(|(value, _)| value),
                id,
                "the request's id is not the line's"
            );
            if let (Some((_, json)), Some(token)) = (&carried, token) {
                assert_eq!(
                    json, token,
                    "the request's id is not written as the line has it"
                );
            }
        }
        Err(answer) => {
            assert!(!answer.contains('\n'), "an answer of more than one line");
            let Some(Value::Object(fields)) = lenient_json(&answer) else {
                panic!("an answer is no JSON object: {answer}");
            };
            assert_eq!(fields.get("type"), Some(&Value::from("response")));
            assert_eq!(fields.get("success"), Some(&Value::Bool(false)));
            assert!(fields.get("error").is_some_and(Value::is_string));
            if object.is_some() {
                assert_eq!(fields.get("id"), id, "the answer's id is not the line's");
            }
            if let Some(token) = token {
                assert_eq!(
                    written_answer_id(&answer).as_deref(),
                    Some(token),
                    "the answer's id is not written as the line has it"
                );
            }
        }
    }
}
