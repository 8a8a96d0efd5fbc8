//! Reading a model's JSON into the job tools' arguments, with the field readers of `bash`'s
//! (each names the JSON type it got) and two of their own (a job id, a list of key names), and
//! their schemas.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde_json::Value;

use super::{JobInputArgs, JobKillArgs, JobListArgs, JobOutputArgs};
use crate::args::ArgsError;
#[cfg(feature = "schema")]
use crate::args::parse::arguments_schema;
use crate::args::parse::{
    ArgVisitor, Given, Rejection, flag, line_count, number_text, read_fields, seconds, text,
};

/// What a missing `jobId` is.
const JOB_ID: &str = "the id of a job";
/// What a job id must be, as its errors say.
const JOB_ID_EXPECTED: &str = "a job id (a string of digits or a number)";

/// `jobId`, the one required argument of three of the tools.
fn required_job_id(job_id: Option<String>) -> Result<String, ArgsError> {
    job_id.ok_or(ArgsError::Missing {
        argument: "jobId",
        what: JOB_ID,
    })
}

impl JobOutputArgs {
    /// Parses the arguments of a `job_output` call.
    pub fn from_value(value: &Value) -> Result<Self, ArgsError> {
        let raw: RawOutput = read_fields("job_output", value)?;
        Ok(Self {
            job_id: required_job_id(raw.job_id)?,
            wait: raw.wait,
            until: raw.until,
            head: raw.head,
            tail: raw.tail,
            raw: raw.raw.unwrap_or(false),
        })
    }
}

impl JobInputArgs {
    /// Parses the arguments of a `job_input` call.
    pub fn from_value(value: &Value) -> Result<Self, ArgsError> {
        let raw: RawInput = read_fields("job_input", value)?;
        Ok(Self {
            job_id: required_job_id(raw.job_id)?,
            text: raw.text,
            keys: raw.keys.unwrap_or_default(),
            wait: raw.wait,
        })
    }
}

impl JobKillArgs {
    /// Parses the arguments of a `job_kill` call.
    pub fn from_value(value: &Value) -> Result<Self, ArgsError> {
        let raw: RawKill = read_fields("job_kill", value)?;
        Ok(Self {
            job_id: required_job_id(raw.job_id)?,
        })
    }
}

impl JobListArgs {
    /// Parses the arguments of a `job_list` call: any object.
    pub fn from_value(value: &Value) -> Result<Self, ArgsError> {
        read_fields::<RawList>("job_list", value).map(|RawList {}| Self {})
    }
}

/// The arguments of the job tools as sent: every field optional (`null` too), unknown ones
/// ignored.
#[derive(Deserialize)]
struct RawOutput {
    #[serde(rename = "jobId", default, deserialize_with = "job_id")]
    job_id: Option<String>,
    #[serde(default, deserialize_with = "seconds")]
    wait: Option<f64>,
    #[serde(default, deserialize_with = "text")]
    until: Option<String>,
    #[serde(default, deserialize_with = "line_count")]
    head: Option<u32>,
    #[serde(default, deserialize_with = "line_count")]
    tail: Option<u32>,
    #[serde(default, deserialize_with = "flag")]
    raw: Option<bool>,
}

#[derive(Deserialize)]
struct RawInput {
    #[serde(rename = "jobId", default, deserialize_with = "job_id")]
    job_id: Option<String>,
    #[serde(default, deserialize_with = "text")]
    text: Option<String>,
    #[serde(default, deserialize_with = "key_names")]
    keys: Option<Vec<String>>,
    #[serde(default, deserialize_with = "seconds")]
    wait: Option<f64>,
}

#[derive(Deserialize)]
struct RawKill {
    #[serde(rename = "jobId", default, deserialize_with = "job_id")]
    job_id: Option<String>,
}

#[derive(Deserialize)]
struct RawList {}

/// A job id: a non-empty string of digits (leading zeros dropped) or a whole number, as its
/// digits; `null` is absent.
fn job_id<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    fn bad(got: impl fmt::Display) -> Rejection {
        Rejection::BadValue(format!("must be {JOB_ID_EXPECTED}, got {got}"))
    }
    deserializer.deserialize_any(ArgVisitor {
        expected: JOB_ID_EXPECTED,
        accept: |given| match given {
            Given::UInt(n) => Ok(n.to_string()),
            Given::Int(n) => u64::try_from(n).map(|n| n.to_string()).map_err(|_| bad(n)),
            Given::Float(f) => Err(bad(number_text(f))),
            Given::Str(id) if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) => {
                let id = id.trim_start_matches('0');
                Ok(if id.is_empty() { "0" } else { id }.to_owned())
            }
            Given::Str(id) => Err(bad(format_args!("{id:?}"))),
            Given::Bool(_) => Err(Rejection::WrongType),
        },
    })
}

/// Key names: an array of strings; `null` is absent. An item that is no string is an error of
/// its own (`keys[1]`).
fn key_names<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Vec<String>>, D::Error> {
    deserializer.deserialize_any(KeyNames)
}

/// What a JSON value given where another was expected is called (`got a number`).
fn kind(given: &Given<'_>) -> &'static str {
    match given {
        Given::Int(_) | Given::UInt(_) | Given::Float(_) => "a number",
        Given::Str(_) => "a string",
        Given::Bool(_) => "a boolean",
    }
}

/// Reads `keys`: the array, or an error naming what came instead.
struct KeyNames;

impl KeyNames {
    fn wrong<E: de::Error>(got: &str) -> E {
        E::custom(format_args!("must be an array of key names, got {got}"))
    }
}

impl<'de> Visitor<'de> for KeyNames {
    type Value = Option<Vec<String>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of key names")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Err(Self::wrong(kind(&Given::Bool(v))))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Err(Self::wrong(kind(&Given::Int(v))))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Err(Self::wrong(kind(&Given::UInt(v))))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Err(Self::wrong(kind(&Given::Float(v))))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Err(Self::wrong(kind(&Given::Str(v))))
    }

    fn visit_map<A: de::MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Err(Self::wrong("an object"))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<Self::Value, A::Error> {
        let mut names = Vec::with_capacity(items.size_hint().unwrap_or(0));
        while let Some(KeyName(name)) = items.next_element()? {
            names.push(name);
        }
        Ok(Some(names))
    }
}

/// One item of `keys`: a string, anything else (`null` too) an error.
struct KeyName(String);

impl<'de> Deserialize<'de> for KeyName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(KeyNameVisitor)
    }
}

struct KeyNameVisitor;

impl KeyNameVisitor {
    fn wrong<E: de::Error>(got: &str) -> E {
        E::custom(format_args!("must be a key name, got {got}"))
    }
}

impl<'de> Visitor<'de> for KeyNameVisitor {
    type Value = KeyName;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key name")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(KeyName(v.to_owned()))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Err(Self::wrong("null"))
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Err(Self::wrong("null"))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Err(Self::wrong(kind(&Given::Bool(v))))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Err(Self::wrong(kind(&Given::Int(v))))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Err(Self::wrong(kind(&Given::UInt(v))))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Err(Self::wrong(kind(&Given::Float(v))))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Err(Self::wrong("an array"))
    }

    fn visit_map<A: de::MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Err(Self::wrong("an object"))
    }
}

/// The schema of `jobId`: a string or an integer.
#[cfg(feature = "schema")]
pub(super) fn job_id_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": ["string", "integer"]})
}

/// The schema of a job tool's arguments as offered: [`arguments_schema`] without the title and
/// description of the type (the tool's name and description go beside it), `properties`
/// always there.
#[cfg(feature = "schema")]
pub(super) fn job_schema<T: schemars::JsonSchema>() -> Value {
    let mut schema = arguments_schema::<T>();
    if let Some(root) = schema.as_object_mut() {
        root.remove("title");
        root.remove("description");
        // An object schema lists its properties, none for `job_list`.
        root.entry("properties")
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
    }
    schema
}
