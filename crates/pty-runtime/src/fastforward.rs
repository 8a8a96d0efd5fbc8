//! Fast-forward for the headless terminal: lines that would scroll beyond the scrollback are
//! not drawn.
//!
//! `vt100` draws every character into its grid (tens of MB/s), while a PTY delivers output
//! several times faster. When a program prints a long run of plain output, everything but
//! the last lines ends up discarded from the scrollback anyway. So plain output is held back
//! here, and when it holds more than [`FastForward::keep_lines`] line ends, the oldest lines
//! are dropped without being drawn. The screen and scrollback come out exactly as if every
//! byte had been drawn:
//!
//! - *Plain* output is anything but `ESC`, plus complete SGR sequences (`ESC [ 0-9 ; : m`).
//!   Such bytes never change a mode, the scroll region, tab stops or the saved cursor; they
//!   write cells, move the cursor and scroll. SGR sequences of dropped text are still applied
//!   (compressed: only what follows the last full reset), so the attributes match.
//! - Lines are dropped only up to a cut right after `\r\n` (cursor in column 0) that is
//!   followed by at least `2 × rows + scrollback + 2` further line ends. Whatever the cursor
//!   position before the kept part, after `rows` line ends the cursor is on the bottom row,
//!   after `rows` more every screen row was scrolled in fresh and written by the kept part,
//!   and after `scrollback` more the same holds for every scrollback row: the final screen and
//!   scrollback depend only on the kept part.
//! - That argument needs the scroll region to be the whole screen and the main screen to be
//!   in use, so fast-forward switches itself off for good once the program sets a scroll
//!   region (`CSI … r`) or touches the alternate screen (`CSI ? 47/1047/1049 h/l`): such
//!   programs are interactive, not bulk output.
//! - Whether the emulator's parser is in its ground state (where `ESC` is the only way out) is
//!   tracked with a second `vte` parser that sees the non-plain bytes one at a time: ground
//!   is certain again after a printed character, a dispatched CSI or ESC sequence, or an OSC
//!   ended by BEL.
//!
//! Held output is drawn (flushed) before anything non-plain, before a resize and before every
//! read of the screen, so readers never see a stale screen.

use std::collections::VecDeque;

const ESC: u8 = 0x1b;
/// Longest SGR sequence recognised as plain; longer ones take the ordinary path.
const MAX_SGR_BYTES: usize = 64;
/// SGR sequences of dropped text beyond this are applied to the emulator at once.
const MAX_PRELUDE_BYTES: usize = 4096;
/// Held output beyond this is drawn even without enough line ends (very long lines).
const MAX_HELD_BYTES: usize = 8 << 20;

pub(crate) struct FastForward {
    /// False once a scroll region or the alternate screen was seen: everything is drawn.
    enabled: bool,
    rows: u16,
    scrollback: usize,
    /// Tracks the emulator parser's state while it is outside the ground state.
    shadow: vte::Parser,
    tracker: Tracker,
    /// The emulator's parser is certainly in the ground state with no partial character.
    ground: bool,
    /// Plain output not yet drawn: `held[start..]`.
    held: Vec<u8>,
    start: usize,
    /// Offsets in `held` right after each `\r\n`.
    cuts: VecDeque<usize>,
    /// SGR sequences of dropped text, applied before `held`.
    prelude: Vec<u8>,
    /// An SGR sequence cut off at the end of the last feed (not yet seen by the emulator).
    partial: Vec<u8>,
    /// Bytes dropped without being drawn (for tests and curiosity).
    skipped: u64,
}

#[derive(Default)]
struct Tracker {
    ground: bool,
    disable: bool,
}

impl vte::Perform for Tracker {
    fn print(&mut self, _c: char) {
        self.ground = true;
    }

    fn csi_dispatch(
        &mut self,
        params: &vte::Params,
        intermediates: &[u8],
        _ignore: bool,
        action: char,
    ) {
        self.ground = true;
        let alternate = || {
            params
                .iter()
                .any(|param| matches!(param, [47 | 1047 | 1049]))
        };
        match (action, intermediates) {
            ('r', []) => self.disable = true,
            ('h' | 'l', [b'?']) if alternate() => self.disable = true,
            _ => {}
        }
    }

    fn esc_dispatch(&mut self, _intermediates: &[u8], _ignore: bool, _byte: u8) {
        self.ground = true;
    }

    fn osc_dispatch(&mut self, _params: &[&[u8]], bell_terminated: bool) {
        if bell_terminated {
            self.ground = true;
        }
    }
}

enum Sgr {
    /// A complete SGR sequence of this length.
    Complete(usize),
    /// Could become an SGR sequence with more bytes.
    Incomplete,
    /// Something else.
    Other,
}

/// Whether `bytes` (starting with `ESC`) start with an SGR sequence.
fn sgr(bytes: &[u8]) -> Sgr {
    if bytes.len() < 2 {
        return Sgr::Incomplete;
    }
    if bytes[1] != b'[' {
        return Sgr::Other;
    }
    for (i, &b) in bytes.iter().enumerate().skip(2).take(MAX_SGR_BYTES - 2) {
        match b {
            b'0'..=b'9' | b';' | b':' => {}
            b'm' => return Sgr::Complete(i + 1),
            _ => return Sgr::Other,
        }
    }
    if bytes.len() < MAX_SGR_BYTES {
        Sgr::Incomplete
    } else {
        Sgr::Other
    }
}

/// Whether an SGR sequence resets every attribute before setting any (`ESC [ m`, `ESC [ 0 m`,
/// `ESC [ 0 ; … m`, `ESC [ ; … m`).
fn is_reset(sgr: &[u8]) -> bool {
    let params = &sgr[2..sgr.len() - 1];
    let first = params.split(|&b| b == b';').next().unwrap_or_default();
    first.iter().all(|&b| b == b'0')
}

impl FastForward {
    pub(crate) fn new(rows: u16, scrollback: usize) -> Self {
        Self {
            enabled: true,
            rows,
            scrollback,
            shadow: vte::Parser::new(),
            tracker: Tracker::default(),
            ground: true,
            held: Vec::new(),
            start: 0,
            cuts: VecDeque::new(),
            prelude: Vec::new(),
            partial: Vec::new(),
            skipped: 0,
        }
    }

    /// Line ends that must follow a cut before the text before it may be dropped.
    fn keep_lines(&self) -> usize {
        2 * usize::from(self.rows) + self.scrollback + 2
    }

    pub(crate) fn set_rows(&mut self, rows: u16) {
        self.rows = rows;
    }

    #[cfg(test)]
    pub(crate) fn skipped(&self) -> u64 {
        self.skipped
    }

    /// Feeds program output: plain output is held back, the rest drawn.
    pub(crate) fn feed<CB: vt100::Callbacks>(
        &mut self,
        parser: &mut vt100::Parser<CB>,
        bytes: &[u8],
    ) {
        if !self.enabled {
            parser.process(bytes);
            return;
        }
        if self.partial.is_empty() {
            self.feed_inner(parser, bytes);
        } else {
            let mut joined = std::mem::take(&mut self.partial);
            joined.extend_from_slice(bytes);
            self.feed_inner(parser, &joined);
        }
    }

    fn feed_inner<CB: vt100::Callbacks>(&mut self, parser: &mut vt100::Parser<CB>, data: &[u8]) {
        let mut i = 0;
        while i < data.len() {
            if !self.enabled {
                parser.process(&data[i..]);
                return;
            }
            if self.ground {
                let mut j = i;
                let stop = loop {
                    match memchr::memchr(ESC, &data[j..]) {
                        None => break data.len(),
                        Some(at) => {
                            let esc = j + at;
                            match sgr(&data[esc..]) {
                                Sgr::Complete(len) => j = esc + len,
                                Sgr::Incomplete => {
                                    self.hold(parser, &data[i..esc]);
                                    self.partial = data[esc..].to_vec();
                                    return;
                                }
                                Sgr::Other => break esc,
                            }
                        }
                    }
                };
                self.hold(parser, &data[i..stop]);
                i = stop;
                if i == data.len() {
                    return;
                }
                // An escape sequence that is not SGR: draw what is held, then track it.
                self.flush(parser);
                self.ground = false;
            }
            // Outside the ground state: the shadow parser sees each byte until ground is
            // certain again; the emulator gets the same bytes in one piece.
            let from = i;
            while i < data.len() && !self.ground {
                self.tracker.ground = false;
                self.shadow.advance(&mut self.tracker, &data[i..=i]);
                i += 1;
                self.ground = self.tracker.ground;
                if self.tracker.disable {
                    self.enabled = false;
                }
            }
            parser.process(&data[from..i]);
        }
    }

    /// Appends plain output to the held run and drops what can be dropped.
    fn hold<CB: vt100::Callbacks>(&mut self, parser: &mut vt100::Parser<CB>, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let base = self.held.len();
        self.held.extend_from_slice(bytes);
        for at in memchr::memchr_iter(b'\n', bytes) {
            let newline = base + at;
            if newline > self.start && self.held[newline - 1] == b'\r' {
                self.cuts.push_back(newline + 1);
            }
        }
        let keep = self.keep_lines();
        // Drop in batches (every `keep` line ends) so that the cost stays per byte.
        if self.cuts.len() > 2 * keep
            || (self.held.len() - self.start > MAX_HELD_BYTES && self.cuts.len() > keep)
        {
            let cut = self.cuts[self.cuts.len() - 1 - keep];
            self.drop_until(parser, cut);
        }
        if self.held.len() - self.start > MAX_HELD_BYTES {
            self.flush(parser);
        }
    }

    /// Drops held output before `cut`, keeping its SGR sequences.
    fn drop_until<CB: vt100::Callbacks>(&mut self, parser: &mut vt100::Parser<CB>, cut: usize) {
        let mut at = self.start;
        while let Some(found) = memchr::memchr(ESC, &self.held[at..cut]) {
            let esc = at + found;
            let len = match sgr(&self.held[esc..cut]) {
                Sgr::Complete(len) => len,
                // Held output contains only complete SGR sequences.
                Sgr::Incomplete | Sgr::Other => 1,
            };
            let sequence = &self.held[esc..esc + len];
            if len > 1 && is_reset(sequence) {
                self.prelude.clear();
            }
            self.prelude.extend_from_slice(sequence);
            at = esc + len;
        }
        self.skipped += (cut - self.start) as u64;
        self.start = cut;
        while self.cuts.front().is_some_and(|&c| c <= cut) {
            self.cuts.pop_front();
        }
        if self.prelude.len() > MAX_PRELUDE_BYTES {
            parser.process(&self.prelude);
            self.prelude.clear();
        }
        if self.start > self.held.len() / 2 {
            self.held.drain(..self.start);
            for c in &mut self.cuts {
                *c -= self.start;
            }
            self.start = 0;
        }
    }

    /// Draws everything held.
    pub(crate) fn flush<CB: vt100::Callbacks>(&mut self, parser: &mut vt100::Parser<CB>) {
        if !self.prelude.is_empty() {
            parser.process(&self.prelude);
            self.prelude.clear();
        }
        if self.start < self.held.len() {
            parser.process(&self.held[self.start..]);
        }
        self.held.clear();
        self.start = 0;
        self.cuts.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::num::NonZeroU16;

    fn parser(rows: u16, cols: u16, scrollback: usize) -> vt100::Parser {
        vt100::Parser::new(
            NonZeroU16::new(rows).unwrap(),
            NonZeroU16::new(cols).unwrap(),
            scrollback,
        )
    }

    /// Everything a reader can see: the screen with attributes, the cursor, every scrollback
    /// row.
    fn state(parser: &vt100::Parser) -> Vec<String> {
        let mut screen = parser.screen().clone();
        let mut out = vec![
            format!("{:?}", screen.cursor_position()),
            screen.contents_formatted().escape_debug().to_string(),
        ];
        for offset in 1..=screen.scrollback_capacity() {
            screen.set_scrollback(offset);
            out.push(screen.contents_formatted().escape_debug().to_string());
        }
        out
    }

    #[test]
    fn long_plain_output_is_skipped_with_the_same_result() {
        let mut stream = Vec::new();
        stream.extend_from_slice(b"\x1b[2J\x1b[5;3Hstart\x1b[31m");
        for i in 0..500 {
            stream
                .extend_from_slice(format!("line {i} \x1b[1mbold\x1b[0;32m green\r\n").as_bytes());
        }
        stream.extend_from_slice(b"tail \x1b[7m");
        let (rows, cols, scrollback) = (5, 20, 7);
        let mut reference = parser(rows, cols, scrollback);
        reference.process(&stream);

        let mut fast = FastForward::new(rows, scrollback);
        let mut emulator = parser(rows, cols, scrollback);
        for chunk in stream.chunks(37) {
            fast.feed(&mut emulator, chunk);
        }
        fast.flush(&mut emulator);
        assert!(fast.skipped() > 10_000, "skipped only {}", fast.skipped());
        assert_eq!(state(&emulator), state(&reference));
    }

    #[test]
    fn a_scroll_region_switches_fast_forward_off() {
        let mut fast = FastForward::new(5, 7);
        let mut emulator = parser(5, 20, 7);
        fast.feed(&mut emulator, b"\x1b[2;4r");
        let lines = "x\r\n".repeat(1000);
        fast.feed(&mut emulator, lines.as_bytes());
        fast.flush(&mut emulator);
        assert_eq!(fast.skipped(), 0);
    }

    #[test]
    fn sgr_recognition() {
        assert!(matches!(sgr(b"\x1b[0;38:2::1:2:3mx"), Sgr::Complete(16)));
        assert!(matches!(sgr(b"\x1b[31"), Sgr::Incomplete));
        assert!(matches!(sgr(b"\x1b"), Sgr::Incomplete));
        assert!(matches!(sgr(b"\x1b[?1h"), Sgr::Other));
        assert!(matches!(sgr(b"\x1b]0;t\x07"), Sgr::Other));
        assert!(is_reset(b"\x1b[m"));
        assert!(is_reset(b"\x1b[0;1m"));
        assert!(is_reset(b"\x1b[;1m"));
        assert!(!is_reset(b"\x1b[1;0m"));
        assert!(!is_reset(b"\x1b[10m"));
    }
}
