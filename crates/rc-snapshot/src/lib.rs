#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod cache;
mod dump;
mod error;
mod failure;
mod lock;
mod run;
mod script;
mod snapshot;

pub use agentsh_process::shell::{ShellKind, ShellSpec};
pub use cache::Snapshot;
pub use error::SnapshotError;
pub use snapshot::{
    DEFAULT_SNAPSHOT_TIMEOUT, MAX_SNAPSHOT_TIMEOUT, SnapshotOptions, default_cache_dir, rc_file,
    snapshot_for, snapshot_with,
};
