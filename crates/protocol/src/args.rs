//! The arguments of the tools as plain data (`bash` here, the job tools in `jobs`); with
//! `serde`, parsing a model's JSON, and with `schema`, the schemas to offer it.

use std::fmt;

mod jobs;
#[cfg(feature = "serde")]
mod parse;

pub use jobs::{JobInputArgs, JobKillArgs, JobListArgs, JobOutputArgs, MAX_JOB_WAIT, limit_text};
#[cfg(feature = "schema")]
pub use jobs::{job_tool_specs, tool_specs};

/// The arguments of one `bash` tool call: `{command, timeout?, cwd?, head?, tail?,
/// run_in_background?, pty?, yield_after?}` — plain data that the facade builds and the
/// renderer draws.
///
/// The field docs are the schema's descriptions (one line each: schemars keeps line breaks).
///
/// With the `serde` feature it is parsed by [`BashArgs::from_value`] with an error naming the
/// argument at fault. Fields the tool does not know are ignored rather than rejected: models
/// sometimes add extras (a `description`, a `reason`), and failing the call over them helps
/// nobody. An optional field given as `null` counts as absent, for the same reason. With the
/// `schema` feature, [`BashArgs::json_schema`] is the schema offered to a model.
///
/// ```
/// # #[cfg(feature = "serde")] {
/// use agentsh_protocol::BashArgs;
/// use serde_json::json;
///
/// let args = BashArgs::from_value(&json!({"command": "make", "timeout": 1.5, "tail": 20})).unwrap();
/// assert_eq!(args.command, "make");
/// assert_eq!(args.timeout, Some(1.5));
/// assert_eq!(args.tail, Some(20));
///
/// let err = BashArgs::from_value(&json!({"command": "ls", "timeout": "30"})).unwrap_err();
/// assert_eq!(err.to_string(), "argument `timeout` must be a number of seconds, got a string");
/// # }
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(
    feature = "schema",
    schemars(
        title = "bash",
        description = "Run a shell command in a persistent shell: variables, functions and aliases persist between calls; the working directory does not (each call starts in the project directory, or in `cwd`). stdout and stderr are merged. Output over 50 KB is cut to its end, and the full output is kept as an artifact (artifact://ID, readable by line range). Use the head/tail arguments rather than piping into head/tail: the exit code stays the command's. Commands never wait for a pager, editor or prompt. For servers, watchers and long builds use run_in_background (and pty for prompts, REPLs and full-screen programs), then job_output, job_input and job_kill; a background job runs in a new shell without the variables and functions of earlier calls. A call still running after yield_after seconds returns with its output so far and goes on as a job."
    )
)]
pub struct BashArgs {
    /// The shell command to run.
    pub command: String,
    /// Timeout in seconds (integer or fractional), from 1 to 3600. Defaults to 300 unless configured otherwise.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    #[cfg_attr(feature = "schema", schemars(with = "f64"))]
    pub timeout: Option<f64>,
    /// Working directory for this call only: absolute, relative to the project directory, or starting with `~/`. Defaults to the project directory.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub cwd: Option<String>,
    /// Show only the first N lines of the output (like `| head -n N`, but the command's exit code is kept).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    #[cfg_attr(feature = "schema", schemars(with = "u32"))]
    pub head: Option<u32>,
    /// Show only the last N lines of the output (like `| tail -n N`, but the command's exit code is kept).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    #[cfg_attr(feature = "schema", schemars(with = "u32"))]
    pub tail: Option<u32>,
    /// Start the command as a background job and return after 1 second with its output so far (for servers, watchers, long builds). Read it with job_output, stop it with job_kill. It runs in a new shell: variables and functions from earlier calls are not there.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "std::ops::Not::not")
    )]
    pub run_in_background: bool,
    /// With run_in_background: run the job on a terminal (120x40), so prompts, REPLs and full-screen programs work; answer them with job_input.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "std::ops::Not::not")
    )]
    pub pty: bool,
    /// Return after this many seconds if the command is still running, with its output so far; it goes on as a background job. 0 turns this off for the call.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    #[cfg_attr(feature = "schema", schemars(with = "f64"))]
    pub yield_after: Option<f64>,
    /// Return the program's output as it printed it. By default the output of well-known programs (git, cargo, pytest, npm, grep, find, …) is shaped: lines that say nothing (progress, passing tests) are left out with a marker, errors and summaries always kept, and the full output is kept as an artifact.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "std::ops::Not::not")
    )]
    pub raw: bool,
}

/// Why a tool call's arguments cannot be used. Every text names the argument at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgsError {
    /// The arguments are not a JSON object: `<tool> arguments must be a JSON object, got …`.
    NotAnObject {
        /// The tool (`bash`, `job_output`, …).
        tool: &'static str,
        /// What was given instead (`a string`, `an array`, …).
        got: &'static str,
    },
    /// A required argument is absent (or `null`), as in "missing required argument `jobId`
    /// (the id of a job)".
    Missing {
        /// The argument.
        argument: &'static str,
        /// What it is.
        what: &'static str,
    },
    /// An argument has the wrong JSON type (`must be a string, got a number`) or a value out
    /// of its range (`must be a whole number of lines from 0 to 4294967295, got -1`).
    Invalid {
        /// The argument.
        argument: String,
        /// What it must be, and what it was.
        reason: String,
    },
}

impl fmt::Display for ArgsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotAnObject { tool, got } => {
                write!(f, "{tool} arguments must be a JSON object, got {got}")
            }
            Self::Missing { argument, what } => {
                write!(f, "missing required argument `{argument}` ({what})")
            }
            Self::Invalid { argument, reason } => write!(f, "argument `{argument}` {reason}"),
        }
    }
}

impl std::error::Error for ArgsError {}

#[cfg(all(test, feature = "serde"))]
mod tests {
    use serde_json::{Value, json};

    use super::parse::seconds;

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
                raw: false,
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
                raw: false,
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
        assert_eq!((args.head, args.tail), (None, None));
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
                ("raw", &json!("boolean")),
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
            "run_in_background": true, "pty": true, "yield_after": 1, "raw": true
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
