//! The result types that cross crate boundaries. With the `serde` feature their JSON field names
//! are camelCase.

use std::borrow::Cow;

use crate::text::{FullOutput, annotation_line};

#[cfg(feature = "serde")]
mod wire;

/// What an output sink reports when a command ends (`OutputSink::dump` in agentsh-output-sink).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct OutputSummary {
    /// The kept tail of the sanitised output.
    pub output: String,
    /// True when the byte limit left part of the output out of `output`.
    pub truncated: bool,
    /// Lines of the whole sanitised output.
    pub total_lines: u64,
    /// UTF-8 bytes of the whole sanitised output.
    pub total_bytes: u64,
    /// Lines of `output`.
    pub output_lines: u64,
    /// Bytes of `output`.
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

impl OutputSummary {
    /// Where the whole output is, for the notice: the artifact, or why it could not be written.
    pub fn full_output(&self) -> FullOutput<'_> {
        FullOutput::new(self.artifact_id.as_deref(), self.artifact_error.as_deref())
    }
}

/// The outcome of one command on the non-PTY or PTY executor.
///
/// Timeouts and aborts are results, never errors.
///
/// With the `serde` feature it is one flat camelCase object: the summary's fields, then
/// `exitCode`, `cancelled`, `timedOut`, `sessionRestarted`. Its `output` is
/// [`BashResult::annotated_output`] (the annotation line, then the kept tail) while
/// `outputBytes`/`outputLines` count the tail alone; reading such an object back finds the
/// annotation by that byte count, so an output that merely starts with a bracketed line stays
/// output.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BashResult {
    /// Output, counts and artifact reference.
    pub summary: OutputSummary,
    /// Why the command was stopped, when a timeout or an abort stopped it:
    /// `Command timed out after N seconds` ([`timeout_annotation`](crate::timeout_annotation))
    /// or `Command cancelled` ([`CANCELLED_ANNOTATION`](crate::CANCELLED_ANNOTATION)); `None`
    /// for a command that ended by itself or was stopped by a head limit. A client reads it as
    /// a first line `[<annotation>]` of the output ([`BashResult::annotated_output`]); it is
    /// kept apart from `summary.output` so that nothing has to parse it back out.
    pub annotation: Option<String>,
    /// The exit code; `None` when no exit status could be obtained.
    pub exit_code: Option<i32>,
    /// True when the command was stopped by a timeout or an abort.
    pub cancelled: bool,
    /// True when the command was stopped by its timeout.
    pub timed_out: bool,
    /// True when the shell could not be kept and was replaced.
    pub session_restarted: bool,
    /// The `host:port`s a sandbox's network allowlist refused for connections made from the
    /// command's namespace while it ran (each once, in the order first refused); empty
    /// without an allowlist. In JSON `blockedHosts`, left out when empty; the tool result's
    /// sandbox line names them too.
    pub blocked_hosts: Vec<String>,
    /// The program that needs a terminal (`vim`) when the command was ended because one
    /// started on a run without a terminal, where it would wait for keys until the timeout. In
    /// JSON `needsTerminal`, left out when `None`; the texts say how to run it
    /// ([`needs_terminal_line`](crate::needs_terminal_line)).
    pub needs_terminal: Option<String>,
    /// The resource limit the command's processes passed (`limits.*`), when one did: the
    /// texts close with its line ([`LimitHit::closing_line`](crate::LimitHit::closing_line)).
    /// In JSON `limit`, left out when `None`.
    pub limit: Option<crate::LimitHit>,
}

impl BashResult {
    /// The output a client reads: `[<annotation>]\n` followed by the kept tail when the command
    /// was stopped, the kept tail alone otherwise (borrowed then). This is the JSON `output`.
    ///
    /// ```
    /// use agentsh_protocol::{BashResult, OutputSummary, timeout_annotation};
    ///
    /// let result = BashResult {
    ///     summary: OutputSummary { output: "tick\n".into(), ..OutputSummary::default() },
    ///     annotation: Some(timeout_annotation(5.0)),
    ///     ..BashResult::default()
    /// };
    /// assert_eq!(result.annotated_output(), "[Command timed out after 5 seconds]\ntick\n");
    /// ```
    pub fn annotated_output(&self) -> Cow<'_, str> {
        match &self.annotation {
            Some(annotation) => {
                let mut text = annotation_line(annotation);
                text.push_str(&self.summary.output);
                Cow::Owned(text)
            }
            None => Cow::Borrowed(&self.summary.output),
        }
    }
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
    use crate::count_lines;

    fn hi() -> BashResult {
        BashResult {
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
        }
    }

    #[test]
    fn bash_result_json_is_flat_and_camel_case() {
        let result = hi();
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
    fn bash_result_json_keeps_its_field_order() {
        let mut result = hi();
        result.summary.artifact_id = Some("7".into());
        result.summary.artifact_error = Some("disk full".into());
        assert_eq!(
            serde_json::to_string(&result).unwrap(),
            r#"{"output":"hi\n","truncated":false,"totalLines":1,"totalBytes":3,"outputLines":1,"outputBytes":3,"artifactId":"7","artifactError":"disk full","exitCode":0,"cancelled":false,"timedOut":false,"sessionRestarted":false}"#
        );
    }

    #[test]
    fn annotation_prefixes_output_but_not_counts() {
        let tail = "partial output";
        let result = BashResult {
            summary: OutputSummary {
                output: tail.into(),
                total_lines: count_lines(tail),
                total_bytes: tail.len() as u64,
                output_lines: count_lines(tail),
                output_bytes: tail.len() as u64,
                ..OutputSummary::default()
            },
            annotation: Some("Command timed out after 2 seconds".into()),
            cancelled: true,
            timed_out: true,
            ..BashResult::default()
        };
        assert_eq!(
            result.annotated_output(),
            "[Command timed out after 2 seconds]\npartial output"
        );
        let json = serde_json::to_value(&result).unwrap();
        assert_eq!(
            json["output"],
            "[Command timed out after 2 seconds]\npartial output"
        );
        assert_eq!(json["outputBytes"], 14);
        assert_eq!(json["outputLines"], 1);
        assert_eq!(json["totalLines"], 1);
        assert_eq!(result.summary.output, "partial output");
    }

    #[test]
    fn annotation_round_trips_through_json() {
        let mut stopped = hi();
        stopped.annotation = Some("Command cancelled".into());
        stopped.exit_code = None;
        stopped.cancelled = true;
        let json = serde_json::to_string(&stopped).unwrap();
        assert!(
            json.starts_with(r#"{"output":"[Command cancelled]\nhi\n","#),
            "{json}"
        );
        let back: BashResult = serde_json::from_str(&json).unwrap();
        assert_eq!(back, stopped);

        let silent = BashResult {
            annotation: Some("Command timed out after 1 seconds".into()),
            ..BashResult::default()
        };
        let back: BashResult =
            serde_json::from_value(serde_json::to_value(&silent).unwrap()).unwrap();
        assert_eq!(back, silent);

        // Without an annotation, an output that merely looks like one stays output.
        let tail = "[not an annotation]\nx\n";
        let mut plain = hi();
        plain.summary.output = tail.into();
        plain.summary.output_bytes = tail.len() as u64;
        plain.summary.output_lines = count_lines(tail);
        let json = serde_json::to_value(&plain).unwrap();
        assert_eq!(json["output"], tail);
        let back: BashResult = serde_json::from_value(json).unwrap();
        assert_eq!(back, plain);
        assert_eq!(back.annotation, None);
        assert_eq!(back.annotated_output(), tail);
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
