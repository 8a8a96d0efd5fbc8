//! [`DefaultRenderer`]: the tool call, bang, PTY and job views with the texts of
//! the original coding agent's renderer.

mod bang;
mod job;
mod pty;
mod rows;
mod tool;

use agentsh_protocol::{JobSummary, Theme};
use ratatui_core::buffer::Buffer;
use ratatui_core::layout::{Position, Rect};
use ratatui_core::text::{Line, Text};

pub use bang::COLLAPSED_BANG_LINES;
pub use pty::draw_screen;
pub use tool::COLLAPSED_TOOL_LINES;

use crate::renderer::Renderer;
use crate::theme::{Glyphs, Palette};
use crate::view::{BangView, PtyOverlayView, ToolCallView};

/// The tool call, bang, PTY and job views in one of the three themes.
///
/// ```
/// use agentsh_renderer::{BashArgs, CallState, DefaultRenderer, Renderer, Theme, ToolCallView};
///
/// let args = BashArgs { command: "make".into(), timeout: Some(60.0), ..BashArgs::default() };
/// let view = ToolCallView::new(&args, "/project", CallState::Running { tail: "cc main.c\n" });
/// let text = DefaultRenderer::new(Theme::Ascii).tool_call(&view, 40);
/// let rows: Vec<String> = text.lines.iter().map(ToString::to_string).collect();
/// assert_eq!(rows, ["$ make", "cc main.c", "| Running... (esc to cancel)", "[Timeout: 60s]"]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DefaultRenderer {
    theme: Theme,
    glyphs: Glyphs,
    palette: Palette,
}

impl DefaultRenderer {
    /// The default views in `theme`.
    pub fn new(theme: Theme) -> Self {
        Self {
            theme,
            glyphs: Glyphs::of(theme),
            palette: Palette::default(),
        }
    }

    /// The same views with other styles.
    #[must_use]
    pub fn with_palette(mut self, palette: Palette) -> Self {
        self.palette = palette;
        self
    }

    /// The theme.
    pub fn theme(&self) -> Theme {
        self.theme
    }
}

impl Default for DefaultRenderer {
    fn default() -> Self {
        Self::new(Theme::default())
    }
}

impl Renderer for DefaultRenderer {
    fn tool_call(&self, view: &ToolCallView<'_>, width: u16) -> Text<'static> {
        self.draw_tool_call(view, width)
    }

    fn bang(&self, view: &BangView<'_>, width: u16) -> Text<'static> {
        self.draw_bang(view, width)
    }

    fn pty_overlay(
        &self,
        view: &PtyOverlayView<'_>,
        area: Rect,
        buf: &mut Buffer,
    ) -> Option<Position> {
        self.draw_pty_overlay(view, area, buf)
    }

    fn pty_screen_area(&self, area: Rect) -> Rect {
        Self::screen_area(area)
    }

    fn job_line(&self, job: &JobSummary, width: u16) -> Line<'static> {
        self.draw_job_line(job, width)
    }
}
