//! The arguments of the job tools: `job_output`, `job_input`, `job_kill`,
//! `job_list`, as plain data. With `serde` they are parsed like [`BashArgs`](super::BashArgs)'
//! (every error names the argument at fault, unknown fields are ignored, `null` is absent), and
//! with `schema` their schemas come from schemars ([`job_tool_specs`]).
//!
//! The job id is a string of digits or a whole number, kept as its digits without leading
//! zeros (`"007"` and `7` are both `"7"`).

/// The longest a job tool waits, in seconds.
pub const MAX_JOB_WAIT: f64 = 300.0;

/// `job_output {jobId, wait?, until?, head?, tail?}`.
///
/// ```
/// # #[cfg(feature = "serde")] {
/// use agentsh_protocol::JobOutputArgs;
/// use serde_json::json;
///
/// let args = JobOutputArgs::from_value(&json!({"jobId": "007", "until": "ready"})).unwrap();
/// assert_eq!(args.job_id, "7");
/// assert_eq!(args.wait_seconds(), 30.0);
///
/// let err = JobOutputArgs::from_value(&json!({"wait": 5})).unwrap_err();
/// assert_eq!(err.to_string(), "missing required argument `jobId` (the id of a job)");
/// # }
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct JobOutputArgs {
    /// The job's id, as the result that started it said ("1" first).
    #[cfg_attr(feature = "serde", serde(rename = "jobId"))]
    #[cfg_attr(feature = "schema", schemars(schema_with = "parse::job_id_schema"))]
    pub job_id: String,
    /// Seconds to wait for new output or the job's end, 0-300. Default 0, or 30 with until.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    #[cfg_attr(feature = "schema", schemars(with = "f64"))]
    pub wait: Option<f64>,
    /// A regex: return as soon as a new complete line matches it.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub until: Option<String>,
    /// Show only the first N lines of the new output.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    #[cfg_attr(feature = "schema", schemars(with = "u32"))]
    pub head: Option<u32>,
    /// Show only the last N lines of the new output.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    #[cfg_attr(feature = "schema", schemars(with = "u32"))]
    pub tail: Option<u32>,
    /// Return an ended job's output as the program printed it (by default the output of well-known programs is shaped, as bash's is).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "std::ops::Not::not")
    )]
    pub raw: bool,
}

impl JobOutputArgs {
    /// What the model reads about `job_output`.
    pub const DESCRIPTION: &str = "Read a background job's output that no earlier result showed ((no new output) when none), then its state. wait blocks until new output or the job's end (seconds, 0-300); until (a regex) returns as soon as a complete line matches that no earlier job_output returned (lines the starting result showed count), waiting 30 s by default. Over 50 KB of new output shows its tail and points at the job's log artifact. For a terminal (pty) job the text is the current screen.";

    /// How long to wait: `wait` clamped to 0–[`MAX_JOB_WAIT`] seconds; by default 0, or 30
    /// with `until`.
    pub fn wait_seconds(&self) -> f64 {
        let default = if self.until.is_some() { 30.0 } else { 0.0 };
        self.wait
            .map_or(default, |wait| wait.clamp(0.0, MAX_JOB_WAIT))
    }
}

/// `job_input {jobId, text?, keys?, wait?}`.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct JobInputArgs {
    /// The job's id, as the result that started it said ("1" first).
    #[cfg_attr(feature = "serde", serde(rename = "jobId"))]
    #[cfg_attr(feature = "schema", schemars(schema_with = "parse::job_id_schema"))]
    pub job_id: String,
    /// Text to type; each \n is sent as Enter.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub text: Option<String>,
    /// Key names to press after the text (`Enter`, `Ctrl+C`, …).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty")
    )]
    #[cfg_attr(
        feature = "schema",
        schemars(
            description = "Key names to press after the text, e.g. [\"Esc\"] or [\"Ctrl+C\"]."
        )
    )]
    pub keys: Vec<String>,
    /// Longest wait for the output to settle, in seconds. Default 2.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    #[cfg_attr(feature = "schema", schemars(with = "f64"))]
    pub wait: Option<f64>,
}

impl JobInputArgs {
    /// What the model reads about `job_input`.
    pub const DESCRIPTION: &str = "Type into a terminal (pty) job: text as is (each \\n is Enter), then keys by name (Enter, Tab, Esc, Up, Down, Left, Right, Home, End, PageUp, PageDown, Backspace, Delete, Ctrl+<letter>). Then waits until the output settles (200 ms quiet, at most wait seconds, default 2) and answers with the screen.";

    /// How long to wait for the output to settle: `wait` clamped to 0–[`MAX_JOB_WAIT`]
    /// seconds; 2 by default.
    pub fn wait_seconds(&self) -> f64 {
        self.wait.map_or(2.0, |wait| wait.clamp(0.0, MAX_JOB_WAIT))
    }
}

/// `job_kill {jobId}`.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct JobKillArgs {
    /// The job's id, as the result that started it said ("1" first).
    #[cfg_attr(feature = "serde", serde(rename = "jobId"))]
    #[cfg_attr(feature = "schema", schemars(schema_with = "parse::job_id_schema"))]
    pub job_id: String,
}

impl JobKillArgs {
    /// What the model reads about `job_kill`.
    pub const DESCRIPTION: &str = "Stop a background job: its whole process tree (and what it left running) ends, as a timeout ends a command. Answers with its last output.";
}

/// `job_list {}`: any object.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct JobListArgs {}

impl JobListArgs {
    /// What the model reads about `job_list`.
    pub const DESCRIPTION: &str =
        "List this session's background jobs: id, state, run time, output size and command.";
}

/// The job tools as a model is offered them: `(name, description, JSON schema of the
/// arguments)`, for the arguments the types above read. The schemas are schemars' of the
/// types, without `$schema`, integer formats or a title and description of their own (the tool
/// has those).
#[cfg(feature = "schema")]
pub fn job_tool_specs() -> Vec<(&'static str, &'static str, serde_json::Value)> {
    vec![
        (
            "job_output",
            JobOutputArgs::DESCRIPTION,
            parse::job_schema::<JobOutputArgs>(),
        ),
        (
            "job_input",
            JobInputArgs::DESCRIPTION,
            parse::job_schema::<JobInputArgs>(),
        ),
        (
            "job_kill",
            JobKillArgs::DESCRIPTION,
            parse::job_schema::<JobKillArgs>(),
        ),
        (
            "job_list",
            JobListArgs::DESCRIPTION,
            parse::job_schema::<JobListArgs>(),
        ),
    ]
}

/// How the tools' descriptions name the default output limit; [`tool_specs`] puts the
/// configured one in its place.
#[cfg(feature = "schema")]
const DEFAULT_LIMIT_TEXT: &str = "50 KB";

/// An output limit as the tools' descriptions write it: `50 KB`, `2 MB`, or the size formatter's
/// text when it is no whole number of either.
pub fn limit_text(bytes: u64) -> String {
    const KIB: u64 = 1024;
    match bytes {
        b if b >= KIB * KIB && b % (KIB * KIB) == 0 => format!("{} MB", b / (KIB * KIB)),
        b if b >= KIB && b % KIB == 0 => format!("{} KB", b / KIB),
        b => crate::format_size(b),
    }
}

/// Every tool a session answers as a model is offered it: `(name, description, argument
/// schema)`, `bash` first, then the job tools. The descriptions name `output_max_bytes` (the
/// `output.max_bytes` setting) as the output limit.
#[cfg(feature = "schema")]
pub fn tool_specs(output_max_bytes: u64) -> Vec<(&'static str, String, serde_json::Value)> {
    let limit = limit_text(output_max_bytes);
    let bash = crate::BashArgs::json_schema();
    let description = bash
        .get("description")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default()
        .replace(DEFAULT_LIMIT_TEXT, &limit);
    let mut specs = vec![(crate::BASH_TOOL, description, bash)];
    specs.extend(
        job_tool_specs()
            .into_iter()
            .map(|(name, text, schema)| (name, text.replace(DEFAULT_LIMIT_TEXT, &limit), schema)),
    );
    specs
}

#[cfg(feature = "serde")]
mod parse;

#[cfg(all(test, feature = "schema"))]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn output(value: &Value) -> Result<JobOutputArgs, String> {
        JobOutputArgs::from_value(value).map_err(|err| err.to_string())
    }

    #[test]
    fn errors_name_the_argument() {
        let err = |v: Value| output(&v).err().unwrap_or_default();
        assert_eq!(
            err(json!({})),
            "missing required argument `jobId` (the id of a job)"
        );
        assert!(err(json!({"jobId": "x1"})).starts_with("argument `jobId` must be a job id"));
        assert_eq!(
            err(json!({"jobId": 1, "wait": "5"})),
            "argument `wait` must be a number of seconds, got a string"
        );
        assert!(
            err(json!({"jobId": 1, "head": -1}))
                .starts_with("argument `head` must be a whole number")
        );
        assert_eq!(
            err(json!([1])),
            "job_output arguments must be a JSON object, got an array"
        );
        let keys = JobInputArgs::from_value(&json!({"jobId": "2", "keys": ["Enter", 3]}))
            .map_err(|err| err.to_string())
            .err()
            .unwrap_or_default();
        assert_eq!(keys, "argument `keys[1]` must be a key name, got a number");
    }

    #[test]
    fn every_wrong_value_is_named() {
        let cases: &[(&str, Value, &str)] = &[
            (
                "job_input",
                json!({"jobId": "2", "keys": "Enter"}),
                "argument `keys` must be an array of key names, got a string",
            ),
            (
                "job_input",
                json!({"jobId": "2", "keys": [null]}),
                "argument `keys[0]` must be a key name, got null",
            ),
            (
                "job_kill",
                json!({"jobId": true}),
                "argument `jobId` must be a job id (a string of digits or a number), got a boolean",
            ),
            (
                "job_kill",
                json!({"jobId": -1}),
                "argument `jobId` must be a job id (a string of digits or a number), got -1",
            ),
            (
                "job_kill",
                json!({"jobId": 1.5}),
                "argument `jobId` must be a job id (a string of digits or a number), got 1.5",
            ),
            (
                "job_kill",
                json!({"jobId": ""}),
                "argument `jobId` must be a job id (a string of digits or a number), got \"\"",
            ),
            (
                "job_kill",
                json!({"jobId": null}),
                "missing required argument `jobId` (the id of a job)",
            ),
            (
                "job_output",
                json!({"jobId": 1, "until": 3}),
                "argument `until` must be a string, got a number",
            ),
            (
                "job_input",
                json!({"jobId": 1, "text": ["a"]}),
                "argument `text` must be a string, got an array",
            ),
            (
                "job_list",
                json!("all"),
                "job_list arguments must be a JSON object, got a string",
            ),
        ];
        for (tool, value, want) in cases {
            let got = match *tool {
                "job_output" => JobOutputArgs::from_value(value).map(drop),
                "job_input" => JobInputArgs::from_value(value).map(drop),
                "job_kill" => JobKillArgs::from_value(value).map(drop),
                _ => JobListArgs::from_value(value).map(drop),
            };
            assert_eq!(
                got.map_err(|err| err.to_string()),
                Err((*want).to_owned()),
                "{value}"
            );
        }
    }

    #[test]
    fn ids_waits_and_defaults() {
        let args = output(&json!({"jobId": "007", "until": "ok"})).expect("valid");
        assert_eq!(
            (args.job_id.as_str(), args.wait_seconds().to_string()),
            ("7", "30".into())
        );
        let args = output(&json!({"jobId": 3, "wait": 1000})).expect("valid");
        assert_eq!(
            (args.job_id.as_str(), args.wait_seconds().to_string()),
            ("3", "300".into())
        );
        let args = JobInputArgs::from_value(&json!({"jobId": 1, "text": "a"})).expect("valid");
        assert_eq!(args.wait_seconds().to_string(), "2");
        assert_eq!(output(&json!({"jobId": "000"})).expect("valid").job_id, "0");
        let args =
            output(&json!({"jobId": 1, "wait": -4, "extra": true, "head": null})).expect("valid");
        assert_eq!((args.wait_seconds(), args.head), (0.0, None));
        assert_eq!(
            JobListArgs::from_value(&json!({"anything": 1})),
            Ok(JobListArgs {})
        );
    }

    #[test]
    fn schemas_offer_the_parsed_arguments() {
        let specs = job_tool_specs();
        let names: Vec<&str> = specs.iter().map(|(name, _, _)| *name).collect();
        assert_eq!(names, ["job_output", "job_input", "job_kill", "job_list"]);
        let job_id = json!({
            "type": ["string", "integer"],
            "description": "The job's id, as the result that started it said (\"1\" first)."
        });
        for (name, description, schema) in &specs {
            assert!(description.len() > 20, "{name}");
            assert_eq!(schema["type"], "object", "{name}");
            assert!(schema["properties"].is_object(), "{name}: {schema}");
            assert!(schema.get("title").is_none() && schema.get("description").is_none());
            if *name == "job_list" {
                assert!(schema.get("required").is_none(), "{schema}");
            } else {
                assert_eq!(schema["required"], json!(["jobId"]), "{name}");
                assert_eq!(schema["properties"]["jobId"], job_id, "{name}");
            }
        }
        let output = &specs[0].2["properties"];
        assert_eq!(output["head"]["minimum"], 0);
        assert!(output["head"].get("format").is_none());
        assert_eq!(output["wait"]["type"], "number");
        assert_eq!(
            specs[1].2["properties"]["keys"]["items"],
            json!({"type": "string"})
        );
        // Every property offered is one the parser reads back.
        let args = JobInputArgs::from_value(
            &json!({"jobId": 1, "text": "t", "keys": ["Enter"], "wait": 1}),
        )
        .expect("valid");
        let echoed = serde_json::to_value(&args).expect("serialises");
        let mut offered: Vec<&String> = specs[1].2["properties"]
            .as_object()
            .expect("properties")
            .keys()
            .collect();
        let mut read: Vec<&String> = echoed.as_object().expect("object").keys().collect();
        offered.sort();
        read.sort();
        assert_eq!(offered, read);
    }
}

#[cfg(all(test, feature = "schema"))]
mod limit_tests {
    use super::*;

    #[test]
    fn the_descriptions_name_the_configured_output_limit() {
        let default = tool_specs(crate::DEFAULT_OUTPUT_MAX_BYTES);
        let names: Vec<&str> = default.iter().map(|spec| spec.0).collect();
        assert_eq!(
            names,
            ["bash", "job_output", "job_input", "job_kill", "job_list"]
        );
        // The texts that name a limit name the default as written, so the setting's can
        // take its place.
        for (name, text, _) in &default[..2] {
            assert!(text.contains("50 KB"), "{name}: {text}");
        }
        let two_mib = tool_specs(2 * 1024 * 1024);
        for (name, text, _) in &two_mib[..2] {
            assert!(
                text.contains("2 MB") && !text.contains("50 KB"),
                "{name}: {text}"
            );
        }
        assert_eq!(limit_text(51_200), "50 KB");
        assert_eq!(limit_text(1000), "1000B");
        assert_eq!(limit_text(1536), "1.5KB");
    }
}
