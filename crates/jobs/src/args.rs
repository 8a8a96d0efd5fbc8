//! The job tools' arguments as the tools use them: `agentsh-protocol`'s types (parsed
//! there like `bash`'s, every error naming the argument at fault), with `job_output`'s `until`
//! compiled and its wait resolved.

use agentsh_protocol::{ArgsError, JobOutputArgs};
use regex::Regex;
use serde_json::Value;

/// `job_output {jobId, wait?, until?, head?, tail?}`.
pub(crate) struct OutputArgs {
    pub(crate) job_id: String,
    /// Seconds, clamped to 0–300; default 0, or 30 with `until`.
    pub(crate) wait: f64,
    pub(crate) until: Option<Regex>,
    pub(crate) head: Option<u32>,
    pub(crate) tail: Option<u32>,
    /// The output as printed, never shaped.
    pub(crate) raw: bool,
}

impl OutputArgs {
    pub(crate) fn parse(value: &Value) -> Result<Self, ArgsError> {
        let args = JobOutputArgs::from_value(value)?;
        let until = args
            .until
            .as_deref()
            .map(Regex::new)
            .transpose()
            .map_err(|err| ArgsError::Invalid {
                argument: "until".to_owned(),
                reason: format!("is not a valid regex: {err}"),
            })?;
        Ok(Self {
            wait: args.wait_seconds(),
            job_id: args.job_id,
            until,
            head: args.head,
            tail: args.tail,
            raw: args.raw,
        })
    }
}

#[cfg(test)]
mod tests {
    use agentsh_protocol::JobInputArgs;
    use serde_json::json;

    use super::*;

    #[test]
    fn errors_name_the_argument() {
        let err = |v: Value| {
            OutputArgs::parse(&v)
                .err()
                .map(|err| err.to_string())
                .unwrap_or_default()
        };
        assert_eq!(
            err(json!({})),
            "missing required argument `jobId` (the id of a job)"
        );
        assert!(err(json!({"jobId": "x1"})).starts_with("argument `jobId` must be a job id"));
        assert!(
            err(json!({"jobId": 1, "until": "("}))
                .starts_with("argument `until` is not a valid regex")
        );
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
            .err()
            .map(|err| err.to_string())
            .unwrap_or_default();
        assert_eq!(keys, "argument `keys[1]` must be a key name, got a number");
    }

    #[test]
    fn ids_waits_and_defaults() {
        let args = OutputArgs::parse(&json!({"jobId": "007", "until": "ok"})).expect("valid");
        assert_eq!(
            (args.job_id.as_str(), args.wait.to_string()),
            ("7", "30".into())
        );
        let args = OutputArgs::parse(&json!({"jobId": 3, "wait": 1000})).expect("valid");
        assert_eq!(
            (args.job_id.as_str(), args.wait.to_string()),
            ("3", "300".into())
        );
        let args = JobInputArgs::from_value(&json!({"jobId": 1, "text": "a"})).expect("valid");
        assert_eq!(args.wait_seconds().to_string(), "2");
    }
}
