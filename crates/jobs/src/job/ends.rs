//! Jobs that report back: when a job ends, its `job_end` event goes to every subscriber of the
//! session at once, and its notice waits for the session's next tool result (any tool), which
//! closes with it. A job the model killed, or whose end a result already showed (its starting
//! result, a `job_output`), gets no notice: the model knows.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, Weak};

use agentsh_protocol::{JobEnd, ToolOutcome};
use agentsh_seam::{EventHub, SessionEvent};
use agentsh_shell_executor::CommandExit;

use crate::job::{Job, exit_state};
use crate::lock;

/// A notice waiting for the next tool result.
struct Queued {
    /// The job it is about.
    job: Weak<Job>,
    /// An end notice (dropped when a result showed the end meanwhile), or another (kept).
    end: bool,
    text: String,
}

/// Where a session's jobs report: its events, and the notices queued for its next result.
/// Cheap to clone: clones share the queue.
#[derive(Clone, Default)]
pub(crate) struct JobReports {
    events: EventHub,
    queued: Arc<Mutex<Vec<Queued>>>,
}

impl JobReports {
    /// Reports through `events`.
    pub(crate) fn new(events: EventHub) -> Self {
        Self {
            events,
            queued: Arc::default(),
        }
    }

    /// The session's events.
    pub(crate) fn events(&self) -> &EventHub {
        &self.events
    }

    /// `job` ended as `end`: the event goes out now; the notice waits, unless the model killed
    /// the job.
    pub(crate) fn ended(&self, job: &Arc<Job>, end: JobEnd) {
        if !job.killed_by_model.load(Ordering::SeqCst) {
            lock(&self.queued).push(Queued {
                job: Arc::downgrade(job),
                end: true,
                text: end.notice(&job.command),
            });
        }
        self.events.send(SessionEvent::JobEnd(end));
    }

    /// Queues `text`, another notice about `job` (one that has been busy without output).
    pub(crate) fn notice(&self, job: &Arc<Job>, text: String) {
        lock(&self.queued).push(Queued {
            job: Arc::downgrade(job),
            end: false,
            text,
        });
    }

    /// Queues `text`, a notice of the session's own (not about a job).
    pub(crate) fn session_notice(&self, text: String) {
        lock(&self.queued).push(Queued {
            job: Weak::new(),
            end: false,
            text,
        });
    }

    /// The notices for the result being made now, taken (each goes out once): an end notice
    /// whose job's end a result has shown since is dropped.
    pub(crate) fn take(&self) -> Vec<String> {
        let queued = std::mem::take(&mut *lock(&self.queued));
        queued
            .into_iter()
            .filter(|notice| {
                !notice.end
                    || notice.job.upgrade().is_none_or(|job| {
                        !job.end_shown.load(Ordering::SeqCst)
                            && !job.killed_by_model.load(Ordering::SeqCst)
                    })
            })
            .map(|notice| notice.text)
            .collect()
    }
}

/// The end of a job whose command ended as `exit` after `run_time`.
pub(crate) fn job_end(job: &Job, exit: CommandExit, run_time: std::time::Duration) -> JobEnd {
    let (state, exit_code) = exit_state(exit);
    JobEnd {
        job_id: job.id.clone(),
        state,
        exit_code,
        run_time,
        reason: exit.limit,
    }
}

/// `outcome` with `line` after its text, after a blank line.
pub(crate) fn with_last_line(mut outcome: ToolOutcome, line: &str) -> ToolOutcome {
    let (ToolOutcome::Finished(result) | ToolOutcome::Aborted(result)) = &mut outcome;
    if let Some(agentsh_protocol::ToolContent::Text { text }) = result.content.first_mut() {
        text.push_str("\n\n");
        text.push_str(line);
    }
    outcome
}
