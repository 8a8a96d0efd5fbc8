//! The PTY overlay: the screen in a frame, header `$ <command>`, footer `esc to
//! kill` (`ctrl+] to kill` on the alternate screen).

use agentsh_renderer::ratatui_core::buffer::Buffer;
use agentsh_renderer::ratatui_core::layout::{Position, Rect};
use agentsh_renderer::ratatui_core::widgets::Widget;
use agentsh_renderer::{
    CellColor, DefaultRenderer, PtyOverlayView, PtyOverlayWidget, Renderer, Screen,
};
use insta::assert_snapshot;

use super::support::{WIDTHS, buffer_rows, style_name};

/// A 30×4 screen: a prompt, a coloured word, a wide char, the cursor after the prompt.
fn screen(alternate: bool) -> Screen {
    let mut screen = Screen::blank(30, 4);
    for (col, ch) in ">>> 1+1".chars().enumerate() {
        screen.cells[col].text = ch.to_string();
    }
    for (col, ch) in "2 ok".chars().enumerate() {
        let cell = &mut screen.cells[30 + col];
        cell.text = ch.to_string();
        if col >= 2 {
            cell.fg = CellColor::Indexed(2);
            cell.attrs.bold = true;
        }
    }
    screen.cells[60].text = "日".into();
    screen.cells[61].wide_continuation = true;
    screen.cells[62].text = "\u{1b}".into(); // a control in a cell is never drawn
    screen.cursor = Some((2, 4));
    screen.alternate_screen = alternate;
    screen
}

fn draw(view: &PtyOverlayView<'_>, area: Rect) -> (Buffer, Option<Position>) {
    let mut buf = Buffer::empty(area);
    let cursor = DefaultRenderer::default().pty_overlay(view, area, &mut buf);
    (buf, cursor)
}

#[test]
fn frame_header_footer_and_cursor() {
    let screen = screen(false);
    let view = PtyOverlayView {
        command: "python3 -q",
        screen: &screen,
    };
    let (buf, cursor) = draw(&view, Rect::new(0, 0, 40, 6));
    let rows = buffer_rows(&buf);
    assert_eq!(rows[0], format!("{:<40}|", "$ python3 -q"));
    assert_eq!(rows[1], format!("{:<40}|", ">>> 1+1"));
    assert_eq!(rows[3], format!("{:<39}|", "日"));
    assert_eq!(rows[5], format!("{:<40}|", "esc to kill"));
    assert_eq!(cursor, Some(Position::new(4, 3)));
    assert_eq!(
        DefaultRenderer::default().pty_screen_area(Rect::new(0, 0, 40, 6)),
        Rect::new(0, 1, 40, 4)
    );
}

#[test]
fn snapshot_overlay_at_each_width_and_on_the_alternate_screen() {
    let mut out = String::new();
    for alternate in [false, true] {
        let screen = screen(alternate);
        let view = PtyOverlayView {
            command: "vim notes.txt \u{1b}]0;x\u{7}",
            screen: &screen,
        };
        for width in WIDTHS {
            let area = Rect::new(0, 0, width, 6);
            let mut buf = Buffer::empty(Rect::new(0, 0, width, 6));
            PtyOverlayWidget::new(&DefaultRenderer::default(), view).render(area, &mut buf);
            out.push_str(&format!(
                "── {width} columns, alternate screen {alternate} ──\n"
            ));
            for row in buffer_rows(&buf) {
                out.push_str(&row);
                out.push('\n');
            }
            out.push_str("styles:");
            for (x, y) in [(0, 0), (0, 2), (2, 2), (0, 5)] {
                out.push_str(&format!(" ({x},{y})={:?}", style_name(buf[(x, y)].style())));
            }
            out.push('\n');
        }
    }
    assert_snapshot!(out);
}

#[test]
fn narrow_area_clips_the_screen_and_the_cursor() {
    let screen = screen(false);
    let view = PtyOverlayView {
        command: "a very long command line that does not fit",
        screen: &screen,
    };
    let (buf, cursor) = draw(&view, Rect::new(0, 0, 3, 3));
    assert_eq!(buffer_rows(&buf), ["$ …|", ">>>|", "esc|"]);
    assert_eq!(cursor, None, "the cursor row is outside the area");
    // A wide character cut by the right edge is not drawn half.
    let (buf, _) = draw(&view, Rect::new(0, 0, 1, 5));
    assert_eq!(buffer_rows(&buf)[3], " |");
}
