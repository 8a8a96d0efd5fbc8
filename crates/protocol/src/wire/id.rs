//! A request's `id`, echoed in its response as the client wrote it.

use serde::{Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

/// A request's `id`: any JSON value but `null`, echoed in the response to the request.
///
/// A number keeps the token it was written as, when it is known ([`RequestId::written_as`]):
/// `1e-400` and `18446744073719551617` come back exactly so, where a [`Value`] would round them
/// (to `0.0`, to `1.8446744073719552e19`) and the client would never see its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestId {
    value: Value,
    /// The number as written, when it is one.
    token: Option<Number>,
}

impl RequestId {
    /// The id `value`, written back as `token` when that is a JSON number (as the client wrote
    /// the number `value` was read from); else as `value`. A token that is no JSON number is
    /// ignored, so the id always serialises as JSON. Two ids are equal when they are written
    /// the same.
    pub fn written_as(value: Value, token: &str) -> Self {
        // Kept only where it differs from the value's own text, so that equality is that of
        // the written form.
        let own_text = value.is_number().then(|| value.to_string());
        let token = own_text
            .filter(|text| text != token)
            .and_then(|_| Number::new(token));
        Self { value, token }
    }

    /// The id as a JSON value (a number as `serde_json` reads it: maybe rounded).
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The id as the response writes it: the JSON text of its value, or its number as written.
    pub fn to_json(&self) -> String {
        match &self.token {
            Some(number) => number.0.get().to_owned(),
            None => self.value.to_string(),
        }
    }
}

impl From<Value> for RequestId {
    fn from(value: Value) -> Self {
        Self { value, token: None }
    }
}

impl From<u64> for RequestId {
    fn from(id: u64) -> Self {
        Value::from(id).into()
    }
}

impl From<&str> for RequestId {
    fn from(id: &str) -> Self {
        Value::from(id).into()
    }
}

impl From<String> for RequestId {
    fn from(id: String) -> Self {
        Value::from(id).into()
    }
}

impl std::fmt::Display for RequestId {
    /// The id as the response writes it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_json())
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.token {
            Some(number) => number.0.serialize(serializer),
            None => self.value.serialize(serializer),
        }
    }
}

/// A JSON number token, checked.
#[derive(Debug, Clone)]
struct Number(Box<RawValue>);

impl Number {
    /// `token` when it is one JSON number (no whitespace around it).
    fn new(token: &str) -> Option<Self> {
        let starts_a_number = token
            .bytes()
            .next()
            .is_some_and(|byte| byte == b'-' || byte.is_ascii_digit());
        if !starts_a_number || token.ends_with(|c: char| c.is_ascii_whitespace()) {
            return None;
        }
        // The check reads the number's grammar only, never its value: `1e999` is a number.
        RawValue::from_string(token.to_owned()).ok().map(Self)
    }
}

impl PartialEq for Number {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}

impl Eq for Number {}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// How `id` is written in a response.
    fn written(id: &RequestId) -> String {
        serde_json::to_string(id).expect("an id serialises")
    }

    #[test]
    fn a_number_is_written_as_its_token() {
        for token in [
            "1e-400",
            "18446744073719551617",
            "1e999",
            "-0",
            "1.0",
            "1E2",
            "7",
        ] {
            let value: Value = serde_json::from_str(&token.replace("1e999", "1e308"))
                .expect("a number serde_json reads");
            let id = RequestId::written_as(value, token);
            assert_eq!(written(&id), token);
            assert_eq!(id.to_string(), token);
        }
    }

    #[test]
    fn a_token_that_is_no_number_or_an_id_that_is_none_is_ignored() {
        let cases = [
            (json!(1), "1 "),
            (json!(1), " 1"),
            (json!(1), "x"),
            (json!(1), "1,2"),
            (json!(1), "\"1\""),
            (json!(1), ""),
            (json!("a"), "7"),
            (json!(true), "7"),
        ];
        for (value, token) in cases {
            let id = RequestId::written_as(value.clone(), token);
            assert_eq!(written(&id), value.to_string(), "{token:?}");
            assert_eq!(id, RequestId::from(value));
        }
    }

    #[test]
    fn ids_are_equal_when_they_are_written_the_same() {
        assert_eq!(RequestId::from(7), RequestId::from(json!(7)));
        assert_eq!(RequestId::from("a"), RequestId::from(String::from("a")));
        assert_ne!(
            RequestId::written_as(json!(1.0), "1.0"),
            RequestId::written_as(json!(1.0), "1.00")
        );
        assert_eq!(RequestId::written_as(json!(7), "7"), RequestId::from(7));
        assert_ne!(
            RequestId::written_as(json!(0.0), "1e-400"),
            RequestId::from(json!(0.0))
        );
        assert_eq!(RequestId::from(7).value().as_u64(), Some(7));
    }
}
