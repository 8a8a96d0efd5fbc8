#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod framing;
mod lenient;

pub use framing::{AsyncLineReader, InputLine, LineReader, LineSplitter, MAX_REQUEST_LINE_BYTES};
pub use lenient::{Extent, id_token, is_blank, recover_id, repair, strip_bom, written_id};
