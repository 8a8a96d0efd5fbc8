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
use agentsh_protocol::{OutputSummary, count_lines};
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
        }
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
        self.tail.push(text);
    }

    /// Bytes of text so far.
    pub(crate) fn total_bytes(&self) -> u64 {
        self.tail.total_bytes()
    }

    /// Lines so far (SPEC §1 rule).
    pub(crate) fn total_lines(&self) -> u64 {
        self.newlines + u64::from(self.total_bytes() > 0 && !self.ends_with_newline)
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
            let mut cut = text.len() - to_index(max_bytes);
            while !text.is_char_boundary(cut) {
                cut += 1;
            }
            text = &text[cut..];
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
        let snapshot = self.tail.snapshot();
        let mut cut = snapshot.len().saturating_sub(to_index(max_bytes));
        while !snapshot.is_char_boundary(cut) {
            cut += 1;
        }
        snapshot[cut..].to_owned()
    }

    /// Whether a complete line from the `until` position on matches `pattern`. Lines that left
    /// the in-memory tail are read from the log file.
    pub(crate) fn has_match(&self, pattern: &Regex) -> bool {
        let total = self.total_bytes();
        let snapshot = self.tail.snapshot();
        let kept_from = total - snapshot.len() as u64;
        if self.until_from < kept_from
            && let Some(log) = self.artifact_file()
            && file_has_match(&log.path, self.until_from, kept_from, pattern)
        {
            return true;
        }
        let start = to_index(self.until_from.max(kept_from) - kept_from);
        let mut text = &snapshot[start..];
        if self.until_from < kept_from {
            // The tail starts inside a line already looked at in the file.
            text = text.split_once('\n').map_or("", |(_, rest)| rest);
        }
        // Complete lines only.
        let complete = text.rfind('\n').map_or("", |end| &text[..end]);
        complete.split('\n').any(|line| pattern.is_match(line))
    }
}

fn to_index(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// Whether a line of the log file that starts in `[from, to)` matches.
fn file_has_match(path: &Path, from: u64, to: u64, pattern: &Regex) -> bool {
    let Ok(mut file) = std::fs::File::open(path) else {
        return false;
    };
    if file.seek(SeekFrom::Start(from)).is_err() {
        return false;
    }
    let mut reader = BufReader::new(file.take(to.saturating_sub(from) + 64 * 1024));
    let mut line = Vec::new();
    let mut at = from;
    while at < to {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return false,
            Ok(n) => {
                at += n as u64;
                if line.last() == Some(&b'\n') {
                    line.pop();
                    if pattern.is_match(&String::from_utf8_lossy(&line)) {
                        return true;
                    }
                }
            }
        }
    }
    false
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
    fn until_sees_shown_lines_but_not_returned_ones() {
        let mut log = JobLog::new();
        log.push("Listening on 8000\n");
        let listening = Regex::new("Listening").unwrap();
        // The starting result showed it; job_output has not returned it.
        log.take_new(1000, false);
        assert!(log.has_match(&listening));
        log.take_new(1000, true);
        assert!(!log.has_match(&listening));
        // An unfinished line does not count.
        log.push("Listening again");
        assert!(!log.has_match(&listening));
        log.push("\n");
        assert!(log.has_match(&listening));
    }
}
