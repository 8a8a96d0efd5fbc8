#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod default;
mod layout;
mod renderer;
pub mod snapshot;
mod theme;
mod view;
mod widgets;

pub use default::{COLLAPSED_BANG_LINES, COLLAPSED_TOOL_LINES, DefaultRenderer, draw_screen};
pub use renderer::Renderer;
pub use theme::{Glyphs, Palette, elapsed_text};
pub use view::{
    BangView, CallState, DEFAULT_MAX_BYTES, ExpandedSource, Expansion, LineWindow, PtyOverlayView,
    ToolCallView,
};
pub use widgets::{BangWidget, JobLineWidget, PtyOverlayWidget, ToolCallWidget};

// The data the views draw, and the ratatui-core the trait speaks, so that a user of this crate
// needs no other to call it.
pub use agentsh_protocol::{
    BangRun, BangState, BashArgs, BashResult, Cell, CellAttrs, CellColor, JobState, JobSummary,
    OutputSummary, Screen, ShapedMeta, ShownRange, Theme, Timeout, ToolContent, ToolDetails,
    ToolMeta, ToolResult, TruncatedBy, Truncation, TruncationDirection,
};
pub use ratatui_core;

pub use layout::{
    MAX_LINE_CHARS, TAB_STOP, Wrapped, cap_line, expand_tabs, single_line, str_width,
    strip_controls, truncate_to_width, visual_rows, wrap,
};
