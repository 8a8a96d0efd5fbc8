//! Shared helpers: test spills, the fixture escape language, expected tails.

use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

use agentsh_output_sink::{OutputSink, Sanitizer, SinkOptions, Spill, SpillSource};
use agentsh_protocol::OutputSummary;

/// What a [`RecordingSpill`] saw.
#[derive(Debug, Default, Clone)]
pub struct SpillRecord {
    pub bytes: Vec<u8>,
    pub writes: Vec<usize>,
    pub finished: bool,
    pub discarded: bool,
}

/// A spill that records everything in memory; it fails its writes once `fail_after` bytes were
/// accepted (the failing write accepts nothing), or its `finish` when `fail_finish` is set.
pub struct RecordingSpill {
    id: String,
    record: Arc<Mutex<SpillRecord>>,
    fail_after: Option<usize>,
    fail_finish: bool,
}

impl RecordingSpill {
    /// A ready spill, given to the sink directly (a spill is a source that is already open).
    pub fn boxed(id: &str) -> (Box<dyn SpillSource>, Recorder) {
        Self::build(id, None, false)
    }

    pub fn failing_after(id: &str, bytes: usize) -> (Box<dyn SpillSource>, Recorder) {
        Self::build(id, Some(bytes), false)
    }

    pub fn failing_finish(id: &str) -> (Box<dyn SpillSource>, Recorder) {
        Self::build(id, None, true)
    }

    fn build(
        id: &str,
        fail_after: Option<usize>,
        fail_finish: bool,
    ) -> (Box<dyn SpillSource>, Recorder) {
        let (spill, recorder) = Self::new(id, fail_after, fail_finish);
        (Box::new(spill), recorder)
    }

    fn new(id: &str, fail_after: Option<usize>, fail_finish: bool) -> (Self, Recorder) {
        let record = Arc::new(Mutex::new(SpillRecord::default()));
        let spill = Self {
            id: id.to_owned(),
            record: Arc::clone(&record),
            fail_after,
            fail_finish,
        };
        (spill, Recorder(record))
    }

    fn record(&self) -> MutexGuard<'_, SpillRecord> {
        self.record.lock().expect("spill record lock")
    }
}

impl Spill for RecordingSpill {
    fn id(&self) -> &str {
        &self.id
    }

    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        let mut record = self.record();
        assert!(!record.finished && !record.discarded, "write after the end");
        if let Some(limit) = self.fail_after
            && record.bytes.len() + bytes.len() > limit
        {
            return Err(io::Error::from_raw_os_error(28)); // ENOSPC
        }
        record.bytes.extend_from_slice(bytes);
        record.writes.push(bytes.len());
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        if self.fail_finish {
            return Err(io::Error::other("fsync failed"));
        }
        let mut record = self.record();
        assert!(!record.finished, "finished twice");
        record.finished = true;
        Ok(())
    }

    fn discard(self: Box<Self>) {
        let mut record = self.record();
        assert!(!record.discarded, "discarded twice");
        record.discarded = true;
        record.bytes.clear();
    }
}

/// The test's handle on what a [`RecordingSpill`] saw.
pub struct Recorder(Arc<Mutex<SpillRecord>>);

impl Recorder {
    pub fn get(&self) -> SpillRecord {
        self.0.lock().expect("spill record lock").clone()
    }
}

/// How often a [`CountingSource`] was opened and released.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SourceCounts {
    pub opened: u32,
    pub released: u32,
}

/// A source that makes a [`RecordingSpill`] when opened — or, like a store that cannot
/// allocate, none — and counts how the sink used it.
pub struct CountingSource {
    spill: Option<RecordingSpill>,
    counts: Arc<Mutex<SourceCounts>>,
}

impl CountingSource {
    /// A source of a recording spill with `id`.
    pub fn boxed(id: &str) -> (Box<dyn SpillSource>, Counter, Recorder) {
        let (spill, recorder) = RecordingSpill::new(id, None, false);
        let (source, counter) = Self::build(Some(spill));
        (source, counter, recorder)
    }

    /// A source that yields no spill.
    pub fn failing() -> (Box<dyn SpillSource>, Counter) {
        Self::build(None)
    }

    fn build(spill: Option<RecordingSpill>) -> (Box<dyn SpillSource>, Counter) {
        let counts = Arc::new(Mutex::new(SourceCounts::default()));
        let source = Self {
            spill,
            counts: Arc::clone(&counts),
        };
        (Box::new(source), Counter(counts))
    }

    fn counts(&self) -> MutexGuard<'_, SourceCounts> {
        self.counts.lock().expect("source counts lock")
    }
}

impl SpillSource for CountingSource {
    fn open(self: Box<Self>) -> Option<Box<dyn Spill>> {
        self.counts().opened += 1;
        self.spill.map(|spill| Box::new(spill) as Box<dyn Spill>)
    }

    fn release(self: Box<Self>) {
        self.counts().released += 1;
    }
}

/// The test's handle on a [`CountingSource`]'s counts.
pub struct Counter(Arc<Mutex<SourceCounts>>);

impl Counter {
    pub fn get(&self) -> SourceCounts {
        *self.0.lock().expect("source counts lock")
    }
}

/// Runs `chunks` through a sink with a recording spill (id `42`).
pub fn run_sink(
    chunks: &[&[u8]],
    max_bytes: usize,
    head_lines: Option<u32>,
) -> (OutputSummary, SpillRecord, Option<String>) {
    run_sink_with(RecordingSpill::boxed("42"), chunks, max_bytes, head_lines)
}

/// Runs `chunks` through a sink with the given spill (a [`RecordingSpill`] constructor's result).
pub fn run_sink_with(
    (spill, recorder): (Box<dyn SpillSource>, Recorder),
    chunks: &[&[u8]],
    max_bytes: usize,
    head_lines: Option<u32>,
) -> (OutputSummary, SpillRecord, Option<String>) {
    let mut sink = OutputSink::new(SinkOptions {
        max_bytes,
        head_lines,
        spill: Some(spill),
        secrets: None,
    });
    for chunk in chunks {
        sink.push(chunk);
    }
    let summary = sink.dump();
    let head = sink.head_text().map(str::to_owned);
    (summary, recorder.get(), head)
}

/// The text a [`Sanitizer`] commits for `chunks`, including what `finish` flushes.
pub fn sanitizer_text(chunks: &[&[u8]]) -> String {
    let mut sanitizer = Sanitizer::new();
    let mut text = String::new();
    for chunk in chunks {
        sanitizer.push(chunk, |t| text.push_str(t));
    }
    sanitizer.finish(|t| text.push_str(t));
    text
}

/// The last at most `max_bytes` bytes of `text`, starting at a character boundary.
pub fn expected_tail(text: &str, max_bytes: usize) -> &str {
    let mut start = text.len().saturating_sub(max_bytes);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// Lines split at `\n` (a final `\n` ends the last line rather than starting one), counted
/// independently of the crate.
pub fn spec_lines(text: &str) -> u64 {
    text.split_inclusive('\n').count() as u64
}

/// Checks everything a summary says against the whole sanitised text (`expected`) and what
/// the spill recorded.
pub fn check_summary(
    summary: &OutputSummary,
    record: &SpillRecord,
    expected: &str,
    max_bytes: usize,
    what: &str,
) {
    let tail = expected_tail(expected, max_bytes);
    assert_eq!(summary.output, tail, "{what}: output");
    assert_eq!(
        summary.total_bytes,
        expected.len() as u64,
        "{what}: totalBytes"
    );
    assert_eq!(
        summary.total_lines,
        spec_lines(expected),
        "{what}: totalLines"
    );
    assert_eq!(
        summary.output_bytes,
        tail.len() as u64,
        "{what}: outputBytes"
    );
    assert_eq!(
        summary.output_lines,
        spec_lines(tail),
        "{what}: outputLines"
    );
    assert_eq!(
        summary.truncated,
        expected.len() > max_bytes,
        "{what}: truncated"
    );
    assert_eq!(summary.artifact_error, None, "{what}: artifactError");
    if expected.len() > max_bytes {
        assert_eq!(
            summary.artifact_id.as_deref(),
            Some("42"),
            "{what}: artifactId"
        );
        assert!(
            record.finished && !record.discarded,
            "{what}: spill finished"
        );
        assert_eq!(
            String::from_utf8_lossy(&record.bytes),
            expected,
            "{what}: artifact holds the whole stream"
        );
        assert!(
            record.bytes.ends_with(summary.output.as_bytes()),
            "{what}: suffix"
        );
    } else {
        assert_eq!(summary.artifact_id, None, "{what}: no artifactId");
        assert!(
            record.discarded && !record.finished,
            "{what}: spill discarded"
        );
        assert!(record.writes.is_empty(), "{what}: nothing written");
    }
}

/// Decodes the escape language of `fixtures/sink/vectors.toml` (see its header).
pub fn unescape(text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buffer = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
            continue;
        }
        match chars.next() {
            Some('e') => out.push(0x1b),
            Some('n') => out.push(b'\n'),
            Some('r') => out.push(b'\r'),
            Some('t') => out.push(b'\t'),
            Some('0') => out.push(0),
            Some('\\') => out.push(b'\\'),
            Some('x') => {
                let hex: String = chars.by_ref().take(2).collect();
                out.push(u8::from_str_radix(&hex, 16).unwrap_or_else(|_| panic!("bad \\x{hex}")));
            }
            Some('u') => {
                assert_eq!(chars.next(), Some('{'), "\\u needs braces");
                let hex: String = chars.by_ref().take_while(|&c| c != '}').collect();
                let code = u32::from_str_radix(&hex, 16).expect("\\u{hex}");
                let c = char::from_u32(code).expect("a scalar value");
                let mut buffer = [0; 4];
                out.extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
            }
            Some('{') => {
                let body: String = chars.by_ref().take_while(|&c| c != '}').collect();
                let (count, piece) = body.split_once('*').expect("\\{N*text}");
                let piece = unescape(piece);
                for _ in 0..count.parse::<usize>().expect("\\{N*text}") {
                    out.extend_from_slice(&piece);
                }
            }
            other => panic!("unknown escape \\{other:?} in {text:?}"),
        }
    }
    out
}

#[test]
fn unescape_language() {
    assert_eq!(unescape(r"a\e[1m\x07\n"), b"a\x1b[1m\x07\n");
    assert_eq!(
        unescape(r"\u{fffd}\{3*a\xff}b"),
        b"\xef\xbf\xbda\xffa\xffa\xffb"
    );
    assert_eq!(unescape(r"é\\\0\r\t"), "é\\\0\r\t".as_bytes());
}

/// Cuts `bytes` at the given points (in any order, duplicates allowed).
pub fn split<'a>(bytes: &'a [u8], cuts: &[proptest::sample::Index]) -> Vec<&'a [u8]> {
    let mut points: Vec<usize> = cuts.iter().map(|cut| cut.index(bytes.len() + 1)).collect();
    points.push(0);
    points.push(bytes.len());
    points.sort_unstable();
    points.windows(2).map(|w| &bytes[w[0]..w[1]]).collect()
}
