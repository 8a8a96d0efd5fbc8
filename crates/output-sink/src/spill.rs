//! The seam between the sink and where it spills the full output (an artifact file).

use std::{fmt, io};

/// Where an [`OutputSink`](crate::OutputSink) writes the entire sanitised stream once the
/// in-memory tail overflows.
///
/// Custom spills are supported: implement this trait for any destination (a file of your own, a
/// socket, an in-memory buffer, a test double that injects failures) and pass it as
/// [`SinkOptions::spill`](crate::SinkOptions::spill). `agentsh-artifact-store`'s
/// `ArtifactReservation` is the implementation agentsh uses.
///
/// What the sink does with a spill:
/// - [`write_all`](Spill::write_all) receives the sanitised stream in order, from its first byte:
///   first, at the overflow, what the tail held (at most the sink's `max_bytes`), then batches of
///   at least 256 KiB (the last one may be shorter). Nothing is written unless the tail overflowed.
/// - After a failed `write_all` or `finish`, the sink calls [`discard`](Spill::discard) and never
///   uses the spill again; it reports the error's text as `artifact_error` and no `artifact_id`.
/// - When the stream ends without overflow, the sink calls `discard` without having written
///   anything (the reservation is released).
/// - Otherwise the sink calls [`finish`](Spill::finish) once and reports [`id`](Spill::id) as
///   `artifact_id` of the [`OutputSummary`](crate::OutputSummary).
///
/// What a spill must do in return:
/// - keep every byte `write_all` accepted, in order, so that after `finish` the destination holds
///   exactly the stream (a reader of `id` sees the whole sanitised output);
/// - return an error from `write_all` or `finish` rather than drop bytes silently: the sink then
///   reports the output as not saved;
/// - remove whatever was written in `discard` (it consumes the spill; it cannot fail);
/// - be [`Send`], since a sink may move between threads with its command.
///
/// ```
/// use std::io;
/// use agentsh_output_sink::{OutputSink, SinkOptions, Spill};
///
/// /// Keeps the spilled stream in memory; dropping it (in `discard`) frees what was written.
/// struct InMemory(Vec<u8>);
///
/// impl Spill for InMemory {
///     fn id(&self) -> &str { "mem-1" }
///     fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
///         self.0.extend_from_slice(bytes);
///         Ok(())
///     }
///     fn finish(&mut self) -> io::Result<()> { Ok(()) }
///     fn discard(self: Box<Self>) {}
/// }
///
/// let spill = Box::new(InMemory(Vec::new()));
/// let options = SinkOptions { max_bytes: 4, spill: Some(spill), ..SinkOptions::default() };
/// let mut sink = OutputSink::new(options);
/// sink.push(b"one\ntwo\n");
/// let summary = sink.dump();
/// assert_eq!(summary.output, "two\n");
/// assert_eq!(summary.artifact_id.as_deref(), Some("mem-1"));
/// ```
pub trait Spill: Send {
    /// The id reported as `artifact_id` when something was spilled.
    fn id(&self) -> &str;
    /// Appends bytes to the spill file. An error stops spilling for good.
    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()>;
    /// Makes everything written durable and visible to readers (called once, at the end).
    fn finish(&mut self) -> std::io::Result<()>;
    /// Deletes what was written (called after a failed write, and for an unused spill).
    fn discard(self: Box<Self>);
}

/// Why an [`OutputSink`](crate::OutputSink) stopped spilling: the spill's id, the step that
/// failed, and the I/O error the [`Spill`] returned, kept as data
/// ([`OutputSink::spill_error`](crate::OutputSink::spill_error)).
///
/// Its text (`cannot write artifact <id>: <error>`, `cannot finish artifact <id>: <error>`)
/// becomes the summary's `artifact_error`. The text already includes the I/O error, so
/// [`source`](std::error::Error::source) is `None`; the error itself is in the variant.
#[derive(Debug)]
#[non_exhaustive]
pub enum SpillError {
    /// [`Spill::write_all`] failed.
    Write {
        /// The spill's [`id`](Spill::id).
        id: String,
        /// What `write_all` returned.
        error: io::Error,
    },
    /// [`Spill::finish`] failed.
    Finish {
        /// The spill's [`id`](Spill::id).
        id: String,
        /// What `finish` returned.
        error: io::Error,
    },
}

impl SpillError {
    /// The spill's id.
    pub fn id(&self) -> &str {
        match self {
            Self::Write { id, .. } | Self::Finish { id, .. } => id,
        }
    }

    /// The I/O error the spill returned.
    pub fn io_error(&self) -> &io::Error {
        match self {
            Self::Write { error, .. } | Self::Finish { error, .. } => error,
        }
    }
}

impl fmt::Display for SpillError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Write { id, error } => write!(f, "cannot write artifact {id}: {error}"),
            Self::Finish { id, error } => write!(f, "cannot finish artifact {id}: {error}"),
        }
    }
}

impl std::error::Error for SpillError {}
