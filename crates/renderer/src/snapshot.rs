//! Writing views down as text, for snapshot tests of a renderer (this crate's and yours): the
//! rows, the rows with their styles, and a `Buffer`'s rows.

use std::fmt::Write as _;

use ratatui_core::buffer::Buffer;
use ratatui_core::style::{Modifier, Style};
use ratatui_core::text::Text;

use crate::layout::str_width;

/// The rows as text, one per line.
pub fn plain_rows(text: &Text<'_>) -> Vec<String> {
    text.lines.iter().map(ToString::to_string).collect()
}

/// A style as `fg on bg mods` (`yellow`, `indexed(2) on reset bold`); empty for the default
/// style.
///
/// ```
/// use agentsh_renderer::ratatui_core::style::{Color, Style, Stylize};
/// use agentsh_renderer::snapshot::style_name;
///
/// assert_eq!(style_name(Style::new().fg(Color::Red).bold()), "red bold");
/// assert_eq!(style_name(Style::new()), "");
/// ```
pub fn style_name(style: Style) -> String {
    let mut parts = Vec::new();
    if let Some(fg) = style.fg {
        parts.push(format!("{fg:?}").to_lowercase());
    }
    if let Some(bg) = style.bg {
        parts.push(format!("on {bg:?}").to_lowercase());
    }
    for (modifier, name) in [
        (Modifier::BOLD, "bold"),
        (Modifier::DIM, "dim"),
        (Modifier::ITALIC, "italic"),
        (Modifier::UNDERLINED, "underlined"),
        (Modifier::REVERSED, "reversed"),
    ] {
        if style.add_modifier.contains(modifier) {
            parts.push(name.to_owned());
        }
    }
    parts.join(" ")
}

/// The rows with each span's style: `{style}text{/}`, unstyled spans bare.
pub fn styled_rows(text: &Text<'_>) -> Vec<String> {
    text.lines
        .iter()
        .map(|line| {
            let mut row = String::new();
            for span in &line.spans {
                let style = style_name(line.style.patch(span.style));
                if style.is_empty() {
                    row.push_str(&span.content);
                } else {
                    // Writing into a String cannot fail.
                    let _ = write!(row, "{{{style}}}{}{{/}}", span.content);
                }
            }
            row
        })
        .collect()
}

/// A buffer's rows as text, each ending in `|` so that trailing blanks stay visible; a wide
/// character is written once.
pub fn buffer_rows(buf: &Buffer) -> Vec<String> {
    let area = buf.area;
    (area.top()..area.bottom())
        .map(|y| {
            let mut row = String::new();
            let mut skip = 0;
            for x in area.left()..area.right() {
                if skip > 0 {
                    skip -= 1;
                    continue;
                }
                let symbol = buf[(x, y)].symbol();
                skip = str_width(symbol).saturating_sub(1);
                row.push_str(symbol);
            }
            row.push('|');
            row
        })
        .collect()
}
