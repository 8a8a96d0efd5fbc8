//! The escape state machine of `strip_controls`: the output sink's grammar over a `&str`.

use agentsh_protocol::MAX_SEQUENCE_BYTES;

const ESC: char = '\u{1b}';
const BEL: char = '\u{7}';
const CAN: char = '\u{18}';
const SUB: char = '\u{1a}';

/// The first byte at or after `from` that [`strip_controls`](super::strip_controls) must look at: a C0 control other
/// than `\n` and `\t`, DEL, the lead byte of a C1 control or of a bidi control.
pub(super) fn next_to_strip(bytes: &[u8], from: usize) -> usize {
    let mut at = from;
    loop {
        // Whole blocks without a byte that needs a look, then byte by byte up to one.
        while let Some(block) = bytes.get(at..at + 16) {
            if !block.iter().fold(true, |all, &b| all & is_quiet(b)) {
                break;
            }
            at += 16;
        }
        let Some(offset) = bytes[at..].iter().position(|&b| !is_quiet(b)) else {
            return bytes.len();
        };
        at += offset;
        if !matches!(bytes[at], 0xC2 | 0xE2) {
            return at;
        }
        match &bytes[at..] {
            // C1: U+0080–U+009F is C2 80–C2 9F (0xC2 is never a continuation byte); bidi:
            // U+202A–U+202E is E2 80 AA–AE, U+2066–U+2069 is E2 81 A6–A9.
            [0xC2, 0x80..=0x9F, ..]
            | [0xE2, 0x80, 0xAA..=0xAE, ..]
            | [0xE2, 0x81, 0xA6..=0xA9, ..] => return at,
            _ => {}
        }
        at += 1;
    }
}

/// False for the bytes [`next_to_strip`] must look at: C0 controls but `\n` and `\t`, DEL,
/// and the lead bytes 0xC2 (of U+0080–U+00BF, with C1) and 0xE2 (of U+2000–U+2FFF, with the
/// bidi controls). Every other byte, ASCII or not, is kept as it is.
#[inline]
#[expect(
    clippy::needless_bitwise_bool,
    reason = "branch-free, so that block checks vectorise"
)]
fn is_quiet(byte: u8) -> bool {
    ((byte >= 0x20) & (byte != 0x7F) & (byte != 0xC2) & (byte != 0xE2))
        | (byte == b'\n')
        | (byte == b'\t')
}

/// Strips `text` from `first` on (the first byte [`next_to_strip`] found), into a new string.
pub(super) fn strip_from(text: &str, first: usize) -> String {
    let mut stripper = Stripper {
        out: String::with_capacity(text.len()),
        state: State::Ground,
        sequence_bytes: 0,
    };
    stripper.out.push_str(&text[..first]);
    let mut at = first;
    while at < text.len() {
        if stripper.state == State::Ground {
            // Kept text in one copy, up to the next character that needs the machine.
            let end = next_to_strip(text.as_bytes(), at);
            stripper.out.push_str(&text[at..end]);
            at = end;
        }
        let Some(c) = text[at..].chars().next() else {
            break;
        };
        at += c.len_utf8();
        stripper.step(c);
    }
    // An unterminated sequence at the end is dropped, as the sink's `finish` does.
    stripper.out
}

/// The states of the sanitiser's escape machine (its docs have the table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ground,
    Escape,
    EscIntermediate,
    Csi,
    String,
    StringEscape,
}

/// The escape state machine of `agentsh_output_sink::Sanitizer`, over a `&str`.
///
/// Hand-written rather than `vte`, for the sink's reasons: `vte` reports text one `char` per
/// callback (no bulk copy of the kept runs) and does not expose the raw byte count of an open
/// sequence that the 4,096-byte cap needs; and owning the ~50 lines keeps this grammar
/// identical to the sink's, which the differential test checks.
struct Stripper {
    out: String,
    state: State,
    /// Bytes of the open sequence, counted from its `ESC`.
    sequence_bytes: usize,
}

impl Stripper {
    fn step(&mut self, c: char) {
        match self.state {
            State::Ground => self.ground(c),
            State::Escape | State::EscIntermediate | State::Csi => {
                if !c.is_ascii() {
                    // Malformed: the sequence is dropped and the character read as text.
                    self.state = State::Ground;
                    self.ground(c);
                    return;
                }
                match c {
                    ESC => {
                        self.state = State::Escape;
                        self.sequence_bytes = 1;
                        return;
                    }
                    CAN | SUB => {
                        self.state = State::Ground;
                        return;
                    }
                    // Executed: `\n` and `\t` are kept, the rest dropped; the sequence goes on.
                    '\0'..='\u{1f}' => self.ground(c),
                    '\u{7f}' => {}
                    _ => {
                        self.state = match (self.state, c) {
                            (State::Escape, '[') | (State::Csi, ' '..='?') => State::Csi,
                            (State::Escape, ']' | 'P' | 'X' | '^' | '_') => State::String,
                            (State::Escape | State::EscIntermediate, ' '..='/') => {
                                State::EscIntermediate
                            }
                            // A final byte: 0x30..=0x7E after ESC, 0x40..=0x7E in CSI.
                            _ => State::Ground,
                        };
                    }
                }
                self.count(c);
            }
            State::String => {
                match c {
                    BEL | CAN | SUB => self.state = State::Ground,
                    ESC => self.state = State::StringEscape,
                    _ => {}
                }
                self.count(c);
            }
            State::StringEscape => {
                if matches!(c, '\\' | CAN | SUB) {
                    self.state = State::Ground;
                } else {
                    // The string ended at its ESC, which starts a new sequence.
                    self.state = State::Escape;
                    self.sequence_bytes = 1;
                    self.step(c);
                }
            }
        }
    }

    /// Counts the bytes of `c` in the open sequence and abandons it at the cap.
    fn count(&mut self, c: char) {
        self.sequence_bytes += c.len_utf8();
        if self.state != State::Ground && self.sequence_bytes >= MAX_SEQUENCE_BYTES {
            self.state = State::Ground;
        }
    }

    /// A character outside any sequence (or a C0 control executed inside one).
    fn ground(&mut self, c: char) {
        match c {
            ESC => {
                self.state = State::Escape;
                self.sequence_bytes = 1;
            }
            '\n' | '\t' => self.out.push(c),
            // C0 (with `\r`), DEL, C1, bidi controls.
            '\0'..='\u{1f}'
            | '\u{7f}'..='\u{9f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}' => {}
            _ => self.out.push(c),
        }
    }
}
