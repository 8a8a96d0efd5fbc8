#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod layout;

pub use layout::{
    MAX_LINE_CHARS, TAB_STOP, Wrapped, cap_line, expand_tabs, str_width, strip_controls,
    truncate_to_width, visual_rows, wrap,
};
