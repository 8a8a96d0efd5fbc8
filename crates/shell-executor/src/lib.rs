#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod bootstrap;
mod cache;
mod call;
mod error;
mod executor;
mod fifo;
mod job;
mod request;
mod shell;
#[cfg(test)]
mod test_helpers;

pub use agentsh_output_sink::{OutputSink, SinkOptions, Spill, SpillSource};
pub use agentsh_process::SpawnError;
pub use agentsh_process::shell::{ShellKind, ShellSpec};
pub use agentsh_protocol::{BashResult, OutputSummary};
pub use call::{CommandExit, Finished, Ran, Running};
pub use error::ExecError;
pub use executor::{ChunkCallback, ShellExecutor};
pub use job::{JobChunks, JobProgress, JobRun};
pub use request::{
    DEFAULT_MAX_TOTAL_SHELLS, ExecRequest, ExecutorConfig, LateLimits, SessionKey, ShellLimits,
    Surface,
};
pub use shell::Output;
pub use tokio_util::sync::CancellationToken;
