//! Streaming line-range reads.

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::PathBuf;

/// Read buffer: large enough that counting the lines of a big artifact is I/O bound.
const READ_BUFFER_BYTES: usize = 64 * 1024;

/// Lines of an artifact, as returned by [`ArtifactStore::read`](crate::ArtifactStore::read)
/// (the `data` of the RPC `read_artifact` command).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactText {
    /// The requested lines, each with its `\n` (the last line of the file may have none).
    pub text: String,
    /// Lines of the whole artifact: `\n` ends a line; a final `\n` does not start an empty one.
    pub total_lines: u64,
    /// The artifact file.
    pub path: PathBuf,
}

/// Lines `first_line ..= first_line + limit - 1` (1-based, `first_line >= 1`) of `file`, and the
/// number of lines of the whole file, reading it once in bounded chunks.
pub(crate) fn read_lines(
    file: File,
    first_line: u64,
    limit: Option<u64>,
) -> io::Result<(String, u64)> {
    // Lines in [first_line, end_line) are kept; `None` means to the end.
    let end_line = limit.map(|limit| first_line.saturating_add(limit));
    let mut reader = BufReader::with_capacity(READ_BUFFER_BYTES, file);
    let mut kept = Vec::new();
    // The line the next byte belongs to, and whether the last byte read ended a line.
    let mut line: u64 = 1;
    let mut at_line_start = true;
    loop {
        let chunk = match reader.fill_buf() {
            Ok([]) => break,
            Ok(chunk) => chunk,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        let len = chunk.len();
        let past_range = end_line.is_some_and(|end| line >= end);
        if past_range {
            // Only counting is left to do.
            line += memchr::memchr_iter(b'\n', chunk).count() as u64;
        } else {
            let mut rest = chunk;
            while !rest.is_empty() {
                let (segment, ends_line) = match memchr::memchr(b'\n', rest) {
                    Some(at) => (&rest[..=at], true),
                    None => (rest, false),
                };
                let in_range = line >= first_line && end_line.is_none_or(|end| line < end);
                if in_range {
                    kept.extend_from_slice(segment);
                }
                if ends_line {
                    line += 1;
                }
                rest = &rest[segment.len()..];
            }
        }
        at_line_start = chunk[len - 1] == b'\n';
        reader.consume(len);
    }
    // `line` is one past the last completed line; an unterminated last line also counts.
    let total_lines = if at_line_start { line - 1 } else { line };
    let text = match String::from_utf8(kept) {
        Ok(text) => text,
        Err(err) => String::from_utf8_lossy(err.as_bytes()).into_owned(),
    };
    Ok((text, total_lines))
}
