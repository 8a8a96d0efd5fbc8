use std::borrow::Cow;

use proptest::prelude::*;
use ratatui_core::buffer::Buffer;
use ratatui_core::layout::Rect;
use ratatui_core::style::Style;
use unicode_segmentation::UnicodeSegmentation;

use super::graphemes::{grapheme_width, is_simple, simple_width};
use super::*;

const FAMILY: &str = "👨\u{200d}👩\u{200d}👧";
const THUMB: &str = "👍🏽";

fn check_strip(input: &str, want: &str) {
    let got = strip_controls(input);
    assert_eq!(got, want, "strip_controls({input:?})");
    assert_eq!(
        matches!(got, Cow::Borrowed(_)),
        input == want,
        "borrowed exactly when unchanged: {input:?}"
    );
}

fn rows(line: &str, width: u16) -> Vec<&str> {
    wrap(line, width).collect()
}

fn check_wrap(line: &str, width: u16, want: &[&str]) {
    assert_eq!(rows(line, width), want, "wrap({line:?}, {width})");
    assert_eq!(
        visual_rows(line, width),
        want.len(),
        "visual_rows({line:?}, {width})"
    );
    assert_eq!(
        grapheme_rows(line, width),
        want,
        "grapheme path, wrap({line:?}, {width})"
    );
}

/// `graphemes` without its fast path: the whole text as one segmented stretch.
fn segmented(text: &str) -> Graphemes<'_> {
    Graphemes {
        text,
        at: text.len(),
        stretch: Some((0, text.grapheme_indices(true))),
    }
}

/// `wrap` without its fast paths.
fn grapheme_rows(line: &str, width: u16) -> Vec<&str> {
    let mut wrapped = wrap(line, width);
    wrapped.kind = Kind::Graphemes {
        graphemes: segmented(line),
        peeked: None,
    };
    wrapped.collect()
}

#[test]
fn strip_controls_cases() {
    check_strip("plain text\twith tab\n", "plain text\twith tab\n");
    check_strip("日本語 👍🏽 e\u{301}", "日本語 👍🏽 e\u{301}");
    check_strip("", "");
    check_strip("\x1b[31mred\x1b[0m", "red");
    check_strip("\x1b]0;x\x07", "");
    check_strip("echo \x1b]0;title\x07hi", "echo hi");
    check_strip("a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\b", "alinkb");
    check_strip("a\x1b(Bb\x1b#8c\x1b7d\x1b=e", "abcde");
    check_strip(
        "a\x1bP1$r\x1b\\b\x1bXsos\x07c\x1b^pm\x1b\\d\x1b_apc\x1b\\e",
        "abcde",
    );
    // ESC inside a CSI starts a new sequence; CAN and SUB abort.
    check_strip("a\x1b[12\x1b[3mb\x1b[1\x18c\x1b]x\x1ad", "abcd");
    check_strip("\x1b\x1aa\x1b[1\x1ab\x1b(\x18c", "abc");
    // DEL inside a sequence is ignored, the sequence goes on.
    check_strip("\x1b[1\x7fmb", "b");
    // `\n` and `\t` inside a CSI are executed, other controls dropped.
    check_strip("a\x1b[1\n\t\x012mb", "a\n\tb");
    // A non-ASCII char ends a malformed sequence and is kept.
    check_strip("a\x1b[1é\x1b日", "aé日");
    // The string's ESC followed by anything but `\` starts a new sequence.
    check_strip("a\x1b]x\x1b[31mb", "ab");
    // Unterminated at the end: dropped.
    check_strip("a\x1b[12", "a");
    check_strip("a\x1b", "a");
    check_strip("a\x1b]title", "a");
    // C0, DEL, C1: dropped; C1 CSI (U+009B) introduces nothing.
    check_strip("a\0b\x07c\x7fd\u{85}e", "abcde");
    check_strip("a\u{9b}31mb", "a31mb");
    check_strip("a\u{9c}", "a");
    check_strip("\u{9c}", "");
    // Neighbours of the C1 and bidi encodings stay: C2 A0–BF, E2 80 A9, E2 81 A5.
    check_strip(
        "© ° —\u{a0}…\u{2029}\u{2065}",
        "© ° —\u{a0}…\u{2029}\u{2065}",
    );
    // `\r\n` is `\n`, a lone `\r` goes.
    check_strip("a\r\nb\r\n", "a\nb\n");
    check_strip("10%\r20%\r", "10%20%");
    // Bidi controls (Trojan source) go, neighbours in U+2000 blocks stay.
    check_strip(
        "access\u{202e}\u{2066}level\u{2069}\u{202a}\u{202d}",
        "accesslevel",
    );
    check_strip(
        "\u{2029}\u{202f}\u{2065}\u{206a}",
        "\u{2029}\u{202f}\u{2065}\u{206a}",
    );
    check_strip("\x1b\u{202e}x", "x");
}

#[test]
fn strip_controls_sequence_cap_counts_from_the_escape() {
    // ESC ] + 4,093 payload bytes + BEL: the BEL is byte 4,096 and terminates.
    let complete = format!("\x1b]{}\x07ok", "x".repeat(4093));
    check_strip(&complete, "ok");
    // One more: abandoned after byte 4,096; the BEL is then a dropped control.
    let abandoned = format!("\x1b]{}y\x07ok", "x".repeat(4094));
    check_strip(&abandoned, "yok");
    // Multi-byte payload counts its bytes.
    let wide = format!("\x1b]{}日ok", "x".repeat(4092));
    check_strip(&wide, "ok");
}

#[test]
fn expand_tabs_cases() {
    for (line, want) in [
        ("a\tb", "a   b"),
        ("\t", "    "),
        ("abcd\tx", "abcd    x"),
        ("abc\t\tx", "abc     x"),
        ("日\tb", "日  b"),
        ("日本語\tb", "日本語  b"),
        ("a日\tb", "a日 b"),
        ("👍🏽\tx", "👍🏽  x"),
        ("e\u{301}\tx", "e\u{301}   x"),
    ] {
        assert_eq!(expand_tabs(line), want, "expand_tabs({line:?})");
    }
    assert!(matches!(
        expand_tabs("no tab 日"),
        Cow::Borrowed("no tab 日")
    ));
}

#[test]
fn str_width_cases() {
    for (text, want) in [
        ("", 0),
        ("abc", 3),
        ("日本語", 6),
        (THUMB, 2),
        (FAMILY, 2),
        ("e\u{301}", 1),
        ("a日b", 4),
        ("\u{200b}", 0),
        ("🇩🇪", 2),
        ("❤\u{fe0f}", 2),
    ] {
        assert_eq!(str_width(text), want, "str_width({text:?})");
    }
}

#[test]
fn cap_line_cases() {
    for (line, max, want) in [
        ("abcdef", 4, "abcd… [2 chars omitted]"),
        ("日本語日本", 3, "日本語… [2 chars omitted]"),
        // The family is 5 chars: cut before it rather than inside it.
        (&format!("ab{FAMILY}c")[..], 4, "ab… [6 chars omitted]"),
        ("abce\u{301}f", 4, "abc… [3 chars omitted]"),
        ("abc", 0, "… [3 chars omitted]"),
    ] {
        assert_eq!(cap_line(line, max, "…"), want, "cap_line({line:?}, {max})");
    }
    for (line, max) in [("abcd", 4), ("日本語", 3), ("", 0)] {
        assert!(
            matches!(cap_line(line, max, "…"), Cow::Borrowed(_)),
            "{line:?}"
        );
    }
    let long = "x".repeat(MAX_LINE_CHARS + 1234);
    let want = format!("{}… [1234 chars omitted]", "x".repeat(MAX_LINE_CHARS));
    assert_eq!(cap_line(&long, MAX_LINE_CHARS, "…"), want);
}

#[test]
fn wrap_cases() {
    check_wrap("abcdefg", 3, &["abc", "def", "g"]);
    check_wrap("abcdef", 3, &["abc", "def"]);
    check_wrap("abc", 80, &["abc"]);
    check_wrap("", 5, &[""]);
    check_wrap("abc", 0, &["a", "b", "c"]);
    check_wrap("日本語", 4, &["日本", "語"]);
    check_wrap("日本語", 5, &["日本", "語"]);
    // A wide char that does not fit at the end of a row starts the next.
    check_wrap("ab日c", 3, &["ab", "日c"]);
    check_wrap("a日本", 2, &["a", "日", "本"]);
    // Wider than the row: a `?` of its own.
    check_wrap("日本", 1, &["?", "?"]);
    check_wrap("a日b", 1, &["a", "?", "b"]);
    // `?` and a spacing mark are one grapheme of width 2: one stand-in, not a split.
    check_wrap("?\u{bca}x", 1, &["?", "x"]);
    check_wrap(&format!("{THUMB}{THUMB}"), 3, &[THUMB, THUMB]);
    check_wrap(&format!("x{FAMILY}y"), 2, &["x", FAMILY, "y"]);
    check_wrap("e\u{301}e\u{301}", 1, &["e\u{301}", "e\u{301}"]);
    // A zero-width grapheme stays on the full row it follows.
    check_wrap("ab\u{200b}c", 2, &["ab\u{200b}", "c"]);
    // Controls (not stripped) still measure and never panic.
    check_wrap("a\u{7}b\r", 2, &["a\u{7}", "b\r"]);
}

#[test]
fn truncate_to_width_cases() {
    for (text, width, ellipsis, want) in [
        ("abcdef", 4, "…", "abc…"),
        ("abcd", 4, "…", "abcd"),
        ("日本語", 4, "…", "日…"),
        ("日本語", 5, "…", "日本…"),
        ("a👍🏽b", 3, "…", "a…"),
        ("abcdef", 2, "...", ".."),
        ("abc", 0, "…", ""),
        ("日本語", 1, "", ""),
    ] {
        assert_eq!(
            truncate_to_width(text, width, ellipsis),
            want,
            "truncate_to_width({text:?}, {width}, {ellipsis:?})"
        );
    }
    assert!(matches!(
        truncate_to_width("abc", 3, "…"),
        Cow::Borrowed("abc")
    ));
}

/// Pieces that stress the escape machine, widths and segmentation.
const HOSTILE: &[&str] = &[
    "a", "Z", " ", "?", "[", "]", "\\", "(", ";", "0", "m", "P", "X", "^", "_", "\x1b", "\x07",
    "\x18", "\x1a", "\x7f", "\0", "\t", "\n", "\u{85}", "\u{9b}", "\u{9c}", "é", "\u{301}", "日",
    "本", "👍", "🏽", "👨", "\u{200d}", "\u{200b}", "\u{fe0f}", "🇩", "ｶ", "\u{ff9e}", "\u{903}",
    "\u{600}", "ل", "ا", "\u{1100}", "\u{1161}", "\u{fffd}", "\u{2029}",
];
const BIDI: &[&str] = &["\u{202a}", "\u{202e}", "\u{2066}", "\u{2069}"];

/// Strings built from `pieces`, plus a few long runs that reach the sequence cap.
fn built_from(pieces: &'static [&'static str]) -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        20 => proptest::sample::select(pieces).prop_map(str::to_owned),
        1 => (4085..4100usize).prop_map(|n| "x".repeat(n)),
    ];
    proptest::collection::vec(piece, 0..48).prop_map(|pieces| pieces.concat())
}

fn hostile() -> impl Strategy<Value = String> {
    prop_oneof![
        built_from(HOSTILE),
        built_from(&["\r", "\x1b", "]", "a", "\u{202e}", "\u{9b}", "日", "\n"]),
        built_from(BIDI),
        any::<String>(),
    ]
}

/// What the output sink makes of `text`.
fn sink(text: &str) -> String {
    let mut sanitizer = agentsh_output_sink::Sanitizer::new();
    let mut out = String::new();
    sanitizer.push(text.as_bytes(), |t| out.push_str(t));
    sanitizer.finish(|t| out.push_str(t));
    out
}

/// A line as `wrap` takes it: stripped, one logical line, tabs expanded.
fn drawable(text: &str) -> String {
    let stripped = strip_controls(text);
    expand_tabs(&stripped.replace('\n', "")).into_owned()
}

/// Checks every invariant of `wrap` for `line` at `width`.
fn check_wrap_invariants(line: &str, width: u16) {
    let rows = rows(line, width);
    let columns = usize::from(width.max(1));
    assert!(!rows.is_empty());
    assert_eq!(visual_rows(line, width), rows.len());
    assert_eq!(grapheme_rows(line, width), rows);
    let boundaries: Vec<usize> = line
        .grapheme_indices(true)
        .map(|(at, _)| at)
        .chain([line.len()])
        .collect();
    let mut at = 0;
    for row in &rows {
        assert!(str_width(row) <= columns, "{row:?} wider than {columns}");
        assert!(!row.is_empty() || line.is_empty(), "empty row in {line:?}");
        let grapheme = line[at..].graphemes(true).next().unwrap_or_default();
        if grapheme_width(grapheme) > columns {
            // Drawn as a stand-in of its own.
            assert_eq!(*row, OVERSIZED_GRAPHEME, "{grapheme:?} replaced");
            at += grapheme.len();
        } else {
            assert!(
                line[at..].starts_with(row),
                "{row:?} is the next part of {line:?}"
            );
            at += row.len();
        }
        assert!(
            boundaries.binary_search(&at).is_ok(),
            "row ends inside a grapheme at {at}"
        );
    }
    assert_eq!(at, line.len(), "rows give back {line:?}");
}

proptest! {
    // The escape machine has many small states: more cases for it.
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn strip_controls_removes_every_control(text in hostile()) {
        let stripped = strip_controls(&text);
        for c in stripped.chars() {
            let control = (c < ' ' && c != '\n' && c != '\t')
                || ('\u{7f}'..='\u{9f}').contains(&c)
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c);
            prop_assert!(!control, "{c:?} left in {stripped:?}");
        }
        let again = strip_controls(&stripped);
        prop_assert!(matches!(again, Cow::Borrowed(_)), "not idempotent: {stripped:?}");
    }

    #[test]
    fn strip_controls_matches_the_output_sink(text in built_from(HOSTILE)) {
        prop_assert_eq!(strip_controls(&text), sink(&text));
    }

    #[test]
    fn strip_controls_matches_the_output_sink_on_any_text(
        text in any::<String>().prop_map(|t| t.replace('\r', "")
            .replace(|c| BIDI.iter().any(|b| b.starts_with(c)), ""))
    ) {
        prop_assert_eq!(strip_controls(&text), sink(&text));
    }

}

fn clusters(text: &str) -> Vec<(usize, &str, usize)> {
    graphemes(text)
        .map(|cluster| (cluster.at, cluster.text, cluster.width))
        .collect()
}

fn reference_clusters(text: &str) -> Vec<(usize, &str, usize)> {
    text.grapheme_indices(true)
        .map(|(at, grapheme)| (at, grapheme, grapheme_width(grapheme)))
        .collect()
}

/// The chars [`is_simple`] accepts.
fn simple_chars() -> impl Iterator<Item = char> {
    (0..=u32::from(char::MAX))
        .filter_map(char::from_u32)
        .filter(|&c| is_simple(c))
}

#[test]
fn simple_chars_always_have_a_grapheme_boundary_between_them() {
    // Probes for every class a no-break rule needs: Extend, ZWJ and SpacingMark join what
    // precedes them, Prepend what follows, regional indicators pair, Hangul L joins a
    // syllable, V and T follow one, CR takes LF.
    let probes = |c: char| {
        [
            format!("a{c}"),
            format!("{c}a"),
            format!("\u{1f1e9}{c}"),
            format!("{c}\u{1f1e9}"),
            format!("{c}각"),
            format!("각{c}"),
            format!("{c}\n"),
            format!("\r{c}"),
        ]
    };
    let mut count = 0;
    for c in simple_chars() {
        count += 1;
        for probe in probes(c) {
            assert_eq!(probe.graphemes(true).count(), 2, "{c:?} in {probe:?}");
        }
    }
    assert!(count > 40_000, "{count} simple chars");
}

#[test]
fn simple_chars_measure_as_graphemes() {
    for c in simple_chars() {
        let text = format!("{c}{c}x");
        assert_eq!(clusters(&text), reference_clusters(&text), "{c:?}");
        assert_eq!(
            simple_width(c),
            grapheme_width(&text[..c.len_utf8()]),
            "{c:?}"
        );
    }
}

proptest! {
    #[test]
    fn graphemes_match_unicode_segmentation(text in hostile()) {
        prop_assert_eq!(clusters(&text), reference_clusters(&text));
    }

    #[test]
    fn wrap_rows_fit_and_give_back_the_line(text in hostile(), width in 0..14u16) {
        check_wrap_invariants(&drawable(&text), width);
        // Unstripped input keeps the invariants too.
        check_wrap_invariants(&text.replace('\n', ""), width);
    }

    #[test]
    fn wrap_wide_rows(text in hostile(), width in 60..400u16) {
        check_wrap_invariants(&drawable(&text), width);
    }

    #[test]
    fn widths_are_what_a_ratatui_buffer_draws(text in hostile(), width in 1..20u16) {
        let line = drawable(&text);
        let graphemes: usize = line.graphemes(true).map(grapheme_width).sum();
        prop_assert_eq!(str_width(&line), graphemes);
        // The whole line drawn on one wide enough row takes exactly its width.
        if str_width(&line) <= 4096 {
            let columns = str_width(&line).max(1) as u16;
            let mut buffer = Buffer::empty(Rect::new(0, 0, columns, 1));
            let (x, _) = buffer.set_stringn(0, 0, &line, usize::from(columns), Style::default());
            prop_assert_eq!(usize::from(x), str_width(&line));
        }
        for row in wrap(&line, width) {
            let mut buffer = Buffer::empty(Rect::new(0, 0, width, 1));
            let (x, _) = buffer.set_stringn(0, 0, row, usize::from(width), Style::default());
            prop_assert_eq!(usize::from(x), str_width(row), "row {:?} drawn whole", row);
        }
    }

    #[test]
    fn expand_tabs_stops_every_four_columns(text in hostile()) {
        let line = strip_controls(&text).replace('\n', "");
        let expanded = expand_tabs(&line);
        prop_assert!(!expanded.contains('\t'));
        // Reference: grapheme by grapheme.
        let mut want = String::new();
        let mut column = 0;
        for grapheme in line.graphemes(true) {
            if grapheme == "\t" {
                let spaces = TAB_STOP - column % TAB_STOP;
                want.push_str(&" ".repeat(spaces));
                column += spaces;
            } else {
                want.push_str(grapheme);
                column += grapheme_width(grapheme);
            }
        }
        prop_assert_eq!(expanded, want);
    }

    #[test]
    fn cap_line_keeps_a_grapheme_prefix(text in hostile(), max in 0..40usize) {
        let chars = text.chars().count();
        match cap_line(&text, max, "…") {
            Cow::Borrowed(same) => prop_assert!(chars <= max && same == text),
            Cow::Owned(capped) => {
                prop_assert!(chars > max);
                let (kept, note) = capped.rsplit_once("… [").unwrap_or_default();
                prop_assert!(text.starts_with(kept));
                prop_assert!(kept.chars().count() <= max);
                prop_assert!(text.grapheme_indices(true).any(|(at, _)| at == kept.len())
                    || kept.len() == text.len());
                let omitted = chars - kept.chars().count();
                prop_assert_eq!(note, format!("{omitted} chars omitted]"));
            }
        }
    }

    #[test]
    fn truncate_to_width_fits(text in hostile(), width in 0..30u16, ellipsis in "(…|\\.\\.\\.|日|)") {
        let line = drawable(&text);
        let fitted = truncate_to_width(&line, width, &ellipsis);
        prop_assert!(str_width(&fitted) <= usize::from(width), "{:?}", fitted);
        match fitted {
            Cow::Borrowed(same) => {
                prop_assert_eq!(same, &line[..]);
                prop_assert!(str_width(&line) <= usize::from(width));
            }
            Cow::Owned(cut) => {
                prop_assert!(str_width(&line) > usize::from(width));
                if str_width(&ellipsis) > usize::from(width) {
                    prop_assert!(ellipsis.starts_with(&cut[..]), "{:?}", cut);
                } else {
                    let kept = cut.strip_suffix(&ellipsis[..]).unwrap_or_default();
                    prop_assert!(cut.ends_with(&ellipsis[..]) && line.starts_with(kept), "{:?}", cut);
                    // The longest such prefix: one more grapheme would not fit.
                    let next = line[kept.len()..].graphemes(true).next().unwrap_or_default();
                    prop_assert!(
                        str_width(kept) + str_width(next) + str_width(&ellipsis) > usize::from(width),
                        "{:?} could keep {:?}", cut, next
                    );
                }
            }
        }
    }
}
