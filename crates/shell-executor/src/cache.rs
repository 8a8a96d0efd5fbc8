//! The cache of persistent shells: which shells exist, which are busy, and which to close.
//!
//! Each session's own [`ShellLimits`] bound its own shells; [`ExecutorConfig::max_total_shells`]
//! bounds them all. When room is needed, the least recently used idle shell in scope goes first,
//! one with live background children only when no other idle one is left; a busy shell (a call
//! holds or waits for it) is never closed, so the cache goes over a limit while every shell in
//! scope is busy, and is trimmed back when calls end. Idle shells are closed by a sweeper task
//! once their session's idle timeout has passed.
//!
//! [`ExecutorConfig::max_total_shells`]: crate::ExecutorConfig::max_total_shells

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use agentsh_process::sandbox::SandboxSpec;
use tokio::sync::Notify;

use crate::request::{SessionKey, ShellLimits};
use crate::shell::ShellProcess;

/// The longest the sweeper sleeps without being told that something changed.
const SWEEP_CEILING: Duration = Duration::from_secs(60);

/// What identifies a shell in the cache: shell path, prefix, snapshot path, the sorted `K=V`
/// environment, the sandbox and the session key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ShellKey {
    pub(crate) shell: PathBuf,
    pub(crate) prefix: Option<String>,
    pub(crate) snapshot: Option<PathBuf>,
    pub(crate) env: Vec<u8>,
    pub(crate) sandbox: Option<SandboxSpec>,
    pub(crate) session: SessionKey,
}

impl ShellKey {
    fn session_id(&self) -> &str {
        &self.session.session_id
    }
}

/// One cached shell (or the place for it while none runs for its key).
pub(crate) struct Slot {
    key: ShellKey,
    pub(crate) shell: tokio::sync::Mutex<Option<ShellProcess>>,
    /// Calls holding or waiting for `shell`: a slot with users is busy and never evicted.
    users: AtomicUsize,
    usage: Mutex<Usage>,
}

/// When a slot was last used, and the idle timeout of its session.
#[derive(Clone, Copy)]
struct Usage {
    last_used: Instant,
    idle_timeout: Duration,
}

impl Slot {
    fn usage(&self) -> Usage {
        *self.usage.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn is_busy(&self) -> bool {
        self.users.load(Ordering::SeqCst) > 0
    }

    /// When this slot, idle, is to be closed.
    fn expires(&self) -> Instant {
        let usage = self.usage();
        usage.last_used + usage.idle_timeout
    }
}

/// A call's hold on a slot: the slot stays busy until it is dropped, which also records the
/// use and wakes the sweeper.
pub(crate) struct SlotUse {
    slot: Arc<Slot>,
    sweeper: Arc<Notify>,
}

impl SlotUse {
    pub(crate) fn slot(&self) -> &Slot {
        &self.slot
    }
}

impl Drop for SlotUse {
    fn drop(&mut self) {
        self.slot
            .usage
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .last_used = Instant::now();
        self.slot.users.fetch_sub(1, Ordering::SeqCst);
        self.sweeper.notify_one();
    }
}

/// One shell of the cache, as [`ShellCache::shells`] reports it (for tests: the cache's
/// contents are not part of the executor's API).
#[cfg(test)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShellStatus {
    /// The session key the shell belongs to.
    pub(crate) session: SessionKey,
    /// The supervisor's pid (`None` while no shell runs for the key, or while it is busy).
    pub(crate) supervisor_pid: Option<u32>,
    /// The shell's pid (same conditions).
    pub(crate) shell_pid: Option<u32>,
    /// Whether a call holds or waits for the shell.
    pub(crate) busy: bool,
}

/// Which slots a limit counts.
#[derive(Clone, Copy)]
enum Scope<'a> {
    Session(&'a str),
    All,
}

impl Scope<'_> {
    fn holds(self, key: &ShellKey) -> bool {
        match self {
            Scope::Session(id) => key.session_id() == id,
            Scope::All => true,
        }
    }
}

/// The slots, shared by the executor and its sweeper.
pub(crate) struct ShellCache {
    max_total_shells: usize,
    slots: Mutex<HashMap<ShellKey, Arc<Slot>>>,
    sweeper: Arc<Notify>,
    sweeper_started: AtomicBool,
}

impl ShellCache {
    pub(crate) fn new(max_total_shells: usize) -> Self {
        Self {
            max_total_shells: max_total_shells.max(1),
            slots: Mutex::new(HashMap::new()),
            sweeper: Arc::new(Notify::new()),
            sweeper_started: AtomicBool::new(false),
        }
    }

    fn slots(&self) -> MutexGuard<'_, HashMap<ShellKey, Arc<Slot>>> {
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Finds or creates the slot of `key` and marks it busy; makes room first when the
    /// session or the whole cache is full. Returns the shells evicted to make room.
    pub(crate) fn acquire(
        &self,
        key: ShellKey,
        limits: ShellLimits,
    ) -> (SlotUse, Vec<ShellProcess>) {
        let mut slots = self.slots();
        let mut evicted = Vec::new();
        if !slots.contains_key(&key) {
            let session = Scope::Session(key.session_id());
            evicted = evict_down_to(&mut slots, session, limits.max_shells.max(1) - 1);
            evicted.extend(evict_down_to(
                &mut slots,
                Scope::All,
                self.max_total_shells - 1,
            ));
        }
        let slot = Arc::clone(slots.entry(key.clone()).or_insert_with(|| {
            Arc::new(Slot {
                key,
                shell: tokio::sync::Mutex::new(None),
                users: AtomicUsize::new(0),
                usage: Mutex::new(Usage {
                    last_used: Instant::now(),
                    idle_timeout: limits.idle_timeout,
                }),
            })
        }));
        slot.usage
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .idle_timeout = limits.idle_timeout;
        slot.users.fetch_add(1, Ordering::SeqCst);
        let hold = SlotUse {
            slot,
            sweeper: Arc::clone(&self.sweeper),
        };
        (hold, evicted)
    }

    /// Evicts idle shells while `session` or the whole cache is over its limit (after a call
    /// ended, when a limit could be exceeded only because every shell in scope was busy).
    pub(crate) fn trim(&self, session: &str, limits: ShellLimits) -> Vec<ShellProcess> {
        let mut slots = self.slots();
        let mut evicted = evict_down_to(
            &mut slots,
            Scope::Session(session),
            limits.max_shells.max(1),
        );
        evicted.extend(evict_down_to(&mut slots, Scope::All, self.max_total_shells));
        evicted
    }

    /// Removes the idle slots (no call running or queued) that `selected` picks and takes
    /// their shells.
    pub(crate) fn take_idle(
        &self,
        selected: impl Fn(&ShellKey, &Slot) -> bool,
    ) -> Vec<ShellProcess> {
        let mut slots = self.slots();
        let idle: Vec<ShellKey> = slots
            .iter()
            .filter(|(key, slot)| !slot.is_busy() && selected(key, slot))
            .map(|(key, _)| key.clone())
            .collect();
        idle.iter()
            .filter_map(|key| take_shell(&mut slots, key))
            .collect()
    }

    /// The shells in the cache (pids are reported for idle shells only).
    #[cfg(test)]
    pub(crate) fn shells(&self) -> Vec<ShellStatus> {
        self.slots()
            .values()
            .map(|slot| {
                let (supervisor_pid, shell_pid) = match slot.shell.try_lock() {
                    Ok(shell) => (
                        shell.as_ref().and_then(ShellProcess::supervisor_pid),
                        shell.as_ref().and_then(ShellProcess::shell_pid),
                    ),
                    Err(_) => (None, None),
                };
                ShellStatus {
                    session: slot.key.session.clone(),
                    supervisor_pid,
                    shell_pid,
                    busy: slot.is_busy(),
                }
            })
            .collect()
    }

    /// When the next idle slot expires (`None`: no idle slot).
    fn next_expiry(&self) -> Option<Instant> {
        self.slots()
            .values()
            .filter(|slot| !slot.is_busy())
            .map(|slot| slot.expires())
            .min()
    }

    /// Starts the task that closes idle shells when their session's idle timeout has passed
    /// (once; it ends soon after the cache is dropped).
    pub(crate) fn start_sweeper(self: &Arc<Self>) {
        if self.sweeper_started.swap(true, Ordering::SeqCst) {
            return;
        }
        let cache: Weak<Self> = Arc::downgrade(self);
        let wake = Arc::clone(&self.sweeper);
        tokio::spawn(async move {
            loop {
                let Some(strong) = cache.upgrade() else {
                    return;
                };
                let now = Instant::now();
                let expired = strong.take_idle(|_, slot| slot.expires() <= now);
                let next = strong.next_expiry();
                drop(strong);
                close_all(expired).await;
                let ceiling = tokio::time::Instant::now() + SWEEP_CEILING;
                let until = next.map_or(ceiling, |at| {
                    tokio::time::Instant::from_std(at).min(ceiling)
                });
                tokio::select! {
                    () = tokio::time::sleep_until(until) => {}
                    () = wake.notified() => {}
                }
            }
        });
    }
}

/// The idle slot in `scope` to evict: least recently used among those without background
/// jobs, else the least recently used idle one. `None` when every slot in scope is busy.
fn pick_victim(slots: &HashMap<ShellKey, Arc<Slot>>, scope: Scope<'_>) -> Option<ShellKey> {
    let mut idle: Vec<&Arc<Slot>> = slots
        .values()
        .filter(|slot| scope.holds(&slot.key) && !slot.is_busy())
        .collect();
    idle.sort_by_key(|slot| slot.usage().last_used);
    let without_jobs = idle.iter().find(|slot| match slot.shell.try_lock() {
        Ok(shell) => !shell
            .as_ref()
            .is_some_and(ShellProcess::has_background_jobs),
        Err(_) => false,
    });
    without_jobs
        .or_else(|| idle.first())
        .map(|slot| slot.key.clone())
}

/// Evicts idle shells of `scope` (see [`pick_victim`]) until at most `limit` slots are left in
/// it, or every one left is busy (the scope then goes over its limit until calls finish).
fn evict_down_to(
    slots: &mut HashMap<ShellKey, Arc<Slot>>,
    scope: Scope<'_>,
    limit: usize,
) -> Vec<ShellProcess> {
    let mut evicted = Vec::new();
    while slots.keys().filter(|key| scope.holds(key)).count() > limit {
        let Some(victim) = pick_victim(slots, scope) else {
            break;
        };
        evicted.extend(take_shell(slots, &victim));
    }
    evicted
}

/// Removes `key`'s slot and takes its shell (the slot must be idle).
fn take_shell(slots: &mut HashMap<ShellKey, Arc<Slot>>, key: &ShellKey) -> Option<ShellProcess> {
    let slot = slots.remove(key)?;
    let mut shell = slot.shell.try_lock().ok()?;
    shell.take()
}

/// Closes `shells`, ending their whole process trees.
pub(crate) async fn close_all(shells: Vec<ShellProcess>) {
    for shell in shells {
        shell.close().await;
    }
}

#[cfg(test)]
mod tests;
