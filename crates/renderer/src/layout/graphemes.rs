//! Extended grapheme clusters and their widths, with a fast path that leaves the
//! segmentation out where it cannot change anything.

use ratatui_core::buffer::CellWidth;
use unicode_segmentation::{GraphemeIndices, UnicodeSegmentation};

/// The columns one grapheme takes when ratatui's `Buffer` draws it. A single byte counts 1
/// (ratatui's own answer; it asserts in debug builds on a lone control byte, which a stripped
/// text does not contain but which must not panic here either).
pub(super) fn grapheme_width(grapheme: &str) -> usize {
    if grapheme.len() == 1 {
        1
    } else {
        usize::from(grapheme.cell_width())
    }
}

/// True when every byte is printable ASCII (0x20–0x7E): one byte per column and per grapheme.
#[inline]
pub(super) fn is_printable_ascii(bytes: &[u8]) -> bool {
    printable_prefix_len(bytes) == bytes.len()
}

#[inline]
pub(super) fn is_printable(byte: u8) -> bool {
    byte.wrapping_sub(0x20) < 0x5F
}

/// The extended grapheme clusters of `text` with their byte offsets, exactly as
/// `text.grapheme_indices(true)` gives them, but without running the segmentation over
/// stretches of simple chars (see [`is_simple`]), where every char is a cluster of its own.
/// Segmentation runs at about 50 MB/s; a line with one `é` or `—` must not pay that for all
/// its ASCII.
pub(super) fn graphemes(text: &str) -> Graphemes<'_> {
    Graphemes {
        text,
        at: 0,
        stretch: None,
    }
}

/// One extended grapheme cluster of a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Cluster<'a> {
    /// Where it starts in the text.
    pub(super) at: usize,
    pub(super) text: &'a str,
    /// Its [`grapheme_width`].
    pub(super) width: usize,
}

impl Cluster<'_> {
    pub(super) fn end(&self) -> usize {
        self.at + self.text.len()
    }
}

#[derive(Debug, Clone)]
pub(super) struct Graphemes<'a> {
    pub(super) text: &'a str,
    /// A certain grapheme boundary: where reading goes on once `stretch` is done.
    pub(super) at: usize,
    /// A stretch being segmented: its offset in `text` and its clusters.
    pub(super) stretch: Option<(usize, GraphemeIndices<'a>)>,
}

impl<'a> Iterator for Graphemes<'a> {
    type Item = Cluster<'a>;

    #[inline]
    fn next(&mut self) -> Option<Cluster<'a>> {
        // Printable ASCII followed by printable ASCII (or the end), in a small function.
        if self.stretch.is_none() {
            let start = self.at;
            let bytes = self.text.as_bytes();
            let &byte = bytes.get(start)?;
            if is_printable(byte) && bytes.get(start + 1).is_none_or(|&next| is_printable(next)) {
                self.at += 1;
                return Some(Cluster {
                    at: start,
                    text: &self.text[start..self.at],
                    width: 1,
                });
            }
        }
        self.next_slow()
    }
}

impl<'a> Graphemes<'a> {
    #[inline(never)]
    fn next_slow(&mut self) -> Option<Cluster<'a>> {
        if let Some((base, stretch)) = &mut self.stretch {
            if let Some((offset, text)) = stretch.next() {
                return Some(Cluster {
                    at: *base + offset,
                    text,
                    width: grapheme_width(text),
                });
            }
            self.stretch = None;
        }
        let start = self.at;
        let rest = &self.text[start..];
        let mut chars = rest.chars();
        let first = chars.next()?;
        if is_simple(first) && chars.next().is_none_or(is_simple) {
            // Both neighbours simple (or the start or end): a cluster of its own.
            self.at += first.len_utf8();
            return Some(Cluster {
                at: start,
                text: &self.text[start..self.at],
                width: simple_width(first),
            });
        }
        // Up to the next certain boundary. Segmenting the stretch alone gives the clusters
        // the whole text has there: no rule looks back past a simple char or ahead past
        // the next char.
        self.at += stretch_len(rest);
        let stretch = self.text[start..self.at].grapheme_indices(true);
        self.stretch = Some((start, stretch));
        self.next_slow()
    }

    /// How many of the next bytes, at most `limit`, are clusters of one printable ASCII byte
    /// each (a printable ASCII byte followed by another one or by the end of the text):
    /// what can be skipped with [`Graphemes::skip_bytes`], one column each.
    #[inline]
    pub(super) fn ascii_run(&self, limit: usize) -> usize {
        if self.stretch.is_some() {
            return 0;
        }
        let bytes = &self.text.as_bytes()[self.at..];
        // One byte more than the limit tells whether the limit-th byte is followed by ASCII.
        let window = &bytes[..bytes.len().min(limit.saturating_add(1))];
        let run = printable_prefix_len(window);
        if run < window.len() {
            // The last byte of the run may take the char after it (a combining mark).
            run.saturating_sub(1)
        } else {
            // `window` is all printable: it reaches past the limit, or the end of the text.
            run.min(limit)
        }
    }

    /// Skips `count` bytes that [`Graphemes::ascii_run`] reported.
    #[inline]
    pub(super) fn skip_bytes(&mut self, count: usize) {
        self.at += count;
    }
}

/// The length of the prefix of `bytes` that is printable ASCII.
#[inline]
fn printable_prefix_len(bytes: &[u8]) -> usize {
    let (blocks, _) = bytes.as_chunks::<16>();
    let mut len = 0;
    for block in blocks {
        // Branch-free per block, so that the compiler vectorises it.
        if !block.iter().fold(true, |all, &b| all & is_printable(b)) {
            break;
        }
        len += 16;
    }
    len + bytes[len..]
        .iter()
        .position(|&b| !is_printable(b))
        .unwrap_or(bytes.len() - len)
}

/// The length of the prefix of `text` (at least its first char) that ends at the first
/// position between two simple chars, or at the end.
fn stretch_len(text: &str) -> usize {
    let mut previous_simple = false;
    for (at, c) in text.char_indices() {
        let simple = is_simple(c);
        if at > 0 && previous_simple && simple {
            return at;
        }
        previous_simple = simple;
    }
    text.len()
}

/// Chars between which there is always an extended grapheme boundary (UAX #29): of the
/// grapheme break classes Other, Control, LV and LVT (with Extended_Pictographic), none of
/// them CR or LF. Every rule that keeps two chars together needs one of them to be Extend,
/// ZWJ, SpacingMark, Prepend, a Hangul L, V or T jamo, a regional indicator, CR or LF (the
/// Indic conjunct and emoji ZWJ rules need an Extend, Linker or ZWJ on the left), so
/// between two simple chars nothing does. The set is conservative: the scripts and symbols
/// common in tool output, with the combining marks inside those blocks left out. A test
/// checks every char of it against unicode-segmentation.
#[inline]
pub(super) fn is_simple(c: char) -> bool {
    if c.is_ascii() {
        return is_printable(c as u8);
    }
    is_simple_non_ascii(c)
}

/// The width of a simple char, a cluster of its own: its `unicode-width` (a test checks that
/// this is its [`grapheme_width`]).
#[inline]
pub(super) fn simple_width(c: char) -> usize {
    unicode_width::UnicodeWidthChar::width(c).unwrap_or(1)
}

fn is_simple_non_ascii(c: char) -> bool {
    matches!(c,
        // Latin-1, Latin Extended A and B, IPA, spacing modifier letters.
        '\u{a0}'..='\u{2ff}'
        // Greek, Cyrillic (without its combining marks 0483–0489).
        | '\u{370}'..='\u{482}'
        | '\u{48a}'..='\u{52f}'
        // General punctuation: dashes, quotes, bullets, ellipsis, per mille.
        | '\u{2010}'..='\u{2027}'
        | '\u{2030}'..='\u{205e}'
        // Super- and subscripts, currency (not the combining marks from 20D0).
        | '\u{2070}'..='\u{20c0}'
        // Letterlike, number forms, arrows, maths, technical, enclosed, box drawing, blocks,
        // shapes, symbols, dingbats, more arrows and maths.
        | '\u{2100}'..='\u{2bff}'
        // CJK symbols (not the tone marks 302A–302F), kana (not the combining sound marks
        // 3099–309A), CJK ideographs, Hangul syllables (LV and LVT).
        | '\u{3000}'..='\u{3029}'
        | '\u{3030}'..='\u{3096}'
        | '\u{309b}'..='\u{30ff}'
        | '\u{3400}'..='\u{4dbf}'
        | '\u{4e00}'..='\u{9fff}'
        | '\u{ac00}'..='\u{d7a3}'
        // Full- and halfwidth forms (not the halfwidth sound marks FF9E–FF9F).
        | '\u{ff01}'..='\u{ff9d}'
        | '\u{fffd}'
        // Emoji, not the skin-tone modifiers 1F3FB–1F3FF (Extend).
        | '\u{1f300}'..='\u{1f3fa}'
        | '\u{1f400}'..='\u{1f64f}'
        | '\u{1f680}'..='\u{1f6ff}'
        | '\u{1f900}'..='\u{1f9ff}'
    )
}

/// The end of the longest grapheme-aligned prefix of `text` at most `width` columns wide.
pub(super) fn width_floor(text: &str, width: usize) -> usize {
    if is_printable_ascii(text.as_bytes()) {
        return width.min(text.len());
    }
    let mut graphemes = graphemes(text);
    let mut used = 0;
    loop {
        let run = graphemes.ascii_run(width - used);
        if run > 0 {
            graphemes.skip_bytes(run);
            used += run;
            continue;
        }
        let Some(cluster) = graphemes.next() else {
            return text.len();
        };
        used += cluster.width;
        if used > width {
            return cluster.at;
        }
    }
}
