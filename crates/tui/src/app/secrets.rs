//! Hidden input in the loop: a job of a session shown here asks for a password or passphrase
//! (an `input_request` of the session's events), and the person answers it on a masked line
//! that names the asking program and that the model started it. Enter sends it to the job
//! (never to the model, the history or the transcript); Esc leaves the job waiting.

use agentsh_protocol::InputRequest;
use agentsh_renderer::Renderer;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::App;
use crate::host::AppEvent;
use crate::session_view::SessionView;
use crate::transcript::NoteKind;

/// The character each typed one is shown as.
pub(crate) const MASK: char = '•';

/// A job's question for the person, waiting on the masked line.
pub(crate) struct SecretPrompt {
    /// Whose session: a `--listen` connection's number, `None` for the mode's own.
    pub connection: Option<u64>,
    /// The job, its prompt and the asking program's command line.
    pub request: InputRequest,
    /// What was typed so far (shown masked; never kept once sent or dropped).
    typed: String,
}

impl SecretPrompt {
    /// How many characters were typed (what the masked line shows).
    pub(crate) fn typed_chars(&self) -> usize {
        self.typed.chars().count()
    }

    /// The line above the masked field: which job asks, what it runs, who started it.
    pub(crate) fn header(&self) -> String {
        let by = match self.connection {
            None => "the model".to_owned(),
            Some(n) => format!("the model on connection {n}"),
        };
        format!(
            "job {} asks for hidden input (started by {by}): {}",
            self.request.job_id, self.request.command
        )
    }

    /// Forgets what was typed.
    fn clear(&mut self) {
        forget(std::mem::take(&mut self.typed));
    }
}

/// Overwrites a secret's bytes before they are freed (best effort: copies a program made on
/// the way, such as the terminal's input buffers, are not reached).
fn forget(secret: String) {
    let mut bytes = secret.into_bytes();
    bytes.fill(0);
    std::hint::black_box(&bytes);
}

impl<R: Renderer> App<R> {
    /// Follows `view`'s events, as one who answers hidden input: each request reaches the
    /// loop as [`AppEvent::SecretAsked`], each job's end as [`AppEvent::JobEnded`]. Ends with
    /// the session or the loop.
    pub(crate) fn follow_events(&self, view: &SessionView, connection: Option<u64>) {
        let mut subscription = view.subscribe_answering();
        let events = self.events.clone();
        tokio::spawn(async move {
            while let Some(event) = subscription.recv().await {
                let event = match event {
                    agentsh_seam::SessionEvent::InputRequest(request) => AppEvent::SecretAsked {
                        connection,
                        request,
                    },
                    agentsh_seam::SessionEvent::JobEnd(end) => {
                        AppEvent::JobEnded { connection, end }
                    }
                    _ => continue,
                };
                if events.send(event).is_err() {
                    return;
                }
            }
        });
    }

    /// A job ended: a line in the transcript, naming its command when the session's list has
    /// it.
    pub(crate) fn job_ended(&mut self, connection: Option<u64>, end: &agentsh_protocol::JobEnd) {
        let view = match connection {
            None => Some(&self.session),
            Some(n) => self.connections.get(&n),
        };
        let command = view.and_then(|view| {
            view.jobs_summary()
                .into_iter()
                .find(|job| job.id == end.job_id)
                .map(|job| job.command)
        });
        let line = end.line(command.as_deref());
        let line = match connection {
            None => line,
            Some(n) => format!("[{n}] {line}"),
        };
        self.note(NoteKind::Info, line);
    }

    /// A job asks for hidden input: the masked line (a new prompt of the same job replaces its
    /// last one), and a note in the transcript.
    pub(crate) fn secret_asked(&mut self, connection: Option<u64>, request: InputRequest) {
        if let Some(at) = self.secrets.iter().position(|prompt| {
            prompt.connection == connection && prompt.request.job_id == request.job_id
        }) {
            let mut old = self.secrets.remove(at);
            old.clear();
        }
        let prompt = SecretPrompt {
            connection,
            request,
            typed: String::new(),
        };
        self.note(
            NoteKind::Warning,
            format!(
                "{}\ntype it below (shown as {MASK}; Enter sends it to the job, Esc leaves it waiting)",
                prompt.header()
            ),
        );
        self.secrets.push(prompt);
        self.scroll = 0;
        self.expanded = None;
    }

    /// The prompt the masked line answers: the oldest waiting.
    pub(crate) fn secret_prompt(&self) -> Option<&SecretPrompt> {
        self.secrets.first()
    }

    /// A key while a prompt waits: it goes to the masked line. Returns whether it was taken.
    pub(crate) fn secret_key(&mut self, key: &KeyEvent) -> bool {
        let Some(prompt) = self.secrets.first_mut() else {
            return false;
        };
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('u') if ctrl => prompt.clear(),
            // Other control keys (Ctrl+C, Ctrl+D) keep their meaning.
            KeyCode::Char(_) if ctrl => return false,
            KeyCode::Char(c) => prompt.typed.push(c),
            KeyCode::Backspace => {
                prompt.typed.pop();
            }
            KeyCode::Enter => self.send_secret(),
            KeyCode::Esc => {
                let mut prompt = self.secrets.remove(0);
                prompt.clear();
                self.note(
                    NoteKind::Info,
                    format!(
                        "job {} was not answered: it still waits for its hidden input",
                        prompt.request.job_id
                    ),
                );
            }
            _ => {}
        }
        true
    }

    /// A paste while a prompt waits: its first line goes to the masked line.
    pub(crate) fn secret_paste(&mut self, text: &str) -> bool {
        let Some(prompt) = self.secrets.first_mut() else {
            return false;
        };
        let line = text.split(['\r', '\n']).next().unwrap_or_default();
        prompt.typed.push_str(line);
        true
    }

    /// Enter: sends what was typed to the job (off the loop), and forgets it here.
    fn send_secret(&mut self) {
        let mut prompt = self.secrets.remove(0);
        let text = std::mem::take(&mut prompt.typed);
        let view = match prompt.connection {
            None => Some(self.session.clone()),
            Some(n) => self.connections.get(&n).cloned(),
        };
        let Some(view) = view else {
            forget(text);
            return;
        };
        let events = self.events.clone();
        let job = prompt.request.job_id.clone();
        tokio::spawn(async move {
            let sent = view.secret_input(job.clone(), text).await;
            let _ = events.send(AppEvent::SecretSent { job, sent });
        });
    }

    /// How sending went: a note either way (never with the text).
    pub(crate) fn secret_sent(&mut self, job: &str, sent: Result<(), String>) {
        match sent {
            Ok(()) => self.note(
                NoteKind::Info,
                format!("sent the hidden input to job {job} (it is redacted from now on)"),
            ),
            Err(error) => self.note(
                NoteKind::Warning,
                format!("the hidden input was not sent to job {job}: {error}"),
            ),
        }
    }

    /// Drops the prompts of jobs that ended (as the sessions' job lists show).
    pub(crate) fn drop_ended_secret_prompts(&mut self) -> bool {
        let before = self.secrets.len();
        let mut kept = Vec::with_capacity(before);
        for mut prompt in std::mem::take(&mut self.secrets) {
            let view = match prompt.connection {
                None => Some(&self.session),
                Some(n) => self.connections.get(&n),
            };
            let over = view.is_none_or(|view| {
                view.jobs_summary()
                    .iter()
                    .find(|job| job.id == prompt.request.job_id)
                    .is_some_and(|job| job.state.is_over())
            });
            if over {
                prompt.clear();
            } else {
                kept.push(prompt);
            }
        }
        self.secrets = kept;
        self.secrets.len() != before
    }
}
