//! The process-wide cache of persistent shells (SPEC §6, Persistent shells and Cache).

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use agentsh_output_sink::OutputSink;
use agentsh_process::env::{TerminalKind, env_cache_key, hardened_env};
use agentsh_process::shell::apply_prefix;
use agentsh_protocol::{BashResult, CANCELLED_ANNOTATION, timeout_annotation};

use crate::error::ExecError;
use crate::request::{ExecRequest, ExecutorConfig, SessionKey};
use crate::shell::{Output, ShellProcess, StopReason};

/// A callback that sees every raw output chunk as it arrives.
pub type ChunkCallback<'a> = &'a mut (dyn FnMut(&[u8]) + Send);

/// What identifies a shell in the cache: shell path, prefix, snapshot path, the sorted `K=V`
/// environment and the session key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ShellKey {
    shell: PathBuf,
    prefix: Option<String>,
    snapshot: Option<PathBuf>,
    env: Vec<u8>,
    session: SessionKey,
}

struct Slot {
    key: ShellKey,
    shell: tokio::sync::Mutex<Option<ShellProcess>>,
    /// Calls holding or waiting for `shell`: a slot with users is busy and never evicted.
    users: AtomicUsize,
    last_used: Mutex<Instant>,
}

impl Slot {
    fn last_used(&self) -> Instant {
        *self
            .last_used
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

struct Inner {
    config: ExecutorConfig,
    slots: Mutex<HashMap<ShellKey, Arc<Slot>>>,
    sweeper_started: AtomicBool,
    /// The last environment built, with its inputs: every call of a session asks for the same
    /// one, and hardening and keying it cost more than checking that nothing changed.
    last_env: Mutex<Option<BuiltEnv>>,
}

impl Inner {
    fn slots(&self) -> MutexGuard<'_, HashMap<ShellKey, Arc<Slot>>> {
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Removes the idle slots (no call running or queued) that `selected` picks and takes
    /// their shells.
    fn take_idle(&self, selected: impl Fn(&ShellKey, &Slot) -> bool) -> Vec<ShellProcess> {
        let mut slots = self.slots();
        let idle: Vec<ShellKey> = slots
            .iter()
            .filter(|(key, slot)| slot.users.load(Ordering::SeqCst) == 0 && selected(key, slot))
            .map(|(key, _)| key.clone())
            .collect();
        idle.iter()
            .filter_map(|key| take_shell(&mut slots, key))
            .collect()
    }
}

/// A shell environment and what it was built from.
struct BuiltEnv {
    base: Vec<(OsString, OsString)>,
    settings: BTreeMap<String, String>,
    env: Arc<Vec<(OsString, OsString)>>,
    key: Vec<u8>,
}

/// One shell of the cache, as [`ShellExecutor::shells`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellStatus {
    /// The session key the shell belongs to.
    pub session: SessionKey,
    /// The supervisor's pid (`None` while no shell runs for the key, or while it is busy).
    pub supervisor_pid: Option<u32>,
    /// The shell's pid (same conditions).
    pub shell_pid: Option<u32>,
    /// Whether a call holds or waits for the shell.
    pub busy: bool,
}

/// Runs commands in persistent shells, one cache per process (create one and share it).
///
/// Dropping the executor ends every shell and its process tree.
pub struct ShellExecutor {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for ShellExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShellExecutor")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl Default for ShellExecutor {
    fn default() -> Self {
        Self::new(ExecutorConfig::default())
    }
}

struct SinkOutput<'a, 'b> {
    sink: &'a mut OutputSink,
    on_chunk: Option<ChunkCallback<'b>>,
}

impl Output for SinkOutput<'_, '_> {
    fn chunk(&mut self, bytes: &[u8]) {
        self.sink.push(bytes);
        if let Some(on_chunk) = self.on_chunk.as_mut() {
            on_chunk(bytes);
        }
    }

    fn head_satisfied(&self) -> bool {
        self.sink.head_satisfied()
    }
}

/// Decrements a slot's user count when a call ends, however it ends.
struct UserGuard(Arc<Slot>);

impl Drop for UserGuard {
    fn drop(&mut self) {
        self.0.users.fetch_sub(1, Ordering::SeqCst);
    }
}

impl ShellExecutor {
    /// An empty cache.
    pub fn new(config: ExecutorConfig) -> Self {
        Self {
            inner: Arc::new(Inner {
                config,
                slots: Mutex::new(HashMap::new()),
                sweeper_started: AtomicBool::new(false),
                last_env: Mutex::new(None),
            }),
        }
    }

    /// Runs `request` in the shell of its key (started on first use, replaced transparently
    /// when it died), streaming every output chunk to `sink` and `on_chunk`.
    ///
    /// Timeouts, aborts (`request.cancel`), non-zero exits and dead shells are results; an
    /// error means the command could not be run at all. A head limit configured on the sink
    /// stops the command as soon as it is satisfied (exit code 0, like `| head`).
    pub async fn execute(
        &self,
        request: ExecRequest,
        sink: &mut OutputSink,
        on_chunk: Option<ChunkCallback<'_>>,
    ) -> Result<BashResult, ExecError> {
        if request.command.contains('\0') {
            return Err(ExecError::NulInCommand);
        }
        if request.cwd.as_os_str().as_encoded_bytes().contains(&0) {
            return Err(ExecError::NulInCwd(request.cwd.display().to_string()));
        }
        self.start_sweeper();
        let (env, env_key) = self.environment(&request);
        let key = ShellKey {
            shell: request.shell.path.clone(),
            prefix: request.prefix.clone(),
            snapshot: request.snapshot.clone(),
            env: env_key,
            session: request.session.clone(),
        };
        let (slot, evicted) = self.acquire(key);
        let user = UserGuard(Arc::clone(&slot));
        close_all(evicted).await;

        // A call queued behind another one can be aborted while it waits: it never runs.
        let mut guard = tokio::select! {
            guard = slot.shell.lock() => guard,
            () = request.cancel.cancelled() => {
                drop(user);
                return Ok(BashResult {
                    summary: sink.dump(Some(CANCELLED_ANNOTATION)),
                    exit_code: None,
                    cancelled: true,
                    timed_out: false,
                    session_restarted: false,
                });
            }
        };
        let outcome = async {
            let alive = guard.as_mut().is_some_and(ShellProcess::is_alive);
            let same_shell = guard.as_ref().is_some_and(|s| s.spec() == &request.shell);
            if !alive || !same_shell {
                if let Some(old) = guard.take() {
                    old.close().await;
                }
                let started = ShellProcess::start(
                    &request.shell,
                    Vec::clone(&env),
                    request.snapshot.as_deref(),
                    &request.cwd,
                )
                .await?;
                *guard = Some(started);
            }
            let shell = guard.as_mut().ok_or_else(|| {
                ExecError::Io(std::io::Error::other("shell slot empty after start"))
            })?;
            let command = match request.prefix.as_deref() {
                Some(prefix) => apply_prefix(prefix, &request.command),
                None => request.command.clone(),
            };
            let mut output = SinkOutput {
                sink: &mut *sink,
                on_chunk,
            };
            let outcome = shell
                .run(
                    &command,
                    &request.cwd,
                    request.timeout,
                    &request.cancel,
                    &mut output,
                )
                .await;
            if !shell.is_alive()
                && let Some(dead) = guard.take()
            {
                dead.close().await;
            }
            outcome
        }
        .await;
        *slot
            .last_used
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Instant::now();
        drop(guard);
        drop(user);
        let evicted = self.trim();
        close_all(evicted).await;
        let outcome = outcome?;

        let annotation = match outcome.stopped {
            Some(StopReason::Timeout) => Some(timeout_annotation(request.timeout.as_secs_f64())),
            Some(StopReason::Abort) => Some(CANCELLED_ANNOTATION.to_owned()),
            Some(StopReason::Head) | None => None,
        };
        Ok(BashResult {
            summary: sink.dump(annotation.as_deref()),
            exit_code: outcome.exit_code,
            cancelled: matches!(
                outcome.stopped,
                Some(StopReason::Timeout | StopReason::Abort)
            ),
            timed_out: outcome.stopped == Some(StopReason::Timeout),
            session_restarted: outcome.restarted,
        })
    }

    /// The shells in the cache (pids are reported for idle shells only).
    pub fn shells(&self) -> Vec<ShellStatus> {
        self.inner
            .slots()
            .values()
            .map(|slot| {
                let busy = slot.users.load(Ordering::SeqCst) > 0;
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
                    busy,
                }
            })
            .collect()
    }

    /// Closes every idle shell (no call running or queued), ending its whole process tree.
    pub async fn close_idle(&self) {
        close_all(self.inner.take_idle(|_, _| true)).await;
    }

    /// Closes the idle shells of one session (both surfaces), ending their whole process trees;
    /// other sessions' shells are untouched.
    pub async fn close_session(&self, session_id: &str) {
        let evicted = self
            .inner
            .take_idle(|key, _| key.session.session_id == session_id);
        close_all(evicted).await;
    }

    /// The shell environment of `request` and its cache key.
    fn environment(&self, request: &ExecRequest) -> (Arc<Vec<(OsString, OsString)>>, Vec<u8>) {
        let base: Vec<(OsString, OsString)> = match &self.inner.config.base_env {
            Some(base) => base.clone(),
            None => std::env::vars_os().collect(),
        };
        let mut last = self
            .inner
            .last_env
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(built) = last.as_ref()
            && built.base == base
            && built.settings == request.env
        {
            return (Arc::clone(&built.env), built.key.clone());
        }
        let env = Arc::new(hardened_env(
            base.iter().cloned(),
            &request.env,
            TerminalKind::Pipe,
        ));
        let key = env_cache_key(env.iter().map(|(k, v)| (k, v)));
        *last = Some(BuiltEnv {
            base,
            settings: request.env.clone(),
            env: Arc::clone(&env),
            key: key.clone(),
        });
        (env, key)
    }

    /// Finds or creates the slot of `key` and marks it busy; makes room first when the cache
    /// is full. Returns the shells evicted to make room.
    fn acquire(&self, key: ShellKey) -> (Arc<Slot>, Vec<ShellProcess>) {
        let mut slots = self.inner.slots();
        let evicted = if slots.contains_key(&key) {
            Vec::new()
        } else {
            evict_down_to(&mut slots, self.max_shells() - 1)
        };
        let slot = Arc::clone(slots.entry(key.clone()).or_insert_with(|| {
            Arc::new(Slot {
                key,
                shell: tokio::sync::Mutex::new(None),
                users: AtomicUsize::new(0),
                last_used: Mutex::new(Instant::now()),
            })
        }));
        slot.users.fetch_add(1, Ordering::SeqCst);
        (slot, evicted)
    }

    /// Evicts idle shells while the cache is over its limit.
    fn trim(&self) -> Vec<ShellProcess> {
        evict_down_to(&mut self.inner.slots(), self.max_shells())
    }

    /// `bash.max_shells`, at least 1.
    fn max_shells(&self) -> usize {
        self.inner.config.max_shells.max(1)
    }

    fn start_sweeper(&self) {
        if self.inner.sweeper_started.swap(true, Ordering::SeqCst) {
            return;
        }
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        let period = (self.inner.config.idle_timeout / 4)
            .clamp(Duration::from_millis(50), Duration::from_secs(60));
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(period).await;
                let Some(inner) = weak.upgrade() else { return };
                let expired = inner
                    .take_idle(|_, slot| slot.last_used().elapsed() >= inner.config.idle_timeout);
                drop(inner);
                close_all(expired).await;
            }
        });
    }
}

/// The idle slot to evict: least recently used among those without background jobs, else the
/// least recently used idle one. `None` when every slot is busy.
fn pick_victim(slots: &HashMap<ShellKey, Arc<Slot>>) -> Option<ShellKey> {
    let mut idle: Vec<&Arc<Slot>> = slots
        .values()
        .filter(|slot| slot.users.load(Ordering::SeqCst) == 0)
        .collect();
    idle.sort_by_key(|slot| slot.last_used());
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

/// Evicts idle shells (see [`pick_victim`]) until at most `limit` slots are left, or every one
/// left is busy (the cache then goes over its limit until calls finish).
fn evict_down_to(slots: &mut HashMap<ShellKey, Arc<Slot>>, limit: usize) -> Vec<ShellProcess> {
    let mut evicted = Vec::new();
    while slots.len() > limit {
        let Some(victim) = pick_victim(slots) else {
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

async fn close_all(shells: Vec<ShellProcess>) {
    for shell in shells {
        shell.close().await;
    }
}
