//! Incremental UTF-8 decoding with the replacement rule of `String::from_utf8_lossy`.
//!
//! `from_utf8_lossy` replaces each *maximal subpart* of an ill-formed sequence (the Unicode standard,
//! chapter 3, "U+FFFD Substitution of Maximal Subparts") with one U+FFFD: the longest prefix of the bytes
//! that could still start a well-formed sequence, or a single byte when none can. [`decode`]
//! reports exactly that length, and says when the input ended inside a sequence that could still
//! be completed, so a streaming caller can carry those bytes (at most three) into the next chunk.

/// The replacement character written for every ill-formed subpart.
pub(crate) const REPLACEMENT: char = '\u{FFFD}';

/// The outcome of decoding the first character of a byte slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decoded {
    /// A well-formed character and the number of bytes it used.
    Char(char, usize),
    /// An ill-formed subpart of this many bytes (1 to 3), replaced by one U+FFFD.
    Invalid(usize),
    /// The slice ends inside a sequence that is well-formed so far (it holds 1 to 3 bytes).
    Incomplete,
}

/// Decodes the first character of `bytes` (which must not be empty).
#[inline]
pub(crate) fn decode(bytes: &[u8]) -> Decoded {
    let Some(&lead) = bytes.first() else {
        return Decoded::Incomplete;
    };
    if lead < 0x80 {
        return Decoded::Char(char::from(lead), 1);
    }
    // Continuation bytes needed, and the allowed range of the first of them (the ranges exclude
    // overlong forms, surrogates and code points above U+10FFFF, as the Unicode table does).
    let (needed, low, high, mut code) = match lead {
        0xC2..=0xDF => (1, 0x80, 0xBF, u32::from(lead & 0x1F)),
        0xE0 => (2, 0xA0, 0xBF, 0),
        0xE1..=0xEC | 0xEE..=0xEF => (2, 0x80, 0xBF, u32::from(lead & 0x0F)),
        0xED => (2, 0x80, 0x9F, 0x0D),
        0xF0 => (3, 0x90, 0xBF, 0),
        0xF1..=0xF3 => (3, 0x80, 0xBF, u32::from(lead & 0x07)),
        0xF4 => (3, 0x80, 0x8F, 4),
        _ => return Decoded::Invalid(1),
    };
    for index in 1..=needed {
        let Some(&byte) = bytes.get(index) else {
            return Decoded::Incomplete;
        };
        let (min, max) = if index == 1 {
            (low, high)
        } else {
            (0x80, 0xBF)
        };
        if !(min..=max).contains(&byte) {
            return Decoded::Invalid(index);
        }
        code = (code << 6) | u32::from(byte & 0x3F);
    }
    match char::from_u32(code) {
        Some(c) => Decoded::Char(c, needed + 1),
        // Unreachable: the ranges above admit only scalar values.
        None => Decoded::Invalid(needed + 1),
    }
}

/// True for a UTF-8 continuation byte (`10xxxxxx`), i.e. not the start of a character.
#[inline]
pub(crate) fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

/// The largest character boundary of the well-formed UTF-8 `bytes` that is at most `at`.
pub(crate) fn floor_boundary(bytes: &[u8], at: usize) -> usize {
    let mut at = at.min(bytes.len());
    while at > 0 && at < bytes.len() && is_continuation(bytes[at]) {
        at -= 1;
    }
    at
}

/// The smallest character boundary of the well-formed UTF-8 `bytes` that is at least `at`.
pub(crate) fn ceil_boundary(bytes: &[u8], at: usize) -> usize {
    let mut at = at.min(bytes.len());
    while at < bytes.len() && is_continuation(bytes[at]) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes a whole slice with [`decode`] the way the sanitiser does.
    fn lossy(bytes: &[u8]) -> String {
        let mut out = String::new();
        let mut rest = bytes;
        while !rest.is_empty() {
            match decode(rest) {
                Decoded::Char(c, n) => {
                    out.push(c);
                    rest = &rest[n..];
                }
                Decoded::Invalid(n) => {
                    out.push(REPLACEMENT);
                    rest = &rest[n..];
                }
                Decoded::Incomplete => {
                    out.push(REPLACEMENT);
                    rest = &[];
                }
            }
        }
        out
    }

    #[test]
    fn agrees_with_std_on_every_two_byte_input() {
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                let bytes = [a, b];
                assert_eq!(
                    lossy(&bytes),
                    String::from_utf8_lossy(&bytes),
                    "{bytes:02x?}"
                );
            }
        }
    }

    #[test]
    fn agrees_with_std_on_three_byte_inputs_with_interesting_leads() {
        let interesting = [
            0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xdf,
        ];
        for a in [
            0xe0u8, 0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xff,
        ] {
            for b in 0..=255u8 {
                for c in interesting {
                    let bytes = [a, b, c];
                    assert_eq!(
                        lossy(&bytes),
                        String::from_utf8_lossy(&bytes),
                        "{bytes:02x?}"
                    );
                    let four = [a, b, c, 0x80];
                    assert_eq!(lossy(&four), String::from_utf8_lossy(&four), "{four:02x?}");
                    let four = [a, b, 0x80, c];
                    assert_eq!(lossy(&four), String::from_utf8_lossy(&four), "{four:02x?}");
                }
            }
        }
    }

    #[test]
    fn reports_subpart_lengths() {
        assert_eq!(decode(b"\xE2\x82\xAC"), Decoded::Char('€', 3));
        assert_eq!(decode(b"\xE2\x82A"), Decoded::Invalid(2));
        assert_eq!(decode(b"\xE2\x82"), Decoded::Incomplete);
        assert_eq!(decode(b"\xF0\x9F\x98"), Decoded::Incomplete);
        assert_eq!(decode(b"\xF0\x8F"), Decoded::Invalid(1));
        assert_eq!(decode(b"\xED\xA0\x80"), Decoded::Invalid(1));
        assert_eq!(decode(b"\xC0\xAF"), Decoded::Invalid(1));
        assert_eq!(decode(b"\xFF"), Decoded::Invalid(1));
        assert_eq!(decode(b"\xC2\x9B"), Decoded::Char('\u{9b}', 2));
    }

    #[test]
    fn boundaries() {
        let text = "aé€b".as_bytes(); // a, é (2 bytes), € (3 bytes), b
        assert_eq!(floor_boundary(text, 2), 1);
        assert_eq!(floor_boundary(text, 4), 3);
        assert_eq!(floor_boundary(text, 99), text.len());
        assert_eq!(ceil_boundary(text, 2), 3);
        assert_eq!(ceil_boundary(text, 4), 6);
        assert_eq!(ceil_boundary(text, 0), 0);
    }
}
