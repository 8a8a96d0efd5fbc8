//! Starting and ending processes: private sessions, a subreaper supervisor, tree kill, hardened
//! environment, shell discovery, rc snapshot.
//!
//! Both runtimes (the non-PTY `shell-executor` and the PTY runtime) start their shells through
//! this crate:
//!
//! - [`Supervisor`] — a small process between agentsh and one shell. It runs the shell in a
//!   session of its own (no controlling terminal unless asked for), is the child subreaper of
//!   the shell's whole tree, reaps everything it adopts, reports the shell's exit status, and
//!   kills every descendant when agentsh closes it — or dies, even by SIGKILL.
//! - [`command_processes`] / [`end_command`] — which processes belong to the *current* command
//!   of a shell (per-command marker [`MARKER_VAR`], parent links, start times; see
//!   [`CommandScope`]) and how they are ended (SIGSTOP, SIGTERM + SIGCONT, [`TERM_GRACE`],
//!   SIGKILL).
//! - [`env`] — the hardened environment table (SPEC §7); [`shell`] — shell discovery and the
//!   command prefix; [`snapshot`] — the rc snapshot sourced into new shells.
//!
//! ```
//! use agentsh_process::{SpawnSpec, Supervisor};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let mut spec = SpawnSpec::new("/bin/sh");
//! spec.args = vec!["-c".into(), "exit 3".into()];
//! let mut supervisor = Supervisor::spawn(spec).await.expect("starts");
//! let exit = supervisor.wait_child().await.expect("reported");
//! assert_eq!(exit.shell_code(), 3);
//! supervisor.shutdown().await; // ends whatever is left of the tree
//! # });
//! ```
//!
//! Linux is the primary platform: the subreaper, the parent-death signal and `/proc`-based
//! attribution are Linux features. Elsewhere the supervisor still gives the shell its own
//! session and kills its process group on close, but [`can_attribute`] is false, so a stopped
//! command's shell has to be replaced.
#![deny(missing_docs)]

pub mod env;
mod id;
pub mod shell;
pub mod snapshot;
mod supervisor;
mod sys;
mod tree;

pub use id::random_hex;
pub use supervisor::{
    ChildExit, ChildStdio, MAX_EXTRA_FD, MIN_EXTRA_FD, SpawnError, SpawnSpec, Supervisor,
};
pub use tree::{
    CommandScope, EndReport, MARKER_VAR, ProcessInfo, StartMark, TERM_GRACE, can_attribute,
    command_processes, descendants, end_command, end_command_with, process_info, process_table,
};
