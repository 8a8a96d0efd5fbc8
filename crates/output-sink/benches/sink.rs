//! Throughput of `OutputSink` spilling to a real temporary file, against `std::io::copy` of the
//! same bytes to a file in the same run (goal for plain text: ≥ 0.5× and ≥ 1 GB/s).
//!
//! Three 64 MiB inputs: plain text lines, ANSI-heavy text (colours every few bytes) and text
//! with invalid UTF-8. The sink gets 64 KiB chunks, as a pipe reader would hand them over.

use std::fs::File;
use std::hint::black_box;
use std::io::{self, Write};
use std::time::{Duration, Instant};

use agentsh_bench_support::{Row, mb_per_s, median};
use std::sync::Arc;

use agentsh_output_sink::{
    DEFAULT_OUTPUT_MAX_BYTES, OutputSink, Redactor, SecretPattern, Secrets, SinkOptions, Spill,
};

const INPUT_BYTES: usize = 64 << 20;
const CHUNK: usize = 64 * 1024;
const RUNS: usize = 7;
const BASELINE: &str = "std::io::copy to file";

/// Spills into an anonymous temporary file.
struct FileSpill(File);

impl Spill for FileSpill {
    fn id(&self) -> &'static str {
        "1"
    }
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.0.write_all(bytes)
    }
    fn finish(&mut self) -> io::Result<()> {
        self.0.flush()
    }
    fn discard(self: Box<Self>) {}
}

/// Repeats lines made by `line(n)` until `INPUT_BYTES`.
fn generate(mut line: impl FnMut(usize, &mut Vec<u8>)) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(INPUT_BYTES + 256);
    let mut n = 0;
    while bytes.len() < INPUT_BYTES {
        line(n, &mut bytes);
        n += 1;
    }
    bytes.truncate(INPUT_BYTES);
    bytes
}

fn plain() -> Vec<u8> {
    generate(|n, out| {
        writeln!(
            out,
            "   Compiling crate-{n} v0.{}.{} (/work/src/crate-{n})",
            n % 17,
            n % 5
        )
        .expect("write to Vec");
    })
}

fn ansi_heavy() -> Vec<u8> {
    generate(|n, out| {
        writeln!(
            out,
            "\x1b[1;32mok\x1b[0m \x1b[31m{n}\x1b[0m \x1b[33mwarn\x1b[39m \x1b[2mx\x1b[22m \x1b[4;36mlink\x1b[0m"
        )
        .expect("write to Vec");
    })
}

fn invalid_utf8() -> Vec<u8> {
    generate(|n, out| {
        out.extend_from_slice(b"binary \xff\xfe blob ");
        write!(out, "{n} café ").expect("write to Vec");
        out.extend_from_slice(
            b"\xe2\x82 truncated \xc0\xaf overlong ok \xe2\x9c\x93 \xe6\x97\xa5\n",
        );
    })
}

fn time_copy(data: &[u8]) -> Duration {
    let mut file = tempfile::tempfile().expect("temporary file");
    let start = Instant::now();
    io::copy(&mut &data[..], &mut file).expect("io::copy to file");
    file.flush().expect("flush");
    start.elapsed()
}

fn time_sink(data: &[u8], redactor: Option<&Arc<Secrets>>) -> Duration {
    let file = tempfile::tempfile().expect("temporary file");
    let start = Instant::now();
    let mut sink = OutputSink::new(SinkOptions {
        max_bytes: DEFAULT_OUTPUT_MAX_BYTES,
        head_lines: None,
        spill: Some(Box::new(FileSpill(file))),
        secrets: redactor.cloned(),
    });
    for chunk in data.chunks(CHUNK) {
        sink.push(chunk);
    }
    let summary = sink.dump();
    let elapsed = start.elapsed();
    assert_eq!(summary.artifact_id.as_deref(), Some("1"), "{summary:?}");
    black_box(summary);
    elapsed
}

/// The sink's own work: no spill, so nothing but sanitising, counting and the tail (and
/// redacting, with a redactor).
fn time_sink_without_spill(data: &[u8], redactor: Option<&Arc<Secrets>>) -> Duration {
    let start = Instant::now();
    let mut sink = OutputSink::new(SinkOptions {
        secrets: redactor.cloned(),
        ..SinkOptions::default()
    });
    for chunk in data.chunks(CHUNK) {
        sink.push(chunk);
    }
    black_box(sink.dump());
    start.elapsed()
}

fn measure(metric: &str, data: &[u8], goal: bool) {
    // Interleave the runs so both see the same machine load.
    let mut copies = Vec::with_capacity(RUNS);
    let mut sinks = Vec::with_capacity(RUNS);
    time_sink(data, None); // warm-up
    for _ in 0..RUNS {
        copies.push(time_copy(data));
        sinks.push(time_sink(data, None));
    }
    let bytes = data.len() as u64;
    let copy = mb_per_s(bytes, median(&copies));
    let sink = mb_per_s(bytes, median(&sinks));
    let ratio = sink / copy;
    let mut row = Row::new("output-sink", metric)
        .value(sink, "MB/s")
        .ratio(ratio, BASELINE);
    if goal {
        row = row.goal("≥ 0.5× and ≥ 1 GB/s", ratio >= 0.5 && sink >= 1000.0);
    }
    row.report();
    Row::new("output-sink", format!("{BASELINE} ({metric} input)"))
        .value(copy, "MB/s")
        .report();
}

/// 20 secret values (as a session's environment would give them) and the default patterns.
fn redactor() -> Arc<Secrets> {
    // Unrelated values, as real tokens are (values sharing a prefix would search faster).
    let values = (0..20u64).map(|n| {
        let bits = n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xDEAD_BEEF;
        (format!("SECRET_{n}"), format!("{bits:016x}-{n}-Zq"))
    });
    Arc::new(Secrets::new(Redactor::new(
        values,
        SecretPattern::defaults(),
    )))
}

/// The sink (spilling to a file, as a large output does) with redaction against the same sink
/// without, on the same log lines, alternating (goal ≥ 0.8×); then the same without a spill,
/// where the sink's own work is all there is to compare with.
fn redaction(data: &[u8]) {
    let redactor = redactor();
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        with.push(time_sink(data, Some(&redactor)));
        without.push(time_sink(data, None));
    }
    let bytes = data.len() as u64;
    let (with_rate, without_rate) = (
        mb_per_s(bytes, median(&with)),
        mb_per_s(bytes, median(&without)),
    );
    let ratio = with_rate / without_rate;
    Row::new(
        "output-sink",
        "plain text with spill, redaction on (20 values + default patterns)",
    )
    .value(with_rate, "MB/s")
    .ratio(
        ratio,
        format!("the sink without redaction, {without_rate:.0} MB/s"),
    )
    .goal("≥ 0.8×", ratio >= 0.8)
    .report();
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        with.push(time_sink_without_spill(data, Some(&redactor)));
        without.push(time_sink_without_spill(data, None));
    }
    let bytes = data.len() as u64;
    let (with, without) = (
        mb_per_s(bytes, median(&with)),
        mb_per_s(bytes, median(&without)),
    );
    let ratio = with / without;
    Row::new(
        "output-sink",
        "plain text without spill, redaction on (the sink's own work alone)",
    )
    .value(with, "MB/s")
    .ratio(
        ratio,
        format!("the sink without redaction, {without:.0} MB/s"),
    )
    .report();
}

fn main() {
    let plain = plain();
    let alone: Vec<Duration> = (0..RUNS)
        .map(|_| time_sink_without_spill(&plain, None))
        .collect();
    Row::new("output-sink", "plain text without spill (sink work alone)")
        .value(mb_per_s(plain.len() as u64, median(&alone)), "MB/s")
        .report();
    redaction(&plain);
    measure("plain text with spill", &plain, true);
    measure("ANSI-heavy text with spill", &ansi_heavy(), false);
    measure("invalid UTF-8 text with spill", &invalid_utf8(), false);
}
