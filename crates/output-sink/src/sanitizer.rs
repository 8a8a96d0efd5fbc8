//! The streaming sanitiser: raw bytes in, committed sanitised text out. Its rules are written
//! on [`Sanitizer`], where a crate user reads them.

use crate::utf8::{self, Decoded, REPLACEMENT};

/// U+FFFD encoded.
const REPLACEMENT_UTF8: &[u8] = "\u{FFFD}".as_bytes();

/// An escape sequence still unterminated after this many bytes is abandoned: what was read of
/// it is dropped and the next character is read as plain text.
pub const MAX_SEQUENCE_BYTES: usize = agentsh_protocol::MAX_SEQUENCE_BYTES;

/// An unfinished line longer than this many bytes is committed as is (a later `\r` no longer
/// discards the committed part).
pub const MAX_HELD_LINE_BYTES: usize = 65_536;

const ESC: u8 = 0x1B;
const BEL: u8 = 0x07;
const CAN: u8 = 0x18;
const SUB: u8 = 0x1A;
const DEL: u8 = 0x7F;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ground,
    Escape,
    EscIntermediate,
    Csi,
    String,
    StringEscape,
}

/// A streaming sanitiser on its own, for callers that need sanitised text without a sink —
/// e.g. to feed a [`TailBuffer`](crate::TailBuffer) for live updates.
///
/// It applies exactly the rules of [`OutputSink`](crate::OutputSink), written below; the text handed
/// to the callback is *committed* text: the unfinished line is held back until it ends (see
/// [`Sanitizer::unfinished_line`]).
///
/// ```
/// use agentsh_output_sink::Sanitizer;
///
/// let mut sanitizer = Sanitizer::new();
/// let mut text = String::new();
/// sanitizer.push(b"\x1b[32mok\x1b[0m\r\n10%\r", |t| text.push_str(t));
/// sanitizer.push(b"100%\n", |t| text.push_str(t));
/// sanitizer.finish(|t| text.push_str(t));
/// assert_eq!(text, "ok\n100%\n");
/// ```
///
/// # Three stages, one pass
///
/// 1. **UTF-8**: bytes become characters; each ill-formed subpart becomes one
///    U+FFFD exactly as `String::from_utf8_lossy` would on the whole stream. Up to three bytes of
///    a sequence cut by a chunk edge are carried to the next chunk; at the end of the stream they
///    become one U+FFFD (what `from_utf8_lossy` does with a truncated sequence).
/// 2. **Escapes and controls**: a state machine over characters removes escape sequences and
///    control characters (below).
/// 3. **Lines**: `\r\n` becomes `\n`, a lone `\r` discards the unfinished line, and the unfinished
///    line is held back until it ends (below).
///
/// Every piece of state that spans a chunk edge — carried UTF-8 bytes, the escape state with its
/// byte count, a pending `\r`, the held-back line — lives in the `Sanitizer`, and every rule is stated
/// over the character stream, never over chunk positions; this is why the result does not depend
/// on how the bytes were chunked. The fast path (below) only batches work the per-character rules
/// would do identically.
///
/// # Escape state machine
///
/// The states follow the DEC/ECMA-48 parser that terminal emulators (and the `vte` crate) use,
/// reduced to what removal needs: nothing is interpreted, every sequence is dropped whole.
///
/// | state | on | goes to |
/// |---|---|---|
/// | ground | `ESC` | escape (a new sequence starts, 1 byte counted) |
/// | ground | `\n`, `\t`, `\r` | stays (line stage) |
/// | ground | other C0, DEL, C1 (U+0080–U+009F) | stays, character dropped |
/// | ground | anything else | stays, character kept |
/// | escape | `[` | CSI |
/// | escape | `]` `P` `X` `^` `_` | string (OSC, DCS, SOS, PM, APC) |
/// | escape, esc-intermediate | `0x20`–`0x2F` | esc-intermediate (e.g. the `(` of `ESC ( B`) |
/// | escape, esc-intermediate | other `0x30`–`0x7E` | ground: two-byte (or charset) sequence done |
/// | CSI | `0x20`–`0x3F` (parameters, intermediates) | stays |
/// | CSI | `0x40`–`0x7E` (final byte) | ground: sequence done |
/// | string | `BEL` | ground: sequence done |
/// | string | `ESC` | string-escape |
/// | string | anything else (payload, including non-ASCII and U+FFFD) | stays |
/// | string-escape | `\` (so `ESC \` = ST) | ground: sequence done |
/// | string-escape | anything else | the string ends; the `ESC` starts a new sequence and the character is read in the escape state |
///
/// Shared by the escape, esc-intermediate and CSI states, as in terminals: `ESC` abandons the
/// sequence and starts a new one; `CAN`/`SUB` abort it; other C0 controls are *executed* — `\n`,
/// `\t`, `\r` act as in ground, the rest are dropped — and the sequence goes on; DEL is ignored.
/// A non-ASCII character (including U+FFFD and C1) ends such a sequence as malformed: the sequence
/// is dropped and the character is read again in ground, so a stray `ESC` before text in another
/// script does not eat that text. In the string states `CAN`/`SUB` abort the sequence too.
/// C1 characters never introduce sequences: a UTF-8 encoded U+009B is just a dropped control, so a
/// stray C1 in text cannot swallow what follows.
///
/// **Cap**: the raw bytes of the current sequence are counted from its `ESC` (every byte read
/// while it is open, executed controls included). When a character leaves the machine inside a
/// sequence and the count has reached [`MAX_SEQUENCE_BYTES`], the sequence is abandoned: what was
/// read of it is dropped and the next character is read in ground. A sequence whose terminator
/// is its 4,096th byte is therefore complete; one that is still open after that byte is not.
///
/// ## Why not `vte`
///
/// `vte` drives the same kind of state machine, but it decodes UTF-8 itself and reports printable
/// text one `char` per callback. The spec needs three things its API does not give: the exact
/// `from_utf8_lossy` replacement rule (tested here against std), the raw byte count of an open
/// sequence (for the 4,096-byte cap) and a bulk path for runs of plain text (per-character
/// callbacks cannot reach ≥ 1 GB/s). The machine above is ~60 lines; owning it keeps all three.
///
/// # Line stage
///
/// The unfinished line (text since the last `\n` or commit point) is held back, from the sink's
/// tail and from the artifact, until it ends. Characters append to it; once it exceeds
/// [`MAX_HELD_LINE_BYTES`] (after the character that crossed the bound, so always at a character
/// boundary) it is committed as is and a new commit point starts. `\n` commits it with the
/// newline. A `\r` is *pending* until the next character that reaches this stage (escape
/// sequences and dropped controls between them are invisible here):
/// - a `\n` makes it `\r\n`, committed as `\n`;
/// - another `\r` keeps it pending: a run of `\r` counts as one, so `text\r\r\n` (what a program
///   writing `\r\n` produces through a terminal's `\n`→`\r\n` translation) keeps its line;
/// - any other character, or the end of the stream, makes it a lone `\r`: the held-back text is
///   discarded (text committed earlier because the line was long is not), then the character
///   starts the line afresh — a progress bar collapses to its last state.
///
/// A `\r` that is the last byte of a chunk is therefore simply pending: nothing is decided until
/// the next chunk (or the end of the stream) shows what follows it.
///
/// # Fast path
///
/// In ground with no pending `\r`, a run of printable ASCII, `\t`, `\n` and well-formed non-C1
/// characters passes through unchanged, so it is found with a scan that checks 32 bytes at a time
/// (a branch-free test the compiler turns into SIMD compares; the end is located in the failing
/// block with an exact SWAR mask) and handed on as one slice: everything up to its last `\n` is
/// committed straight from the input, only the unfinished remainder is copied into the held-back
/// line. Also without per-character dispatch: the byte that ends a run when it is an invalid
/// subpart, a dropped control or a `\r`; a complete CSI sequence (`ESC [` … final byte, within
/// the cap) in the input; CSI parameter bytes and ASCII string payload while a sequence is open.
#[derive(Debug)]
pub struct Sanitizer {
    /// Bytes of a UTF-8 sequence cut by the end of the previous chunk.
    carry: [u8; 4],
    carry_len: usize,
    state: State,
    /// Raw bytes read since the `ESC` of the open sequence.
    sequence_bytes: usize,
    /// A `\r` waits for the next character of the line stage.
    pending_return: bool,
    /// The held-back unfinished line (at most `MAX_HELD_LINE_BYTES` bytes between calls).
    line: Vec<u8>,
}

impl Default for Sanitizer {
    fn default() -> Self {
        Self {
            carry: [0; 4],
            carry_len: 0,
            state: State::Ground,
            sequence_bytes: 0,
            pending_return: false,
            line: Vec::new(),
        }
    }
}

impl Sanitizer {
    /// A sanitiser at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sanitises the next chunk of the stream; `on_text` receives each committed piece.
    pub fn push(&mut self, chunk: &[u8], mut on_text: impl FnMut(&str)) {
        self.push_bytes(chunk, &mut |bytes: &[u8]| as_text(bytes, &mut on_text));
    }

    /// Ends the stream (see [`OutputSink::dump`](crate::OutputSink::dump) for what is flushed);
    /// afterwards the sanitiser is ready for a new stream.
    pub fn finish(&mut self, mut on_text: impl FnMut(&str)) {
        self.finish_bytes(&mut |bytes: &[u8]| as_text(bytes, &mut on_text));
    }

    /// The unfinished line held back so far (empty while a `\r` is pending), e.g. to show a
    /// progress bar's current state in a live view.
    pub fn unfinished_line(&self) -> String {
        let held: &[u8] = if self.pending_return { &[] } else { &self.line };
        String::from_utf8_lossy(held).into_owned()
    }

    /// Sanitises `chunk`, handing every committed piece of text to `out`.
    pub(crate) fn push_bytes<O: FnMut(&[u8])>(&mut self, chunk: &[u8], out: &mut O) {
        let mut rest = chunk;
        if self.carry_len > 0 {
            // Complete the character cut by the previous chunk in a small buffer.
            let carried = self.carry_len;
            let take = (4 - carried).min(rest.len());
            let mut buffer = self.carry;
            buffer[carried..carried + take].copy_from_slice(&rest[..take]);
            let (c, len) = match utf8::decode(&buffer[..carried + take]) {
                Decoded::Incomplete => {
                    // Only possible when the whole (short) chunk was taken.
                    self.carry = buffer;
                    self.carry_len = carried + take;
                    return;
                }
                Decoded::Char(c, len) => (c, len),
                Decoded::Invalid(len) => (REPLACEMENT, len),
            };
            self.carry_len = 0;
            // The carried bytes were a well-formed prefix, so `len` covers all of them.
            rest = &rest[len.saturating_sub(carried).min(rest.len())..];
            self.step(c, len, out);
        }
        self.run(rest, out);
    }

    /// Ends the stream: a carried partial character becomes U+FFFD, an open sequence is dropped,
    /// a pending `\r` discards the held-back line, and what is left of the line is committed.
    /// The sanitiser is then as new.
    pub(crate) fn finish_bytes<O: FnMut(&[u8])>(&mut self, out: &mut O) {
        if self.carry_len > 0 {
            let len = self.carry_len;
            self.carry_len = 0;
            self.step(REPLACEMENT, len, out);
        }
        self.state = State::Ground;
        self.sequence_bytes = 0;
        if self.pending_return {
            self.pending_return = false;
            self.line.clear();
        }
        if !self.line.is_empty() {
            out(&self.line);
            self.line.clear();
        }
    }

    fn run<O: FnMut(&[u8])>(&mut self, bytes: &[u8], out: &mut O) {
        let mut at = 0;
        while at < bytes.len() {
            // Fast paths: each does exactly what stepping character by character would do.
            match self.state {
                State::Ground if !self.pending_return => {
                    let end = plain_run_end(bytes, at);
                    if end > at {
                        self.emit_plain(&bytes[at..end], out);
                        at = end;
                        if at == bytes.len() {
                            break;
                        }
                    }
                    match bytes[at] {
                        ESC => {
                            if let Some(len) = complete_csi_len(&bytes[at..]) {
                                at += len;
                                continue;
                            }
                        }
                        b'\r' => {
                            self.pending_return = true;
                            at += 1;
                            continue;
                        }
                        // Other C0 controls and DEL (\t and \n end no plain run).
                        0x00..=0x1F | DEL => {
                            at += 1;
                            continue;
                        }
                        _ => match utf8::decode(&bytes[at..]) {
                            Decoded::Invalid(len) => {
                                self.hold(REPLACEMENT_UTF8, out);
                                at += len;
                                continue;
                            }
                            // A C1 control (the only well-formed character ending a run).
                            Decoded::Char(_, len) => {
                                at += len;
                                continue;
                            }
                            Decoded::Incomplete => {}
                        },
                    }
                }
                State::Csi => {
                    at += self
                        .skip_within_sequence(&bytes[at..], |byte| (0x20..=0x3F).contains(&byte));
                    if self.state != State::Csi || at == bytes.len() {
                        continue;
                    }
                }
                State::String => {
                    at += self.skip_within_sequence(&bytes[at..], |byte| {
                        byte < 0x80 && !matches!(byte, BEL | ESC | CAN | SUB)
                    });
                    if self.state != State::String || at == bytes.len() {
                        continue;
                    }
                }
                _ => {}
            }
            let (c, len) = match utf8::decode(&bytes[at..]) {
                Decoded::Char(c, len) => (c, len),
                Decoded::Invalid(len) => (REPLACEMENT, len),
                Decoded::Incomplete => {
                    let tail = &bytes[at..];
                    self.carry[..tail.len()].copy_from_slice(tail);
                    self.carry_len = tail.len();
                    return;
                }
            };
            at += len;
            self.step(c, len, out);
        }
    }

    /// In an open sequence: skips the leading ASCII bytes of `bytes` for which `keep` holds
    /// (bytes that leave the state unchanged), counting them and abandoning the sequence at the
    /// cap. Returns the bytes skipped.
    #[inline]
    fn skip_within_sequence(&mut self, bytes: &[u8], keep: impl Fn(u8) -> bool) -> usize {
        // In an open sequence the count is below the cap, so the window is not empty.
        let window = (MAX_SEQUENCE_BYTES - self.sequence_bytes).min(bytes.len());
        let skipped = bytes[..window]
            .iter()
            .position(|&byte| !keep(byte))
            .unwrap_or(window);
        self.sequence_bytes += skipped;
        if self.sequence_bytes >= MAX_SEQUENCE_BYTES {
            self.state = State::Ground;
        }
        skipped
    }

    /// Feeds one decoded character (`len` raw bytes) through the escape state machine.
    fn step<O: FnMut(&[u8])>(&mut self, c: char, len: usize, out: &mut O) {
        match self.state {
            State::Ground => self.ground(c, out),
            State::Escape | State::EscIntermediate | State::Csi => {
                let byte = match u8::try_from(c) {
                    Ok(byte) if byte.is_ascii() => byte,
                    _ => {
                        // Not ASCII: the sequence is malformed; read the character in ground.
                        self.state = State::Ground;
                        self.ground(c, out);
                        return;
                    }
                };
                match byte {
                    ESC => {
                        self.sequence_bytes = 1;
                        self.state = State::Escape;
                        return;
                    }
                    CAN | SUB => {
                        self.state = State::Ground;
                        return;
                    }
                    0x00..=0x1F => self.ground(c, out),
                    DEL => {}
                    _ => {
                        self.state = match (self.state, byte) {
                            (State::Escape, b'[') | (State::Csi, 0x20..=0x3F) => State::Csi,
                            (State::Escape, b']' | b'P' | b'X' | b'^' | b'_') => State::String,
                            (State::Escape | State::EscIntermediate, 0x20..=0x2F) => {
                                State::EscIntermediate
                            }
                            // A final byte: 0x30..=0x7E after ESC, 0x40..=0x7E in CSI.
                            _ => State::Ground,
                        };
                    }
                }
                self.count(len);
            }
            State::String => {
                match u8::try_from(c) {
                    Ok(BEL | CAN | SUB) => self.state = State::Ground,
                    Ok(ESC) => self.state = State::StringEscape,
                    _ => {}
                }
                self.count(len);
            }
            State::StringEscape => {
                if let Ok(b'\\' | CAN | SUB) = u8::try_from(c) {
                    self.state = State::Ground;
                } else {
                    // The string ended at its ESC, which starts a new sequence.
                    self.state = State::Escape;
                    self.sequence_bytes = 1;
                    self.step(c, len, out);
                }
            }
        }
    }

    /// Counts `len` bytes of the open sequence and abandons it at the cap.
    #[inline]
    fn count(&mut self, len: usize) {
        self.sequence_bytes += len;
        if self.state != State::Ground && self.sequence_bytes >= MAX_SEQUENCE_BYTES {
            self.state = State::Ground;
        }
    }

    /// A character in ground (or a C0 control executed inside a sequence).
    fn ground<O: FnMut(&[u8])>(&mut self, c: char, out: &mut O) {
        match c {
            '\n' => self.newline(out),
            '\r' => self.pending_return = true,
            '\t' => self.text(b"\t", out),
            '\u{1b}' => {
                self.state = State::Escape;
                self.sequence_bytes = 1;
            }
            '\0'..='\u{1f}' | '\u{7f}'..='\u{9f}' => {}
            _ => {
                let mut buffer = [0; 4];
                self.text(c.encode_utf8(&mut buffer).as_bytes(), out);
            }
        }
    }

    fn newline<O: FnMut(&[u8])>(&mut self, out: &mut O) {
        self.pending_return = false;
        self.line.push(b'\n');
        out(&self.line);
        self.line.clear();
    }

    /// Kept text (whole characters, no `\n`) reaching the line stage.
    fn text<O: FnMut(&[u8])>(&mut self, bytes: &[u8], out: &mut O) {
        if self.pending_return {
            self.pending_return = false;
            self.line.clear();
        }
        self.hold(bytes, out);
    }

    /// Appends text without `\n` to the held-back line, committing at every point where the
    /// line (since its last commit point) exceeds `MAX_HELD_LINE_BYTES`.
    fn hold<O: FnMut(&[u8])>(&mut self, mut bytes: &[u8], out: &mut O) {
        while !bytes.is_empty() {
            // The line exceeds the bound once it holds MAX + 1 bytes; it is committed after the
            // character that crosses, i.e. at the first character boundary at or after `needed`.
            let needed = MAX_HELD_LINE_BYTES + 1 - self.line.len();
            if bytes.len() < needed {
                self.line.extend_from_slice(bytes);
                return;
            }
            let cut = utf8::ceil_boundary(bytes, needed);
            if !self.line.is_empty() {
                out(&self.line);
                self.line.clear();
            }
            out(&bytes[..cut]);
            bytes = &bytes[cut..];
        }
    }

    /// A run that passes unchanged (see [`plain_run_end`]); only valid in ground with no
    /// pending `\r`.
    fn emit_plain<O: FnMut(&[u8])>(&mut self, run: &[u8], out: &mut O) {
        // Escape-heavy text has many short runs: a plain loop beats a call for them.
        let last_newline = if run.len() <= 16 {
            run.iter().rposition(|&byte| byte == b'\n')
        } else {
            memchr::memrchr(b'\n', run)
        };
        match last_newline {
            Some(last) => {
                if !self.line.is_empty() {
                    out(&self.line);
                    self.line.clear();
                }
                out(&run[..=last]);
                self.hold(&run[last + 1..], out);
            }
            None => self.hold(run, out),
        }
    }
}

/// The length of a complete CSI sequence (`ESC [`, parameter/intermediate bytes, final byte)
/// at the start of `bytes`, when it is all there and within the cap: the sequence the state
/// machine would drop whole, skipped in one tight loop.
#[inline]
fn complete_csi_len(bytes: &[u8]) -> Option<usize> {
    if bytes.get(1) != Some(&b'[') {
        return None;
    }
    let mut at = 2;
    while at < bytes.len() && at < MAX_SEQUENCE_BYTES && (0x20..=0x3F).contains(&bytes[at]) {
        at += 1;
    }
    // The final byte is byte number at + 1, at most the cap.
    match bytes.get(at) {
        Some(0x40..=0x7E) if at < MAX_SEQUENCE_BYTES => Some(at + 1),
        _ => None,
    }
}

/// True for bytes a plain run may contain without decoding: printable ASCII, `\t` and `\n`.
#[inline]
#[expect(
    clippy::needless_bitwise_bool,
    reason = "branch-free, so that block checks vectorise"
)]
fn is_plain_ascii(byte: u8) -> bool {
    (byte.wrapping_sub(0x20) < 0x5F) | (byte == b'\n') | (byte == b'\t')
}

/// Bit 7 of each byte of a word: the per-byte flag of the SWAR computations.
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
/// Bits 0..=6 of each byte of a word.
const LOW_BITS: u64 = 0x7F7F_7F7F_7F7F_7F7F;
/// `byte` repeated in each byte of a word.
const fn splat(byte: u8) -> u64 {
    0x0101_0101_0101_0101 * byte as u64
}

/// Bit 7 of each byte of the little-endian `word` is set when the byte is *not* plain ASCII
/// (see [`is_plain_ascii`]). Exact for every byte: no carry crosses a byte.
#[inline]
fn special_bytes(word: u64) -> u64 {
    let low = word & LOW_BITS;
    // Bit 7 set when low >= 0x20, or when low == 0x7F, or when low equals \n or \t.
    let printable = low.wrapping_add(splat(0x80 - 0x20)) & HIGH_BITS;
    let delete = low.wrapping_add(splat(1)) & HIGH_BITS;
    let equals = |byte: u8| {
        let diff = low ^ splat(byte);
        !(diff.wrapping_add(LOW_BITS) | diff) & HIGH_BITS
    };
    let allowed_control = equals(b'\n') | equals(b'\t');
    (word & HIGH_BITS) | delete | (!printable & !allowed_control & HIGH_BITS)
}

/// The length of the prefix of `bytes` made of plain ASCII bytes.
#[inline]
fn plain_ascii_len(bytes: &[u8]) -> usize {
    let mut len = plain_blocks_len(bytes);
    // Within the first block that is not all plain (or the short rest), word by word.
    let (words, rest) = bytes[len..].as_chunks::<8>();
    for word in words {
        let special = special_bytes(u64::from_le_bytes(*word));
        if special != 0 {
            return len + (special.trailing_zeros() / 8) as usize;
        }
        len += 8;
    }
    len + rest
        .iter()
        .position(|&byte| !is_plain_ascii(byte))
        .unwrap_or(rest.len())
}

/// The length of the leading 32-byte blocks of `bytes` that are all plain ASCII.
#[inline]
fn plain_blocks_len(bytes: &[u8]) -> usize {
    const BLOCK: usize = 32;
    let (blocks, _) = bytes.as_chunks::<BLOCK>();
    let mut len = 0;
    for block in blocks {
        // A fixed-size, branch-free reduction that the compiler turns into SIMD compares.
        if !block
            .iter()
            .fold(true, |all, &byte| all & is_plain_ascii(byte))
        {
            break;
        }
        len += BLOCK;
    }
    len
}

/// The end of the run starting at `start` that the sanitiser passes through unchanged when in
/// ground with no pending `\r`: printable ASCII, `\t`, `\n` and well-formed characters other than
/// C1 controls.
fn plain_run_end(bytes: &[u8], start: usize) -> usize {
    let mut at = start;
    loop {
        at += plain_ascii_len(&bytes[at..]);
        match bytes.get(at) {
            Some(&byte) if byte >= 0x80 => match utf8::decode(&bytes[at..]) {
                Decoded::Char(c, len) if !('\u{80}'..='\u{9f}').contains(&c) => at += len,
                _ => return at,
            },
            _ => return at,
        }
    }
}

/// Hands committed bytes (always well-formed UTF-8) to `on_text` as `&str` without a copy.
pub(crate) fn as_text(bytes: &[u8], on_text: &mut (impl FnMut(&str) + ?Sized)) {
    match std::str::from_utf8(bytes) {
        Ok(text) => on_text(text),
        // Not reached: the sanitiser commits whole characters only. Stay total anyway.
        Err(_) => on_text(&String::from_utf8_lossy(bytes)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_chunks(chunks: &[&[u8]]) -> String {
        let mut sanitizer = Sanitizer::default();
        let mut out = Vec::new();
        for chunk in chunks {
            sanitizer.push_bytes(chunk, &mut |b: &[u8]| out.extend_from_slice(b));
        }
        sanitizer.finish_bytes(&mut |b: &[u8]| out.extend_from_slice(b));
        String::from_utf8(out).unwrap()
    }

    fn check(input: &[u8], want: &str) {
        assert_eq!(run_chunks(&[input]), want, "one chunk: {input:?}");
        let bytes: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(run_chunks(&bytes), want, "byte by byte: {input:?}");
    }

    #[test]
    fn swar_flags_exactly_the_bytes_that_are_not_plain() {
        for byte in 0..=255u8 {
            for position in 0..8 {
                let mut word = [b'a'; 8];
                word[position] = byte;
                let special = special_bytes(u64::from_le_bytes(word));
                let want = if is_plain_ascii(byte) {
                    0
                } else {
                    0x80 << (8 * position)
                };
                assert_eq!(special, want, "byte {byte:#04x} at {position}");
            }
        }
        // Neighbours never disturb each other.
        let word = u64::from_le_bytes([0x1F, 0x20, 0x7E, 0x7F, b'\n', b'\t', 0x80, 0x0B]);
        assert_eq!(special_bytes(word), 0x8080_0000_8000_0080);
    }

    #[test]
    fn plain_ascii_scan_stops_at_specials() {
        for len in 0..100 {
            for special in [0x1b, 0x7f, 0xc3, b'\r', 0] {
                let mut bytes = vec![b'x'; 100];
                bytes[len] = special;
                assert_eq!(plain_ascii_len(&bytes), len, "{special:#x} at {len}");
                assert_eq!(
                    plain_ascii_len(&bytes[..=len]),
                    len,
                    "{special:#x} at {len}, short"
                );
            }
        }
        assert_eq!(plain_ascii_len(b""), 0);
        assert_eq!(plain_ascii_len(b"abc\tdef\n"), 8);
        let mut long = vec![b'x'; 100];
        long[70] = 0x1b;
        assert_eq!(plain_ascii_len(&long), 70);
        long[70] = 0x7f;
        assert_eq!(plain_ascii_len(&long), 70);
        long[70] = 0xc3;
        assert_eq!(plain_ascii_len(&long), 70);
        long[70] = b'\r';
        assert_eq!(plain_ascii_len(&long), 70);
        long[70] = b'~';
        assert_eq!(plain_ascii_len(&long), 100);
    }

    #[test]
    fn plain_runs_include_well_formed_non_ascii_but_not_c1() {
        let text = "héllo€\n\u{85}x".as_bytes();
        assert_eq!(plain_run_end(text, 0), "héllo€\n".len());
        assert_eq!(plain_run_end(b"ab\xffcd", 0), 2);
        assert_eq!(plain_run_end(b"ab\xe2\x82", 0), 2);
    }

    #[test]
    fn escape_machine_cases() {
        check(b"a\x1b[1;31mb\x1b[0mc", "abc");
        check(b"a\x1b]0;title\x07b", "ab");
        check(b"a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\b", "alinkb");
        check(b"a\x1b(Bb\x1b#8c\x1b7d\x1b=e", "abcde");
        check(
            b"a\x1bP1$r\x1b\\b\x1bXsos\x07c\x1b^pm\x1b\\d\x1b_apc\x1b\\e",
            "abcde",
        );
        // ESC inside a CSI starts a new sequence; CAN aborts.
        check(b"a\x1b[12\x1b[3mb\x1b[1\x18c", "abc");
        // Executed controls inside a CSI.
        check(b"a\x1b[1\n2mb", "a\nb");
        // Non-ASCII ends a CSI as malformed and is kept.
        check("a\x1b[1é".as_bytes(), "aé");
        // The string's ESC followed by something else starts a new sequence.
        check(b"a\x1b]x\x1b[31mb", "ab");
        // C1 controls are dropped, never introducers.
        check("a\u{9b}31mb".as_bytes(), "a31mb");
    }

    #[test]
    fn cap_counts_from_the_escape() {
        // ESC ] + 4,093 payload bytes + BEL: the BEL is byte 4,096 and terminates.
        let mut input = b"\x1b]".to_vec();
        input.extend(std::iter::repeat_n(b'x', 4093));
        input.extend(b"\x07ok");
        check(&input, "ok");
        // One more payload byte: the sequence is abandoned after 4,096 bytes, the BEL is a
        // dropped control and the text resumes.
        let mut input = b"\x1b]".to_vec();
        input.extend(std::iter::repeat_n(b'x', 4094));
        input.extend(b"y\x07ok");
        check(&input, "yok");
    }

    #[test]
    fn line_stage_cases() {
        check(b"a\r\nb\r\n", "a\nb\n");
        check(b"10%\r20%\r30%\n", "30%\n");
        check(b"keep\r\r\n", "keep\n");
        check(b"gone\r", "");
        check(b"x\ngone\r", "x\n");
        check(b"a\r\x1b[Kb\n", "b\n");
        check(b"a\r\x1b[K\n", "a\n");
        check(b"tail", "tail");
    }

    #[test]
    fn long_lines_are_committed_past_the_bound() {
        let mut input = vec![b'a'; 100_000];
        input.extend(b"\rb\n");
        let mut want = "a".repeat(MAX_HELD_LINE_BYTES + 1);
        want.push_str("b\n");
        assert_eq!(run_chunks(&[&input]), want);
        let pieces: Vec<&[u8]> = input.chunks(7_777).collect();
        assert_eq!(run_chunks(&pieces), want);
    }

    #[test]
    fn sanitizer_reports_unfinished_line() {
        let mut sanitizer = Sanitizer::new();
        let mut text = String::new();
        sanitizer.push(b"done\n 42%", |t| text.push_str(t));
        assert_eq!(text, "done\n");
        assert_eq!(sanitizer.unfinished_line(), " 42%");
        sanitizer.push(b"\r", |t| text.push_str(t));
        assert_eq!(sanitizer.unfinished_line(), "");
        sanitizer.push(b" 43%", |t| text.push_str(t));
        assert_eq!(sanitizer.unfinished_line(), " 43%");
    }
}
