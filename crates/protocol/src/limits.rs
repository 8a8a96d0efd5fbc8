//! The spec's numbers that more than one crate needs: each is written here once.

/// The default byte limit of a command's kept output (50 KB; setting `output.max_bytes`),
/// which the notice and the renderer's truncation warning name.
pub const DEFAULT_OUTPUT_MAX_BYTES: u64 = 51_200;

/// An escape sequence still unterminated after this many bytes is abandoned: what was read of
/// it is dropped and the next character is read as plain text. The output sink's sanitiser and
/// the renderer's `strip_controls` share this grammar.
pub const MAX_SEQUENCE_BYTES: usize = 4096;
