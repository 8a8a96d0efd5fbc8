//! The ids of the client's requests on their way to rmcp and back.
//!
//! rmcp holds an id as a string or an `i64`, and answers a request under the id it holds. Two
//! things would go wrong if every id were handed over as it came:
//!
//! - a number rmcp cannot hold as written (`1.5`, `18446744073719551617`, `1e-400`, `1.0`, `-0`)
//!   is refused, or comes back rounded (`1.0` as `1`), and the client never sees its answer. Such
//!   a request gets a stand-in: a string id of ours that rmcp holds, written back as the
//!   client's number, token for token;
//! - a request that reuses the id of one still running overwrites rmcp's record of the first,
//!   and one of the two answers is lost. Such a request is refused (its own error answer) and
//!   the first one runs on.

use std::collections::HashMap;

use rmcp::model::RequestId;
use serde_json::Value;
use serde_json::value::RawValue;

/// How a stand-in id starts: unlike anything a client writes, though a client's string id
/// that collides with one still running is refused as in use, never mixed up.
const STAND_IN_PREFIX: &str = "agentsh:number-id:";

/// A request's id as its client wrote it.
#[derive(Debug)]
pub(crate) enum WrittenId {
    /// An id rmcp holds and writes back as the client wrote it: a string, or an integer
    /// written as rmcp writes it.
    Held(RequestId),
    /// Any other number, as written (its JSON token).
    Number(Box<RawValue>),
}

impl WrittenId {
    /// The id `value`, whose JSON text as the client wrote it is `written` (a number's token);
    /// `None` when it is no string or number (`null`, a boolean, an object, an array), which
    /// JSON-RPC 2.0 does not allow.
    pub(crate) fn read(value: &Value, written: &str) -> Option<Self> {
        match value {
            Value::String(id) => Some(Self::Held(RequestId::String(id.as_str().into()))),
            Value::Number(_) => {
                if let Ok(held) = serde_json::from_value::<RequestId>(value.clone())
                    && serde_json::to_string(&held).is_ok_and(|text| text == written)
                {
                    return Some(Self::Held(held));
                }
                let token = RawValue::from_string(written.to_owned())
                    .or_else(|_| RawValue::from_string(value.to_string()))
                    .ok()?;
                Some(Self::Number(token))
            }
            _ => None,
        }
    }

    /// The id's JSON text, as the client wrote it.
    pub(crate) fn json(&self) -> String {
        match self {
            Self::Held(id) => serde_json::to_string(id).unwrap_or_default(),
            Self::Number(token) => token.get().to_owned(),
        }
    }
}

/// A request's id is that of a request still running.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct InUse;

/// The client's requests handed to rmcp and not answered yet.
#[derive(Debug, Default)]
pub(crate) struct RequestIds {
    /// By the id rmcp holds; the number the client wrote where that id is a stand-in.
    running: HashMap<RequestId, Option<Box<RawValue>>>,
    next_stand_in: u64,
}

impl RequestIds {
    /// Records a request with the id `written` as running: the id to hand rmcp (`written`'s
    /// own, or a stand-in), or [`InUse`] when a request with that id still runs.
    pub(crate) fn admit(&mut self, written: WrittenId) -> Result<RequestId, InUse> {
        match written {
            WrittenId::Held(id) => {
                if self.running.contains_key(&id) {
                    return Err(InUse);
                }
                self.running.insert(id.clone(), None);
                Ok(id)
            }
            WrittenId::Number(token) => {
                let in_use = self
                    .running
                    .values()
                    .flatten()
                    .any(|running| running.get() == token.get());
                if in_use {
                    return Err(InUse);
                }
                let stand_in = loop {
                    let id = RequestId::String(
                        format!("{STAND_IN_PREFIX}{}", self.next_stand_in).into(),
                    );
                    self.next_stand_in += 1;
                    if !self.running.contains_key(&id) {
                        break id;
                    }
                };
                self.running.insert(stand_in.clone(), Some(token));
                Ok(stand_in)
            }
        }
    }

    /// rmcp answers the request it knows as `id` (or the transport does, for a request rmcp
    /// never got): it no longer runs. The number to write as the answer's id where `id` is a
    /// stand-in.
    pub(crate) fn answered(&mut self, id: &RequestId) -> Option<Box<RawValue>> {
        self.running.remove(id).flatten()
    }

    /// The client cancelled the request it names `request_id` (a `notifications/cancelled`'s
    /// `params.requestId`): rmcp sends no answer to it, so it no longer runs here either. The
    /// id rmcp knows it by, to put in the notification: the stand-in of a number (matched by
    /// value: a nested id's token is not kept), else `request_id` itself.
    pub(crate) fn cancelled(&mut self, request_id: &Value) -> Option<RequestId> {
        let own_text = request_id.to_string();
        if let Ok(held) = serde_json::from_value::<RequestId>(request_id.clone())
            // Written as rmcp writes it (`1.0` is a stand-in's, not `1`'s).
            && serde_json::to_string(&held).is_ok_and(|text| text == own_text)
            && self.running.get(&held).is_some_and(Option::is_none)
        {
            self.running.remove(&held);
            return Some(held);
        }
        let stand_in = self.running.iter().find_map(|(id, token)| {
            let number = serde_json::from_str::<Value>(token.as_ref()?.get()).ok()?;
            (number == *request_id).then(|| id.clone())
        })?;
        self.running.remove(&stand_in);
        Some(stand_in)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn written(value: &Value, text: &str) -> WrittenId {
        WrittenId::read(value, text).expect("a string or a number")
    }

    #[test]
    fn strings_and_integers_rmcp_writes_alike_are_held_others_are_numbers() {
        let held = [
            (json!("s"), r#""s""#),
            (json!(7), "7"),
            (json!(-3), "-3"),
            (json!(i64::MAX), "9223372036854775807"),
        ];
        for (value, text) in held {
            let id = written(&value, text);
            assert!(matches!(id, WrittenId::Held(_)), "{text}: {id:?}");
            assert_eq!(id.json(), text);
        }
        let numbers = [
            (json!(1.5), "1.5"),
            (json!(0.0), "1e-400"),
            (json!(18_446_744_073_719_551_617.0), "18446744073719551617"),
            (json!(u64::MAX), "18446744073709551615"),
            (json!(1.0), "1.0"),
            (json!(100.0), "1E2"),
            (json!(-0.0), "-0"),
        ];
        for (value, text) in numbers {
            let id = written(&value, text);
            assert!(matches!(id, WrittenId::Number(_)), "{text}: {id:?}");
            assert_eq!(id.json(), text);
        }
        for value in [json!(null), json!(true), json!({"a": 1}), json!([1])] {
            assert!(
                WrittenId::read(&value, &value.to_string()).is_none(),
                "{value}"
            );
        }
    }

    #[test]
    fn an_id_is_in_use_until_its_request_is_answered() {
        let mut ids = RequestIds::default();
        let s = ids.admit(written(&json!("s"), r#""s""#)).expect("free");
        assert_eq!(s, RequestId::String("s".into()));
        assert_eq!(ids.admit(written(&json!("s"), r#""s""#)), Err(InUse));
        // Another id is free meanwhile.
        assert!(ids.admit(written(&json!(1), "1")).is_ok());
        assert!(ids.answered(&s).is_none());
        assert!(ids.admit(written(&json!("s"), r#""s""#)).is_ok());
    }

    #[test]
    fn a_number_rmcp_cannot_hold_gets_a_stand_in_written_back_as_sent() {
        let mut ids = RequestIds::default();
        let first = ids.admit(written(&json!(1.5), "1.5")).expect("free");
        let other = ids.admit(written(&json!(0.0), "1e-400")).expect("free");
        assert_ne!(first, other);
        assert!(matches!(&first, RequestId::String(id) if id.starts_with(STAND_IN_PREFIX)));
        // The same number again while the first runs; a number written otherwise is another.
        assert_eq!(ids.admit(written(&json!(1.5), "1.5")), Err(InUse));
        let longer = ids.admit(written(&json!(1.5), "1.50")).expect("free");
        assert_eq!(
            ids.answered(&first)
                .map(|token| token.get().to_owned())
                .as_deref(),
            Some("1.5")
        );
        assert_eq!(
            ids.answered(&other)
                .map(|token| token.get().to_owned())
                .as_deref(),
            Some("1e-400")
        );
        assert!(ids.answered(&longer).is_some());
        assert!(ids.answered(&first).is_none(), "answered once");
        assert!(ids.admit(written(&json!(1.5), "1.5")).is_ok());
    }

    #[test]
    fn a_client_id_that_looks_like_a_running_stand_in_is_in_use() {
        let mut ids = RequestIds::default();
        let RequestId::String(stand_in) = ids.admit(written(&json!(1.5), "1.5")).expect("free")
        else {
            panic!("a stand-in is a string");
        };
        let value = json!(&*stand_in);
        let text = value.to_string();
        assert_eq!(ids.admit(written(&value, &text)), Err(InUse));
    }

    #[test]
    fn a_cancelled_request_no_longer_runs() {
        let mut ids = RequestIds::default();
        let s = ids.admit(written(&json!("s"), r#""s""#)).expect("free");
        let half = ids.admit(written(&json!(1.5), "1.5")).expect("free");
        assert_eq!(ids.cancelled(&json!("s")), Some(s));
        assert_eq!(ids.cancelled(&json!("s")), None, "not running any more");
        assert_eq!(ids.cancelled(&json!(1.5)), Some(half.clone()));
        assert!(ids.answered(&half).is_none());
        assert_eq!(ids.cancelled(&json!(7)), None);
        // `1.0` names the request written so, not request `1`.
        let one = ids.admit(written(&json!(1), "1")).expect("free");
        let one_point_zero = ids.admit(written(&json!(1.0), "1.0")).expect("free");
        assert_eq!(ids.cancelled(&json!(1.0)), Some(one_point_zero));
        assert_eq!(ids.cancelled(&json!(1)), Some(one));
        assert_eq!(ids.cancelled(&json!(true)), None);
        assert!(ids.admit(written(&json!("s"), r#""s""#)).is_ok());
    }
}
