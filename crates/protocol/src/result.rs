//! The result types that cross crate boundaries. With the `serde` feature their JSON field names
//! are camelCase.

/// What an output sink reports when a command ends (`OutputSink::dump` in agentsh-output-sink).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct OutputSummary {
    /// The kept tail of the sanitised output, prefixed `[<annotation>]\n` when one was given.
    pub output: String,
    /// True when the byte limit left part of the output out of `output`.
    pub truncated: bool,
    /// Lines of the whole sanitised output.
    pub total_lines: u64,
    /// UTF-8 bytes of the whole sanitised output.
    pub total_bytes: u64,
    /// Lines of `output`, without the annotation.
    pub output_lines: u64,
    /// Bytes of `output`, without the annotation.
    pub output_bytes: u64,
    /// The artifact holding the whole output, present only when output was spilled to it.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub artifact_id: Option<String>,
    /// Why the artifact could not be written, when spilling failed.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub artifact_error: Option<String>,
}

/// The outcome of one command on the non-PTY or PTY executor.
///
/// Timeouts and aborts are results, never errors.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct BashResult {
    /// Output, counts and artifact reference.
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub summary: OutputSummary,
    /// The exit code; `None` when no exit status could be obtained.
    pub exit_code: Option<i32>,
    /// True when the command was stopped by a timeout or an abort.
    pub cancelled: bool,
    /// True when the command was stopped by its timeout.
    pub timed_out: bool,
    /// True when the shell could not be kept and was replaced.
    pub session_restarted: bool,
}

/// Why a command was blocked by the interceptor (a tool result's `details.interception`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct InterceptionDetails {
    /// Index of the matching rule in the effective rule list.
    pub rule: usize,
    /// The rule's pattern as configured.
    pub pattern: String,
    /// The tool the model should use instead.
    pub suggested_tool: String,
}

#[cfg(all(test, feature = "serde"))]
mod tests {
    use super::*;

    #[test]
    fn bash_result_json_is_flat_and_camel_case() {
        let result = BashResult {
            summary: OutputSummary {
                output: "hi\n".into(),
                total_lines: 1,
                total_bytes: 3,
                output_lines: 1,
                output_bytes: 3,
                ..OutputSummary::default()
            },
            exit_code: Some(0),
            ..BashResult::default()
        };
        let json = serde_json::to_value(&result).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "output": "hi\n", "truncated": false, "totalLines": 1, "totalBytes": 3,
                "outputLines": 1, "outputBytes": 3, "exitCode": 0, "cancelled": false,
                "timedOut": false, "sessionRestarted": false
            })
        );
        let back: BashResult = serde_json::from_value(json).unwrap();
        assert_eq!(back, result);
    }

    #[test]
    fn missing_exit_code_is_null() {
        let json = serde_json::to_value(BashResult::default()).unwrap();
        assert_eq!(json["exitCode"], serde_json::Value::Null);
    }

    #[test]
    fn interception_details_use_suggested_tool() {
        let details = InterceptionDetails {
            rule: 0,
            pattern: "^cat".into(),
            suggested_tool: "read".into(),
        };
        assert_eq!(
            serde_json::to_value(details).unwrap(),
            serde_json::json!({"rule": 0, "pattern": "^cat", "suggestedTool": "read"})
        );
    }
}
