//! A job's log artifact: the sink's spill, reserved when the job starts, that stops growing at
//! `jobs.max_log_bytes`.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use agentsh_artifact_store::ArtifactReservation;
use agentsh_output_sink::{Spill, SpillSource};

/// The spill source of a job's sink: the reservation made when the job started.
pub(crate) struct CappedLog {
    spill: CappedSpill,
}

impl CappedLog {
    pub(crate) fn new(
        reservation: ArtifactReservation,
        max_bytes: u64,
        capped: Arc<AtomicBool>,
    ) -> Self {
        Self {
            spill: CappedSpill {
                reservation,
                room: max_bytes,
                capped,
            },
        }
    }
}

impl SpillSource for CappedLog {
    fn open(self: Box<Self>) -> Option<Box<dyn Spill>> {
        Some(Box::new(self.spill))
    }
}

/// Writes through until the cap, then drops what comes (the sink's tail and counts go on).
struct CappedSpill {
    reservation: ArtifactReservation,
    room: u64,
    capped: Arc<AtomicBool>,
}

impl Spill for CappedSpill {
    fn id(&self) -> &str {
        self.reservation.id()
    }

    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        let fits = usize::try_from(self.room).map_or(bytes.len(), |room| room.min(bytes.len()));
        if fits > 0 {
            self.reservation.write_all(&bytes[..fits])?;
            self.room -= fits as u64;
        }
        if fits < bytes.len() {
            self.capped.store(true, Ordering::SeqCst);
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        self.reservation.finish()
    }

    fn discard(self: Box<Self>) {
        Box::new(self.reservation).discard();
    }
}
