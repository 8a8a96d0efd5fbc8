//! The arguments of the `bash` tool: parsing a model's JSON, and the schema to offer it.

use agentsh_bash_normalize::Limits;
use agentsh_protocol::json_kind;
use schemars::JsonSchema;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

/// The arguments of one `bash` tool call: `{command, timeout?, cwd?, head?, tail?}`.
///
/// The field docs are the schema's descriptions (one line each: schemars keeps line breaks).
///
/// Parsed by [`BashArgs::from_value`] with an error naming the argument at fault. Fields the
/// tool does not know are ignored rather than rejected: models sometimes add extras (a
/// `description`, a `reason`), and failing the call over them helps nobody. An optional field
/// given as `null` counts as absent, for the same reason.
///
/// ```
/// use agentsh_agent_session::{BashArgs, json};
///
/// let args = BashArgs::from_value(&json!({"command": "make", "timeout": 1.5, "tail": 20})).unwrap();
/// assert_eq!(args.command, "make");
/// assert_eq!(args.timeout, Some(1.5));
/// assert_eq!(args.tail, Some(20));
///
/// let err = BashArgs::from_value(&json!({"command": "ls", "timeout": "30"})).unwrap_err();
/// assert_eq!(err.to_string(), "argument `timeout` must be a number of seconds, got a string");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(
    title = "bash",
    description = "Run a shell command in a persistent shell: variables, functions and aliases persist between calls; the working directory does not (each call starts in the project directory, or in `cwd`). stdout and stderr are merged. Output over 50 KB is cut to its end, and the full output is kept as an artifact (artifact://ID, readable by line range). Use the head/tail arguments rather than piping into head/tail: the exit code stays the command's. Commands never wait for a pager, editor or prompt. For servers, watchers and long builds use run_in_background (and pty for prompts, REPLs and full-screen programs), then job_output, job_input and job_kill; a background job runs in a new shell without the variables and functions of earlier calls. A call still running after yield_after seconds returns with its output so far and goes on as a job."
)]
pub struct BashArgs {
    /// The shell command to run.
    pub command: String,
    /// Timeout in seconds (integer or fractional), from 1 to 3600. Defaults to 300 unless configured otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64")]
    pub timeout: Option<f64>,
    /// Working directory for this call only: absolute, relative to the project directory, or starting with `~/`. Defaults to the project directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub cwd: Option<String>,
    /// Show only the first N lines of the output (like `| head -n N`, but the command's exit code is kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32")]
    pub head: Option<u32>,
    /// Show only the last N lines of the output (like `| tail -n N`, but the command's exit code is kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32")]
    pub tail: Option<u32>,
    /// Start the command as a background job and return after 1 second with its output so far (for servers, watchers, long builds). Read it with job_output, stop it with job_kill. It runs in a new shell: variables and functions from earlier calls are not there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub run_in_background: bool,
    /// With run_in_background: run the job on a terminal (120x40), so prompts, REPLs and full-screen programs work; answer them with job_input.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pty: bool,
    /// Return after this many seconds if the command is still running, with its output so far; it goes on as a background job. 0 turns this off for the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64")]
    pub yield_after: Option<f64>,
}

/// Why a `bash` call's arguments cannot be used. Every text names the argument at fault.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ArgsError {
    /// The arguments are not a JSON object.
    #[error("bash arguments must be a JSON object, got {got}")]
    NotAnObject {
        /// What was given instead (`a string`, `an array`, …).
        got: &'static str,
    },
    /// `command` is absent (or `null`).
    #[error("missing required argument `command` (the shell command to run)")]
    MissingCommand,
    /// An argument has the wrong JSON type (`must be a string, got a number`) or a value out
    /// of its range (`must be a whole number of lines from 0 to 4294967295, got -1`).
    #[error("argument `{argument}` {reason}")]
    Invalid {
        /// The argument.
        argument: String,
        /// What it must be, and what it was.
        reason: String,
    },
}

impl BashArgs {
    /// Parses the arguments of a `bash` tool call.
    ///
    /// A first look checks that `value` is an object (serde would only say "expected struct");
    /// then serde reads the fields, each with a reader that names the JSON type it got, and
    /// `serde_path_to_error` says which argument an error is about.
    pub fn from_value(value: &Value) -> Result<Self, ArgsError> {
        if !value.is_object() {
            return Err(ArgsError::NotAnObject {
                got: json_kind(value),
            });
        }
        let raw: RawArgs =
            serde_path_to_error::deserialize(value).map_err(|err| ArgsError::Invalid {
                argument: err.path().to_string(),
                reason: err.into_inner().to_string(),
            })?;
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
            command: raw.command.ok_or(ArgsError::MissingCommand)?,
            timeout: raw.timeout,
            cwd: raw.cwd,
            head: raw.head,
            tail: raw.tail,
            run_in_background,
            pty,
            yield_after: raw.yield_after,
        })
    }

    /// The explicit line limits of this call (they win over limits extracted from the command).
    pub fn limits(&self) -> Limits {
        Limits {
            head: self.head,
            tail: self.tail,
        }
    }

    /// The JSON schema of the arguments, to offer the tool to a model: an object with
    /// `required: ["command"]`, a description on every property, and no `null` types or
    /// integer formats (which some model APIs reject).
    pub fn json_schema() -> Value {
        let generator = schemars::generate::SchemaSettings::draft2020_12()
            .with(|settings| settings.meta_schema = None)
            .into_generator();
        let mut schema = generator.into_root_schema_for::<Self>().to_value();
        if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            for property in properties.values_mut() {
                if let Some(property) = property.as_object_mut() {
                    property.remove("format");
                }
            }
        }
        schema
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
            // Written as JSON writes it (`1.5`, `1e+300`), as the model sent it.
            Given::Float(f) => {
                Err(bad(serde_json::Number::from_f64(f)
                    .map_or_else(|| f.to_string(), |n| n.to_string())))
            }
            Given::Str(_) | Given::Bool(_) => Err(Rejection::WrongType),
        },
    })
}

/// A scalar argument value as the deserializer handed it over.
enum Given<'a> {
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(&'a str),
    Bool(bool),
}

/// Why a field reader refused a value.
enum Rejection {
    /// Not the JSON type the argument takes: `must be <expected>, got <kind>`.
    WrongType,
    /// The right type, a bad value: the whole reason.
    BadValue(String),
}

/// Reads one optional argument, naming in its error the JSON type it got (`got a boolean`)
/// where serde would write `invalid type: boolean `true`, expected …`.
struct ArgVisitor<T> {
    /// What the argument must be (`a string`).
    expected: &'static str,
    accept: fn(Given<'_>) -> Result<T, Rejection>,
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(value: &Value) -> Result<BashArgs, String> {
        BashArgs::from_value(value).map_err(|err| err.to_string())
    }

    #[test]
    fn full_and_minimal_arguments() {
        assert_eq!(
            parse(&json!({"command": "ls", "timeout": 30, "cwd": "@src", "head": 5, "tail": 2})),
            Ok(BashArgs {
                command: "ls".into(),
                timeout: Some(30.0),
                cwd: Some("@src".into()),
                head: Some(5),
                tail: Some(2),
                run_in_background: false,
                pty: false,
                yield_after: None,
            })
        );
        assert_eq!(
            parse(&json!({"command": ""})),
            Ok(BashArgs {
                command: String::new(),
                timeout: None,
                cwd: None,
                head: None,
                tail: None,
                run_in_background: false,
                pty: false,
                yield_after: None,
            })
        );
    }

    #[test]
    fn nulls_and_extras_are_ignored() {
        let args = parse(&json!({
            "command": "ls", "timeout": null, "cwd": null, "head": null, "tail": null,
            "description": "list files", "extra": [1, 2]
        }))
        .unwrap();
        assert_eq!(args.timeout, None);
        assert_eq!(args.cwd, None);
        assert_eq!(args.limits(), Limits::NONE);
    }

    #[test]
    fn numbers_in_every_json_form() {
        assert_eq!(
            parse(&json!({"command": "x", "timeout": 1.5}))
                .unwrap()
                .timeout,
            Some(1.5)
        );
        assert_eq!(
            parse(&json!({"command": "x", "timeout": -3}))
                .unwrap()
                .timeout,
            Some(-3.0)
        );
        assert_eq!(
            parse(&json!({"command": "x", "timeout": 1e9}))
                .unwrap()
                .timeout,
            Some(1e9)
        );
        assert_eq!(
            parse(&json!({"command": "x", "head": 0})).unwrap().head,
            Some(0)
        );
        assert_eq!(
            parse(&json!({"command": "x", "tail": 5.0})).unwrap().tail,
            Some(5)
        );
        assert_eq!(
            parse(&json!({"command": "x", "tail": 4_294_967_295_u64}))
                .unwrap()
                .tail,
            Some(u32::MAX)
        );
    }

    #[test]
    fn errors_name_the_argument() {
        let cases: &[(Value, &str)] = &[
            (
                json!("ls"),
                "bash arguments must be a JSON object, got a string",
            ),
            (
                json!(null),
                "bash arguments must be a JSON object, got null",
            ),
            (
                json!({}),
                "missing required argument `command` (the shell command to run)",
            ),
            (
                json!({"command": null}),
                "missing required argument `command` (the shell command to run)",
            ),
            (
                json!({"command": 3}),
                "argument `command` must be a string, got a number",
            ),
            (
                json!({"command": ["ls"]}),
                "argument `command` must be a string, got an array",
            ),
            (
                json!({"command": "x", "timeout": "30"}),
                "argument `timeout` must be a number of seconds, got a string",
            ),
            (
                json!({"command": "x", "timeout": true}),
                "argument `timeout` must be a number of seconds, got a boolean",
            ),
            (
                json!({"command": "x", "cwd": 1}),
                "argument `cwd` must be a string, got a number",
            ),
            (
                json!({"command": "x", "head": -1}),
                "argument `head` must be a whole number of lines from 0 to 4294967295, got -1",
            ),
            (
                json!({"command": "x", "tail": 1.5}),
                "argument `tail` must be a whole number of lines from 0 to 4294967295, got 1.5",
            ),
            (
                json!({"command": "x", "tail": 4_294_967_296_u64}),
                "argument `tail` must be a whole number of lines from 0 to 4294967295, got 4294967296",
            ),
            (
                json!({"command": "x", "head": "5"}),
                "argument `head` must be a whole number of lines, got a string",
            ),
        ];
        for (value, want) in cases {
            assert_eq!(parse(value).unwrap_err(), *want, "{value}");
        }
    }

    #[test]
    fn every_json_type_is_named() {
        let cases: &[(Value, &str)] = &[
            (
                json!({"command": {"a": 1}}),
                "argument `command` must be a string, got an object",
            ),
            (
                json!({"command": "x", "cwd": false}),
                "argument `cwd` must be a string, got a boolean",
            ),
            (
                json!({"command": "x", "tail": [3]}),
                "argument `tail` must be a whole number of lines, got an array",
            ),
            (
                json!({"command": "x", "head": 1e300}),
                "argument `head` must be a whole number of lines from 0 to 4294967295, got 1e+300",
            ),
        ];
        for (value, want) in cases {
            assert_eq!(parse(value).unwrap_err(), *want, "{value}");
        }
    }

    #[test]
    fn nan_seconds_are_an_argument_error() {
        // JSON cannot carry NaN, but the field reader refuses it from any deserializer rather
        // than clamping it.
        let nan = serde::de::value::F64Deserializer::<serde::de::value::Error>::new(f64::NAN);
        let err = seconds(nan).unwrap_err();
        assert_eq!(err.to_string(), "must be a number of seconds, got NaN");
        let one = serde::de::value::F64Deserializer::<serde::de::value::Error>::new(1.5);
        assert_eq!(seconds(one).unwrap(), Some(1.5));
    }

    #[test]
    fn schema_shape() {
        let schema = BashArgs::json_schema();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["title"], "bash");
        assert_eq!(schema["required"], json!(["command"]));
        assert!(schema.get("$schema").is_none());
        let properties = schema["properties"].as_object().unwrap();
        let types: Vec<(&str, &Value)> = properties
            .iter()
            .map(|(name, property)| (name.as_str(), &property["type"]))
            .collect();
        assert_eq!(
            types,
            [
                ("command", &json!("string")),
                ("cwd", &json!("string")),
                ("head", &json!("integer")),
                ("pty", &json!("boolean")),
                ("run_in_background", &json!("boolean")),
                ("tail", &json!("integer")),
                ("timeout", &json!("number")),
                ("yield_after", &json!("number")),
            ]
        );
        for (name, property) in properties {
            let description = property["description"].as_str().unwrap_or_default();
            assert!(!description.is_empty(), "{name} has no description");
            // Doc comments are kept on one line each so descriptions carry no hard wraps.
            assert!(!description.contains('\n'), "{name}: {description:?}");
            assert!(property.get("format").is_none(), "{name}: {property}");
        }
        assert_eq!(properties["head"]["minimum"], 0);
        assert_eq!(properties["tail"]["minimum"], 0);
    }

    #[test]
    fn schema_properties_are_the_parsed_arguments() {
        // Every property the schema offers is accepted by the parser, with the type it states.
        let args = parse(&json!({
            "command": "c", "timeout": 2, "cwd": "d", "head": 3, "tail": 4,
            "run_in_background": true, "pty": true, "yield_after": 1
        }))
        .unwrap();
        let echoed = serde_json::to_value(&args).unwrap();
        let schema = BashArgs::json_schema();
        let mut names: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        let mut echoed_names: Vec<&String> = echoed.as_object().unwrap().keys().collect();
        names.sort();
        echoed_names.sort();
        assert_eq!(names, echoed_names);
    }
}
