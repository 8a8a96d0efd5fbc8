//! A session's `bash` calls once they may run: the one way a piped call runs (in the
//! foreground, handing the command to a background job when it outlives its yield time), the
//! background jobs themselves, the job tools, and the result a call answers with.
//!
//! - [`JobCall`] is one approved `bash` call: [`JobCall::run`] runs it in the foreground
//!   (every piped call, on every surface, with or without a yield time),
//!   [`JobCall::start_background`] starts it as a job (`run_in_background`).
//! - [`Jobs`] is a session's job table: ids from 1, `jobs.max_running` running at most, the
//!   last 100 finished kept; each job's output in its log artifact and a bounded tail; end and
//!   busy notices for the next result; resource usage sampled while any runs; the hidden-input
//!   watch of a PTY job. [`Jobs::execute_tool`] runs `job_output`, `job_input`, `job_kill` and
//!   `job_list`; [`Jobs::view`] is a UI's look at a job, which moves nothing the model reads.
//! - [`JobHost`] is what a session gives its calls and jobs (its settings' numbers, artifacts,
//!   sandbox, secrets, the executor and the requests it runs, its approval of typed input):
//!   the one place the session and its jobs meet. `agentsh-agent-session` implements it.
//! - [`build_tool_result`] and [`bang_context_text`] are the result of a finished call, as
//!   pure functions of what the executor reported; the sandbox line they add is
//!   [`sandbox_line`]'s.
//!
//! ```
//! use std::path::Path;
//!
//! use agentsh_bash_normalize::Limits;
//! use agentsh_jobs::{FinishedRun, build_tool_result};
//! use agentsh_protocol::{BashResult, OutputSummary, Timeout};
//!
//! let result = BashResult {
//!     summary: OutputSummary {
//!         output: "hello\n".to_owned(),
//!         total_lines: 1,
//!         total_bytes: 6,
//!         output_lines: 1,
//!         output_bytes: 6,
//!         ..OutputSummary::default()
//!     },
//!     exit_code: Some(0),
//!     ..BashResult::default()
//! };
//! let outcome = build_tool_result(&FinishedRun {
//!     shaped: None,
//!     result: &result,
//!     head_capture: None,
//!     limits: Limits::NONE,
//!     max_bytes: 51_200,
//!     aborted: false,
//!     cwd: Path::new("/work"),
//!     timeout: Timeout::DEFAULT,
//!     sandbox: None,
//! });
//! assert_eq!(outcome.result().text(), "hello");
//! ```
#![deny(missing_docs)]

mod args;
mod call;
mod hidden;
mod host;
mod job;
mod result;
mod shaped;
mod tools;
mod view;

pub use call::JobCall;
pub use host::{JobHost, JobLimits, JobToolCall};
pub use job::Jobs;
pub use result::{
    BANG_CANCELLED, FinishedRun, HeadCapture, ToolUpdate, bang_context_text, blocked_result,
    build_tool_result,
};
pub use shaped::ShapedOutput;

use agentsh_seam::lock;
