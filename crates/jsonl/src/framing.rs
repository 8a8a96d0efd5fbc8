//! JSON-lines framing, the one way every surface and the far-side client cut their input into
//! lines: each use sets its own longest line, and a line over it is skipped, never buffered
//! (only its length and first bytes are kept, for the error that answers it).

use std::io::{self, BufRead};

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The longest line a server takes from a client (the RPC and MCP servers; without its
/// `\n`): 32 MiB.
pub const MAX_REQUEST_LINE_BYTES: usize = 32 * 1024 * 1024;

/// How much of a line over the limit is kept: enough for the `id` its failure echoes, which a
/// client writes near the start.
pub(crate) const OVERSIZED_HEAD_BYTES: usize = 4096;

/// One line of input, as cut by a [`LineSplitter`].
#[derive(Debug, PartialEq, Eq)]
pub enum InputLine {
    /// A line (without its `\n`) of at most the limit.
    Complete(Vec<u8>),
    /// A line longer than the limit; its bytes were skipped, not kept, but for its first
    /// 4 KiB (enough for the `id` its failure echoes).
    Oversized {
        /// Its length without the `\n`.
        bytes: u64,
        /// Its first bytes (to read its `id` from).
        head: Vec<u8>,
    },
}

/// Cuts a byte stream, pushed in chunks of any size, into [`InputLine`]s. A line over the limit is
/// skipped up to its `\n` while only its length (and its first bytes) are kept.
#[derive(Debug)]
pub struct LineSplitter {
    max_bytes: usize,
    buf: Vec<u8>,
    /// The length so far of a line found to be too long.
    skipped: Option<u64>,
    /// The first bytes of a line found to be too long.
    head: Vec<u8>,
}

impl LineSplitter {
    /// A splitter of lines of at most `max_bytes` bytes.
    pub fn new(max_bytes: usize) -> Self {
        Self {
            max_bytes,
            buf: Vec::new(),
            skipped: None,
            head: Vec::new(),
        }
    }

    /// Takes `chunk` up to and including its first `\n`. Returns how many bytes were taken
    /// and, when they ended a line, that line.
    pub fn push(&mut self, chunk: &[u8]) -> (usize, Option<InputLine>) {
        let (part, consumed, ends_line) = match memchr::memchr(b'\n', chunk) {
            Some(at) => (&chunk[..at], at + 1, true),
            None => (chunk, chunk.len(), false),
        };
        if let Some(bytes) = self.skipped.as_mut() {
            *bytes += part.len() as u64;
            self.keep_head(part);
        } else if self.buf.len() + part.len() > self.max_bytes {
            self.skipped = Some((self.buf.len() + part.len()) as u64);
            let buf = std::mem::take(&mut self.buf);
            self.keep_head(&buf[..buf.len().min(OVERSIZED_HEAD_BYTES)]);
            self.keep_head(part);
        } else {
            self.buf.extend_from_slice(part);
        }
        (consumed, ends_line.then(|| self.take()))
    }

    /// Keeps the start of `part` while the head of a line over the limit is not complete.
    fn keep_head(&mut self, part: &[u8]) {
        let room = OVERSIZED_HEAD_BYTES.saturating_sub(self.head.len());
        self.head.extend_from_slice(&part[..part.len().min(room)]);
    }

    /// At end of input: the last line, if it did not end with `\n`.
    pub fn finish(&mut self) -> Option<InputLine> {
        (self.skipped.is_some() || !self.buf.is_empty()).then(|| self.take())
    }

    /// The line ended: hands over its bytes (the buffer goes with them, so one huge request does
    /// not keep its memory for the rest of the session).
    fn take(&mut self) -> InputLine {
        match self.skipped.take() {
            Some(bytes) => InputLine::Oversized {
                bytes,
                head: std::mem::take(&mut self.head),
            },
            None => InputLine::Complete(std::mem::take(&mut self.buf)),
        }
    }
}

/// Reads [`InputLine`]s from a [`BufRead`] (a [`LineSplitter`] over blocking reads). The last line may
/// end at end of input without a `\n`.
pub struct LineReader<R> {
    inner: R,
    splitter: LineSplitter,
}

impl<R: BufRead> LineReader<R> {
    /// A reader of lines of at most `max_bytes` bytes.
    pub fn new(inner: R, max_bytes: usize) -> Self {
        Self {
            inner,
            splitter: LineSplitter::new(max_bytes),
        }
    }

    /// The next line, or `None` at end of input.
    pub fn next_line(&mut self) -> io::Result<Option<InputLine>> {
        loop {
            let chunk = match self.inner.fill_buf() {
                Ok(chunk) => chunk,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err),
            };
            if chunk.is_empty() {
                return Ok(self.splitter.finish());
            }
            let (consumed, line) = self.splitter.push(chunk);
            self.inner.consume(consumed);
            if line.is_some() {
                return Ok(line);
            }
        }
    }
}

/// Reads [`InputLine`]s from an [`AsyncBufRead`] (a [`LineSplitter`] over async reads). The
/// last line may end at end of input without a `\n`.
pub struct AsyncLineReader<R> {
    inner: R,
    splitter: LineSplitter,
}

impl<R: AsyncBufRead + Unpin> AsyncLineReader<R> {
    /// A reader of lines of at most `max_bytes` bytes.
    pub fn new(inner: R, max_bytes: usize) -> Self {
        Self {
            inner,
            splitter: LineSplitter::new(max_bytes),
        }
    }

    /// The next line, or `None` at end of input. Cancel-safe: what was read of a line when the
    /// future is dropped is kept for the next call.
    pub async fn next_line(&mut self) -> io::Result<Option<InputLine>> {
        loop {
            let chunk = match self.inner.fill_buf().await {
                Ok(chunk) => chunk,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err),
            };
            if chunk.is_empty() {
                return Ok(self.splitter.finish());
            }
            let (consumed, line) = self.splitter.push(chunk);
            self.inner.consume(consumed);
            if line.is_some() {
                return Ok(line);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufReader, Cursor, Read};

    use super::*;

    fn lines_of(input: &[u8], max: usize, capacity: usize) -> Vec<InputLine> {
        let mut reader =
            LineReader::new(BufReader::with_capacity(capacity, Cursor::new(input)), max);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().expect("in-memory read") {
            out.push(line);
        }
        out
    }

    fn line(text: &str) -> InputLine {
        InputLine::Complete(text.as_bytes().to_vec())
    }

    #[test]
    fn splits_at_newlines_whatever_the_buffer_size() {
        for capacity in [1, 2, 3, 7, 64] {
            assert_eq!(
                lines_of(b"ab\n\ncde\nf", 10, capacity),
                [line("ab"), line(""), line("cde"), line("f")],
                "capacity {capacity}"
            );
        }
    }

    #[test]
    fn a_final_newline_starts_no_empty_line() {
        assert_eq!(lines_of(b"x\n", 10, 4), [line("x")]);
        assert!(lines_of(b"", 10, 4).is_empty());
    }

    #[test]
    fn the_limit_is_inclusive() {
        assert_eq!(lines_of(b"12345\n", 5, 2), [line("12345")]);
        assert_eq!(
            lines_of(b"123456\nok\n", 5, 2),
            [
                InputLine::Oversized {
                    bytes: 6,
                    head: b"123456".to_vec()
                },
                line("ok")
            ]
        );
    }

    #[test]
    fn an_overlong_line_at_end_of_input_is_reported() {
        assert_eq!(
            lines_of(b"ok\n1234567", 5, 3),
            [
                line("ok"),
                InputLine::Oversized {
                    bytes: 7,
                    head: b"1234567".to_vec()
                }
            ]
        );
    }

    /// A source that yields `len` bytes of `x` then `\n` and a short line, without holding them.
    struct Generated {
        left: u64,
        tail: Cursor<&'static [u8]>,
    }

    impl Read for Generated {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            if self.left == 0 {
                return self.tail.read(out);
            }
            let n = out
                .len()
                .min(usize::try_from(self.left).unwrap_or(usize::MAX));
            out[..n].fill(b'x');
            self.left -= n as u64;
            Ok(n)
        }
    }

    #[test]
    fn an_overlong_line_is_skipped_without_being_buffered() {
        let len = MAX_REQUEST_LINE_BYTES as u64 * 3 + 5;
        let source = Generated {
            left: len,
            tail: Cursor::new(b"\n{}\n"),
        };
        let mut reader = LineReader::new(
            BufReader::with_capacity(64 * 1024, source),
            MAX_REQUEST_LINE_BYTES,
        );
        assert_eq!(
            reader.next_line().expect("read"),
            Some(InputLine::Oversized {
                bytes: len,
                head: vec![b'x'; OVERSIZED_HEAD_BYTES]
            })
        );
        // Once the limit is passed the buffer is released and the rest is only counted.
        assert_eq!(reader.splitter.buf.capacity(), 0);
        assert_eq!(reader.next_line().expect("read"), Some(line("{}")));
        assert_eq!(reader.next_line().expect("read"), None);
    }

    #[tokio::test]
    async fn the_async_reader_cuts_the_same_lines() {
        for capacity in [1, 3, 64] {
            let input: &[u8] = b"ab\n\n1234567\nf";
            let mut reader =
                AsyncLineReader::new(tokio::io::BufReader::with_capacity(capacity, input), 5);
            let mut out = Vec::new();
            while let Some(line) = reader.next_line().await.expect("in-memory read") {
                out.push(line);
            }
            assert_eq!(
                out,
                [
                    line("ab"),
                    line(""),
                    InputLine::Oversized {
                        bytes: 7,
                        head: b"1234567".to_vec()
                    },
                    line("f")
                ],
                "capacity {capacity}"
            );
        }
    }
}
