//! Helpers shared by the test modules.

use std::future::Future;
use std::sync::{PoisonError, RwLock};
use std::time::{Duration, Instant};

use agentsh_output_sink::{OutputSink, SinkOptions};
use agentsh_process::shell::ShellSpec;
use agentsh_pty_runtime::PtyCommand;
pub use agentsh_test_support::{alive_with_arg, runtime};

/// Tests that start processes take it shared; the descriptor-count test takes it exclusively,
/// so that no other test opens descriptors while it counts (`cargo test` runs tests as
/// threads of one process).
pub static PROCESSES: RwLock<()> = RwLock::new(());

/// How long a test waits for something that should happen within milliseconds: generous,
/// for a loaded two-core machine.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// Runs `test` on a fresh multi-threaded runtime, holding [`PROCESSES`] shared.
pub fn run<F: Future>(test: F) -> F::Output {
    let _shared = PROCESSES.read().unwrap_or_else(PoisonError::into_inner);
    runtime().block_on(test)
}

pub fn bash() -> ShellSpec {
    ShellSpec::from_path(agentsh_test_support::which("bash").expect("bash on PATH"))
}

/// `command` in bash, in `/tmp`, with a timeout of [`PATIENCE`].
pub fn command(text: &str) -> PtyCommand {
    let mut command = PtyCommand::new(text, std::env::temp_dir(), PATIENCE);
    command.shell = bash();
    command
}

pub fn sink() -> OutputSink {
    OutputSink::new(SinkOptions::default())
}

/// Polls `condition` every 10 ms until it holds; panics after [`PATIENCE`].
pub async fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let start = Instant::now();
    while !condition() {
        assert!(start.elapsed() < PATIENCE, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

pub use agentsh_test_support::open_fds;
