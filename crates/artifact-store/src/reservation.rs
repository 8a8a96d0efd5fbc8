//! A reserved artifact file: where an output sink spills.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use agentsh_output_sink::Spill;

/// Write buffer: spills arrive in small chunks; fewer, larger writes keep a spill cheap.
const WRITE_BUFFER_BYTES: usize = 64 * 1024;

/// An id reserved by [`ArtifactStore::allocate`](crate::ArtifactStore::allocate), with its open,
/// locked file.
///
/// It implements [`Spill`] for the output sink; agentsh allocates one only when a call's output
/// first overflows the sink's tail (the sink's `SpillSource`). While it exists its file is locked (`flock`), so
/// no retention pass in any process removes it. When it is dropped:
/// - a reservation that received no bytes is removed ("a reserved file that received no spill is
///   removed when the call ends");
/// - a reservation whose write or flush failed is removed (a partial artifact is never kept);
/// - otherwise the buffered bytes are flushed and the file stays.
///
/// [`Spill::discard`] removes the file in every case.
#[derive(Debug)]
pub struct ArtifactReservation {
    id: String,
    path: PathBuf,
    /// `None` once discarded.
    writer: Option<BufWriter<File>>,
    bytes_written: u64,
    failed: bool,
}

impl ArtifactReservation {
    pub(crate) fn new(id: u64, path: PathBuf, file: File) -> Self {
        Self {
            id: id.to_string(),
            path,
            writer: Some(BufWriter::with_capacity(WRITE_BUFFER_BYTES, file)),
            bytes_written: 0,
            failed: false,
        }
    }

    /// The reserved id, e.g. `"7"` (reported as `artifactId`, referenced as `artifact://7`).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The reserved file, `<store>/<id>.bash.log`.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes accepted so far (some may still be in the write buffer until [`Spill::finish`]).
    pub fn bytes_written(&self) -> u64 {
        self.bytes_written
    }

    /// The open writer, or an error once the reservation was discarded.
    fn writer(&mut self) -> io::Result<&mut BufWriter<File>> {
        match self.writer.as_mut() {
            Some(writer) => Ok(writer),
            None => Err(io::Error::other(format!(
                "artifact {} was discarded",
                self.path.display()
            ))),
        }
    }

    /// Removes the file and drops the buffer unwritten.
    fn remove(&mut self) {
        if let Some(writer) = self.writer.take() {
            // Unlink while the lock is still held, then close without flushing.
            let _ = fs::remove_file(&self.path);
            drop(writer.into_parts());
        }
    }
}

impl Spill for ArtifactReservation {
    fn id(&self) -> &str {
        &self.id
    }

    // Errors are the file system's own (kind and OS code intact): the sink's `SpillError` says
    // which artifact and which step, and reports the output as not saved.
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self.writer()?.write_all(bytes) {
            Ok(()) => {
                self.bytes_written += bytes.len() as u64;
                Ok(())
            }
            Err(err) => {
                self.failed = true;
                Err(err)
            }
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        // Flushed to the kernel: readers (other processes included) see every byte. No fsync:
        // an artifact is a convenience copy of the output, not worth a disk round trip per call.
        self.writer()?.flush().inspect_err(|_| self.failed = true)
    }

    fn discard(mut self: Box<Self>) {
        self.remove();
    }
}

impl Drop for ArtifactReservation {
    fn drop(&mut self) {
        // Kept only when used, never failed, not discarded, and the last bytes reach the file.
        let kept = self.bytes_written > 0
            && !self.failed
            && self
                .writer
                .as_mut()
                .is_some_and(|writer| writer.flush().is_ok());
        if !kept {
            self.remove();
        }
    }
}
