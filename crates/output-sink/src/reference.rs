//! The one-shot reference sanitiser: the sanitising rules written as plainly as possible, over
//! the whole input at once, sharing no code with the streaming [`Sanitizer`](crate::Sanitizer).
//!
//! It is the oracle of the property tests (every chunking of a stream must give exactly this
//! text) and is public so that callers can sanitise a complete byte string in one call.

use crate::sanitizer::{MAX_HELD_LINE_BYTES, MAX_SEQUENCE_BYTES};

const ESC: char = '\u{1b}';
const BEL: char = '\u{7}';
const CAN: char = '\u{18}';
const SUB: char = '\u{1a}';

/// What reaches the line stage.
#[derive(Debug, Clone, Copy)]
enum Event {
    Text(char),
    Newline,
    Return,
}

/// Sanitises a complete byte stream in one call: the same text an
/// [`OutputSink`](crate::OutputSink) writes to its artifact for these bytes, however they are
/// chunked.
///
/// ```
/// use agentsh_output_sink::sanitize;
///
/// assert_eq!(sanitize(b"\x1b[1mbold\x1b[0m\r\n\xff\0"), "bold\n\u{fffd}");
/// assert_eq!(sanitize(b"10%\r50%\r100%\n"), "100%\n");
/// ```
pub fn sanitize(bytes: &[u8]) -> String {
    lines(&strip_sequences(&decode(bytes)))
}

/// Characters with the number of raw bytes each came from; each ill-formed subpart (one
/// `Utf8Chunk::invalid()`) is one U+FFFD, which is how `String::from_utf8_lossy` is defined.
fn decode(bytes: &[u8]) -> Vec<(char, usize)> {
    let mut chars = Vec::new();
    for chunk in bytes.utf8_chunks() {
        chars.extend(chunk.valid().chars().map(|c| (c, c.len_utf8())));
        if !chunk.invalid().is_empty() {
            chars.push((char::REPLACEMENT_CHARACTER, chunk.invalid().len()));
        }
    }
    chars
}

/// Removes escape sequences and control characters.
fn strip_sequences(chars: &[(char, usize)]) -> Vec<Event> {
    let mut events = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        if chars[at].0 == ESC {
            at = sequence(chars, at, &mut events);
        } else {
            ordinary(chars[at].0, &mut events);
            at += 1;
        }
    }
    events
}

/// A character outside any sequence.
fn ordinary(c: char, events: &mut Vec<Event>) {
    match c {
        '\n' => events.push(Event::Newline),
        '\r' => events.push(Event::Return),
        '\t' => events.push(Event::Text('\t')),
        // `is_control` is Unicode's Cc: C0, DEL and C1.
        c if c.is_control() => {}
        c => events.push(Event::Text(c)),
    }
}

/// Skips the sequence whose `ESC` is at `start`; returns where ordinary reading resumes.
/// Controls the sequence executes (`\n`, `\t`, `\r` inside ESC/CSI) are pushed to `events`.
fn sequence(chars: &[(char, usize)], start: usize, events: &mut Vec<Event>) -> usize {
    #[derive(PartialEq)]
    enum Kind {
        /// After ESC, possibly with intermediates (0x20..=0x2F).
        Escape {
            intermediates: bool,
        },
        Csi,
        /// OSC, DCS, SOS, PM, APC: ended by BEL or ST.
        Text,
    }
    let mut kind = Kind::Escape {
        intermediates: false,
    };
    let mut used = chars[start].1;
    let mut at = start + 1;
    loop {
        // Still open after the character just read: abandoned at the cap.
        if used >= MAX_SEQUENCE_BYTES {
            return at;
        }
        let Some(&(c, len)) = chars.get(at) else {
            return at;
        };
        if kind == Kind::Text {
            match c {
                BEL | CAN | SUB => return at + 1,
                ESC => {
                    used += len;
                    at += 1;
                    if used >= MAX_SEQUENCE_BYTES {
                        return at;
                    }
                    return match chars.get(at) {
                        Some(&('\\' | CAN | SUB, _)) => at + 1,
                        // The ESC starts the next sequence.
                        _ => at - 1,
                    };
                }
                _ => {
                    used += len;
                    at += 1;
                }
            }
            continue;
        }
        if !c.is_ascii() {
            // Malformed: the character is ordinary text again.
            return at;
        }
        // Right after the ESC, where `[` and the string introducers count.
        let fresh = matches!(
            kind,
            Kind::Escape {
                intermediates: false
            }
        );
        match c {
            ESC => return at,
            CAN | SUB => return at + 1,
            '\0'..='\u{1f}' => ordinary(c, events),
            '\u{7f}' => {}
            ' '..='/' if kind != Kind::Csi => {
                kind = Kind::Escape {
                    intermediates: true,
                }
            }
            '[' if fresh => kind = Kind::Csi,
            ']' | 'P' | 'X' | '^' | '_' if fresh => kind = Kind::Text,
            ' '..='?' if kind == Kind::Csi => {}
            // Any other printable ASCII is a final byte.
            _ => return at + 1,
        }
        used += len;
        at += 1;
    }
}

/// `\r\n` → `\n`; a lone `\r` (a run of them counts once) discards the unfinished line; a line
/// longer than `MAX_HELD_LINE_BYTES` since its last commit point is committed.
fn lines(events: &[Event]) -> String {
    let mut out = String::new();
    let mut line = String::new();
    let mut pending_return = false;
    for event in events {
        match *event {
            Event::Return => pending_return = true,
            Event::Newline => {
                out.push_str(&line);
                out.push('\n');
                line.clear();
                pending_return = false;
            }
            Event::Text(c) => {
                if pending_return {
                    line.clear();
                    pending_return = false;
                }
                line.push(c);
                if line.len() > MAX_HELD_LINE_BYTES {
                    out.push_str(&line);
                    line.clear();
                }
            }
        }
    }
    if !pending_return {
        out.push_str(&line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_cases() {
        let cases: &[(&[u8], &str)] = &[
            (b"plain\n", "plain\n"),
            (b"\x1b[31mred\x1b[0m", "red"),
            (b"\x1b]0;t\x07a\x1b]0;t\x1b\\b", "ab"),
            (b"a\x1b(Bb", "ab"),
            (b"x\r\ny\rz", "x\nz"),
            (b"\xe2\x82", "\u{fffd}"),
            (b"a\0b\x7fc", "abc"),
            (b"a\x1b[1\x1b]2\x07b", "ab"),
        ];
        for (input, want) in cases {
            assert_eq!(sanitize(input), *want, "{input:?}");
        }
    }
}
