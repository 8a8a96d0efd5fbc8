//! The headless terminal: what it exposes, clamping, and — differentially against `vt100` fed
//! every byte — that fast-forwarding long plain output changes nothing a reader can see.

use agentsh_pty_runtime::vt100;
use agentsh_pty_runtime::{Terminal, TerminalSize};
use proptest::prelude::*;
use std::num::NonZeroU16;

#[test]
fn defaults_are_120_by_40_with_10000_lines_of_scrollback() {
    let terminal = Terminal::new(TerminalSize::default());
    assert_eq!(
        terminal.size(),
        TerminalSize {
            cols: 120,
            rows: 40
        }
    );
    let lines = (0..20_000)
        .map(|i| format!("{i}\r\n"))
        .collect::<Vec<_>>()
        .concat();
    terminal.process(lines.as_bytes());
    terminal.with_screen(|screen| assert_eq!(screen.scrollback_len(), 10_000));
    // The screen holds the last 39 lines and the cursor's empty line.
    assert_eq!(terminal.rows()[0], "19961");
    assert_eq!(terminal.rows()[38], "19999");
    assert_eq!(terminal.cursor(), (39, 0));
}

#[test]
fn screen_cursor_title_and_modes() {
    let terminal = Terminal::new(TerminalSize::clamped(30, 6));
    terminal.process(b"\x1b]0;my title\x07hello\r\n\x1b[31mred\x1b[0m\x1b[?25l");
    assert_eq!(terminal.contents(), "hello\nred");
    assert_eq!(terminal.cursor(), (1, 3));
    assert_eq!(terminal.title(), "my title");
    assert_eq!(terminal.cell_text(1, 0).as_deref(), Some("r"));
    assert_eq!(terminal.cell_text(99, 0), None);
    assert!(terminal.cursor_hidden());
    terminal.with_screen(|screen| {
        let cell = screen.cell(1, 0).expect("cell");
        assert_eq!(cell.fgcolor(), vt100::Color::Idx(1));
    });
    assert!(!terminal.alternate_screen());
    assert!(!terminal.application_cursor());
    terminal.process(b"\x1b[?1049h\x1b[?1h");
    assert!(terminal.alternate_screen());
    assert!(terminal.application_cursor());
    assert_eq!(terminal.contents(), "");
    terminal.process(b"\x1b[?1049l\x1b[?1l");
    let modes = terminal.key_modes();
    assert!(!modes.alternate_screen && !modes.application_cursor);
    assert_eq!(terminal.contents(), "hello\nred");
}

#[test]
fn sizes_are_clamped_to_the_spec_bounds() {
    for (cols, rows, want) in [
        (0, 0, (20, 5)),
        (19, 4, (20, 5)),
        (20, 5, (20, 5)),
        (400, 200, (400, 200)),
        (401, 201, (400, 200)),
        (u16::MAX, u16::MAX, (400, 200)),
        (132, 43, (132, 43)),
    ] {
        let size = TerminalSize::clamped(cols, rows);
        assert_eq!((size.cols, size.rows), want, "{cols}x{rows}");
    }
}

#[test]
fn resize_keeps_the_text() {
    let terminal = Terminal::new(TerminalSize::clamped(40, 10));
    terminal.process(b"one\r\ntwo");
    terminal.resize(TerminalSize::clamped(80, 20));
    assert_eq!(terminal.size(), TerminalSize { cols: 80, rows: 20 });
    assert_eq!(terminal.contents(), "one\ntwo");
}

/// Everything a reader can see: cursor, modes, title, screen with attributes and every
/// scrollback row.
fn visible(screen: &vt100::Screen) -> Vec<String> {
    let mut screen = screen.clone();
    let mut out = vec![format!(
        "{:?} alt={} app={} hidden={}",
        screen.cursor_position(),
        screen.alternate_screen(),
        screen.application_cursor(),
        screen.hide_cursor()
    )];
    for offset in 0..=screen.scrollback_capacity() {
        screen.set_scrollback(offset);
        out.push(screen.contents_formatted().escape_debug().to_string());
    }
    out
}

/// Pieces of terminal output: mostly plain lines (so that fast-forward kicks in), colours,
/// and the sequences that must not be skipped or must switch it off.
fn piece() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => "[a-z ]{0,30}".prop_map(|s| format!("{s}\r\n").into_bytes()),
        3 => Just(b"\r\n".repeat(12)),
        2 => (0u8..8).prop_map(|c| format!("\x1b[3{c}m").into_bytes()),
        1 => Just(b"\x1b[0;1m".to_vec()),
        1 => Just(b"\x1b[m".to_vec()),
        1 => Just(b"\x1b[38;5;200m".to_vec()),
        1 => "[a-z]{1,50}".prop_map(String::into_bytes), // no line end (wraps)
        1 => Just(b"\r".to_vec()),
        1 => Just(b"\n".to_vec()),
        1 => Just(b"\t|".to_vec()),
        1 => Just("ü→漢".as_bytes().to_vec()),
        1 => Just(b"\xe2\x82".to_vec()), // a cut-off character
        1 => (1u8..9, 1u8..25).prop_map(|(r, c)| format!("\x1b[{r};{c}H").into_bytes()),
        1 => Just(b"\x1b[2K".to_vec()),
        1 => Just(b"\x1b[J".to_vec()),
        1 => Just(b"\x1b]2;title\x07".to_vec()),
        1 => Just(b"\x1b7".to_vec()),
        1 => Just(b"\x1b8".to_vec()),
        1 => Just(b"\x1b[?1h".to_vec()),
        1 => Just(b"\x1b[?25l".to_vec()),
        1 => Just(b"\x1b[6n".to_vec()),
        1 => Just(b"\x1b[3;".to_vec()), // an SGR or CSI completed by what follows
        1 => Just(b"\x1b[2;5r".to_vec()),
        1 => Just(b"\x1b[?1049h".to_vec()),
        1 => Just(b"\x1b[?1049l".to_vec()),
        1 => Just(b"\x1bc".to_vec()),
    ]
}

proptest! {
    #[test]
    fn fast_forward_shows_what_vt100_shows(
        pieces in proptest::collection::vec(piece(), 0..200),
        chunk in 1usize..300,
        rows in 5u16..9,
        cols in 20u16..30,
        scrollback in 0usize..12,
    ) {
        let stream: Vec<u8> = pieces.concat();
        let mut reference = vt100::Parser::new(
            NonZeroU16::new(rows).expect("rows"),
            NonZeroU16::new(cols).expect("cols"),
            scrollback,
        );
        reference.process(&stream);
        let terminal = Terminal::with_scrollback(TerminalSize { cols, rows }, scrollback);
        for part in stream.chunks(chunk) {
            terminal.process(part);
        }
        let got = terminal.with_screen(visible);
        prop_assert_eq!(got, visible(reference.screen()));
    }
}
