//! `OutputSink` behaviour: spill lifecycle and failures, counts, head capture.

use std::fmt::Write;

use agentsh_output_sink::{DEFAULT_OUTPUT_MAX_BYTES, OutputSink, SinkOptions, TailBuffer};
use agentsh_protocol::OutputSummary;

use crate::util::{
    CountingSource, RecordingSpill, SourceCounts, check_summary, expected_tail, run_sink,
    run_sink_with,
};

/// `count` numbered lines: "line 00000\n" …, 11 bytes each.
fn numbered_lines(count: usize) -> String {
    (0..count).fold(String::new(), |mut text, i| {
        writeln!(text, "line {i:05}").expect("write to String");
        text
    })
}

#[test]
fn default_limit_is_fifty_kilobytes() {
    assert_eq!(DEFAULT_OUTPUT_MAX_BYTES, 51_200);
    assert_eq!(SinkOptions::default().max_bytes, DEFAULT_OUTPUT_MAX_BYTES);
    assert!(SinkOptions::default().head_lines.is_none());
    assert!(SinkOptions::default().spill.is_none());
}

#[test]
fn small_output_is_kept_whole_and_the_spill_discarded() {
    let (summary, record, _) = run_sink(&[b"a\nb", b"\n"], 100, None);
    assert_eq!(
        summary,
        OutputSummary {
            output: "a\nb\n".into(),
            truncated: false,
            total_lines: 2,
            total_bytes: 4,
            output_lines: 2,
            output_bytes: 4,
            artifact_id: None,
            artifact_error: None,
        }
    );
    assert!(record.discarded);
    assert!(!record.finished);
    assert!(record.writes.is_empty());
}

#[test]
fn overflow_spills_the_whole_stream_and_keeps_the_tail() {
    let text = numbered_lines(100_000); // 1,100,000 bytes
    let chunks: Vec<&[u8]> = text.as_bytes().chunks(4_096).collect();
    let (summary, record, _) = run_sink(&chunks, DEFAULT_OUTPUT_MAX_BYTES, None);
    check_summary(
        &summary,
        &record,
        &text,
        DEFAULT_OUTPUT_MAX_BYTES,
        "numbered lines",
    );
    // 51,200 = 11 × 4,654 + 6: the last 4,654 lines and the end of the one before.
    assert_eq!(summary.total_lines, 100_000);
    assert_eq!(summary.output_lines, 4_655);
    assert!(summary.output.starts_with("95345\nline 95346\n"));
    // The first write is what the tail held before the commit that overflowed it (commits
    // come per 4,096-byte chunk here); then batches of at least 256 KiB, except the last.
    let (first, rest) = record.writes.split_first().unwrap();
    assert!(
        (DEFAULT_OUTPUT_MAX_BYTES - 4_096..=DEFAULT_OUTPUT_MAX_BYTES).contains(first),
        "{first}"
    );
    let (last, middle) = rest.split_last().unwrap();
    assert!(middle.len() >= 3, "{:?}", record.writes);
    assert!(
        middle.iter().all(|&w| w >= 256 * 1024),
        "{:?}",
        record.writes
    );
    assert!(*last > 0);
}

/// Regression (issue 11): every stream had its spill made (an artifact file reserved) before
/// it started. Now the spill is made when the output first needs one — the source is
/// opened exactly once, by the commit that overflows the tail, and never for output that fits.
#[test]
fn a_source_is_opened_once_at_the_first_overflow() {
    let (source, counter, recorder) = CountingSource::boxed("8");
    let mut sink = OutputSink::new(SinkOptions {
        max_bytes: 10,
        head_lines: None,
        spill: Some(source),
        secrets: None,
    });
    sink.push(b"012345678\n"); // 10 bytes: the tail is full, not overflowing
    sink.push(b"unfinished"); // held back: not committed yet
    assert_eq!(counter.get(), SourceCounts::default());
    sink.push(b" line\n"); // commits 16 more bytes: the first overflow
    assert_eq!(
        counter.get(),
        SourceCounts {
            opened: 1,
            released: 0
        }
    );
    assert_eq!(recorder.get().bytes, b"012345678\n");
    for _ in 0..1_000 {
        sink.push(b"more\n");
    }
    let summary = sink.dump();
    assert_eq!(counter.get().opened, 1);
    assert_eq!(summary.artifact_id.as_deref(), Some("8"));
    let record = recorder.get();
    assert!(record.finished);
    let expected = format!("012345678\nunfinished line\n{}", "more\n".repeat(1_000));
    assert_eq!(String::from_utf8_lossy(&record.bytes), expected);
    assert_eq!(summary.output, "more\nmore\n");
}

#[test]
fn a_source_is_released_unopened_when_the_output_fits() {
    let (source, counter, recorder) = CountingSource::boxed("8");
    let mut sink = OutputSink::new(SinkOptions {
        max_bytes: 10,
        head_lines: None,
        spill: Some(source),
        secrets: None,
    });
    sink.push(b"01234\n");
    sink.push(b"5678"); // committed by `dump`: 10 bytes in all
    let summary = sink.dump();
    assert_eq!(summary.output, "01234\n5678");
    assert_eq!(summary.artifact_id, None);
    assert_eq!(summary.artifact_error, None);
    assert_eq!(
        counter.get(),
        SourceCounts {
            opened: 0,
            released: 1
        }
    );
    let record = recorder.get();
    assert!(record.writes.is_empty() && !record.finished && !record.discarded);
}

/// When no spill can be had at the overflow (allocation failed), the stream still
/// truncates, and the summary has neither `artifactId` nor `artifactError`; the source is not
/// asked again.
#[test]
fn a_source_without_a_spill_truncates_without_artifact_or_error() {
    let (source, counter) = CountingSource::failing();
    let text = numbered_lines(1_000);
    let mut sink = OutputSink::new(SinkOptions {
        max_bytes: 25,
        head_lines: None,
        spill: Some(source),
        secrets: None,
    });
    for chunk in text.as_bytes().chunks(7) {
        sink.push(chunk);
    }
    let summary = sink.dump();
    assert_eq!(
        counter.get(),
        SourceCounts {
            opened: 1,
            released: 0
        }
    );
    assert!(summary.truncated);
    assert_eq!(summary.output, expected_tail(&text, 25));
    assert_eq!(summary.total_lines, 1_000);
    assert_eq!(summary.artifact_id, None);
    assert_eq!(summary.artifact_error, None);
    assert!(sink.spill_error().is_none());
}

#[test]
fn no_spill_means_truncation_without_artifact() {
    let text = numbered_lines(100);
    let mut sink = OutputSink::new(SinkOptions {
        max_bytes: 25,
        ..SinkOptions::default()
    });
    sink.push(text.as_bytes());
    let summary = sink.dump();
    assert_eq!(summary.output, "97\nline 00098\nline 00099\n"); // the last 25 bytes
    assert!(summary.truncated);
    assert_eq!(summary.artifact_id, None);
    assert_eq!(summary.artifact_error, None);
}

#[test]
fn failing_spill_write_keeps_the_tail_and_reports_the_error() {
    let text = numbered_lines(50_000); // 550,000 bytes
    let chunks: Vec<&[u8]> = text.as_bytes().chunks(10_000).collect();
    let spill = RecordingSpill::failing_after("7", 150_000);
    let (summary, record, _) = run_sink_with(spill, &chunks, 1_000, None);
    assert!(record.discarded, "the partial file is discarded");
    assert!(!record.finished);
    assert!(record.bytes.is_empty());
    assert_eq!(summary.artifact_id, None);
    assert_eq!(
        summary.artifact_error.as_deref(),
        Some("cannot write artifact 7: No space left on device (os error 28)")
    );
    assert_eq!(summary.output, expected_tail(&text, 1_000));
    assert_eq!(summary.total_bytes, 550_000);
    assert_eq!(summary.total_lines, 50_000);
    assert!(summary.truncated);
}

#[test]
fn spill_failing_on_its_first_write_still_keeps_the_tail() {
    let text = numbered_lines(10);
    let chunks: Vec<&[u8]> = text.as_bytes().chunks(3).collect();
    // The first write happens only at the end (the stream is smaller than one batch).
    let spill = RecordingSpill::failing_after("3", 0);
    let (summary, record, _) = run_sink_with(spill, &chunks, 15, None);
    assert!(record.discarded);
    assert_eq!(summary.artifact_id, None);
    assert!(
        summary
            .artifact_error
            .unwrap()
            .starts_with("cannot write artifact 3: ")
    );
    assert_eq!(summary.output, "008\nline 00009\n"); // the last 15 bytes
}

#[test]
fn failing_finish_is_an_artifact_error() {
    let spill = RecordingSpill::failing_finish("9");
    let (summary, record, _) = run_sink_with(spill, &[b"hello world\n"], 4, None);
    assert!(record.discarded);
    assert_eq!(summary.artifact_id, None);
    assert_eq!(
        summary.artifact_error.as_deref(),
        Some("cannot finish artifact 9: fsync failed")
    );
    assert_eq!(summary.output, "rld\n");
}

#[test]
fn line_counts_follow_the_spec_rule() {
    for (input, lines) in [
        (&b""[..], 0),
        (b"a\nb\n", 2),
        (b"a\nb", 2),
        (b"\n", 1),
        (b"x", 1),
    ] {
        let (summary, _, _) = run_sink(&[input], 100, None);
        assert_eq!(summary.total_lines, lines, "{input:?}");
        assert_eq!(summary.output_lines, lines, "{input:?}");
    }
}

#[test]
fn counts_while_streaming_cover_committed_text_only() {
    let mut sink = OutputSink::new(SinkOptions::default());
    sink.push(b"one\ntwo");
    assert_eq!(sink.total_bytes(), 4);
    assert_eq!(sink.total_lines(), 1);
    sink.push(b"\r\nthree");
    assert_eq!(sink.total_bytes(), 8);
    let summary = sink.dump();
    assert_eq!(summary.total_bytes, 13);
    assert_eq!(summary.total_lines, 3);
    assert_eq!(sink.total_bytes(), 13);
}

#[test]
fn dump_twice_reports_the_same_and_later_pushes_are_ignored() {
    let (spill, recorder) = RecordingSpill::boxed("5");
    let mut sink = OutputSink::new(SinkOptions {
        max_bytes: 3,
        head_lines: None,
        spill: Some(spill),
        secrets: None,
    });
    sink.push(b"abcdef");
    let first = sink.dump();
    sink.push(b"more");
    let second = sink.dump();
    assert_eq!(first, second);
    assert_eq!(first.artifact_id.as_deref(), Some("5"));
    assert_eq!(recorder.get().bytes, b"abcdef");
}

#[test]
fn zero_limit_keeps_no_tail_but_spills_everything() {
    let (summary, record, _) = run_sink(&[b"x\n", b"y"], 0, None);
    assert_eq!(summary.output, "");
    assert!(summary.truncated);
    assert_eq!(summary.total_lines, 2);
    assert_eq!(record.bytes, b"x\ny");
}

#[test]
fn head_capture_signals_after_n_complete_lines() {
    let mut sink = OutputSink::new(SinkOptions {
        head_lines: Some(2),
        ..SinkOptions::default()
    });
    assert!(!sink.head_satisfied());
    sink.push(b"first\nsecond");
    assert!(
        !sink.head_satisfied(),
        "the second line is not complete yet"
    );
    sink.push(b"\r");
    assert!(
        !sink.head_satisfied(),
        "a trailing \\r may still become \\r\\n"
    );
    sink.push(b"\nthird\n");
    assert!(sink.head_satisfied());
    assert_eq!(sink.head_text(), Some("first\nsecond\n"));
    assert!(!sink.head_truncated());
}

#[test]
fn head_capture_sees_the_start_not_the_tail_window() {
    let text = numbered_lines(10_000);
    let mut sink = OutputSink::new(SinkOptions {
        max_bytes: 50,
        head_lines: Some(3),
        spill: None,
        secrets: None,
    });
    sink.push(text.as_bytes());
    assert_eq!(
        sink.head_text(),
        Some("line 00000\nline 00001\nline 00002\n")
    );
    let summary = sink.dump();
    assert_eq!(
        summary.output,
        "09995\nline 09996\nline 09997\nline 09998\nline 09999\n"
    );
}

#[test]
fn head_capture_of_a_short_output_holds_it_all_after_dump() {
    let mut sink = OutputSink::new(SinkOptions {
        head_lines: Some(5),
        ..SinkOptions::default()
    });
    sink.push(b"only\nlast line without newline");
    assert_eq!(sink.head_text(), Some("only\n"));
    sink.dump();
    assert!(!sink.head_satisfied());
    assert_eq!(sink.head_text(), Some("only\nlast line without newline"));
}

#[test]
fn head_capture_is_bounded_by_max_bytes() {
    let mut sink = OutputSink::new(SinkOptions {
        max_bytes: 10,
        head_lines: Some(2),
        spill: None,
        secrets: None,
    });
    sink.push("a very long first line ünïcödé\n".as_bytes());
    assert!(!sink.head_satisfied());
    sink.push(b"second\n");
    assert!(sink.head_satisfied());
    assert_eq!(sink.head_text(), Some("a very lon"));
    assert!(sink.head_truncated());
}

#[test]
fn no_head_capture_by_default() {
    let mut sink = OutputSink::new(SinkOptions::default());
    sink.push(b"a\nb\n");
    assert_eq!(sink.head_text(), None);
    assert!(!sink.head_satisfied());
}

#[test]
fn head_of_zero_lines_is_satisfied_at_once() {
    let sink = OutputSink::new(SinkOptions {
        head_lines: Some(0),
        ..SinkOptions::default()
    });
    assert!(sink.head_satisfied());
    assert_eq!(sink.head_text(), Some(""));
}

#[test]
fn tail_buffer_fed_by_a_sanitizer() {
    use agentsh_output_sink::Sanitizer;
    let mut sanitizer = Sanitizer::new();
    let mut tail = TailBuffer::new(12);
    for chunk in [
        &b"\x1b[1mbuild\x1b[0m step 1\r\n"[..],
        b"step 2 \xe2\x9c",
        b"\x93\n",
    ] {
        sanitizer.push(chunk, |text| tail.push(text));
    }
    // "build step 1\nstep 2 ✓\n": ✓ is 3 bytes; the last 12 bytes are "\nstep 2 ✓\n".
    assert_eq!(tail.snapshot(), "\nstep 2 ✓\n");
}

#[test]
fn sink_types_can_move_between_threads() {
    fn send<T: Send>() {}
    send::<OutputSink>();
    send::<TailBuffer>();
    send::<agentsh_output_sink::Sanitizer>();
}
