//! What a connection's task shares with its link: the settings, and the link's refusals.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use crate::config::ProxyConfig;
use crate::dial::Refusal;

/// The most refusals a link keeps (the oldest go first).
const MAX_REFUSALS: usize = 512;

/// What a connection's task needs.
#[derive(Clone)]
pub(crate) struct Ctx {
    pub(crate) config: Arc<ProxyConfig>,
    pub(crate) refusals: Arc<Refusals>,
}

impl Ctx {
    /// Notes a refusal: recorded on the link when the allowlist refused it.
    pub(crate) fn refused(&self, refusal: &Refusal) {
        tracing::info!(target = %refusal.target, message = %refusal.message, "proxy refusal");
        if refusal.recorded() {
            self.refusals.record(&refusal.target);
        }
    }
}

/// The refusals of one link: `(epoch, host:port)`, each at most once per epoch; a mark starts
/// an epoch.
#[derive(Default)]
pub(crate) struct Refusals(Mutex<RefusalLog>);

#[derive(Default)]
struct RefusalLog {
    epoch: u64,
    events: VecDeque<(u64, String)>,
}

impl Refusals {
    fn log(&self) -> std::sync::MutexGuard<'_, RefusalLog> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn mark(&self) -> u64 {
        let mut log = self.log();
        log.epoch += 1;
        log.epoch
    }

    pub(crate) fn record(&self, target: &str) {
        let mut log = self.log();
        let epoch = log.epoch;
        let seen = log
            .events
            .iter()
            .rev()
            .take_while(|(e, _)| *e == epoch)
            .any(|(_, t)| t == target);
        if !seen {
            log.events.push_back((epoch, target.to_owned()));
            if log.events.len() > MAX_REFUSALS {
                log.events.pop_front();
            }
        }
    }

    pub(crate) fn since(&self, mark: u64) -> Vec<String> {
        let log = self.log();
        let mut found: Vec<String> = Vec::new();
        for (_, target) in log.events.iter().filter(|(e, _)| *e >= mark) {
            if !found.contains(target) {
                found.push(target.clone());
            }
        }
        found
    }
}
