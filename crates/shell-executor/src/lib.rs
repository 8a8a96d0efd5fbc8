//! Persistent real shells that run one command at a time, never hang, never leak a process.
//!
//! [`ShellExecutor`] is the non-PTY executor of SPEC §6: a process-wide cache of persistent
//! shells (bash by default; zsh and sh supported) keyed by shell, prefix, snapshot, environment
//! and [`SessionKey`] (session id and [`Surface`]). Each shell runs under its own supervisor
//! (`agentsh_process::Supervisor`: own session, no terminal, subreaper) and reads commands
//! through a private channel; each command's output arrives on a FIFO of its own and its status
//! on that private channel, which no command can reach — so no output can end a command early
//! or change its status, and output of background jobs never leaks into a later command. Commands stop on timeout, abort ([`ExecRequest::cancel`]) or a satisfied head
//! limit of the [`OutputSink`](agentsh_output_sink::OutputSink): their whole process tree is
//! ended and, where the shell can be kept, its state survives.
//!
//! ```
//! use std::time::Duration;
//! use agentsh_output_sink::{OutputSink, SinkOptions};
//! use agentsh_shell_executor::{ExecRequest, SessionKey, ShellExecutor, Surface};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let executor = ShellExecutor::default();
//! let session = SessionKey::new("doc", Surface::Tool);
//! let run = |command: &str| ExecRequest::new(command, "/tmp", Duration::from_secs(10), session.clone());
//!
//! let mut sink = OutputSink::new(SinkOptions::default());
//! executor.execute(run("export GREETING=hi; cd /"), &mut sink, None).await.unwrap();
//!
//! let mut sink = OutputSink::new(SinkOptions::default());
//! let result = executor.execute(run("echo $GREETING from $PWD; exit 3"), &mut sink, None).await.unwrap();
//! assert_eq!(result.summary.output, "hi from /tmp\n"); // state persists, cwd is per call
//! assert_eq!(result.exit_code, Some(3));               // and the next call gets a fresh shell
//! # });
//! ```
#![deny(missing_docs)]

mod bootstrap;
mod cache;
mod error;
mod executor;
mod fifo;
mod request;
mod shell;
#[cfg(test)]
mod test_helpers;

pub use error::ExecError;
pub use executor::{ChunkCallback, ShellExecutor};
pub use request::{
    DEFAULT_IDLE_MINUTES, DEFAULT_MAX_SHELLS, DEFAULT_MAX_TOTAL_SHELLS, ExecRequest,
    ExecutorConfig, SessionKey, ShellLimits, Surface,
};
pub use tokio_util::sync::CancellationToken;
