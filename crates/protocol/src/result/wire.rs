//! `BashResult` as JSON: one flat camelCase object whose `output` carries the annotation line.
//!
//! The JSON shape predates [`BashResult::annotation`]: a client reads the annotation as the first
//! line of `output`, while `outputBytes`/`outputLines` count the kept tail alone. Serialising
//! writes that text; deserialising (JSON is text, so this is the one place that parses the
//! annotation back) uses `outputBytes` to tell the annotation line from the tail.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{BashResult, OutputSummary};

/// The object a client sees, borrowed from a [`BashResult`]; the fields in their JSON order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireRef<'a> {
    output: Cow<'a, str>,
    truncated: bool,
    total_lines: u64,
    total_bytes: u64,
    output_lines: u64,
    output_bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    artifact_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    artifact_error: Option<&'a str>,
    exit_code: Option<i32>,
    cancelled: bool,
    timed_out: bool,
    session_restarted: bool,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    blocked_hosts: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    needs_terminal: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    limit: Option<crate::LimitHit>,
}

/// The same object, read back.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Wire {
    output: String,
    truncated: bool,
    total_lines: u64,
    total_bytes: u64,
    output_lines: u64,
    output_bytes: u64,
    #[serde(default)]
    artifact_id: Option<String>,
    #[serde(default)]
    artifact_error: Option<String>,
    exit_code: Option<i32>,
    cancelled: bool,
    timed_out: bool,
    session_restarted: bool,
    #[serde(default)]
    blocked_hosts: Vec<String>,
    #[serde(default)]
    needs_terminal: Option<String>,
    #[serde(default)]
    limit: Option<crate::LimitHit>,
}

impl Serialize for BashResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let summary = &self.summary;
        WireRef {
            output: self.annotated_output(),
            truncated: summary.truncated,
            total_lines: summary.total_lines,
            total_bytes: summary.total_bytes,
            output_lines: summary.output_lines,
            output_bytes: summary.output_bytes,
            artifact_id: summary.artifact_id.as_deref(),
            artifact_error: summary.artifact_error.as_deref(),
            exit_code: self.exit_code,
            cancelled: self.cancelled,
            timed_out: self.timed_out,
            session_restarted: self.session_restarted,
            blocked_hosts: &self.blocked_hosts,
            needs_terminal: self.needs_terminal.as_deref(),
            limit: self.limit,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for BashResult {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = Wire::deserialize(deserializer)?;
        let (annotation, output) = take_annotation(wire.output, wire.output_bytes);
        Ok(Self {
            summary: OutputSummary {
                output,
                truncated: wire.truncated,
                total_lines: wire.total_lines,
                total_bytes: wire.total_bytes,
                output_lines: wire.output_lines,
                output_bytes: wire.output_bytes,
                artifact_id: wire.artifact_id,
                artifact_error: wire.artifact_error,
            },
            annotation,
            exit_code: wire.exit_code,
            cancelled: wire.cancelled,
            timed_out: wire.timed_out,
            session_restarted: wire.session_restarted,
            blocked_hosts: wire.blocked_hosts,
            needs_terminal: wire.needs_terminal,
            limit: wire.limit,
        })
    }
}

/// Splits a JSON `output` into its annotation and the kept tail.
fn take_annotation(mut output: String, output_bytes: u64) -> (Option<String>, String) {
    let (prefix, _) = split_annotation(&output, output_bytes);
    let annotation = prefix
        .strip_prefix('[')
        .and_then(|line| line.strip_suffix("]\n"))
        .map(str::to_owned);
    if annotation.is_some() {
        output.drain(..prefix.len());
    }
    (annotation, output)
}

/// Splits `output` into its `[annotation]\n` prefix and the body, using `output_bytes` (the
/// body's length, which does not count the annotation). When the numbers do not fit, the whole
/// output is the body.
fn split_annotation(output: &str, output_bytes: u64) -> (&str, &str) {
    let prefix_len = usize::try_from(output_bytes)
        .ok()
        .and_then(|body_len| output.len().checked_sub(body_len))
        .unwrap_or(0);
    match (output.get(..prefix_len), output.get(prefix_len..)) {
        (Some(prefix), Some(body)) if prefix.is_empty() || is_annotation(prefix) => (prefix, body),
        _ => ("", output),
    }
}

fn is_annotation(prefix: &str) -> bool {
    prefix.starts_with('[') && prefix.ends_with("]\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotation_is_found_by_the_byte_count_only() {
        assert_eq!(split_annotation("[a]\nbody", 4), ("[a]\n", "body"));
        assert_eq!(split_annotation("body", 4), ("", "body"));
        // Inconsistent numbers: treat everything as body.
        assert_eq!(split_annotation("xyzbody", 4), ("", "xyzbody"));
        assert_eq!(split_annotation("é", 1), ("", "é"));
        assert_eq!(split_annotation("abc", 99), ("", "abc"));
    }

    #[test]
    fn take_annotation_keeps_the_tail() {
        assert_eq!(
            take_annotation("[Command cancelled]\nx\n".into(), 2),
            (Some("Command cancelled".into()), "x\n".into())
        );
        assert_eq!(
            take_annotation("[not an annotation]\nx\n".into(), 22),
            (None, "[not an annotation]\nx\n".into())
        );
        assert_eq!(
            take_annotation("[a]\n".into(), 0),
            (Some("a".into()), String::new())
        );
    }
}
