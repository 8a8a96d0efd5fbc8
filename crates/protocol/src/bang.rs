//! A user's bang command (`!cmd`, `!!cmd`) as plain data: what the facade reports and the
//! renderer's bang view draws.

use crate::result::BashResult;

/// A bang command, running or finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BangRun {
    /// The command as typed, without the `!` or `!!`.
    pub command: String,
    /// `!!cmd`: kept out of the model's context (the view dims its header).
    pub exclude_from_context: bool,
    /// Running, with the output so far, or finished.
    pub state: BangState,
}

/// Where a bang command is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BangState {
    /// Still running; the sanitised output so far (the live chunks, joined).
    Running {
        /// The output so far.
        output: String,
    },
    /// It ended: exit code, cancellation and the kept output with its counts and artifact.
    Finished(BashResult),
}

impl BangRun {
    /// The output to draw: the live text while running, the kept tail once finished.
    pub fn output(&self) -> &str {
        match &self.state {
            BangState::Running { output } => output,
            BangState::Finished(result) => &result.summary.output,
        }
    }
}

/// Options of a bang command.
#[derive(Debug, Clone, Copy, Default)]
pub struct BangOptions {
    /// Timeout in seconds (clamped); the `bash.default_timeout` setting when `None`.
    pub timeout: Option<f64>,
    /// `!!cmd`: keep the result out of the model's context.
    pub exclude_from_context: bool,
}
