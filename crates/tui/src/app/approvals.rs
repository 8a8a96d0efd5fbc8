//! Approval requests in the loop: each becomes an entry; while one waits, `y`, `a`, `n` and
//! Esc answer the oldest waiting one; the session's word on how a request ended closes its
//! entry.

use agentsh_protocol::{ApprovalDecision, ApprovalResolution};
use agentsh_renderer::Renderer;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{App, Overlay};
use crate::approval::{ApprovalEntry, decision_of_key};
use crate::host::{ApprovalAsk, ApprovalKey, CallKey};
use crate::transcript::EntryKind;

impl<R: Renderer> App<R> {
    /// A call's command needs a yes: its entry, in view.
    pub(crate) fn approval_asked(&mut self, ask: ApprovalAsk) {
        let key = ask.key.clone();
        self.set_awaiting(key.call, true);
        let entry = self.push_entry(EntryKind::Approval(Box::new(ApprovalEntry::new(ask))));
        self.approvals.push((key, entry));
        // The question must be seen: the transcript's end, not an expanded result.
        self.scroll = 0;
        self.expanded = None;
    }

    /// The PTY overlay on screen: the newest program's, unless an approval request or a job's
    /// question for hidden input waits. A question must be seen and answered, so it takes the
    /// screen and the keys from a program (which gets them back once it is answered).
    pub(crate) fn shown_overlay(&self) -> Option<&Overlay> {
        if self.approvals.is_empty() && self.secrets.is_empty() {
            self.overlays.last()
        } else {
            None
        }
    }

    /// A request ended: its entry shows how.
    pub(crate) fn approval_resolved(&mut self, key: &ApprovalKey, resolution: ApprovalResolution) {
        let Some(at) = self.approvals.iter().position(|(open, _)| open == key) else {
            return;
        };
        let (_, entry) = self.approvals.remove(at);
        if !self.approvals.iter().any(|(open, _)| open.call == key.call) {
            self.set_awaiting(key.call, false);
        }
        if let Some(approval) = self.approval_at(entry) {
            approval.resolve(resolution);
            self.transcript[entry].touch();
        }
    }

    /// A key while requests wait: `y`, `a`, `n` or Esc answers the oldest waiting one.
    /// Returns whether the key was taken (with no request waiting, none is).
    pub(crate) fn approval_key(&mut self, key: &KeyEvent) -> bool {
        if key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            return false;
        }
        let decision = match key.code {
            KeyCode::Char(c) => decision_of_key(c),
            KeyCode::Esc => Some(ApprovalDecision::Deny),
            _ => None,
        };
        decision.is_some_and(|decision| self.answer_oldest(decision))
    }

    /// Answers the oldest waiting request with `decision`; returns whether one took it.
    pub(crate) fn answer_oldest(&mut self, decision: ApprovalDecision) -> bool {
        let open: Vec<usize> = self.approvals.iter().map(|&(_, entry)| entry).collect();
        for entry in open {
            let Some(approval) = self.approval_at(entry) else {
                continue;
            };
            // A request resolved elsewhere, whose word is on its way, is passed over.
            if approval.is_pending() && approval.answer(decision) {
                self.transcript[entry].touch();
                return true;
            }
        }
        false
    }

    /// Marks call `call`'s entry as waiting for an approval, or not.
    fn set_awaiting(&mut self, call: CallKey, awaiting: bool) {
        let Some(&at) = self.calls.get(&call) else {
            return;
        };
        if let Some(entry) = self.transcript.get_mut(at)
            && let EntryKind::Tool(tool) = &mut entry.kind
            && tool.awaiting_approval != awaiting
        {
            tool.awaiting_approval = awaiting;
            entry.touch();
        }
    }

    fn approval_at(&mut self, entry: usize) -> Option<&mut ApprovalEntry> {
        match self.transcript.get_mut(entry).map(|e| &mut e.kind) {
            Some(EntryKind::Approval(approval)) => Some(approval),
            _ => None,
        }
    }
}
