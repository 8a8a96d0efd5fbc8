//! Pure text layout: what a view does to a string before it becomes a ratatui `Span`.
//!
//! Every function borrows its input and returns it unchanged (a `Cow::Borrowed`, no
//! allocation) when there is nothing to do, and each has a fast path for printable ASCII that
//! works on bytes without grapheme segmentation.
//!
//! # One width
//!
//! A width here is what ratatui's `Buffer` advances by when it draws the text: the sum over
//! extended grapheme clusters of
//! [`CellWidth::cell_width`](ratatui_core::buffer::CellWidth::cell_width) (the `unicode-width`
//! width of the whole cluster, so `👍🏽` and `👨‍👩‍👧` take 2, `e\u{301}` takes 1, wide CJK 2).
//! [`str_width`], [`wrap`], [`expand_tabs`] and [`truncate_to_width`] all use it, so a wrapped
//! row never exceeds its width however a view draws it. It can exceed `Line::width()` (which
//! measures the whole string with `unicode-width`, and counts e.g. a lam-alef pair as one
//! column) but never falls below it.
//!
//! # Segmentation
//!
//! unicode-segmentation runs at about 50 MB/s, so it is left out wherever it cannot change the
//! result: for printable ASCII, and between two chars of a conservative set (Latin, Greek,
//! Cyrillic, punctuation, symbols, box drawing, CJK, Hangul syllables, emoji without
//! modifiers) that UAX #29 always separates. Only the stretches around other chars (combining
//! marks, ZWJ sequences, skin tones, flags, jamo) are segmented; tests check the shortcut
//! against unicode-segmentation char by char and on random text.

use std::borrow::Cow;

use unicode_segmentation::GraphemeCursor;

use graphemes::{Cluster, Graphemes, graphemes, is_printable_ascii, width_floor};

mod graphemes;
mod strip;

/// Lines longer than this many chars are cut by [`cap_line`] in the bang component, as
/// `<first 4000>… [N chars omitted]`.
pub const MAX_LINE_CHARS: usize = 4000;

/// Tabs expand to the next multiple of this many columns.
pub const TAB_STOP: usize = 4;

/// What [`wrap`] draws instead of a grapheme wider than the whole row.
const OVERSIZED_GRAPHEME: &str = "?";

/// Removes everything that must not reach the host terminal as a control: escape sequences,
/// C0 controls other than `\n` and `\t`, DEL, C1 controls (U+0080–U+009F) and the bidi
/// embedding, override and isolate controls (U+202A–U+202E, U+2066–U+2069), which reorder
/// what is shown ("Trojan source"). `\r\n` becomes `\n` and a lone `\r` is dropped: every
/// `\r` goes.
///
/// Escape sequences are removed with the grammar of the output sink's sanitiser (see
/// `agentsh_output_sink::Sanitizer`): CSI; OSC, DCS, SOS, PM and APC strings ended by BEL or
/// `ESC \`; `ESC`, intermediates, final byte; `CAN`/`SUB` abort a sequence; `ESC` inside one
/// starts a new one; `\n` and `\t` inside an `ESC`/CSI sequence are executed (kept); a
/// non-ASCII character ends a malformed `ESC`/CSI sequence and is read as text; a sequence
/// still open after 4,096 bytes is abandoned. C1 characters never introduce sequences. The
/// sink keeps the bidi controls (its text goes to a model, not a terminal); otherwise the two
/// agree on every input without `\r`.
///
/// The result is borrowed when there is nothing to remove.
///
/// ```
/// use agentsh_renderer::strip_controls;
///
/// assert_eq!(strip_controls("\x1b[31mred\x1b[0m\r\n"), "red\n");
/// assert_eq!(strip_controls("echo \x1b]0;title\x07hi"), "echo hi");
/// assert!(matches!(strip_controls("plain"), std::borrow::Cow::Borrowed(_)));
/// ```
pub fn strip_controls(text: &str) -> Cow<'_, str> {
    let first = strip::next_to_strip(text.as_bytes(), 0);
    if first == text.len() {
        return Cow::Borrowed(text);
    }
    Cow::Owned(strip::strip_from(text, first))
}

/// Expands each tab to spaces up to the next multiple of [`TAB_STOP`] columns, counting
/// columns from the start of `line` (so `\t` after a wide char moves less). Borrowed when
/// there is no tab.
///
/// ```
/// use agentsh_renderer::expand_tabs;
///
/// assert_eq!(expand_tabs("a\tb"), "a   b");
/// assert_eq!(expand_tabs("日\tb"), "日  b");
/// ```
pub fn expand_tabs(line: &str) -> Cow<'_, str> {
    let Some(first) = line.find('\t') else {
        return Cow::Borrowed(line);
    };
    let mut out = String::with_capacity(line.len() + 3 * TAB_STOP);
    let mut column = 0;
    let mut rest = line;
    let mut tab = first;
    loop {
        let segment = &rest[..tab];
        out.push_str(segment);
        // A tab is a grapheme of its own, so measuring segment by segment is exact.
        column += str_width(segment);
        let spaces = TAB_STOP - column % TAB_STOP;
        out.extend(std::iter::repeat_n(' ', spaces));
        column += spaces;
        rest = &rest[tab + 1..];
        match rest.find('\t') {
            Some(next) => tab = next,
            None => break,
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// The width of `text` in terminal columns, as ratatui's `Buffer` draws it (see the module
/// docs): wide CJK and emoji 2, combining marks 0. Printable ASCII is its length.
///
/// ```
/// use agentsh_renderer::str_width;
///
/// assert_eq!(str_width("abc"), 3);
/// assert_eq!(str_width("日本語"), 6);
/// assert_eq!(str_width("👨\u{200d}👩\u{200d}👧"), 2);
/// assert_eq!(str_width("e\u{301}"), 1);
/// ```
pub fn str_width(text: &str) -> usize {
    if is_printable_ascii(text.as_bytes()) {
        return text.len();
    }
    let mut graphemes = graphemes(text);
    let mut width = 0;
    loop {
        let run = graphemes.ascii_run(usize::MAX);
        if run > 0 {
            graphemes.skip_bytes(run);
            width += run;
            continue;
        }
        match graphemes.next() {
            Some(cluster) => width += cluster.width,
            None => return width,
        }
    }
}

/// Caps a line at `max_chars` chars (Unicode scalar values): a longer line becomes its first
/// `max_chars` chars, `ellipsis` and ` [N chars omitted]`. The cut is at the last grapheme
/// boundary at or before `max_chars` chars, so it may keep fewer; `N` counts every char left
/// out. Borrowed when the line is not longer than `max_chars`.
///
/// ```
/// use agentsh_renderer::cap_line;
///
/// assert_eq!(cap_line("abcdef", 4, "…"), "abcd… [2 chars omitted]");
/// assert_eq!(cap_line("abcd", 4, "…"), "abcd");
/// // `e` and its combining accent stay together.
/// assert_eq!(cap_line("abce\u{301}f", 4, "…"), "abc… [3 chars omitted]");
/// ```
pub fn cap_line<'a>(line: &'a str, max_chars: usize, ellipsis: &str) -> Cow<'a, str> {
    // A char takes at least one byte.
    if line.len() <= max_chars {
        return Cow::Borrowed(line);
    }
    let Some((limit, _)) = line.char_indices().nth(max_chars) else {
        return Cow::Borrowed(line);
    };
    let cut = grapheme_floor(line, limit);
    let omitted = line[cut..].chars().count();
    Cow::Owned(format!(
        "{}{ellipsis} [{omitted} chars omitted]",
        &line[..cut]
    ))
}

/// Hard-wraps one logical line (no `\n` inside, tabs already expanded) into rows of at most
/// `width` columns, like a terminal: no word wrapping, no grapheme ever split. A grapheme that
/// does not fit at the end of a row starts the next one. A grapheme wider than the whole row
/// (a wide char at width 1) is drawn as a single-column `?` on a row of its own, so that no
/// row ever exceeds `width`; apart from that, the rows concatenated give back `line`. An
/// empty line is one empty row; width 0 is treated as 1.
///
/// ```
/// use agentsh_renderer::wrap;
///
/// let rows: Vec<&str> = wrap("abcdefg", 3).collect();
/// assert_eq!(rows, ["abc", "def", "g"]);
/// let rows: Vec<&str> = wrap("a日本", 2).collect();
/// assert_eq!(rows, ["a", "日", "本"]);
/// assert_eq!(wrap("", 80).collect::<Vec<_>>(), [""]);
/// ```
pub fn wrap(line: &str, width: u16) -> Wrapped<'_> {
    let kind = if is_printable_ascii(line.as_bytes()) {
        Kind::Ascii { at: 0 }
    } else {
        Kind::Graphemes {
            graphemes: graphemes(line),
            peeked: None,
        }
    };
    Wrapped {
        line,
        width: usize::from(width.max(1)),
        kind,
        started: false,
    }
}

/// The number of rows [`wrap`] gives for `line` at `width`, computed without building them
/// for printable ASCII.
///
/// ```
/// use agentsh_renderer::visual_rows;
///
/// assert_eq!(visual_rows("abcdefg", 3), 3);
/// assert_eq!(visual_rows("", 3), 1);
/// ```
pub fn visual_rows(line: &str, width: u16) -> usize {
    if is_printable_ascii(line.as_bytes()) {
        let width = usize::from(width.max(1));
        return line.len().div_ceil(width).max(1);
    }
    wrap(line, width).count()
}

/// Untrusted text for a single row (a command in a header, a job's command): stripped of
/// controls, its line breaks and tabs turned into spaces.
///
/// ```
/// use agentsh_renderer::single_line;
///
/// assert_eq!(single_line("make\n\tall\x1b[2J"), "make  all");
/// ```
pub fn single_line(text: &str) -> String {
    strip_controls(text).replace(['\n', '\t'], " ")
}

/// Fits one row of text into `width` columns: unchanged when it fits, otherwise cut at a
/// grapheme boundary so that the kept text followed by `ellipsis` fits. When even `ellipsis`
/// does not fit, it is what gets cut.
///
/// ```
/// use agentsh_renderer::truncate_to_width;
///
/// assert_eq!(truncate_to_width("abcdef", 4, "…"), "abc…");
/// assert_eq!(truncate_to_width("abc", 4, "…"), "abc");
/// assert_eq!(truncate_to_width("日本語", 4, "…"), "日…");
/// ```
pub fn truncate_to_width<'a>(text: &'a str, width: u16, ellipsis: &str) -> Cow<'a, str> {
    let width = usize::from(width);
    if str_width(text) <= width {
        return Cow::Borrowed(text);
    }
    let ellipsis_width = str_width(ellipsis);
    if ellipsis_width > width {
        let cut = width_floor(ellipsis, width);
        return Cow::Owned(ellipsis[..cut].to_owned());
    }
    let cut = width_floor(text, width - ellipsis_width);
    let mut out = String::with_capacity(cut + ellipsis.len());
    out.push_str(&text[..cut]);
    out.push_str(ellipsis);
    Cow::Owned(out)
}

/// The rows of one line, from [`wrap`].
#[derive(Debug, Clone)]
pub struct Wrapped<'a> {
    line: &'a str,
    width: usize,
    kind: Kind<'a>,
    /// A row has been returned (an empty line still has one).
    started: bool,
}

#[derive(Debug, Clone)]
#[expect(
    clippy::large_enum_variant,
    reason = "lives in an iterator on the stack; boxing would allocate for every line"
)]
enum Kind<'a> {
    /// Printable ASCII: one byte is one column and one grapheme.
    Ascii { at: usize },
    Graphemes {
        graphemes: Graphemes<'a>,
        /// The grapheme that ended the previous row by not fitting.
        peeked: Option<Cluster<'a>>,
    },
}

impl<'a> Iterator for Wrapped<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let width = self.width;
        let row = match &mut self.kind {
            Kind::Ascii { at } => {
                if *at == self.line.len() {
                    None
                } else {
                    let start = *at;
                    *at = (start + width).min(self.line.len());
                    Some(&self.line[start..*at])
                }
            }
            Kind::Graphemes { graphemes, peeked } => {
                match peeked.take().or_else(|| graphemes.next()) {
                    None => None,
                    Some(first) if first.width > width => Some(OVERSIZED_GRAPHEME),
                    Some(first) => {
                        let start = first.at;
                        let mut used = first.width;
                        let mut end = first.end();
                        loop {
                            // What is read next starts at `end`; ASCII in bulk.
                            let run = graphemes.ascii_run(width - used);
                            if run > 0 {
                                graphemes.skip_bytes(run);
                                used += run;
                                end += run;
                                continue;
                            }
                            let Some(cluster) = graphemes.next() else {
                                break;
                            };
                            if used + cluster.width > width {
                                *peeked = Some(cluster);
                                break;
                            }
                            used += cluster.width;
                            end = cluster.end();
                        }
                        Some(&self.line[start..end])
                    }
                }
            }
        };
        match row {
            Some(row) => {
                self.started = true;
                Some(row)
            }
            None if !self.started => {
                self.started = true;
                Some("")
            }
            None => None,
        }
    }
}

impl std::iter::FusedIterator for Wrapped<'_> {}

/// The largest grapheme boundary at or before `at` (a char boundary of `line`).
fn grapheme_floor(line: &str, at: usize) -> usize {
    let mut cursor = GraphemeCursor::new(at, line.len(), true);
    // The whole line is the one chunk, so no context is ever missing; stay total anyway.
    match cursor.is_boundary(line, 0) {
        Ok(true) | Err(_) => at,
        Ok(false) => match cursor.prev_boundary(line, 0) {
            Ok(Some(boundary)) => boundary,
            Ok(None) => 0,
            Err(_) => at,
        },
    }
}

#[cfg(test)]
mod tests;
