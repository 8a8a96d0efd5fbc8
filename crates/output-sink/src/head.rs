//! The head capture: the first N lines of the sanitised output, bounded in bytes.

use crate::ring::reserve_bounded;
use crate::utf8;

/// Keeps the first `lines` lines of the committed text, never more than `max_bytes` bytes of
/// them, and says when `lines` complete lines have been seen.
///
/// A huge line does not make it grow: once `max_bytes` is reached, the text is cut at a
/// character boundary, nothing more is kept ([`FirstLines::truncated`]) and the capture goes on
/// counting newlines, so it is still satisfied after exactly `lines` complete lines — as `head`
/// is, which also reads a long line to its end.
#[derive(Debug)]
pub(crate) struct FirstLines {
    wanted: u64,
    seen: u64,
    max_bytes: usize,
    text: Vec<u8>,
    truncated: bool,
}

impl FirstLines {
    pub(crate) fn new(lines: u32, max_bytes: usize) -> Self {
        Self {
            wanted: u64::from(lines),
            seen: 0,
            max_bytes,
            text: Vec::new(),
            truncated: false,
        }
    }

    /// True once `lines` complete lines have been seen (at once for zero lines).
    pub(crate) fn satisfied(&self) -> bool {
        self.seen >= self.wanted
    }

    /// True when the byte bound left part of the first lines out of [`FirstLines::text`].
    pub(crate) fn truncated(&self) -> bool {
        self.truncated
    }

    /// The captured text: whole characters of well-formed UTF-8.
    pub(crate) fn text(&self) -> &[u8] {
        &self.text
    }

    /// Takes the next committed piece of text.
    pub(crate) fn take(&mut self, bytes: &[u8]) {
        if self.satisfied() {
            return;
        }
        let needed = self.wanted - self.seen;
        let mut part = bytes;
        let mut found = 0;
        for newline in memchr::memchr_iter(b'\n', bytes) {
            found += 1;
            if found == needed {
                part = &bytes[..=newline];
                break;
            }
        }
        self.seen += found;
        if self.truncated {
            return;
        }
        let room = self.max_bytes - self.text.len();
        if part.len() > room {
            let cut = utf8::floor_boundary(part, room);
            part = &part[..cut];
            self.truncated = true;
        }
        reserve_bounded(&mut self.text, part.len(), self.max_bytes);
        self.text.extend_from_slice(part);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(head: &FirstLines) -> &str {
        std::str::from_utf8(head.text()).unwrap()
    }

    #[test]
    fn stops_after_the_nth_newline_across_pieces() {
        let mut head = FirstLines::new(3, 1_000);
        head.take(b"one\ntw");
        assert!(!head.satisfied());
        head.take(b"o\nthree\nfour\n");
        assert!(head.satisfied());
        assert_eq!(text(&head), "one\ntwo\nthree\n");
        head.take(b"five\n");
        assert_eq!(text(&head), "one\ntwo\nthree\n");
        assert!(!head.truncated());
    }

    #[test]
    fn zero_lines_is_satisfied_at_once() {
        let mut head = FirstLines::new(0, 1_000);
        assert!(head.satisfied());
        head.take(b"x\n");
        assert_eq!(text(&head), "");
    }

    #[test]
    fn a_huge_line_is_cut_at_the_byte_bound_and_counting_goes_on() {
        let mut head = FirstLines::new(2, 10);
        head.take("ab€€€€".as_bytes()); // 2 + 12 bytes, cut after 2 + 2 × 3 = 8 bytes
        assert_eq!(text(&head), "ab€€");
        assert!(head.truncated());
        head.take(b"\nsecond");
        assert!(!head.satisfied());
        head.take(b" line\n");
        assert!(head.satisfied());
        assert_eq!(text(&head), "ab€€");
    }
}
