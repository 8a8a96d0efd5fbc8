//! A UI's look at a job (`/job N`): its last lines or its screen, live, read without
//! moving what `job_output` returns next or where `until` looks.

use agentsh_protocol::JobView;

use crate::Jobs;
use crate::job::Job;
use crate::lock;

impl Jobs {
    /// Job `id` as a UI shows it: its [`JobSummary`](agentsh_protocol::JobSummary) (as
    /// [`summaries`](Self::summaries) gives it), the last whole lines of its output that
    /// fit in `max_bytes`, its line count and log artifact, and for a PTY job its terminal's
    /// screen. `None` when the session has no job `id` (never had one, or forgot it among
    /// the oldest finished ones).
    ///
    /// A look, not a read: the model's `job_output` still returns everything no result has
    /// shown, and its `until` still looks at every line no `job_output` returned.
    pub fn view(&self, id: u64, max_bytes: usize) -> Option<JobView> {
        Some(view_of(&*self.by_number(id)?, max_bytes))
    }

    /// [`view`](Self::view) of the job named `id` as the job tools take it (`"3"`, the RPC
    /// `job_view`'s); for an id no job has, the job tools' own error (`No job 9. Jobs: 1, 2`).
    pub fn find_view(&self, id: &str, max_bytes: usize) -> Result<JobView, String> {
        let job = self.find(id)?;
        Ok(view_of(&job, max_bytes))
    }
}

/// What [`Jobs::view`] shows of `job`.
fn view_of(job: &Job, max_bytes: usize) -> JobView {
    let (output, total_lines, artifact_id) = {
        let output = lock(&job.output);
        (
            output.log.last_lines(max_bytes),
            output.log.total_lines(),
            output.log.artifact_file().map(|log| log.id),
        )
    };
    JobView {
        summary: job.summary(),
        output,
        total_lines,
        artifact_id,
        screen: job
            .terminal()
            .map(|controller| controller.terminal().screen()),
    }
}
