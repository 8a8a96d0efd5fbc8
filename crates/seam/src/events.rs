//! What a session tells its surfaces on its own, outside any call: [`SessionEvent`]s, sent
//! through an [`EventHub`] to every [`Subscription`], and who among the subscribers can answer
//! a job's hidden input.

use std::sync::Arc;

pub use agentsh_protocol::SessionEvent;
use tokio::sync::{broadcast, watch};

/// How many events a subscriber that does not read may fall behind before it misses some.
const EVENTS_KEPT: usize = 64;

/// A surface's subscription to a session's events. While one that
/// [answers secrets](EventHub::subscribe) is held, the session counts it as a way for a
/// person to answer hidden input (its results say so).
#[derive(Debug)]
pub struct Subscription {
    /// The events, from the subscription on.
    events: broadcast::Receiver<SessionEvent>,
    /// Counts the subscriber among those that answer secrets, until dropped.
    answering: Option<AnswererGuard>,
}

impl Subscription {
    /// The next event; `None` once the session is gone. A subscriber that fell more than 64
    /// events behind misses the oldest of them.
    pub async fn recv(&mut self) -> Option<SessionEvent> {
        loop {
            match self.events.recv().await {
                Ok(event) => return Some(event),
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }

    /// The next event if one is waiting (never waits); `None` otherwise.
    pub fn try_recv(&mut self) -> Option<SessionEvent> {
        loop {
            match self.events.try_recv() {
                Ok(event) => return Some(event),
                Err(broadcast::error::TryRecvError::Lagged(_)) => {}
                Err(_) => return None,
            }
        }
    }

    /// Whether this subscriber answers hidden input.
    pub fn answers_secrets(&self) -> bool {
        self.answering.is_some()
    }
}

/// Counts one answering subscriber while it lives.
#[derive(Debug)]
struct AnswererGuard(Arc<watch::Sender<usize>>);

impl Drop for AnswererGuard {
    fn drop(&mut self) {
        self.0.send_modify(|count| *count = count.saturating_sub(1));
    }
}

/// The sending side of a session's events, and the count of subscribers that answer secrets.
/// Cheap to clone: clones share it.
#[derive(Debug, Clone)]
pub struct EventHub {
    events: broadcast::Sender<SessionEvent>,
    answerers: Arc<watch::Sender<usize>>,
}

impl Default for EventHub {
    fn default() -> Self {
        Self::new()
    }
}

impl EventHub {
    /// A hub nobody listens to yet.
    pub fn new() -> Self {
        Self {
            events: broadcast::channel(EVENTS_KEPT).0,
            answerers: Arc::new(watch::channel(0).0),
        }
    }

    /// Sends `event` to every subscriber (none: it is dropped).
    pub fn send(&self, event: SessionEvent) {
        let _ = self.events.send(event);
    }

    /// A new subscription; `answers_secrets`: its surface lets a person answer hidden input.
    pub fn subscribe(&self, answers_secrets: bool) -> Subscription {
        let answering = answers_secrets.then(|| {
            self.answerers.send_modify(|count| *count += 1);
            AnswererGuard(Arc::clone(&self.answerers))
        });
        Subscription {
            events: self.events.subscribe(),
            answering,
        }
    }

    /// Whether some subscriber answers hidden input now.
    pub fn secrets_answerable(&self) -> bool {
        *self.answerers.borrow() > 0
    }

    /// Watches how many subscribers answer hidden input (a far side's client tells the far
    /// side when that changes between none and some).
    pub fn answerers(&self) -> watch::Receiver<usize> {
        self.answerers.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use agentsh_protocol::InputRequest;

    use super::*;

    fn request(job: &str) -> SessionEvent {
        SessionEvent::InputRequest(InputRequest {
            job_id: job.into(),
            prompt: "Password: ".into(),
            command: "sudo true".into(),
        })
    }

    #[tokio::test]
    async fn every_subscriber_gets_each_event_and_answerers_are_counted_while_held() {
        let hub = EventHub::new();
        hub.send(request("0")); // nobody listens: dropped
        let mut watching = hub.subscribe(false);
        assert!(!hub.secrets_answerable());
        let mut answering = hub.subscribe(true);
        assert!(answering.answers_secrets() && !watching.answers_secrets());
        assert!(hub.secrets_answerable());
        hub.send(request("1"));
        assert_eq!(watching.recv().await, Some(request("1")));
        assert_eq!(answering.try_recv(), Some(request("1")));
        assert_eq!(answering.try_recv(), None);
        let mut count = hub.answerers();
        drop(answering);
        assert!(!hub.secrets_answerable());
        assert_eq!(*count.borrow_and_update(), 0);
    }
}
