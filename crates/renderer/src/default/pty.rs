//! The PTY overlay: the headless terminal's screen in a frame with a header and a
//! footer, no side borders (the PTY gets the full width).

use agentsh_protocol::{Cell, CellColor, Screen};
use ratatui_core::buffer::Buffer;
use ratatui_core::layout::{Position, Rect};
use ratatui_core::style::{Color, Modifier, Style};

use super::DefaultRenderer;
use crate::layout::{single_line, str_width, strip_controls, truncate_to_width};
use crate::view::PtyOverlayView;

impl DefaultRenderer {
    pub(super) fn draw_pty_overlay(
        &self,
        view: &PtyOverlayView<'_>,
        area: Rect,
        buf: &mut Buffer,
    ) -> Option<Position> {
        if area.is_empty() {
            return None;
        }
        let glyphs = &self.glyphs;
        let command = single_line(view.command);
        let header =
            truncate_to_width(&format!("$ {command}"), area.width, glyphs.ellipsis).into_owned();
        buf.set_style(Rect { height: 1, ..area }, Style::reset());
        buf.set_stringn(
            area.x,
            area.y,
            &header,
            usize::from(area.width),
            self.palette.title,
        );
        let inner = Self::screen_area(area);
        if area.height >= 2 {
            let footer = if view.screen.alternate_screen {
                "ctrl+] to kill"
            } else {
                "esc to kill"
            };
            let y = area.bottom() - 1;
            buf.set_style(
                Rect {
                    y,
                    height: 1,
                    ..area
                },
                Style::reset(),
            );
            buf.set_stringn(
                area.x,
                y,
                footer,
                usize::from(area.width),
                self.palette.muted,
            );
        }
        draw_screen(view.screen, inner, buf);
        let (row, col) = view.screen.cursor?;
        (row < inner.height && col < inner.width)
            .then(|| Position::new(inner.x + col, inner.y + row))
    }

    pub(super) fn screen_area(area: Rect) -> Rect {
        let top = area.height.min(1);
        let bottom = u16::from(area.height >= 2);
        Rect {
            y: area.y + top,
            height: area.height - top - bottom,
            ..area
        }
    }
}

/// Draws a terminal screen's cells into `inner` of `buf`, clipped to it (a wide character cut
/// by the right edge is not drawn half); what the screen does not cover is cleared. Every
/// cell's text is stripped of controls first. For renderers of your own overlay.
pub fn draw_screen(screen: &Screen, inner: Rect, buf: &mut Buffer) {
    buf.set_style(inner, Style::reset());
    for y in 0..inner.height {
        for x in 0..inner.width {
            buf[(inner.x + x, inner.y + y)].reset();
        }
        for (x, cell) in screen
            .row(y)
            .iter()
            .enumerate()
            .take(usize::from(inner.width))
        {
            if cell.wide_continuation {
                continue;
            }
            let x = x as u16;
            let text = strip_controls(&cell.text);
            let width = str_width(&text);
            // A wide character cut by the right edge would spill out of the area.
            let symbol = if text.is_empty() || width == 0 || x + width as u16 > inner.width {
                " "
            } else {
                &text
            };
            let target = &mut buf[(inner.x + x, inner.y + y)];
            target.set_symbol(symbol);
            target.set_style(cell_style(cell));
        }
    }
}

fn cell_style(cell: &Cell) -> Style {
    let mut style = Style::new().fg(color(cell.fg)).bg(color(cell.bg));
    let attrs = cell.attrs;
    for (on, modifier) in [
        (attrs.bold, Modifier::BOLD),
        (attrs.dim, Modifier::DIM),
        (attrs.italic, Modifier::ITALIC),
        (attrs.underline, Modifier::UNDERLINED),
        (attrs.inverse, Modifier::REVERSED),
    ] {
        if on {
            style = style.add_modifier(modifier);
        }
    }
    style
}

fn color(color: CellColor) -> Color {
    match color {
        CellColor::Default => Color::Reset,
        CellColor::Indexed(index) => Color::Indexed(index),
        CellColor::Rgb(r, g, b) => Color::Rgb(r, g, b),
    }
}
