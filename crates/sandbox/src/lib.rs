#![doc = include_str!("../README.md")]
//!
//! # Modules, for contributors
//!
//! The modules are private; everything public is re-exported below, in one block.
//!
//! - `session`: [`SessionSandbox`], a session's sandbox built from its settings (writable
//!   roots, the private temp dir, the kernel check, the kept-read-only project directory), and
//!   the removal of temp dirs agentsh processes that are gone left behind;
//! - `network`: the network allowlist's proxy wiring (one proxy per session serving every
//!   sandboxed tree's listener, the proxy environment) and [`probe_network_allowlist`];
//! - `denial`: the sandbox line of a result (denial markers, [`DenialWatch`] for streams);
//! - `error`: [`SetupError`].
#![deny(missing_docs)]

mod denial;
mod error;
mod network;
mod session;

// The policy types are `agentsh-process`'s (the spawner enforces them); they are in this
// crate's signatures, and the doctor reports the kernel against `MIN_LANDLOCK_ABI`.
pub use agentsh_process::sandbox::{
    Kernel, MIN_LANDLOCK_ABI, SandboxError, SandboxMode, SandboxNetwork, SandboxSpec, TempFs,
};
pub use denial::{DENIAL_MARKERS, DenialWatch, denial_line_for, sandbox_denial_line, shows_denial};
pub use error::SetupError;
pub use network::probe_network_allowlist;
pub use session::SessionSandbox;
