//! What a UI shows of a session, as plain data: its status line ([`SessionStatus`]) and a look
//! at one job ([`JobLook`]). In JSON (camelCase) they are the `data` of the RPC `status` and
//! `job_view` requests, through which the interactive mode's `--remote` shows a far side.

use crate::job::{JobSummary, JobView};

/// A session as a status line shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct SessionStatus {
    /// The session's working directory.
    pub cwd: String,
    /// The shell its commands run in (a path).
    pub shell: String,
    /// Its sandbox; `None` when it runs without one.
    pub sandbox: Option<SandboxStatus>,
    /// Its jobs, oldest first.
    pub jobs: Vec<JobSummary>,
}

/// A sandbox as a status line shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct SandboxStatus {
    /// The mode (`workspace-write`, …), as the configuration spells it.
    pub mode: String,
    /// Whether commands may use the network.
    pub network: bool,
}

/// A [`JobView`] as text: the job, the last lines of its output, and for a PTY job its
/// screen's rows.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct JobLook {
    /// The job as lists show it.
    pub job: JobSummary,
    /// The last lines of its output that fit in the bytes asked for.
    pub output: String,
    /// Lines of its whole output so far.
    pub total_lines: u64,
    /// Its log artifact, once it has one.
    pub artifact_id: Option<String>,
    /// A PTY job's screen rows, as text (trailing blanks of each row kept); `None` without a
    /// terminal.
    pub screen: Option<Vec<String>>,
}

impl From<JobView> for JobLook {
    fn from(view: JobView) -> Self {
        Self {
            screen: view
                .screen
                .map(|screen| (0..screen.rows).map(|row| screen.row_text(row)).collect()),
            job: view.summary,
            output: view.output,
            total_lines: view.total_lines,
            artifact_id: view.artifact_id,
        }
    }
}
