//! `OutputSink`: sanitise, count, keep a bounded tail, spill the whole stream, capture a head.

use std::fmt;
use std::io;
use std::sync::Arc;

use agentsh_protocol::{OutputSummary, count_lines};

use crate::head::FirstLines;
use crate::redact::{RedactStream, Secrets};
use crate::ring::Ring;
use crate::sanitizer::{Sanitizer, as_text};
use crate::spill::{Spill, SpillError, SpillSource};

/// The default byte limit of the in-memory tail (50 KB; setting `output.max_bytes`).
pub const DEFAULT_OUTPUT_MAX_BYTES: usize = agentsh_protocol::DEFAULT_OUTPUT_MAX_BYTES as usize;

/// Spill writes are gathered into batches of this size (the last one may be shorter): writing a
/// file in 256 KiB pieces costs markedly less per byte than in 64 KiB pieces (the bench shows
/// it), and the buffer exists only once the tail has overflowed.
const SPILL_BATCH_BYTES: usize = 256 * 1024;

/// How an [`OutputSink`] is set up.
pub struct SinkOptions {
    /// Byte limit of the kept tail (and of the head capture). Default [`DEFAULT_OUTPUT_MAX_BYTES`].
    pub max_bytes: usize,
    /// Capture the first N lines of the output (see [`OutputSink::head_text`]). Default none.
    pub head_lines: Option<u32>,
    /// Where the whole output goes once the tail overflows (an artifact): a [`SpillSource`]
    /// asked for the [`Spill`] at the first overflow, or a ready spill (every `Spill` is a
    /// source). Default none.
    pub spill: Option<Box<dyn SpillSource>>,
    /// Secrets to redact from the sanitised text before anything keeps or sees it (counts,
    /// tail, head, spill, live text are all of the redacted stream), including values added
    /// to them while the sink runs. Default none.
    pub secrets: Option<Arc<Secrets>>,
}

impl Default for SinkOptions {
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_OUTPUT_MAX_BYTES,
            head_lines: None,
            spill: None,
            secrets: None,
        }
    }
}

impl fmt::Debug for SinkOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SinkOptions")
            .field("max_bytes", &self.max_bytes)
            .field("head_lines", &self.head_lines)
            .field("spill", &self.spill.is_some())
            .field("secrets", &self.secrets.is_some())
            .finish()
    }
}

/// Receives a command's raw output chunks and keeps what a result needs: the
/// sanitised output's counts, its last `max_bytes` bytes, optionally its first N lines, and —
/// once the tail overflows — the whole sanitised stream in a [`Spill`], made by its
/// [`SpillSource`] at that moment.
///
/// Memory is bounded by about `2 × max_bytes` (tail and head capture) plus a constant
/// (the held-back line, at most 64 KiB, and a 256 KiB spill batch), whatever the output size.
///
/// Counts and the head capture cover *committed* text while the stream runs: an unfinished line
/// is held back until it ends and is committed by [`OutputSink::dump`].
pub struct OutputSink {
    sanitizer: Sanitizer,
    /// Redaction between the sanitiser and everything else, when there are secrets.
    redact: Option<RedactStream>,
    committed: CommittedOutput,
    finished: bool,
}

impl OutputSink {
    /// A sink for one command's output.
    pub fn new(options: SinkOptions) -> Self {
        let SinkOptions {
            max_bytes,
            head_lines,
            spill,
            secrets,
        } = options;
        Self {
            sanitizer: Sanitizer::default(),
            redact: secrets.map(RedactStream::new),
            committed: CommittedOutput {
                max_bytes,
                total_bytes: 0,
                newlines: 0,
                ends_with_newline: false,
                ring: Ring::new(max_bytes),
                batch_bytes: SPILL_BATCH_BYTES,
                head: head_lines.map(|lines| FirstLines::new(lines, max_bytes)),
                spill: spill.map_or(SpillState::None, SpillState::Waiting),
                artifact_id: None,
                spill_error: None,
            },
            finished: false,
        }
    }

    /// Sanitises the next raw chunk; counts it, keeps its tail, spills and captures the head.
    /// Chunks pushed after [`OutputSink::dump`] are ignored: the stream has ended.
    pub fn push(&mut self, chunk: &[u8]) {
        self.push_then(chunk, |_| {});
    }

    /// [`push`](OutputSink::push), also handing each piece of text it commits to `on_text`, in
    /// order: a live view (e.g. a [`TailBuffer`](crate::TailBuffer)) gets the sink's own
    /// sanitised text without sanitising the stream a second time. The unfinished line comes
    /// with [`dump_with`](OutputSink::dump_with).
    pub fn push_with(&mut self, chunk: &[u8], on_text: &mut dyn FnMut(&str)) {
        self.push_then(chunk, |bytes| as_text(bytes, on_text));
    }

    /// Sanitises `chunk`, commits each piece, then hands it to `then`.
    fn push_then(&mut self, chunk: &[u8], mut then: impl FnMut(&[u8])) {
        if self.finished {
            return;
        }
        let committed = &mut self.committed;
        match &mut self.redact {
            None => self.sanitizer.push_bytes(chunk, &mut |bytes: &[u8]| {
                committed.commit(bytes);
                then(bytes);
            }),
            Some(redact) => self.sanitizer.push_bytes(chunk, &mut |bytes: &[u8]| {
                redact.push(bytes, &mut |redacted: &[u8]| {
                    committed.commit(redacted);
                    then(redacted);
                });
            }),
        }
    }

    /// The secrets this sink redacts, when it has any (a terminal that shows the same stream
    /// redacts them too).
    pub fn secrets(&self) -> Option<&Arc<Secrets>> {
        self.redact.as_ref().map(RedactStream::secrets)
    }

    /// True once the head capture has seen its N complete lines (at once for N = 0); the caller
    /// then stops the command the way `head` stops a pipeline. False without a head capture.
    pub fn head_satisfied(&self) -> bool {
        self.committed
            .head
            .as_ref()
            .is_some_and(FirstLines::satisfied)
    }

    /// The first N lines (with their `\n`), when a head capture was asked for: all of the output
    /// when it has fewer lines. Never longer than `max_bytes`: a first line longer than that is
    /// cut at a character boundary (see [`OutputSink::head_truncated`]) and the capture still waits
    /// for N newlines. Complete after [`OutputSink::dump`], which commits an unfinished last line.
    pub fn head_text(&self) -> Option<&str> {
        self.committed
            .head
            .as_ref()
            .map(|head| std::str::from_utf8(head.text()).unwrap_or_default())
    }

    /// True when `max_bytes` cut the head capture short of its N lines.
    pub fn head_truncated(&self) -> bool {
        self.committed
            .head
            .as_ref()
            .is_some_and(FirstLines::truncated)
    }

    /// UTF-8 bytes of the sanitised output committed so far (all of it after `dump`).
    pub fn total_bytes(&self) -> u64 {
        self.committed.total_bytes
    }

    /// Lines of the sanitised output committed so far, by the line rule (a final
    /// `\n` does not start an empty line).
    pub fn total_lines(&self) -> u64 {
        self.committed.newlines
            + u64::from(self.committed.total_bytes > 0 && !self.committed.ends_with_newline)
    }

    /// Why spilling failed, when it did: the spill's id, the step that failed and the real I/O
    /// error (its kind, its OS code). The summary's `artifact_error` is this error's text.
    pub fn spill_error(&self) -> Option<&SpillError> {
        self.committed.spill_error.as_ref()
    }

    /// Ends the stream and reports it. The unfinished line is committed (unless a
    /// trailing `\r` discarded it), the spill is finished — or, when the tail never overflowed,
    /// its source [released](SpillSource::release) — and `output` is the kept tail. Calling it again reports the same stream
    /// again.
    pub fn dump(&mut self) -> OutputSummary {
        self.dump_with(&mut |_| {})
    }

    /// [`dump`](OutputSink::dump), handing the text the end of the stream commits (the
    /// unfinished line) to `on_text` first, as [`push_with`](OutputSink::push_with) does.
    pub fn dump_with(&mut self, on_text: &mut dyn FnMut(&str)) -> OutputSummary {
        if !self.finished {
            self.finished = true;
            let committed = &mut self.committed;
            match &mut self.redact {
                None => self.sanitizer.finish_bytes(&mut |bytes: &[u8]| {
                    committed.commit(bytes);
                    as_text(bytes, on_text);
                }),
                Some(redact) => {
                    let mut commit = |redacted: &[u8]| {
                        committed.commit(redacted);
                        as_text(redacted, on_text);
                    };
                    self.sanitizer
                        .finish_bytes(&mut |bytes: &[u8]| redact.push(bytes, &mut commit));
                    redact.finish(&mut commit);
                }
            }
            self.committed.end_spill();
        }
        let text = self.committed.ring.to_text();
        let output_bytes = text.len() as u64;
        let output_lines = count_lines(&text);
        OutputSummary {
            output: text,
            truncated: self.committed.total_bytes > output_bytes,
            total_lines: self.total_lines(),
            total_bytes: self.committed.total_bytes,
            output_lines,
            output_bytes,
            artifact_id: self.committed.artifact_id.clone(),
            artifact_error: self.committed.spill_error.as_ref().map(ToString::to_string),
        }
    }
}

impl fmt::Debug for OutputSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let spill = match &self.committed.spill {
            SpillState::None => "none",
            SpillState::Waiting(_) => "waiting",
            SpillState::Open { .. } => "open",
        };
        f.debug_struct("OutputSink")
            .field("max_bytes", &self.committed.max_bytes)
            .field("total_bytes", &self.committed.total_bytes)
            .field("total_lines", &self.total_lines())
            .field("spill", &spill)
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

enum SpillState {
    /// No spill given, or it is gone (finished, discarded, failed, or none could be made).
    None,
    /// Given and not needed yet: the source is opened at the first overflow.
    Waiting(Box<dyn SpillSource>),
    /// Receiving the stream; `batch` gathers small writes.
    Open {
        spill: Box<dyn Spill>,
        batch: Vec<u8>,
    },
}

/// What the sink keeps of the committed (sanitised) text: counts, tail, head, spill.
struct CommittedOutput {
    max_bytes: usize,
    total_bytes: u64,
    newlines: u64,
    ends_with_newline: bool,
    /// The tail. While the spill is open the tail is this ring followed by the unflushed
    /// batch: the ring is brought up to date once per flushed batch, not on every commit.
    ring: Ring,
    batch_bytes: usize,
    head: Option<FirstLines>,
    spill: SpillState,
    artifact_id: Option<String>,
    /// Why spilling stopped, when it failed; its text becomes `artifact_error`.
    spill_error: Option<SpillError>,
}

impl CommittedOutput {
    /// Takes a committed piece of sanitised text (well-formed UTF-8, whole characters).
    fn commit(&mut self, bytes: &[u8]) {
        let Some(&last) = bytes.last() else {
            return;
        };
        self.total_bytes += bytes.len() as u64;
        self.newlines += memchr::memchr_iter(b'\n', bytes).count() as u64;
        self.ends_with_newline = last == b'\n';
        if let Some(head) = &mut self.head {
            head.take(bytes);
        }
        if self.total_bytes > self.max_bytes as u64 {
            self.open_spill();
        }
        let SpillState::Open { spill, batch } = &mut self.spill else {
            self.ring.push(bytes);
            return;
        };
        if let Err(error) = write_batched(
            spill.as_mut(),
            batch,
            &mut self.ring,
            self.batch_bytes,
            bytes,
        ) {
            let id = spill.id().to_owned();
            self.fail(SpillError::Write { id, error });
        }
    }

    /// Opens the waiting source (at the first overflow) and writes the spill everything kept so
    /// far — the whole stream until now, all in the ring — straight from the ring, which stays
    /// the tail. A source that yields no spill leaves the sink without one, and without error.
    fn open_spill(&mut self) {
        if !matches!(self.spill, SpillState::Waiting(_)) {
            return;
        }
        let SpillState::Waiting(source) = std::mem::replace(&mut self.spill, SpillState::None)
        else {
            return;
        };
        let Some(mut spill) = source.open() else {
            return;
        };
        let (first, second) = self.ring.as_slices();
        let written = [first, second]
            .into_iter()
            .filter(|part| !part.is_empty())
            .try_for_each(|part| spill.write_all(part));
        match written {
            Ok(()) => {
                self.spill = SpillState::Open {
                    spill,
                    batch: Vec::with_capacity(self.batch_bytes),
                };
            }
            Err(error) => {
                let id = spill.id().to_owned();
                spill.discard();
                self.spill_error = Some(SpillError::Write { id, error });
            }
        }
    }

    /// Stops spilling for good: the partial file is discarded and the reason kept.
    fn fail(&mut self, error: SpillError) {
        match std::mem::replace(&mut self.spill, SpillState::None) {
            SpillState::None => {}
            SpillState::Waiting(source) => source.release(),
            SpillState::Open { spill, batch } => {
                // The failing paths have already moved the batch to the ring; stay safe anyway.
                self.ring.push(&batch);
                spill.discard();
            }
        }
        self.spill_error = Some(error);
    }

    /// At the end of the stream: finish an open spill, release an unused source.
    fn end_spill(&mut self) {
        match std::mem::replace(&mut self.spill, SpillState::None) {
            SpillState::None => {}
            SpillState::Waiting(source) => source.release(),
            SpillState::Open {
                mut spill,
                mut batch,
            } => {
                let id = spill.id().to_owned();
                let written = flush(spill.as_mut(), &mut batch, &mut self.ring).map_err(|error| {
                    SpillError::Write {
                        id: id.clone(),
                        error,
                    }
                });
                let finished = written.and_then(|()| {
                    spill.finish().map_err(|error| SpillError::Finish {
                        id: id.clone(),
                        error,
                    })
                });
                match finished {
                    Ok(()) => self.artifact_id = Some(id),
                    Err(error) => {
                        spill.discard();
                        self.spill_error = Some(error);
                    }
                }
            }
        }
    }
}

/// Appends `bytes` to the spill through `batch`: every write but the last is at least
/// `batch_bytes` long, and large pieces go straight from `bytes` without a copy. Whatever leaves
/// the batch (written or not) goes on to the ring, so that `ring ++ batch` stays the tail.
fn write_batched(
    spill: &mut dyn Spill,
    batch: &mut Vec<u8>,
    ring: &mut Ring,
    batch_bytes: usize,
    mut bytes: &[u8],
) -> io::Result<()> {
    if !batch.is_empty() || bytes.len() < batch_bytes {
        let take = (batch_bytes - batch.len()).min(bytes.len());
        batch.extend_from_slice(&bytes[..take]);
        bytes = &bytes[take..];
        if batch.len() < batch_bytes {
            return Ok(());
        }
        if let Err(error) = flush(spill, batch, ring) {
            ring.push(bytes);
            return Err(error);
        }
    }
    if bytes.len() >= batch_bytes {
        ring.push(bytes);
        spill.write_all(bytes)
    } else {
        batch.extend_from_slice(bytes);
        Ok(())
    }
}

/// Writes out the batch and moves it on to the ring (also when the write fails: the tail must
/// stay whole).
fn flush(spill: &mut dyn Spill, batch: &mut Vec<u8>, ring: &mut Ring) -> io::Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    let written = spill.write_all(batch);
    ring.push(batch);
    batch.clear();
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records writes; fails every write once `fail_after` bytes were accepted.
    #[derive(Default)]
    struct Seen {
        bytes: Vec<u8>,
        writes: Vec<usize>,
        discarded: bool,
    }

    #[derive(Clone, Default)]
    struct Record(std::sync::Arc<std::sync::Mutex<Seen>>);

    struct TestSpill {
        record: Record,
        fail_after: usize,
    }

    impl Spill for TestSpill {
        fn id(&self) -> &'static str {
            "1"
        }
        fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
            let mut record = self.record.0.lock().unwrap();
            if record.bytes.len() + bytes.len() > self.fail_after {
                return Err(io::Error::from_raw_os_error(28));
            }
            record.bytes.extend_from_slice(bytes);
            record.writes.push(bytes.len());
            Ok(())
        }
        fn finish(&mut self) -> io::Result<()> {
            Ok(())
        }
        fn discard(self: Box<Self>) {
            self.record.0.lock().unwrap().discarded = true;
        }
    }

    fn sink(max_bytes: usize, batch_bytes: usize, fail_after: usize) -> (OutputSink, Record) {
        let record = Record::default();
        let spill = TestSpill {
            record: record.clone(),
            fail_after,
        };
        let mut sink = OutputSink::new(SinkOptions {
            max_bytes,
            head_lines: None,
            spill: Some(Box::new(spill)),
            secrets: None,
        });
        sink.committed.batch_bytes = batch_bytes;
        (sink, record)
    }

    fn tail(text: &str, max_bytes: usize) -> &str {
        let mut start = text.len().saturating_sub(max_bytes);
        while !text.is_char_boundary(start) {
            start += 1;
        }
        &text[start..]
    }

    #[test]
    fn batches_are_full_except_the_first_and_the_last() {
        let (mut sink, record) = sink(100, 1_000, usize::MAX);
        let text = "0123456789\n".repeat(1_000);
        for piece in text.as_bytes().chunks(7) {
            sink.push(piece);
        }
        let summary = sink.dump();
        let record = record.0.lock().unwrap();
        assert_eq!(record.bytes, text.as_bytes());
        // First what the tail held at the overflow: 9 lines of 11 bytes.
        let (first, rest) = record.writes.split_first().unwrap();
        let (_, middle) = rest.split_last().unwrap();
        assert_eq!(*first, 99, "{:?}", record.writes);
        assert!(middle.len() >= 9, "{:?}", record.writes);
        assert!(
            middle.iter().all(|&len| len >= 1_000),
            "{:?}",
            record.writes
        );
        assert_eq!(summary.output, tail(&text, 100));
    }

    #[test]
    fn a_failed_spill_keeps_the_real_error_as_data() {
        let (mut sink, record) = sink(4, 1_000, 2);
        sink.push(b"0123456789\n");
        let summary = sink.dump();
        let error = sink.spill_error().expect("the spill failed");
        assert_eq!(error.id(), "1");
        assert_eq!(error.io_error().raw_os_error(), Some(28));
        assert!(matches!(error, SpillError::Write { .. }));
        assert!(std::error::Error::source(error).is_none());
        assert_eq!(summary.artifact_error, Some(error.to_string()));
        assert!(summary.artifact_id.is_none());
        assert!(record.0.lock().unwrap().discarded);
    }

    proptest::proptest! {
        /// The tail is right whether the spill succeeds or fails at any point, for batches
        /// smaller and larger than the tail and pieces of every size.
        #[test]
        fn tail_survives_batching_and_spill_failures(
            lines in proptest::collection::vec("[a-zé€]{0,30}\n?", 0..200),
            cuts in proptest::collection::vec(1usize..500, 1..20),
            max_bytes in 0usize..300,
            batch_bytes in 1usize..400,
            fail_after in proptest::option::of(0usize..3_000),
        ) {
            let text: String = lines.concat();
            let (mut sink, record) = sink(max_bytes, batch_bytes, fail_after.unwrap_or(usize::MAX));
            let mut rest = text.as_bytes();
            for cut in cuts.iter().cycle() {
                if rest.is_empty() {
                    break;
                }
                let (piece, after) = rest.split_at((*cut).min(rest.len()));
                sink.push(piece);
                rest = after;
            }
            let summary = sink.dump();
            proptest::prop_assert_eq!(summary.output.as_str(), tail(&text, max_bytes));
            proptest::prop_assert_eq!(summary.total_bytes, text.len() as u64);
            let record = record.0.lock().unwrap();
            if summary.artifact_id.is_some() {
                proptest::prop_assert_eq!(&record.bytes, text.as_bytes());
                proptest::prop_assert!(text.len() > max_bytes);
            } else if text.len() > max_bytes {
                proptest::prop_assert!(summary.artifact_error.is_some());
                proptest::prop_assert!(record.discarded, "discarded");
            } else {
                proptest::prop_assert!(record.discarded && record.bytes.is_empty());
            }
        }
    }
}
