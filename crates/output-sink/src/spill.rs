//! The seams between the sink and where it spills the full output (an artifact file): a
//! [`SpillSource`] makes the [`Spill`] when the sink first needs one.

use std::{fmt, io};

/// What an [`OutputSink`](crate::OutputSink) asks for a [`Spill`] once its in-memory tail first
/// overflows: the spill is made then, not before, so a stream that fits costs nothing (agentsh
/// reserves no artifact file for it).
///
/// Pass one as [`SinkOptions::spill`](crate::SinkOptions::spill). The sink calls at most one of
/// its methods, once:
/// - [`open`](SpillSource::open) at the first overflow, to make the spill; `None` means there is
///   no spill for this stream (allocation failed): the sink keeps counting and keeping the tail,
///   and its summary has neither `artifact_id` nor `artifact_error`, since nothing that was
///   written got lost. Saying why is the source's own business (agentsh records a session
///   warning);
/// - [`release`](SpillSource::release) when the stream ended without overflow.
///
/// Every [`Spill`] is also a source that is already open: `open` hands back the spill itself and
/// `release` [discards](Spill::discard) it, so a spill that costs nothing to make can be given
/// directly. Must be [`Send`], since a sink may move between threads with its command.
///
/// ```
/// use std::io;
/// use agentsh_output_sink::{OutputSink, SinkOptions, Spill, SpillSource};
///
/// /// Keeps the spilled stream in memory.
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
/// /// Makes an `InMemory` spill only when the output overflows.
/// struct OnDemand;
///
/// impl SpillSource for OnDemand {
///     fn open(self: Box<Self>) -> Option<Box<dyn Spill>> {
///         Some(Box::new(InMemory(Vec::new())))
///     }
/// }
///
/// let mut sink = OutputSink::new(SinkOptions {
///     max_bytes: 4,
///     spill: Some(Box::new(OnDemand)),
///     ..SinkOptions::default()
/// });
/// sink.push(b"one\ntwo\n");
/// assert_eq!(sink.dump().artifact_id.as_deref(), Some("mem-1"));
/// ```
pub trait SpillSource: Send {
    /// Makes the spill, when the tail first overflows; `None` when none can be had (the stream
    /// then goes on without one, reporting neither `artifact_id` nor `artifact_error`).
    fn open(self: Box<Self>) -> Option<Box<dyn Spill>>;

    /// Called instead of [`open`](SpillSource::open) when the stream ended without overflow.
    /// The default does nothing beyond dropping the source.
    fn release(self: Box<Self>) {}
}

impl<S: Spill + 'static> SpillSource for S {
    fn open(self: Box<Self>) -> Option<Box<dyn Spill>> {
        Some(self)
    }

    fn release(self: Box<Self>) {
        self.discard();
    }
}

/// Where an [`OutputSink`](crate::OutputSink) writes the entire sanitised stream once the
/// in-memory tail overflows.
///
/// Custom spills are supported: implement this trait for any destination (a file of your own, a
/// socket, an in-memory buffer, a test double that injects failures) and pass it as
/// [`SinkOptions::spill`](crate::SinkOptions::spill) — directly, when it costs nothing to make
/// (every spill is a [`SpillSource`] that is already open), or from a [`SpillSource`] that makes
/// it at the first overflow. `agentsh-artifact-store`'s `ArtifactReservation` is the
/// implementation agentsh uses, reserved by a source only when a call's output overflows.
///
/// What the sink does with a spill:
/// - [`write_all`](Spill::write_all) receives the sanitised stream in order, from its first byte:
///   first, at the overflow, what the tail held (at most the sink's `max_bytes`), then batches of
///   at least 256 KiB (the last one may be shorter). Nothing is written unless the tail overflowed.
/// - After a failed `write_all` or `finish`, the sink calls [`discard`](Spill::discard) and never
///   uses the spill again; it reports the error's text as `artifact_error` and no `artifact_id`.
/// - A spill given directly whose stream ends without overflow is discarded without having
///   been written to (the reservation is released); one from a [`SpillSource`] is never made.
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
    /// Deletes what was written (called after a failed write or finish, and for a spill given
    /// directly that was never needed).
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
