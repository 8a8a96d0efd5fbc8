//! Reading a model's JSON into the tools' arguments ([`BashArgs`] here, the job tools' in
//! `jobs`): each field with a reader that names the JSON type it got, and `serde_path_to_error`
//! naming the argument; and the schemas offered, from schemars.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use serde_json::Value;

use super::{ArgsError, BashArgs};
use crate::json_kind;

/// The fields of `tool`'s arguments as `T` reads them. A first look checks that `value` is an
/// object (serde would only say "expected struct"); then serde reads the fields, each with a
/// reader that names the JSON type it got, and `serde_path_to_error` says which argument an
/// error is about.
pub(super) fn read_fields<T: DeserializeOwned>(
    tool: &'static str,
    value: &Value,
) -> Result<T, ArgsError> {
    if !value.is_object() {
        return Err(ArgsError::NotAnObject {
            tool,
            got: json_kind(value),
        });
    }
    serde_path_to_error::deserialize(value).map_err(|err| ArgsError::Invalid {
        argument: err.path().to_string(),
        reason: err.into_inner().to_string(),
    })
}

/// The JSON schema of `T`, to offer a tool to a model: no `$schema`, and no integer formats
/// (which some model APIs reject).
#[cfg(feature = "schema")]
pub(super) fn arguments_schema<T: schemars::JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|settings| settings.meta_schema = None)
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        for property in properties.values_mut() {
            if let Some(property) = property.as_object_mut() {
                property.remove("format");
            }
        }
    }
    schema
}

impl BashArgs {
    /// Parses the arguments of a `bash` tool call.
    ///
    /// A first look checks that `value` is an object (serde would only say "expected struct");
    /// then serde reads the fields, each with a reader that names the JSON type it got, and
    /// `serde_path_to_error` says which argument an error is about.
    pub fn from_value(value: &Value) -> Result<Self, ArgsError> {
        let raw: RawArgs = read_fields("bash", value)?;
        let run_in_background = raw.run_in_background.unwrap_or(false);
        let pty = raw.pty.unwrap_or(false);
        if pty && !run_in_background {
            return Err(ArgsError::Invalid {
                argument: "pty".to_owned(),
                reason: "needs `run_in_background: true` (a terminal is for background jobs)"
                    .to_owned(),
            });
        }
        if let Some(seconds) = raw.yield_after
            && seconds < 0.0
        {
            return Err(ArgsError::Invalid {
                argument: "yield_after".to_owned(),
                reason: format!("must be a number of seconds, 0 or more, got {seconds}"),
            });
        }
        Ok(Self {
            command: raw.command.ok_or(ArgsError::Missing {
                argument: "command",
                what: "the shell command to run",
            })?,
            timeout: raw.timeout,
            cwd: raw.cwd,
            head: raw.head,
            tail: raw.tail,
            run_in_background,
            pty,
            yield_after: raw.yield_after,
            raw: raw.raw.unwrap_or(false),
        })
    }

    #[cfg(feature = "schema")]
    /// The JSON schema of the arguments, to offer the tool to a model: an object with
    /// `required: ["command"]`, a description on every property, and no `null` types or
    /// integer formats (which some model APIs reject).
    pub fn json_schema() -> Value {
        arguments_schema::<Self>()
    }
}

/// The arguments as sent. Every field is optional here (`null` too), so that a missing
/// `command` gets its own error; unknown fields are ignored.
#[derive(Deserialize)]
struct RawArgs {
    #[serde(default, deserialize_with = "text")]
    command: Option<String>,
    #[serde(default, deserialize_with = "seconds")]
    timeout: Option<f64>,
    #[serde(default, deserialize_with = "text")]
    cwd: Option<String>,
    #[serde(default, deserialize_with = "line_count")]
    head: Option<u32>,
    #[serde(default, deserialize_with = "line_count")]
    tail: Option<u32>,
    #[serde(default, deserialize_with = "flag")]
    run_in_background: Option<bool>,
    #[serde(default, deserialize_with = "flag")]
    pty: Option<bool>,
    #[serde(default, deserialize_with = "seconds")]
    yield_after: Option<f64>,
    #[serde(default, deserialize_with = "flag")]
    raw: Option<bool>,
}

/// A boolean argument; `null` is absent.
pub(crate) fn flag<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<bool>, D::Error> {
    deserializer.deserialize_any(ArgVisitor {
        expected: "a boolean",
        accept: |given| match given {
            Given::Bool(b) => Ok(b),
            _ => Err(Rejection::WrongType),
        },
    })
}

/// A string argument; `null` is absent.
pub(crate) fn text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    deserializer.deserialize_any(ArgVisitor {
        expected: "a string",
        accept: |given| match given {
            Given::Str(text) => Ok(text.to_owned()),
            _ => Err(Rejection::WrongType),
        },
    })
}

/// A number of seconds, any JSON number (clamping comes later); `null` is absent. NaN, which
/// JSON cannot carry but another deserializer could, is refused rather than clamped.
pub(crate) fn seconds<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<f64>, D::Error> {
    deserializer.deserialize_any(ArgVisitor {
        expected: "a number of seconds",
        accept: |given| match given {
            Given::Int(n) => Ok(n as f64),
            Given::UInt(n) => Ok(n as f64),
            Given::Float(f) if f.is_nan() => Err(Rejection::BadValue(
                "must be a number of seconds, got NaN".to_owned(),
            )),
            Given::Float(f) => Ok(f),
            Given::Str(_) | Given::Bool(_) => Err(Rejection::WrongType),
        },
    })
}

/// A line count: a whole number from 0 to `u32::MAX` (`5.0` counts: models write it); `null`
/// is absent.
pub(crate) fn line_count<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<u32>, D::Error> {
    fn bad(got: impl fmt::Display) -> Rejection {
        Rejection::BadValue(format!(
            "must be a whole number of lines from 0 to {}, got {got}",
            u32::MAX
        ))
    }
    deserializer.deserialize_any(ArgVisitor {
        expected: "a whole number of lines",
        accept: |given| match given {
            Given::UInt(n) => u32::try_from(n).map_err(|_| bad(n)),
            Given::Int(n) => u32::try_from(n).map_err(|_| bad(n)),
            Given::Float(f) if f.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&f) => {
                Ok(f as u32)
            }
            Given::Float(f) => Err(bad(number_text(f))),
            Given::Str(_) | Given::Bool(_) => Err(Rejection::WrongType),
        },
    })
}

/// A number as JSON writes it (`1.5`, `1e+300`), as the model sent it.
pub(super) fn number_text(f: f64) -> String {
    serde_json::Number::from_f64(f).map_or_else(|| f.to_string(), |n| n.to_string())
}

/// A scalar argument value as the deserializer handed it over.
pub(super) enum Given<'a> {
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(&'a str),
    Bool(bool),
}

/// Why a field reader refused a value.
pub(super) enum Rejection {
    /// Not the JSON type the argument takes: `must be <expected>, got <kind>`.
    WrongType,
    /// The right type, a bad value: the whole reason.
    BadValue(String),
}

/// Reads one optional argument, naming in its error the JSON type it got (`got a boolean`)
/// where serde would write `invalid type: boolean `true`, expected …`.
pub(super) struct ArgVisitor<T> {
    /// What the argument must be (`a string`).
    pub(super) expected: &'static str,
    pub(super) accept: fn(Given<'_>) -> Result<T, Rejection>,
}

impl<T> ArgVisitor<T> {
    fn wrong_type<E: de::Error>(&self, got: &str) -> E {
        E::custom(format_args!("must be {}, got {got}", self.expected))
    }

    fn check<E: de::Error>(self, given: Given<'_>) -> Result<Option<T>, E> {
        let got = match given {
            Given::Int(_) | Given::UInt(_) | Given::Float(_) => "a number",
            Given::Str(_) => "a string",
            Given::Bool(_) => "a boolean",
        };
        match (self.accept)(given) {
            Ok(value) => Ok(Some(value)),
            Err(Rejection::WrongType) => Err(self.wrong_type(got)),
            Err(Rejection::BadValue(reason)) => Err(E::custom(reason)),
        }
    }
}

impl<'de, T> Visitor<'de> for ArgVisitor<T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expected)
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
        self.check(Given::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        self.check(Given::Int(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        self.check(Given::UInt(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        self.check(Given::Float(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        self.check(Given::Str(v))
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Err(self.wrong_type("an array"))
    }

    fn visit_map<A: de::MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Err(self.wrong_type("an object"))
    }
}
