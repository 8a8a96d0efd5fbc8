//! Private on-disk store of full command outputs, addressed as `artifact://ID` (SPEC §4).
//!
//! When a command's output overflows the in-memory tail of the output sink, the whole sanitised
//! stream goes to an artifact file so the model (or a client) can read any part of it later.
//!
//! - [`ArtifactStore`] is one directory (mode 0700) of `<id>.bash.log` files (mode 0600).
//!   [`ArtifactStore::open`] creates it and applies a [`RetentionPolicy`] (by default 7 days and
//!   1 GiB, oldest first; files in use are never removed). [`ArtifactStore::default_dir`] is
//!   `$XDG_STATE_HOME/agentsh/artifacts`, shared by every session so ids stay resolvable.
//! - [`ArtifactStore::allocate`] reserves the next decimal id by creating its file with
//!   `O_CREAT | O_EXCL`, so processes sharing the directory never get the same id, and returns an
//!   [`ArtifactReservation`]: the [`Spill`] target of the output sink. It holds an advisory
//!   `flock` on its file while it exists ("in use", seen by every process); dropped without
//!   having received a byte, it removes its file.
//! - [`ArtifactStore::resolve`] and [`ArtifactStore::read`] take a bare id or an `artifact://`
//!   URL; reads return a line range ([`ArtifactText`]) while streaming the file. Only ASCII
//!   digits are accepted, so an id cannot name anything outside the store.
//! - Every failure is an [`ArtifactError`]; the `artifact://` errors carry the exact texts of
//!   the specification.
//!
//! ```
//! use agentsh_artifact_store::{ArtifactStore, RetentionPolicy, Spill};
//!
//! let tmp = tempfile::tempdir()?;
//! let store = ArtifactStore::open(tmp.path().join("artifacts"), RetentionPolicy::default())?;
//!
//! let mut spill = store.allocate()?;
//! assert_eq!(spill.id(), "1");
//! spill.write_all(b"one\ntwo\nthree\n")?;
//! spill.finish()?;
//! drop(spill); // the call ends; the artifact stays because it received bytes
//!
//! let lines = store.read("artifact://1", Some(2), Some(1))?;
//! assert_eq!(lines.text, "two\n");
//! assert_eq!(lines.total_lines, 3);
//!
//! let unused = store.allocate()?; // id 2, never written: removed on drop
//! drop(unused);
//! assert_eq!(store.ids()?, [1]);
//! assert_eq!(
//!     store.read("artifact://9", None, None).unwrap_err().to_string(),
//!     "Artifact 9 not found. Available: 1"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

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
pub use store::ArtifactStore;
