//! How JSON values are named in error texts, for every parser that reports a value of the wrong
//! type (the tool arguments of the facade, the RPC requests of the binary).

use serde_json::Value;

/// How a JSON value's type is named in error texts (`a string`, `an array`, …).
///
/// ```
/// use agentsh_protocol::json_kind;
/// assert_eq!(json_kind(&serde_json::json!([1])), "an array");
/// assert_eq!(json_kind(&serde_json::Value::Null), "null");
/// ```
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
