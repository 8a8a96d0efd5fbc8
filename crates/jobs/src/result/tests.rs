//! Hand-computed cases for the result builder. The sink is modelled by [`sink`]: the whole
//! sanitised output, cut to its last `max` bytes at a UTF-8 boundary.

use std::path::Path;

use agentsh_bash_interceptor::Interceptor;
use agentsh_bash_normalize::{Limits, count_lines};
use agentsh_protocol::{BashResult, LimitHit, LimitKind, OutputSummary};
use serde_json::json;

use super::*;

/// What a sink with byte limit `max` reports for `whole`.
fn sink(whole: &str, max: usize, artifact: Option<&str>) -> OutputSummary {
    let (tail, truncated) = if whole.len() > max {
        let mut start = whole.len() - max;
        while !whole.is_char_boundary(start) {
            start += 1;
        }
        (&whole[start..], true)
    } else {
        (whole, false)
    };
    OutputSummary {
        output: tail.to_owned(),
        truncated,
        total_lines: count_lines(whole),
        total_bytes: whole.len() as u64,
        output_lines: count_lines(tail),
        output_bytes: tail.len() as u64,
        artifact_id: truncated.then(|| artifact.map(str::to_owned)).flatten(),
        artifact_error: None,
    }
}

fn seq(first: u64, last: u64) -> String {
    let mut out = String::new();
    for n in first..=last {
        out.push_str(&n.to_string());
        out.push('\n');
    }
    out
}

fn exited(summary: OutputSummary, code: Option<i32>) -> BashResult {
    BashResult {
        summary,
        exit_code: code,
        ..BashResult::default()
    }
}

fn timed_out(summary: OutputSummary, annotation: &str) -> BashResult {
    BashResult {
        summary,
        annotation: Some(annotation.to_owned()),
        exit_code: None,
        cancelled: true,
        timed_out: true,
        session_restarted: false,
        blocked_hosts: Vec::new(),
        needs_terminal: None,
        limit: None,
    }
}

struct Call<'a> {
    result: BashResult,
    limits: Limits,
    head_capture: Option<HeadCapture<'a>>,
    max_bytes: u64,
    aborted: bool,
    timeout: Timeout,
    sandbox: Option<&'a SandboxSpec>,
}

impl<'a> Call<'a> {
    fn new(result: BashResult, max_bytes: u64) -> Self {
        Self {
            result,
            limits: Limits::NONE,
            head_capture: None,
            max_bytes,
            aborted: false,
            timeout: Timeout::DEFAULT,
            sandbox: None,
        }
    }

    fn head(mut self, n: u32) -> Self {
        self.limits.head = Some(n);
        self
    }

    fn tail(mut self, n: u32) -> Self {
        self.limits.tail = Some(n);
        self
    }

    fn capture(mut self, text: &'a str, truncated: bool) -> Self {
        self.head_capture = Some(HeadCapture { text, truncated });
        self
    }

    fn sandboxed(mut self, policy: &'a SandboxSpec) -> Self {
        self.sandbox = Some(policy);
        self
    }

    fn aborted(mut self) -> Self {
        self.aborted = true;
        self
    }

    fn build(&self) -> ToolOutcome {
        build_tool_result(&FinishedRun {
            shaped: None,
            result: &self.result,
            head_capture: self.head_capture,
            limits: self.limits,
            max_bytes: self.max_bytes,
            aborted: self.aborted,
            cwd: Path::new("/work/proj"),
            timeout: self.timeout,
            sandbox: self.sandbox,
        })
    }

    fn text(&self) -> String {
        self.build().into_result().text()
    }

    fn truncation(&self) -> Option<Truncation> {
        self.build()
            .into_result()
            .details
            .meta
            .and_then(|m| m.truncation)
    }
}

const LIMIT: usize = 51_200;

fn ok(whole: &str) -> Call<'static> {
    Call::new(exited(sink(whole, LIMIT, None), Some(0)), LIMIT as u64)
}

#[test]
fn success_shows_the_output_without_its_final_newline() {
    let call = ok("hello\nworld\n");
    let result = call.build();
    assert!(!result.is_aborted());
    let result = result.into_result();
    assert_eq!(result.text(), "hello\nworld");
    assert!(!result.is_error);
    assert_eq!(result.details.meta, None);
    assert_eq!(ok("a\nb").text(), "a\nb");
    // Only one final newline is a terminator; a blank last line stays.
    assert_eq!(ok("a\n\n").text(), "a\n");
}

#[test]
fn empty_output_is_no_output() {
    assert_eq!(ok("").text(), "(no output)");
}

#[test]
fn outcome_lines() {
    let failed = Call::new(exited(sink("boom\n", LIMIT, None), Some(2)), LIMIT as u64);
    assert_eq!(failed.text(), "boom\n\nCommand exited with code 2");
    assert!(failed.build().result().is_error);

    let no_status = Call::new(exited(sink("", LIMIT, None), None), LIMIT as u64);
    assert_eq!(
        no_status.text(),
        "(no output)\n\nCommand failed: missing exit status"
    );
    assert!(no_status.build().result().is_error);

    let killed = Call::new(exited(sink("x\n", LIMIT, None), Some(137)), LIMIT as u64);
    assert_eq!(killed.text(), "x\n\nCommand exited with code 137");
}

#[test]
fn timeout_keeps_the_annotation_and_adds_nothing() {
    let annotation = Timeout::clamp(5.0).annotation();
    let call = Call::new(
        timed_out(sink("tick\n", LIMIT, None), &annotation),
        LIMIT as u64,
    );
    let result = call.build();
    assert!(!result.is_aborted());
    let result = result.into_result();
    assert_eq!(result.text(), "[Command timed out after 5 seconds]\ntick");
    assert!(result.is_error);
    assert!(result.details.cancelled && result.details.timed_out);

    let silent = Call::new(timed_out(sink("", LIMIT, None), &annotation), LIMIT as u64);
    assert_eq!(
        silent.text(),
        "[Command timed out after 5 seconds]\n(no output)"
    );
}

#[test]
fn a_limit_that_ended_the_command_closes_its_text_and_is_in_the_details() {
    let hit = LimitHit {
        kind: LimitKind::Memory,
        limit: 256 << 20,
        used: 300 << 20,
    };
    let result = BashResult {
        limit: Some(hit),
        ..exited(sink("loading\n", LIMIT, None), None)
    };
    let tool_result = Call::new(result, LIMIT as u64).build().into_result();
    // No outcome line: the limit line says why it ended.
    assert_eq!(
        tool_result.text(),
        "loading\n\n[Ended: this command's processes used more than 256.0MB of memory (limits.memory)]"
    );
    assert!(tool_result.is_error);
    assert_eq!(tool_result.details.limit, Some(hit));
    assert_eq!(tool_result.details.exit_code, None);

    // Forks refused by the kernel end nothing: the command's own status stands, the line
    // follows it.
    let refused = LimitHit {
        kind: LimitKind::Processes,
        limit: 256,
        used: 256,
    };
    let result = BashResult {
        limit: Some(refused),
        ..exited(sink("fork failed\n", LIMIT, None), Some(1))
    };
    assert_eq!(
        Call::new(result, LIMIT as u64).build().into_result().text(),
        "fork failed\n\nCommand exited with code 1\n\n[Process limit: this command's processes reached 256 at once; more were refused (limits.processes)]"
    );
}

#[test]
fn abort_is_an_abort_outcome() {
    let result = BashResult {
        summary: sink("a\n", LIMIT, None),
        annotation: Some("Command cancelled".into()),
        exit_code: None,
        cancelled: true,
        timed_out: false,
        session_restarted: false,
        blocked_hosts: Vec::new(),
        needs_terminal: None,
        limit: None,
    };
    let outcome = Call::new(result.clone(), LIMIT as u64).aborted().build();
    assert!(outcome.is_aborted());
    let tool_result = outcome.into_result();
    assert_eq!(
        tool_result.text(),
        "[Command cancelled]\na\n\nCommand aborted"
    );
    assert!(tool_result.is_error);
    // Cancelled without a timeout is an abort even if the caller's flag was lost.
    assert!(Call::new(result, LIMIT as u64).build().is_aborted());
    // The caller's abort wins over whatever the executor saw.
    let finished = exited(sink("a\n", LIMIT, None), Some(0));
    let outcome = Call::new(finished, LIMIT as u64).aborted().build();
    assert!(outcome.is_aborted());
    assert_eq!(outcome.result().text(), "a\n\nCommand aborted");
}

/// `seq 1 100000` is 588,895 bytes. Its last 51,200 bytes start at offset 537,695, the last
/// byte of `91467\n` (line 91467 starts at 48,888 + 81,467 × 6 = 537,690): the tail starts
/// with that `\n`, which is dropped, so lines 91468..=100000 (8,533 lines, 51,199 bytes) show.
#[test]
fn seq_100000_under_the_default_limit() {
    let whole = seq(1, 100_000);
    assert_eq!(whole.len(), 588_895);
    let call = Call::new(
        exited(sink(&whole, LIMIT, Some("7")), Some(0)),
        LIMIT as u64,
    );
    let result = call.build().into_result();
    let text = result.text();
    assert!(text.starts_with("91468\n91469\n"), "{}", &text[..20]);
    assert!(text.ends_with(
        "99999\n100000\n\n[Showing lines 91468-100000 of 100000 (50.0KB limit). Full: artifact://7]"
    ));
    assert!(!result.is_error);
    assert_eq!(
        call.truncation(),
        Some(Truncation {
            direction: TruncationDirection::Tail,
            truncated_by: TruncatedBy::Bytes,
            total_lines: 100_000,
            total_bytes: 588_895,
            output_lines: 8_533,
            output_bytes: 51_199,
            shown_range: ShownRange {
                start: 91_468,
                end: 100_000
            },
            artifact_id: Some("7".into()),
            artifact_error: None,
        })
    );
}

/// With 51,203 bytes the tail starts 3 bytes into line 91467 (`91467\n` → `467\n`): the
/// partial line is shown and counted.
#[test]
fn a_partial_first_line_is_shown_and_counted() {
    let whole = seq(1, 100_000);
    let call = Call::new(exited(sink(&whole, 51_203, None), Some(0)), 51_203);
    let text = call.text();
    assert!(text.starts_with("467\n91468\n"), "{}", &text[..20]);
    assert!(text.ends_with("100000\n\n[Showing lines 91467-100000 of 100000 (50.0KB limit)]"));
    let truncation = call.truncation().unwrap();
    assert_eq!(
        truncation.shown_range,
        ShownRange {
            start: 91_467,
            end: 100_000
        }
    );
    assert_eq!(truncation.output_lines, 8_534);
    assert_eq!(truncation.output_bytes, 51_203);
}

/// `seq 1 20000` (108,894 bytes) under 51,200: the tail starts with `7\n` of line 11467.
#[test]
fn seq_20000_under_the_default_limit() {
    let whole = seq(1, 20_000);
    assert_eq!(whole.len(), 108_894);
    let call = Call::new(exited(sink(&whole, LIMIT, None), Some(0)), LIMIT as u64);
    let text = call.text();
    assert!(text.starts_with("7\n11468\n"));
    assert!(text.ends_with("\n\n[Showing lines 11467-20000 of 20000 (50.0KB limit)]"));
}

#[test]
fn notice_on_every_error_after_the_outcome_line() {
    let whole = seq(1, 100_000);
    let failed = Call::new(exited(sink(&whole, LIMIT, None), Some(1)), LIMIT as u64);
    assert!(failed.text().ends_with(
        "100000\n\nCommand exited with code 1\n\n[Showing lines 91468-100000 of 100000 (50.0KB limit)]"
    ));
    let annotation = Timeout::clamp(300.0).annotation();
    let timeout = Call::new(
        timed_out(sink(&whole, LIMIT, Some("12")), &annotation),
        LIMIT as u64,
    );
    let text = timeout.text();
    assert!(text.starts_with("[Command timed out after 300 seconds]\n91468\n"));
    assert!(text.ends_with(
        "100000\n\n[Showing lines 91468-100000 of 100000 (50.0KB limit). Full: artifact://12]"
    ));
    let aborted = Call::new(exited(sink(&whole, LIMIT, None), None), LIMIT as u64).aborted();
    assert!(aborted.text().ends_with(
        "100000\n\nCommand aborted\n\n[Showing lines 91468-100000 of 100000 (50.0KB limit)]"
    ));
}

#[test]
fn tail_inside_a_truncated_window_is_the_callers_cut() {
    let whole = seq(1, 100_000);
    let call = Call::new(
        exited(sink(&whole, LIMIT, Some("7")), Some(0)),
        LIMIT as u64,
    )
    .tail(5);
    assert_eq!(call.text(), "99996\n99997\n99998\n99999\n100000");
    assert_eq!(
        call.truncation(),
        Some(Truncation {
            direction: TruncationDirection::Tail,
            truncated_by: TruncatedBy::Lines,
            total_lines: 100_000,
            total_bytes: 588_895,
            output_lines: 5,
            output_bytes: 31,
            shown_range: ShownRange {
                start: 99_996,
                end: 100_000
            },
            artifact_id: Some("7".into()),
            artifact_error: None,
        })
    );
}

#[test]
fn tail_beyond_a_truncated_window_gets_the_notice() {
    let whole = seq(1, 100_000);
    // The window holds 8,533 whole lines; asking for 9,000 shows them all, and the byte
    // limit is what stopped it.
    let call = Call::new(exited(sink(&whole, LIMIT, None), Some(0)), LIMIT as u64).tail(9_000);
    assert!(call.text().starts_with("91468\n"));
    assert!(
        call.text()
            .ends_with("[Showing lines 91468-100000 of 100000 (50.0KB limit)]")
    );
    assert_eq!(call.truncation().unwrap().truncated_by, TruncatedBy::Bytes);
    // Exactly the window's line count: still the byte limit's doing.
    let call = Call::new(exited(sink(&whole, LIMIT, None), Some(0)), LIMIT as u64).tail(8_533);
    assert!(
        call.text()
            .ends_with("[Showing lines 91468-100000 of 100000 (50.0KB limit)]")
    );
    let call = Call::new(exited(sink(&whole, LIMIT, None), Some(0)), LIMIT as u64).tail(8_532);
    assert!(call.text().starts_with("91469\n"));
    assert!(call.text().ends_with("\n100000"));
    assert_eq!(
        call.truncation().unwrap().shown_range,
        ShownRange {
            start: 91_469,
            end: 100_000
        }
    );
}

#[test]
fn line_limits_without_truncation() {
    let call = ok("a\nb\nc\nd\n").tail(2);
    assert_eq!(call.text(), "c\nd");
    let t = call.truncation().unwrap();
    assert_eq!(
        (t.direction, t.truncated_by),
        (TruncationDirection::Tail, TruncatedBy::Lines)
    );
    assert_eq!(t.shown_range, ShownRange { start: 3, end: 4 });
    assert_eq!(
        (t.total_lines, t.total_bytes, t.output_lines, t.output_bytes),
        (4, 8, 2, 4)
    );

    // Head without a capture, output complete: exact.
    let call = ok("a\nb\nc\nd\n").head(3).tail(2);
    assert_eq!(call.text(), "b\nc");
    let t = call.truncation().unwrap();
    assert_eq!(t.direction, TruncationDirection::Head);
    assert_eq!(t.shown_range, ShownRange { start: 2, end: 3 });

    // Limits that leave nothing out: no meta.
    assert_eq!(ok("a\nb\n").tail(10).truncation(), None);
    assert_eq!(ok("a\nb\n").head(2).truncation(), None);
    assert_eq!(ok("a\nb").tail(1).text(), "b");
    assert_eq!(
        ok("a\nb").tail(1).truncation().unwrap().shown_range,
        ShownRange { start: 2, end: 2 }
    );
}

#[test]
fn zero_lines_asked() {
    let call = ok("a\nb\n").tail(0);
    assert_eq!(call.text(), "(no output)");
    let t = call.truncation().unwrap();
    assert_eq!(t.shown_range, ShownRange { start: 0, end: 0 });
    assert_eq!((t.output_lines, t.truncated_by), (0, TruncatedBy::Lines));
    // Even over a truncated tail: the caller asked for nothing, so no notice.
    let whole = seq(1, 100_000);
    let call = Call::new(exited(sink(&whole, LIMIT, None), Some(0)), LIMIT as u64).head(0);
    assert_eq!(call.text(), "(no output)");
    // Nothing asked, nothing there: no meta.
    assert_eq!(ok("").tail(0).truncation(), None);
}

#[test]
fn head_comes_from_the_capture() {
    // `seq 1 100000` stopped once 3 lines were seen; the sink counted what came before the
    // stop (here: everything, truncated to its tail).
    let whole = seq(1, 100_000);
    let summary = sink(&whole, LIMIT, Some("4"));
    let call = Call::new(exited(summary.clone(), Some(0)), LIMIT as u64)
        .head(3)
        .capture("1\n2\n3\n", false);
    assert_eq!(call.text(), "1\n2\n3");
    assert_eq!(
        call.truncation(),
        Some(Truncation {
            direction: TruncationDirection::Head,
            truncated_by: TruncatedBy::Lines,
            total_lines: 100_000,
            total_bytes: 588_895,
            output_lines: 3,
            output_bytes: 6,
            shown_range: ShownRange { start: 1, end: 3 },
            artifact_id: Some("4".into()),
            artifact_error: None,
        })
    );
    let call = Call::new(exited(summary, Some(0)), LIMIT as u64)
        .head(3)
        .tail(2)
        .capture("1\n2\n3\n", false);
    assert_eq!(call.text(), "2\n3");
    assert_eq!(
        call.truncation().unwrap().shown_range,
        ShownRange { start: 2, end: 3 }
    );
}

#[test]
fn a_byte_cut_head_capture_gets_the_notice() {
    // head 1000 of `seq 1 30` under a 19-byte bound: the capture is `1\n…9\n1`, ten lines
    // with the tenth cut.
    let whole = seq(1, 30);
    let call = Call::new(exited(sink(&whole, 19, Some("3")), Some(0)), 19)
        .head(1_000)
        .capture("1\n2\n3\n4\n5\n6\n7\n8\n9\n1", true);
    assert_eq!(
        call.text(),
        "1\n2\n3\n4\n5\n6\n7\n8\n9\n1\n\n[Showing lines 1-10 of 30 (19B limit). Full: artifact://3]"
    );
    let t = call.truncation().unwrap();
    assert_eq!(
        (t.direction, t.truncated_by),
        (TruncationDirection::Head, TruncatedBy::Bytes)
    );
    assert_eq!(t.shown_range, ShownRange { start: 1, end: 10 });
}

#[test]
fn head_without_a_capture_over_a_truncated_tail_says_where_it_is() {
    let whole = seq(1, 100_000);
    let call = Call::new(exited(sink(&whole, LIMIT, None), Some(0)), LIMIT as u64).head(2);
    assert_eq!(
        call.text(),
        "91468\n91469\n\n[Showing lines 91468-91469 of 100000 (50.0KB limit)]"
    );
}

#[test]
fn one_huge_line_and_multibyte_cuts() {
    let whole = format!("{}\n", "x".repeat(100));
    let call = Call::new(exited(sink(&whole, 10, None), Some(0)), 10);
    assert_eq!(
        call.text(),
        "xxxxxxxxx\n\n[Showing lines 1-1 of 1 (10B limit)]"
    );

    // 10 × `é` (2 bytes) + `\n` = 21 bytes; the last 4 bytes would split an `é`, so the sink
    // keeps 3: `é\n`.
    let whole = format!("{}\n", "é".repeat(10));
    let call = Call::new(exited(sink(&whole, 4, None), Some(0)), 4);
    assert_eq!(call.text(), "é\n\n[Showing lines 1-1 of 1 (4B limit)]");
    let t = call.truncation().unwrap();
    assert_eq!((t.output_bytes, t.total_bytes), (3, 21));
}

#[test]
fn a_tail_that_is_only_a_newline() {
    // `ab\n` under a 1-byte limit keeps `\n`: nothing visible is left.
    let call = Call::new(exited(sink("ab\n", 1, None), Some(0)), 1);
    assert_eq!(
        call.text(),
        "(no output)\n\n[Showing lines 0-0 of 1 (1B limit)]"
    );
    assert_eq!(
        call.truncation().unwrap().shown_range,
        ShownRange { start: 0, end: 0 }
    );
}

#[test]
fn output_that_looks_like_an_annotation_is_output() {
    // An output that merely looks like an annotation is body: only `annotation` is one.
    let result = exited(sink("[not an annotation]\nx\n", LIMIT, None), Some(0));
    assert_eq!(
        Call::new(result, LIMIT as u64).text(),
        "[not an annotation]\nx"
    );
}

#[test]
fn details_json_shape() {
    let call = ok("hi\n");
    let json = serde_json::to_value(call.build().result()).unwrap();
    assert_eq!(
        json,
        json!({
            "content": [{"type": "text", "text": "hi"}],
            "details": {
                "exitCode": 0, "cancelled": false, "timedOut": false, "sessionRestarted": false,
                "cwd": "/work/proj", "timeout": 300
            },
            "isError": false
        })
    );
    let back: ToolResult = serde_json::from_value(json).unwrap();
    assert_eq!(&back, call.build().result());
}

#[test]
fn snapshot_truncated_failure() {
    // `seq 1 30` is 81 bytes; its last 20 are `4\n25\n…30\n`: line 24 shows as `4`.
    let whole = seq(1, 30);
    let call = Call::new(exited(sink(&whole, 20, Some("3")), Some(1)), 20);
    insta::assert_json_snapshot!(call.build().result());
}

#[test]
fn snapshot_timeout_with_tail() {
    let whole = seq(1, 30);
    let timeout = Timeout::clamp(1.5);
    let annotation = timeout.annotation();
    let mut call = Call::new(
        timed_out(sink(&whole, LIMIT, None), &annotation),
        LIMIT as u64,
    )
    .tail(3);
    call.result.session_restarted = true;
    call.timeout = timeout;
    insta::assert_json_snapshot!(call.build().result());
}

#[test]
fn snapshot_blocked() {
    let interceptor = Interceptor::with_default_rules();
    let command = "cat src/main.rs";
    let interception = interceptor.check(command, &["read"]).expect("blocked");
    let result = blocked_result(
        &interception,
        command,
        Path::new("/work/proj"),
        Timeout::clamp(30.0),
    );
    assert!(result.is_error);
    insta::assert_json_snapshot!(result);
}

mod bang;
mod not_saved;
mod sandbox;

mod properties {
    use proptest::prelude::*;

    use super::*;

    /// Whole outputs: lines of a few characters (some multibyte, some empty), with or without
    /// a final newline.
    fn whole_output() -> impl Strategy<Value = String> {
        (
            proptest::collection::vec("[ab\u{e9}\u{20ac}]{0,6}", 0..40),
            any::<bool>(),
        )
            .prop_map(|(lines, final_newline)| {
                let mut text = lines.join("\n");
                if final_newline && !text.is_empty() {
                    text.push('\n');
                }
                text
            })
    }

    /// The lines of `text` split at `\n` (a final `\n` ends the last line), without
    /// terminators.
    fn lines_of(text: &str) -> Vec<&str> {
        let body = text.strip_suffix('\n').unwrap_or(text);
        if text.is_empty() {
            Vec::new()
        } else {
            body.split('\n').collect()
        }
    }

    /// The first `max` bytes of `text`, cut back to a UTF-8 boundary.
    fn cut_head(text: &str, max: usize) -> (&str, bool) {
        if text.len() <= max {
            return (text, false);
        }
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        (&text[..end], true)
    }

    proptest! {
        /// The range names exactly the lines shown: line `A + i` of the whole output is the
        /// `i`-th shown line, except that the first may be the end of its line (the tail was
        /// cut mid-line) and the last the start of its line (the head capture was cut).
        #[test]
        fn shown_range_names_the_shown_lines(
            whole in whole_output(),
            max in 1_usize..80,
            head in proptest::option::of(0_u32..45),
            tail in proptest::option::of(0_u32..45),
            with_capture in any::<bool>(),
        ) {
            let summary = sink(&whole, max, None);
            let limits = Limits { head, tail };
            let capture = head.filter(|_| with_capture).map(|h| {
                cut_head(apply_head_tail(&whole, Some(h), None), max)
            });
            let source = match capture {
                Some((text, truncated)) => Source {
                    text,
                    first_line: 1,
                    cut_at_start: false,
                    cut_at_end: truncated,
                },
                None => Source::tail(&summary.output, summary.truncated, summary.total_lines),
            };
            let shown = source.show(limits, summary.total_lines);
            let whole_lines = lines_of(&whole);
            let shown_lines = lines_of(shown.text);
            let range = shown.range();
            prop_assert_eq!(shown_lines.len() as u64, shown.lines);
            if shown.lines == 0 {
                prop_assert_eq!(range, ShownRange { start: 0, end: 0 });
            } else {
                prop_assert!(1 <= range.start && range.start <= range.end);
                prop_assert!(range.end <= summary.total_lines);
                prop_assert_eq!(range.end - range.start + 1, shown.lines);
                for (i, line) in shown_lines.iter().enumerate() {
                    let original = whole_lines[(range.start as usize - 1) + i];
                    let first = i == 0;
                    let last = i + 1 == shown_lines.len();
                    let ok = *line == original
                        || (first && source.cut_at_start && original.ends_with(line))
                        || (last && source.cut_at_end && original.starts_with(line));
                    prop_assert!(ok, "line {}: {:?} vs {:?}", range.start as usize + i, line, original);
                }
            }
            // Without any byte cut, the result is exactly `head -n | tail -n` of the output,
            // and there is no notice.
            if !summary.truncated && !capture.is_some_and(|(_, truncated)| truncated) {
                prop_assert_eq!(shown.text, apply_head_tail(&whole, head, tail));
                prop_assert!(!shown.byte_limited);
            }
            // Something is reported left out exactly when the shown lines are not all lines.
            let everything = shown.lines == summary.total_lines
                && shown.text.len() as u64 == summary.total_bytes;
            prop_assert_eq!(shown.left_out(), !everything);
        }
    }
}
