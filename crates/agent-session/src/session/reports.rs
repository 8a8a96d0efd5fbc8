//! What a session shares with its outputs and its surfaces: its secrets and its events.

use std::sync::Arc;

use agentsh_output_sink::Secrets;
use agentsh_seam::EventHub;

use super::AgentSession;

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

    /// `text` with the session's secrets redacted.
    pub(crate) fn redact<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        match &self.inner.secrets {
            Some(secrets) => secrets.current().redact(text),
            None => std::borrow::Cow::Borrowed(text),
        }
    }
}
