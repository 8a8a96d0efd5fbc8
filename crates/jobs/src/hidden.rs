//! Hidden input: a PTY job at a password or passphrase prompt. The watch that tells the
//! session's subscribers when one begins to ask, and the way a person's answer goes in
//! (`secret_input`), redacted from then on and never kept.

use std::sync::{Arc, Weak};
use std::time::Duration;

use agentsh_output_sink::Secrets;
use agentsh_protocol::{InputRequest, JobState, job_has_ended_text, job_has_no_terminal_text};
use agentsh_pty_runtime::{PtyController, typed_text};
use agentsh_seam::{EventHub, SessionEvent};

use crate::Jobs;
use crate::job::{Control, Job};

/// How often a quiet PTY job is looked at for a hidden prompt while someone can answer one.
const POLL: Duration = Duration::from_millis(250);

/// A typed secret is redacted from later output when it is at least this long (shorter ones
/// would redact ordinary words).
pub(crate) const MIN_TYPED_SECRET_BYTES: usize = 4;

/// The name a typed secret's redactions carry: `[REDACTED:input]`.
pub(crate) const TYPED_SECRET_NAME: &str = "input";

/// Why a `secret_input` text is refused: it holds a line break.
pub(crate) const SECRET_TEXT_LINE_BREAK: &str =
    "`text` must not hold CR or LF: agentsh sends it followed by Enter";

impl Job {
    /// The prompt a person answers: what stands before the cursor on the terminal's line
    /// (redacted as the screen is).
    fn prompt(controller: &PtyController) -> String {
        let terminal = controller.terminal();
        let (row, col) = terminal.cursor();
        let line = terminal.rows().into_iter().nth(usize::from(row));
        line.map(|line| line.chars().take(usize::from(col)).collect::<String>())
            .unwrap_or_default()
            .trim()
            .to_owned()
    }
}

/// Watches PTY job `job` until it ends: each time it begins to wait for hidden input while a
/// subscriber of `hub` can answer, one [`SessionEvent::InputRequest`] goes out. The terminal's
/// modes are read first (cheap); `/proc` only when echo is off and the output has been quiet.
pub(crate) fn watch_hidden_input(job: &Arc<Job>, hub: EventHub, secrets: Option<Arc<Secrets>>) {
    let mut progress = job.progress.clone();
    let job: Weak<Job> = Arc::downgrade(job);
    tokio::spawn(async move {
        let mut asked = false;
        let mut answerers = hub.answerers();
        loop {
            {
                let Some(job) = job.upgrade() else { return };
                let Control::Pty(controller) = &job.control else {
                    return;
                };
                if !job.is_live() {
                    return;
                }
                // Echo first: `/proc` is asked only at a prompt that hides its input.
                let asking = hub.secrets_answerable()
                    && controller.input_hidden()
                    && job.state().0 == JobState::WaitingForInput;
                if asking && !asked {
                    let command = controller
                        .asking_command_line()
                        .unwrap_or_else(|| job.command.clone());
                    let redact = |text: String| match &secrets {
                        Some(secrets) => secrets.current().redact(&text).into_owned(),
                        None => text,
                    };
                    hub.send(SessionEvent::InputRequest(InputRequest {
                        job_id: job.id.clone(),
                        prompt: redact(Job::prompt(controller)),
                        command: redact(command),
                    }));
                }
                asked = asking;
            }
            // Nobody to answer: wait until someone can (or the job ends), without looking at
            // the job.
            let pause = async {
                if hub.secrets_answerable() {
                    tokio::time::sleep(POLL).await;
                } else {
                    let _ = answerers.wait_for(|count| *count > 0).await;
                }
            };
            tokio::select! {
                () = pause => {}
                changed = progress.changed() => {
                    if changed.is_err() {
                        return;
                    }
                }
            }
        }
    });
}

impl Jobs {
    /// Types `text`, which a person typed at job `job_id`'s hidden prompt, followed by Enter,
    /// after adding it to `secrets`, the session's (`[REDACTED:input]`), so that nothing the
    /// session shows from then on holds it. Refused, with the reason, when `text` holds CR or
    /// LF, the job does not exist, has no terminal or has ended, or its terminal echoes now (the
    /// text would be shown).
    pub fn secret_input(
        &self,
        secrets: Option<&Secrets>,
        job_id: &str,
        text: &str,
    ) -> Result<(), String> {
        if text.contains(['\r', '\n']) {
            return Err(SECRET_TEXT_LINE_BREAK.to_owned());
        }
        let job = self
            .get(job_id)
            .ok_or_else(|| agentsh_protocol::no_such_job_text(job_id, &self.ids()))?;
        let Some(terminal) = job.terminal() else {
            return Err(job_has_no_terminal_text(&job.id));
        };
        if !job.is_live() || job.state().0.is_over() {
            return Err(job_has_ended_text(&job.id));
        }
        if !terminal.input_hidden() {
            return Err(format!(
                "job {} is not asking for hidden input now (its terminal shows what is typed): the text was not sent",
                job.id
            ));
        }
        if let Some(secrets) = secrets {
            secrets.add(TYPED_SECRET_NAME, text, MIN_TYPED_SECRET_BYTES);
        }
        let mut bytes = typed_text(text);
        bytes.push(b'\r');
        let sent = terminal.write_input(&bytes);
        // The bytes held the secret: not left in memory longer than needed.
        bytes.fill(0);
        if sent {
            Ok(())
        } else {
            Err(job_has_ended_text(&job.id))
        }
    }
}
