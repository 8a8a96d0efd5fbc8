//! The spec's numbers that more than one crate needs: each is written here once.

/// The default byte limit of a command's kept output (50 KB; setting `output.max_bytes`),
/// which the notice and the renderer's truncation warning name.
pub const DEFAULT_OUTPUT_MAX_BYTES: u64 = 51_200;

/// Default of `bash.max_shells`: one session keeps at most this many persistent shells (the
/// configuration's default and the executor's).
pub const DEFAULT_MAX_SHELLS: usize = 16;

/// Default of `bash.shell_idle_minutes`: a session's shells idle this long are closed (the
/// configuration's default and the executor's).
pub const DEFAULT_IDLE_MINUTES: u64 = 30;

/// How long the child that sources the user's rc for the snapshot may run before it is killed
/// (10 s; setting `bash.snapshot_timeout`): the configuration's default and the snapshot's.
pub const DEFAULT_SNAPSHOT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The longest time box an rc snapshot is given (60 s): the configuration's bound and the
/// snapshot's cut.
pub const MAX_SNAPSHOT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// An escape sequence still unterminated after this many bytes is abandoned: what was read of
/// it is dropped and the next character is read as plain text. The output sink's sanitiser and
/// the renderer's `strip_controls` share this grammar.
pub const MAX_SEQUENCE_BYTES: usize = 4096;
