//! The seam between the sink and where it spills the full output (an artifact file).

/// Where an [`OutputSink`](crate::OutputSink) writes the entire sanitised stream once the
/// in-memory tail overflows. `agentsh-artifact-store` implements it for its reservations; tests
/// may implement it to inject failures.
///
/// The sink's contract with an implementation:
/// - [`write_all`](Spill::write_all) receives the sanitised stream in order, from its first byte:
///   first, at the overflow, what the tail held (at most the sink's `max_bytes`), then batches of
///   at least 256 KiB (the last one may be shorter). Nothing is written unless the tail overflowed.
/// - After a failed `write_all` or `finish`, the sink calls [`discard`](Spill::discard) and never
///   uses the spill again; it reports the error as `artifactError` and no `artifactId`.
/// - When the stream ends without overflow, the sink calls `discard` without having written
///   anything (the reservation is released).
/// - Otherwise the sink calls [`finish`](Spill::finish) once and reports [`id`](Spill::id) as
///   `artifactId`.
pub trait Spill: Send {
    /// The id reported as `artifactId` when something was spilled.
    fn id(&self) -> &str;
    /// Appends bytes to the spill file. An error stops spilling for good.
    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()>;
    /// Makes everything written durable and visible to readers (called once, at the end).
    fn finish(&mut self) -> std::io::Result<()>;
    /// Deletes what was written (called after a failed write, and for an unused spill).
    fn discard(self: Box<Self>);
}
