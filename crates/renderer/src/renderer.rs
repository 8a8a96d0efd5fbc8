//! The [`Renderer`] trait: one method per view. The interactive mode draws only through it, so
//! a downstream crate swaps the whole look by implementing it.

use agentsh_protocol::JobSummary;
use ratatui_core::buffer::Buffer;
use ratatui_core::layout::{Position, Rect};
use ratatui_core::text::{Line, Text};

use crate::view::{BangView, PtyOverlayView, ToolCallView};

/// Turns agentsh's data into styled lines (or cells) for a given width.
///
/// Every method is pure: no I/O, no clock (the host passes a spinner tick), and every string it
/// draws is stripped of control characters and escape sequences first
/// ([`strip_controls`](crate::strip_controls)), since commands and their output are untrusted.
/// Returned lines are already wrapped: none is wider than `width` columns, so a host can count
/// rows for its layout and draw them as they are.
pub trait Renderer {
    /// A `bash` tool call: running (live tail, spinner) or done (its result), collapsed (the last
    /// lines) or expanded (the window the view carries), with its footers.
    fn tool_call(&self, view: &ToolCallView<'_>, width: u16) -> Text<'static>;

    /// A bang command (`!cmd`, `!!cmd`): header, output, spinner or how it ended.
    fn bang(&self, view: &BangView<'_>, width: u16) -> Text<'static>;

    /// A command on a PTY: its screen inside a frame with a header and a footer, drawn into
    /// `area` of `buf`. Returns where the host should show the cursor, if anywhere.
    fn pty_overlay(
        &self,
        view: &PtyOverlayView<'_>,
        area: Rect,
        buf: &mut Buffer,
    ) -> Option<Position>;

    /// The part of an overlay `area` the PTY's screen gets (the rest is the frame): the host
    /// sizes the PTY to it.
    fn pty_screen_area(&self, area: Rect) -> Rect;

    /// One background job as a single line (a status area, `/jobs`).
    fn job_line(&self, job: &JobSummary, width: u16) -> Line<'static>;
}
