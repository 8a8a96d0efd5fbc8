//! The views as ratatui-core [`Widget`]s, so any ratatui app can place them: each pairs a
//! [`Renderer`] with a view and draws into the area it is given, clipped to it.

use agentsh_protocol::JobSummary;
use ratatui_core::buffer::Buffer;
use ratatui_core::layout::Rect;
use ratatui_core::text::Text;
use ratatui_core::widgets::Widget;

use crate::renderer::Renderer;
use crate::view::{BangView, PtyOverlayView, ToolCallView};

/// Draws `text` top-down into `area`, one row per line, clipped to the area.
fn draw_rows(text: &Text<'_>, area: Rect, buf: &mut Buffer) {
    for (line, y) in text.lines.iter().zip(area.top()..area.bottom()) {
        line.render(
            Rect {
                y,
                height: 1,
                ..area
            },
            buf,
        );
    }
}

/// A tool call as a widget.
///
/// ```
/// use agentsh_renderer::ratatui_core::{buffer::Buffer, layout::Rect, widgets::Widget};
/// use agentsh_renderer::{BashArgs, CallState, DefaultRenderer, ToolCallView, ToolCallWidget};
///
/// let args = BashArgs { command: "ls".into(), ..BashArgs::default() };
/// let view = ToolCallView::new(&args, "/p", CallState::Running { tail: "" });
/// let widget = ToolCallWidget::new(&DefaultRenderer::default(), view, 20);
/// assert_eq!(widget.height(), 2);
/// let mut buf = Buffer::empty(Rect::new(0, 0, 20, 2));
/// widget.render(buf.area, &mut buf);
/// assert_eq!(buf[(0, 0)].symbol(), "$");
/// ```
pub struct ToolCallWidget {
    text: Text<'static>,
}

impl ToolCallWidget {
    /// The view drawn by `renderer` at `width` columns.
    pub fn new<R: Renderer + ?Sized>(renderer: &R, view: ToolCallView<'_>, width: u16) -> Self {
        Self {
            text: renderer.tool_call(&view, width),
        }
    }

    /// Rows it needs.
    pub fn height(&self) -> u16 {
        u16::try_from(self.text.lines.len()).unwrap_or(u16::MAX)
    }
}

impl Widget for &ToolCallWidget {
    fn render(self, area: Rect, buf: &mut Buffer) {
        draw_rows(&self.text, area, buf);
    }
}

impl Widget for ToolCallWidget {
    fn render(self, area: Rect, buf: &mut Buffer) {
        (&self).render(area, buf);
    }
}

/// A bang command as a widget.
pub struct BangWidget {
    text: Text<'static>,
}

impl BangWidget {
    /// The view drawn by `renderer` at `width` columns.
    pub fn new<R: Renderer + ?Sized>(renderer: &R, view: BangView<'_>, width: u16) -> Self {
        Self {
            text: renderer.bang(&view, width),
        }
    }

    /// Rows it needs.
    pub fn height(&self) -> u16 {
        u16::try_from(self.text.lines.len()).unwrap_or(u16::MAX)
    }
}

impl Widget for &BangWidget {
    fn render(self, area: Rect, buf: &mut Buffer) {
        draw_rows(&self.text, area, buf);
    }
}

impl Widget for BangWidget {
    fn render(self, area: Rect, buf: &mut Buffer) {
        (&self).render(area, buf);
    }
}

/// A PTY overlay as a widget; the cursor position it wants is left for the host
/// ([`Renderer::pty_overlay`] returns it).
pub struct PtyOverlayWidget<'a, R: Renderer + ?Sized> {
    renderer: &'a R,
    view: PtyOverlayView<'a>,
}

impl<'a, R: Renderer + ?Sized> PtyOverlayWidget<'a, R> {
    /// The overlay of `view` drawn by `renderer`.
    pub fn new(renderer: &'a R, view: PtyOverlayView<'a>) -> Self {
        Self { renderer, view }
    }
}

impl<R: Renderer + ?Sized> Widget for &PtyOverlayWidget<'_, R> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        self.renderer.pty_overlay(&self.view, area, buf);
    }
}

impl<R: Renderer + ?Sized> Widget for PtyOverlayWidget<'_, R> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        (&self).render(area, buf);
    }
}

/// A job line as a widget.
pub struct JobLineWidget<'a, R: Renderer + ?Sized> {
    renderer: &'a R,
    job: &'a JobSummary,
}

impl<'a, R: Renderer + ?Sized> JobLineWidget<'a, R> {
    /// The line of `job` drawn by `renderer`.
    pub fn new(renderer: &'a R, job: &'a JobSummary) -> Self {
        Self { renderer, job }
    }
}

impl<R: Renderer + ?Sized> Widget for &JobLineWidget<'_, R> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.is_empty() {
            return;
        }
        self.renderer
            .job_line(self.job, area.width)
            .render(Rect { height: 1, ..area }, buf);
    }
}

impl<R: Renderer + ?Sized> Widget for JobLineWidget<'_, R> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        (&self).render(area, buf);
    }
}
