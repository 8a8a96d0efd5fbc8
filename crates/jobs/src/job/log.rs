//! What a job printed, as its tools read it: the sanitised text the job's sink commits, kept as a
//! bounded tail with exact counts, plus two positions — how far results have shown it, and from
//! where `until` looks for lines no `job_output` returned.
//!
//! The whole text is in the job's log artifact (the sink spills every byte there, up to
//! `jobs.max_log_bytes`); the tail here is at least as long as the sink's unflushed spill batch,
//! so whatever has left the tail is in the file.

use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agentsh_output_sink::TailBuffer;
use agentsh_process::sandbox::SandboxSpec;
use agentsh_protocol::{OutputSummary, count_lines, tail_of};
use agentsh_sandbox::DenialWatch;
use regex::Regex;

/// Bytes of text a job keeps in memory: more than the sink's spill batch (256 KiB), so every
/// byte that left it is in the log file.
pub(crate) const JOB_TAIL_BYTES: usize = 512 * 1024;

/// A job's text and reading positions.
pub(crate) struct JobLog {
    tail: TailBuffer,
    newlines: u64,
    ends_with_newline: bool,
    /// Bytes results have shown (the starting result, `job_output`, `job_input`).
    shown: u64,
    /// Where `until` starts looking: after the lines the last `job_output` returned.
    until_from: u64,
    /// The log artifact, once reserved (shared with the spill that reserves it on overflow).
    pub(crate) artifact: Arc<Mutex<Option<LogFile>>>,
    /// A sandboxed job's watch for denials in its whole stream.
    denials: Option<DenialWatch>,
}

/// The job's log artifact.
#[derive(Clone)]
pub(crate) struct LogFile {
    pub(crate) id: String,
    pub(crate) path: PathBuf,
}

/// New text for a result, as an [`OutputSummary`] over the whole log: `output` is the new text
/// (its last `max_bytes` when longer, `truncated` then), counts are the whole log's.
pub(crate) struct NewText {
    pub(crate) summary: OutputSummary,
    /// Nothing new at all.
    pub(crate) empty: bool,
}

impl JobLog {
    pub(crate) fn new() -> Self {
        Self {
            tail: TailBuffer::new(JOB_TAIL_BYTES),
            newlines: 0,
            ends_with_newline: false,
            shown: 0,
            until_from: 0,
            artifact: Arc::default(),
            denials: None,
        }
    }

    /// The log of a job run under `sandbox` (none: nothing to watch): its stream is watched
    /// for denials, for [`denial_line`](Self::denial_line).
    pub(crate) fn watching_denials(mut self, sandbox: Option<&SandboxSpec>) -> Self {
        self.denials = sandbox.cloned().map(DenialWatch::new);
        self
    }

    /// The sandbox line for a result about the job, when it ran sandboxed, `failed`
    /// (ended with a non-zero or no exit status, or killed) and any of its output so far shows
    /// a denial.
    pub(crate) fn denial_line(&self, failed: bool, blocked: &[String]) -> Option<String> {
        self.denials.as_ref()?.line(failed, blocked)
    }

    /// The log artifact, once reserved.
    pub(crate) fn artifact_file(&self) -> Option<LogFile> {
        self.artifact
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Takes a piece of committed text.
    pub(crate) fn push(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.newlines += memchr::memchr_iter(b'\n', text.as_bytes()).count() as u64;
        self.ends_with_newline = text.ends_with('\n');
        if let Some(denials) = &mut self.denials {
            denials.push(text);
        }
        self.tail.push(text);
    }

    /// Bytes of text so far.
    pub(crate) fn total_bytes(&self) -> u64 {
        self.tail.total_bytes()
    }

    /// Lines so far (the line rule).
    pub(crate) fn total_lines(&self) -> u64 {
        self.newlines + u64::from(self.total_bytes() > 0 && !self.ends_with_newline)
    }

    /// No result has shown any of the output yet.
    pub(crate) fn nothing_shown(&self) -> bool {
        self.shown == 0
    }

    /// The text no result has shown, bounded by `max_bytes`, and marks it shown; with
    /// `returned_by_output`, `until` will look after it from now on.
    pub(crate) fn take_new(&mut self, max_bytes: u64, returned_by_output: bool) -> NewText {
        let total = self.total_bytes();
        let snapshot = self.tail.snapshot();
        let kept_from = total - snapshot.len() as u64;
        let new_bytes = total - self.shown;
        let start = self.shown.max(kept_from);
        let mut text = &snapshot[to_index(start - kept_from)..];
        let mut truncated = self.shown < kept_from;
        if text.len() as u64 > max_bytes {
            text = tail_of(text, to_index(max_bytes));
            truncated = true;
        }
        self.shown = total;
        if returned_by_output {
            self.until_from = total;
        }
        NewText {
            summary: OutputSummary {
                output: text.to_owned(),
                truncated,
                total_lines: self.total_lines(),
                total_bytes: total,
                output_lines: count_lines(text),
                output_bytes: text.len() as u64,
                artifact_id: self.artifact_file().map(|log| log.id),
                artifact_error: None,
            },
            empty: new_bytes == 0,
        }
    }

    /// The last at most `max_bytes` of the text (for live updates), from a character boundary.
    pub(crate) fn tail_text(&self, max_bytes: u64) -> String {
        tail_of(&self.tail.snapshot(), to_index(max_bytes)).to_owned()
    }

    /// The last whole lines of the text that fit in `max_bytes` (when the last line alone is
    /// longer, its last `max_bytes` from a character boundary), for a UI's look at the job.
    /// Takes `&self`: neither reading position moves.
    pub(crate) fn last_lines(&self, max_bytes: usize) -> String {
        let snapshot = self.tail.snapshot();
        let kept_from = self.total_bytes() - snapshot.len() as u64;
        let text = tail_of(&snapshot, max_bytes);
        let cut = snapshot.len() - text.len();
        let at_line_start = if cut == 0 {
            kept_from == 0
        } else {
            snapshot.as_bytes()[cut - 1] == b'\n'
        };
        let text = match text.find('\n') {
            // Drop the line the cut went into, unless nothing else is left.
            Some(end) if !at_line_start && end + 1 < text.len() => &text[end + 1..],
            _ => text,
        };
        text.to_owned()
    }

    /// Whether a complete line from the `until` position on matches `pattern`. Lines that left
    /// the in-memory tail are read from the log file. `from` carries where the last look ended
    /// (a line start, 0 at first): a waiting `job_output` looks at each line once, not at the
    /// whole backlog on every wake-up.
    pub(crate) fn has_match(&self, pattern: &Regex, from: &mut u64) -> bool {
        let total = self.total_bytes();
        let snapshot = self.tail.snapshot();
        let kept_from = total - snapshot.len() as u64;
        let mut at = (*from).max(self.until_from);
        if at < kept_from
            && let Some(log) = self.artifact_file()
        {
            let (found, next) = file_has_match(&log.path, at, kept_from, pattern);
            if found {
                return true;
            }
            at = next;
        }
        let mut text = &snapshot[to_index(at.saturating_sub(kept_from))..];
        let mut offset = at.max(kept_from);
        if at < kept_from {
            // The tail starts inside a line the file could not give whole: skip its end.
            let skip = text.find('\n').map_or(text.len(), |end| end + 1);
            text = &text[skip..];
            offset += skip as u64;
        }
        // Complete lines only.
        while let Some(end) = text.find('\n') {
            if pattern.is_match(&text[..end]) {
                return true;
            }
            text = &text[end + 1..];
            offset += end as u64 + 1;
        }
        *from = offset;
        false
    }
}

fn to_index(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// Whether a complete line of the log file that starts in `[from, to)` matches (`from` is a
/// line start); also where the lines read end (the start of the first line not read whole).
fn file_has_match(path: &Path, from: u64, to: u64, pattern: &Regex) -> (bool, u64) {
    let Ok(mut file) = std::fs::File::open(path) else {
        return (false, from);
    };
    if file.seek(SeekFrom::Start(from)).is_err() {
        return (false, from);
    }
    let mut reader = BufReader::new(file.take(to.saturating_sub(from) + 64 * 1024));
    let mut line = Vec::new();
    let mut at = from;
    while at < to {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(n) if n > 0 && line.last() == Some(&b'\n') => {
                at += n as u64;
                line.pop();
                if pattern.is_match(&String::from_utf8_lossy(&line)) {
                    return (true, at);
                }
            }
            // The end of what was written, or a line longer than the look-ahead.
            _ => break,
        }
    }
    (false, at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_text_is_shown_once_with_whole_log_counts() {
        let mut log = JobLog::new();
        log.push("a\nb\n");
        let first = log.take_new(1000, false);
        assert_eq!(first.summary.output, "a\nb\n");
        assert!(!first.empty && !first.summary.truncated);
        assert!(log.take_new(1000, false).empty);
        log.push("c\nd\ne\n");
        let next = log.take_new(4, true);
        assert_eq!(next.summary.output, "d\ne\n");
        assert!(next.summary.truncated);
        assert_eq!(
            (next.summary.total_lines, next.summary.total_bytes),
            (5, 10)
        );
    }

    #[test]
    fn last_lines_are_whole_lines_within_the_bound_and_move_nothing() {
        let mut log = JobLog::new();
        assert_eq!(log.last_lines(100), "");
        log.push("one\ntwo\nthree\n");
        assert_eq!(log.last_lines(100), "one\ntwo\nthree\n");
        // 9 bytes start inside `two`: whole lines only.
        assert_eq!(log.last_lines(9), "three\n");
        // Exactly at a line start.
        assert_eq!(log.last_lines(10), "two\nthree\n");
        // The last line alone is longer than the bound: its end.
        assert_eq!(log.last_lines(3), "ee\n");
        log.push("unfinished");
        assert_eq!(log.last_lines(14), "unfinished");
        assert_eq!(log.last_lines(16), "three\nunfinished");
        assert_eq!(log.last_lines(17), "three\nunfinished");
        // Nothing was marked shown, and `until` still looks from the start.
        let all = log.take_new(1000, false);
        assert_eq!(all.summary.output, "one\ntwo\nthree\nunfinished");
        assert!(log.has_match(&Regex::new("^one$").unwrap(), &mut 0));
    }

    #[test]
    fn until_reads_lines_that_left_the_tail_from_the_log_file_once() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("1.bash.log");
        let mut text = String::from("Listening on 8000\n");
        let filler = "x".repeat(99) + "\n";
        while text.len() < 2 * JOB_TAIL_BYTES {
            text.push_str(&filler);
        }
        std::fs::write(&path, &text).expect("log");
        let mut log = JobLog::new();
        *log.artifact.lock().expect("lock") = Some(LogFile {
            id: "1".into(),
            path,
        });
        log.push(&text);
        let listening = Regex::new("^Listening").unwrap();
        // Only in the file now.
        assert!(!log.tail.snapshot().contains("Listening"));
        assert!(log.has_match(&listening, &mut 0));
        // No match: the look ends at the end of the last whole line, and the next one starts
        // there (nothing is looked at twice).
        let nothing = Regex::new("^never").unwrap();
        let mut from = 0;
        assert!(!log.has_match(&nothing, &mut from));
        assert_eq!(from, log.total_bytes());
        log.push("never mind\n");
        assert!(log.has_match(&nothing, &mut from));
    }

    #[test]
    fn until_sees_shown_lines_but_not_returned_ones() {
        let mut log = JobLog::new();
        log.push("Listening on 8000\n");
        let listening = Regex::new("Listening").unwrap();
        // The starting result showed it; job_output has not returned it.
        log.take_new(1000, false);
        assert!(log.has_match(&listening, &mut 0));
        log.take_new(1000, true);
        let mut from = 0;
        assert!(!log.has_match(&listening, &mut from));
        // An unfinished line does not count, and is looked at again once it ends.
        log.push("Listening again");
        assert!(!log.has_match(&listening, &mut from));
        log.push("\n");
        assert!(log.has_match(&listening, &mut from));
    }
}
