//! What a session shares with its outputs and its surfaces: its secrets, its events, and its
//! jobs' reports (end notices, the usage sampler).

use std::sync::Arc;

use agentsh_output_sink::Secrets;
use agentsh_seam::EventHub;

use super::AgentSession;
use crate::jobs::ends::JobReports;

impl AgentSession {
    /// The session's secrets, to redact from every output (`None` with `[secrets] enabled =
    /// false`).
    pub(crate) fn secrets(&self) -> Option<Arc<Secrets>> {
        self.inner.secrets.clone()
    }

    /// The session's events: subscribe to them, or ask whether some subscriber answers hidden
    /// input.
    pub fn events(&self) -> &EventHub {
        &self.inner.events
    }

    /// Where the session's jobs report their ends.
    pub(crate) fn job_reports(&self) -> &JobReports {
        &self.inner.reports
    }

    /// Starts reading what the session's running jobs use, unless that runs already (a job
    /// just started).
    pub(crate) fn sample_jobs(&self) {
        self.inner
            .jobs
            .sampler
            .ensure(Arc::downgrade(&self.inner.jobs), self.inner.reports.clone());
    }

    /// `outcome` closed with the notices waiting for the session's next tool result (jobs
    /// that ended or have been busy without output), each after a blank line.
    pub fn with_job_notices(&self, outcome: crate::ToolOutcome) -> crate::ToolOutcome {
        let notices = self.inner.reports.take();
        if notices.is_empty() {
            return outcome;
        }
        crate::jobs::ends::with_last_line(outcome, &notices.join("\n\n"))
    }

    /// `text` with the session's secrets redacted.
    pub(crate) fn redact<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        match &self.inner.secrets {
            Some(secrets) => secrets.current().redact(text),
            None => std::borrow::Cow::Borrowed(text),
        }
    }
}
