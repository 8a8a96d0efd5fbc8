#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod counter;
mod error;
mod files;
mod id;
mod read;
mod reservation;
mod retention;
mod store;

pub use agentsh_output_sink::Spill;
pub use error::ArtifactError;
pub use id::{ARTIFACT_FILE_SUFFIX, ARTIFACT_URL_PREFIX, parse_artifact_id};
pub use read::ArtifactText;
pub use reservation::ArtifactReservation;
pub use retention::{
    DEFAULT_RETENTION_MAX_AGE_DAYS, DEFAULT_RETENTION_MAX_BYTES, RetentionPolicy, RetentionReport,
};
pub use store::{ArtifactInfo, ArtifactStore};
