//! The arguments of the `bash` tool: parsing a model's JSON, and the schema to offer it.

use agentsh_bash_normalize::Limits;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};
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
/// use agentsh_agent_session::BashArgs;
/// use serde_json::json;
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
    description = "Run a shell command in a persistent shell: variables and functions persist between calls, the working directory does not. stdout and stderr are merged; long output is cut to its end, and the full output is kept as an artifact."
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
}

/// Why a `bash` call's arguments cannot be used.
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
    /// An argument has the wrong JSON type.
    #[error("argument `{name}` must be {expected}, got {got}")]
    WrongType {
        /// The argument.
        name: &'static str,
        /// What it must be.
        expected: &'static str,
        /// What it was.
        got: &'static str,
    },
    /// A line count that is negative, fractional or too large.
    #[error("argument `{name}` must be a whole number of lines from 0 to {max}, got {got}", max = u32::MAX)]
    BadLineCount {
        /// The argument (`head` or `tail`).
        name: &'static str,
        /// The number as given.
        got: String,
    },
}

impl BashArgs {
    /// Parses the arguments of a `bash` tool call.
    pub fn from_value(value: &Value) -> Result<Self, ArgsError> {
        let Value::Object(map) = value else {
            return Err(ArgsError::NotAnObject {
                got: json_kind(value),
            });
        };
        let command = match present(map, "command") {
            None => return Err(ArgsError::MissingCommand),
            Some(Value::String(command)) => command.clone(),
            Some(other) => {
                return Err(ArgsError::WrongType {
                    name: "command",
                    expected: "a string",
                    got: json_kind(other),
                });
            }
        };
        let timeout = match present(map, "timeout") {
            None => None,
            Some(Value::Number(n)) => n.as_f64(),
            Some(other) => {
                return Err(ArgsError::WrongType {
                    name: "timeout",
                    expected: "a number of seconds",
                    got: json_kind(other),
                });
            }
        };
        let cwd = match present(map, "cwd") {
            None => None,
            Some(Value::String(cwd)) => Some(cwd.clone()),
            Some(other) => {
                return Err(ArgsError::WrongType {
                    name: "cwd",
                    expected: "a string",
                    got: json_kind(other),
                });
            }
        };
        Ok(Self {
            command,
            timeout,
            cwd,
            head: line_count(map, "head")?,
            tail: line_count(map, "tail")?,
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

/// The value of `name`, treating `null` as absent.
fn present<'a>(map: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    map.get(name).filter(|value| !value.is_null())
}

fn line_count(map: &Map<String, Value>, name: &'static str) -> Result<Option<u32>, ArgsError> {
    let Some(value) = present(map, name) else {
        return Ok(None);
    };
    let Value::Number(number) = value else {
        return Err(ArgsError::WrongType {
            name,
            expected: "a whole number of lines",
            got: json_kind(value),
        });
    };
    let bad = || ArgsError::BadLineCount {
        name,
        got: number.to_string(),
    };
    if let Some(n) = number.as_u64() {
        return u32::try_from(n).map(Some).map_err(|_| bad());
    }
    // `5.0` is a whole number too; models write it.
    match number.as_f64() {
        Some(f) if f.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&f) => {
            Ok(Some(f as u32))
        }
        _ => Err(bad()),
    }
}

/// How a JSON value's type is named in error texts (`a string`, `an array`, …), shared by the
/// tool-argument errors here and the RPC protocol errors of the binary.
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
                ("tail", &json!("integer")),
                ("timeout", &json!("number")),
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
        let args = parse(&json!({"command": "c", "timeout": 2, "cwd": "d", "head": 3, "tail": 4}))
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
