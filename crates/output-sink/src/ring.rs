//! A byte ring that keeps the last `capacity` bytes pushed into it.

use crate::utf8;

/// Keeps the last `capacity` bytes of everything pushed. Storage grows with use and never
/// beyond `capacity`, so a small output costs little and a huge one costs `capacity`.
#[derive(Debug)]
pub(crate) struct Ring {
    capacity: usize,
    /// `buffer[start..]` then `buffer[..start]` once full; `buffer` in order before.
    buffer: Vec<u8>,
    start: usize,
}

impl Ring {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            capacity,
            buffer: Vec::new(),
            start: 0,
        }
    }

    /// Bytes currently kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.buffer.len()
    }

    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        if self.capacity == 0 {
            return;
        }
        if bytes.len() >= self.capacity {
            // Only the last `capacity` bytes survive.
            bytes = &bytes[bytes.len() - self.capacity..];
            self.buffer.clear();
            self.buffer.reserve_exact(self.capacity);
            self.buffer.extend_from_slice(bytes);
            self.start = 0;
            return;
        }
        if self.buffer.len() < self.capacity {
            let fill = (self.capacity - self.buffer.len()).min(bytes.len());
            reserve_bounded(&mut self.buffer, fill, self.capacity);
            self.buffer.extend_from_slice(&bytes[..fill]);
            bytes = &bytes[fill..];
        }
        // Full: overwrite the oldest bytes (at most two copies, as bytes.len() < capacity).
        while !bytes.is_empty() {
            let span = (self.capacity - self.start).min(bytes.len());
            self.buffer[self.start..self.start + span].copy_from_slice(&bytes[..span]);
            self.start = (self.start + span) % self.capacity;
            bytes = &bytes[span..];
        }
    }

    /// The kept bytes in order, as two slices.
    pub(crate) fn as_slices(&self) -> (&[u8], &[u8]) {
        (&self.buffer[self.start..], &self.buffer[..self.start])
    }

    /// The kept bytes as text, starting at the first character boundary (the oldest kept byte
    /// may be the middle of a character whose start was overwritten). The pushed bytes must be
    /// well-formed UTF-8 as a whole.
    pub(crate) fn to_text(&self) -> String {
        let (first, second) = self.as_slices();
        let mut bytes = [first, second].concat();
        bytes.drain(..utf8::ceil_boundary(&bytes, 0));
        // The error is not reached with well-formed pushes; stay total rather than panic.
        String::from_utf8(bytes)
            .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned())
    }
}

/// Reserves room in `buffer` for `extra` more bytes, doubling (from at least 256 bytes) but
/// never past `bound`, which `buffer.len() + extra` must not exceed: a small output costs
/// little, a huge one `bound`.
pub(crate) fn reserve_bounded(buffer: &mut Vec<u8>, extra: usize, bound: usize) {
    let needed = buffer.len() + extra;
    if needed > buffer.capacity() {
        let target = needed
            .max(buffer.capacity().saturating_mul(2))
            .clamp(256.min(bound), bound);
        buffer.reserve_exact(target - buffer.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contents(ring: &Ring) -> Vec<u8> {
        let (a, b) = ring.as_slices();
        [a, b].concat()
    }

    #[test]
    fn keeps_the_last_capacity_bytes() {
        let mut ring = Ring::new(5);
        ring.push(b"ab");
        assert_eq!(contents(&ring), b"ab");
        ring.push(b"cde");
        assert_eq!(contents(&ring), b"abcde");
        ring.push(b"f");
        assert_eq!(contents(&ring), b"bcdef");
        ring.push(b"ghij");
        assert_eq!(contents(&ring), b"fghij");
        ring.push(b"0123456789");
        assert_eq!(contents(&ring), b"56789");
        ring.push(b"xy");
        assert_eq!(contents(&ring), b"789xy");
        assert_eq!(ring.len(), 5);
    }

    #[test]
    fn agrees_with_a_naive_tail_for_many_push_sizes() {
        let data: Vec<u8> = (0..2_000u32).map(|i| (i % 251) as u8).collect();
        for capacity in [1, 2, 7, 64, 333, 1_000, 5_000] {
            for step in [1, 3, 50, 999, 2_000] {
                let mut ring = Ring::new(capacity);
                for piece in data.chunks(step) {
                    ring.push(piece);
                }
                let keep = data.len().min(capacity);
                assert_eq!(
                    contents(&ring),
                    &data[data.len() - keep..],
                    "{capacity}/{step}"
                );
                assert!(ring.buffer.capacity() <= capacity, "{capacity}/{step}");
            }
        }
    }

    #[test]
    fn zero_capacity_keeps_nothing() {
        let mut ring = Ring::new(0);
        ring.push(b"abc");
        assert_eq!(ring.len(), 0);
        assert_eq!(ring.to_text(), "");
    }

    #[test]
    fn text_starts_at_a_character_boundary() {
        let mut ring = Ring::new(4);
        ring.push("€€".as_bytes()); // 6 bytes: the last 4 start inside the first €
        assert_eq!(ring.to_text(), "€");
        ring.push("é".as_bytes()); // keeps 0x82 0xAC of the €, then é
        assert_eq!(ring.to_text(), "é");
    }
}
