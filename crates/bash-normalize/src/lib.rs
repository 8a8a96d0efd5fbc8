#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod elements;
mod lexer;
mod lines;
mod normalize;
pub mod syntax;

pub use elements::list_elements;
pub use lines::{apply_head_tail, count_lines};
pub use normalize::{Limits, Normalized, merge_limits, normalize};
