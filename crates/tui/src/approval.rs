//! The person as the answerer of approval requests: [`TuiApprover`] turns a session's question
//! into an entry of the transcript ([`ApprovalEntry`]), which `y` (allow), `a` (allow for the
//! session) and `n` or Esc (deny) answer; the session's word on how the request ended closes it.

use agentsh_protocol::{
    Answerer, ApprovalAnswer, ApprovalDecision, ApprovalRequest, ApprovalResolution, AskedSegment,
};
use agentsh_renderer::{Glyphs, single_line, wrap};
use agentsh_seam::{Approver, BoxFuture};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::oneshot;

use crate::host::{AppEvent, ApprovalAsk, ApprovalKey, CallKey};

/// Asks the person at the mode about one call's commands (the mode's own call, or a
/// `--listen` client's, where the client may answer first).
pub(crate) struct TuiApprover {
    /// The call's transcript key.
    pub call: CallKey,
    /// Whose call it is: a `--listen` connection's number, `None` for the mode's own.
    pub connection: Option<u64>,
    /// The loop.
    pub events: UnboundedSender<AppEvent>,
}

impl Approver for TuiApprover {
    fn ask(&self, request: &ApprovalRequest) -> BoxFuture<'static, Option<ApprovalAnswer>> {
        let (answer, answered) = oneshot::channel();
        let ask = ApprovalAsk {
            key: ApprovalKey {
                call: self.call,
                request_id: request.request_id.clone(),
            },
            connection: self.connection,
            request: request.clone(),
            answer,
        };
        // A loop that is gone drops the sender with the event: no answer from here.
        let _ = self.events.send(AppEvent::ApprovalAsked(Box::new(ask)));
        Box::pin(async move {
            answered.await.ok().map(|decision| ApprovalAnswer {
                decision,
                answered_by: Answerer::Interactive,
            })
        })
    }

    fn resolved(&self, request_id: &str, resolution: ApprovalResolution) {
        let _ = self.events.send(AppEvent::ApprovalResolved {
            key: ApprovalKey {
                call: self.call,
                request_id: request_id.to_owned(),
            },
            resolution,
        });
    }
}

/// Where an approval entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ApprovalState {
    /// Waiting for an answer.
    Pending,
    /// The person answered; the session has not said how the request ended yet.
    Answered(ApprovalDecision),
    /// The request ended.
    Resolved(ApprovalResolution),
}

/// An approval request in the transcript.
pub(crate) struct ApprovalEntry {
    /// Whose call it is: a `--listen` connection's number, `None` for the mode's own.
    pub connection: Option<u64>,
    /// The whole command line.
    pub command: String,
    /// The segments that need a yes, with their reasons.
    pub segments: Vec<AskedSegment>,
    /// Where it is.
    pub state: ApprovalState,
    /// Takes the person's answer while it is pending.
    answer: Option<oneshot::Sender<ApprovalDecision>>,
}

impl ApprovalEntry {
    /// A pending entry for `ask`.
    pub(crate) fn new(ask: ApprovalAsk) -> Self {
        Self {
            connection: ask.connection,
            command: ask.request.command,
            segments: ask.request.segments,
            state: ApprovalState::Pending,
            answer: Some(ask.answer),
        }
    }

    /// Whether a key may still answer it: pending, and its asker still waits (a request
    /// resolved elsewhere stops waiting before the loop hears of it).
    pub(crate) fn is_pending(&self) -> bool {
        self.state == ApprovalState::Pending
            && self
                .answer
                .as_ref()
                .is_some_and(|answer| !answer.is_closed())
    }

    /// Gives the person's answer; returns whether the asker took it.
    pub(crate) fn answer(&mut self, decision: ApprovalDecision) -> bool {
        let taken = self
            .answer
            .take()
            .is_some_and(|answer| answer.send(decision).is_ok());
        if taken {
            self.state = ApprovalState::Answered(decision);
        }
        taken
    }

    /// The request ended: the entry closes, showing how.
    pub(crate) fn resolve(&mut self, resolution: ApprovalResolution) {
        self.answer = None;
        self.state = ApprovalState::Resolved(resolution);
    }

    /// Its rows at `width`: the command (marked with its connection), each segment that
    /// needs a yes with its reason, then the keys while it waits, or how it ended.
    pub(crate) fn rows(&self, width: u16, glyphs: &Glyphs) -> Vec<Line<'static>> {
        let mark = self
            .connection
            .map_or_else(String::new, |n| format!("[{n}] "));
        let pending = self.state == ApprovalState::Pending;
        let (title, title_style) = if pending {
            (
                "Run this command?",
                Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            )
        } else {
            ("Approval:", Style::new().add_modifier(Modifier::BOLD))
        };
        let header = format!("{mark}{title} $ {}", single_line(&self.command));
        let mut lines: Vec<Line<'static>> = styled_rows(&header, width, title_style).collect();
        let reason_style = Style::new().fg(Color::Gray);
        for segment in &self.segments {
            let text = format!(
                "  {} ({})",
                single_line(&segment.command),
                single_line(&segment.reason)
            );
            lines.extend(styled_rows(&text, width, reason_style));
        }
        let (last, style) = match self.state {
            ApprovalState::Pending => (
                keys_hint(glyphs),
                Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            ),
            ApprovalState::Answered(decision) => {
                (decision_text(decision).to_owned(), decision_style(decision))
            }
            ApprovalState::Resolved(resolution) => resolution_line(resolution),
        };
        lines.extend(styled_rows(&last, width, style));
        lines
    }
}

/// One row of text (made single-line already) wrapped at `width`, in `style`.
fn styled_rows(text: &str, width: u16, style: Style) -> impl Iterator<Item = Line<'static>> {
    wrap(text, width).map(move |row| Line::styled(row.to_owned(), style))
}

/// The keys of a pending request: `y allow · a allow for the session · n or esc deny`.
pub(crate) fn keys_hint(glyphs: &Glyphs) -> String {
    let separator = format!(" {} ", glyphs.separator);
    ["y allow", "a allow for the session", "n or esc deny"].join(&separator)
}

/// The key's answer: `y` allow, `a` allow for the session, `n` deny (Esc is handled by the
/// caller, which knows whether a request waits).
pub(crate) fn decision_of_key(key: char) -> Option<ApprovalDecision> {
    match key {
        'y' => Some(ApprovalDecision::Allow),
        'a' => Some(ApprovalDecision::AllowSession),
        'n' => Some(ApprovalDecision::Deny),
        _ => None,
    }
}

/// How an answer reads: `allowed`, `allowed for the session`, `denied`.
fn decision_text(decision: ApprovalDecision) -> &'static str {
    match decision {
        ApprovalDecision::Allow => "allowed",
        ApprovalDecision::AllowSession => "allowed for the session",
        ApprovalDecision::Deny => "denied",
    }
}

fn decision_style(decision: ApprovalDecision) -> Style {
    match decision {
        ApprovalDecision::Allow | ApprovalDecision::AllowSession => Style::new().fg(Color::Green),
        ApprovalDecision::Deny => Style::new().fg(Color::Red),
    }
}

/// How a request ended, as its entry's last row shows it, and its style.
fn resolution_line(resolution: ApprovalResolution) -> (String, Style) {
    match resolution {
        ApprovalResolution::Answered(answer) => {
            let decision = decision_text(answer.decision);
            let text = match answer.answered_by {
                Answerer::Interactive => decision.to_owned(),
                Answerer::Rpc => format!("answered by the client: {decision}"),
                Answerer::Mcp => format!("answered by the MCP client: {decision}"),
            };
            (text, decision_style(answer.decision))
        }
        ApprovalResolution::TimedOut => {
            ("timed out: denied".to_owned(), Style::new().fg(Color::Red))
        }
        ApprovalResolution::Aborted => (
            "aborted: nothing ran".to_owned(),
            Style::new().fg(Color::Yellow),
        ),
        ApprovalResolution::Unanswered => (
            "nobody answered: denied".to_owned(),
            Style::new().fg(Color::Red),
        ),
    }
}
