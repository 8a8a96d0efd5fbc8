//! `TailBuffer`: a bounded tail of sanitised text for live updates.

use crate::ring::Ring;

/// The last `limit` bytes of the text pushed into it, for throttled live updates of a running
/// command: the caller pushes sanitised text as it arrives and takes a
/// [`snapshot`](TailBuffer::snapshot) at most every so often, instead of copying the whole
/// output window on every chunk.
///
/// Memory is bounded by `limit` whatever is pushed; a snapshot starts at a character boundary,
/// so it may hold up to three bytes fewer than `limit`.
///
/// ```
/// use agentsh_output_sink::TailBuffer;
///
/// let mut tail = TailBuffer::new(8);
/// tail.push("line 1\n");
/// tail.push("line 2\n");
/// assert_eq!(tail.snapshot(), "\nline 2\n");
/// assert_eq!(tail.total_bytes(), 14);
/// ```
#[derive(Debug)]
pub struct TailBuffer {
    ring: Ring,
    limit: usize,
    total_bytes: u64,
}

impl TailBuffer {
    /// An empty tail that keeps at most `limit` bytes.
    pub fn new(limit: usize) -> Self {
        Self {
            ring: Ring::new(limit),
            limit,
            total_bytes: 0,
        }
    }

    /// Appends text; only the last `limit` bytes are kept.
    pub fn push(&mut self, text: &str) {
        self.total_bytes += text.len() as u64;
        self.ring.push(text.as_bytes());
    }

    /// The kept text: the last at most `limit` bytes pushed, starting at a character boundary.
    pub fn snapshot(&self) -> String {
        self.ring.to_text()
    }

    /// The bound given to [`TailBuffer::new`].
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes pushed since creation, kept or not (changes whenever new text arrives, so a caller
    /// can skip a snapshot when nothing changed).
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// True when nothing has been pushed.
    pub fn is_empty(&self) -> bool {
        self.total_bytes == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_limit_bytes() {
        let mut tail = TailBuffer::new(10);
        assert!(tail.is_empty());
        assert_eq!(tail.snapshot(), "");
        tail.push("hello ");
        assert_eq!(tail.snapshot(), "hello ");
        tail.push("world, again\n");
        // "hello world, again\n" is 19 bytes; the last 10:
        assert_eq!(tail.snapshot(), "ld, again\n");
        assert_eq!(tail.total_bytes(), 19);
        assert_eq!(tail.limit(), 10);
    }

    #[test]
    fn snapshot_starts_at_a_character_boundary() {
        let mut tail = TailBuffer::new(5);
        tail.push("añ€"); // a, ñ (2 bytes), € (3 bytes): the last 5 bytes are ñ€
        assert_eq!(tail.snapshot(), "ñ€");
        tail.push("b"); // the last 5 bytes start inside ñ
        assert_eq!(tail.snapshot(), "€b");
    }

    #[test]
    fn zero_limit_keeps_nothing_but_counts() {
        let mut tail = TailBuffer::new(0);
        tail.push("abc");
        assert_eq!(tail.snapshot(), "");
        assert_eq!(tail.total_bytes(), 3);
        assert!(!tail.is_empty());
    }
}
