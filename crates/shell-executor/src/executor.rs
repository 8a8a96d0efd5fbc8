//! [`ShellExecutor`]: one call from request to result, on a shell of the cache.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::sync::{Arc, Mutex, PoisonError};

use agentsh_output_sink::OutputSink;
use agentsh_process::env::{TerminalKind, env_cache_key, hardened_env};
use agentsh_process::shell::apply_prefix;
use agentsh_protocol::{BashResult, CANCELLED_ANNOTATION, timeout_annotation};

#[cfg(test)]
use crate::cache::ShellStatus;
use crate::cache::{ShellCache, ShellKey, SlotUse, close_all};
use crate::error::ExecError;
use crate::request::{ExecRequest, ExecutorConfig};
use crate::shell::{Output, RunOutcome, ShellProcess, StopReason};

/// A callback that sees the output as the sink commits it: sanitised text, in order, each
/// piece once (the unfinished line when the command ends), so that a live view needs no
/// sanitiser of its own.
pub type ChunkCallback<'a> = &'a mut (dyn FnMut(&str) + Send);

/// A shell environment and what it was built from.
struct BuiltEnv {
    base: Vec<(OsString, OsString)>,
    settings: BTreeMap<String, String>,
    env: Arc<Vec<(OsString, OsString)>>,
    key: Vec<u8>,
}

/// Runs commands in persistent shells, one cache per process (create one and share it).
///
/// Dropping the executor ends every shell and its process tree.
pub struct ShellExecutor {
    config: ExecutorConfig,
    pub(crate) cache: Arc<ShellCache>,
    /// The last environment built, with its inputs: every call of a session asks for the same
    /// one, and hardening and keying it cost more than checking that nothing changed.
    last_env: Mutex<Option<BuiltEnv>>,
}

impl std::fmt::Debug for ShellExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShellExecutor")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Default for ShellExecutor {
    fn default() -> Self {
        Self::new(ExecutorConfig::default())
    }
}

struct SinkOutput<'a, 'b, 'c> {
    sink: &'a mut OutputSink,
    on_chunk: &'b mut Option<ChunkCallback<'c>>,
}

impl Output for SinkOutput<'_, '_, '_> {
    fn chunk(&mut self, bytes: &[u8]) {
        match self.on_chunk.as_mut() {
            Some(on_chunk) => self.sink.push_with(bytes, &mut **on_chunk),
            None => self.sink.push(bytes),
        }
    }

    fn head_satisfied(&self) -> bool {
        self.sink.head_satisfied()
    }
}

impl ShellExecutor {
    /// An empty cache.
    pub fn new(config: ExecutorConfig) -> Self {
        Self {
            cache: Arc::new(ShellCache::new(config.max_total_shells)),
            config,
            last_env: Mutex::new(None),
        }
    }

    /// Runs `request` in the shell of its key (started on first use, replaced transparently
    /// when it died), streaming every output chunk to `sink`, and the text it commits to `on_chunk`.
    ///
    /// Timeouts, aborts (`request.cancel`), non-zero exits and dead shells are results (a
    /// stopped command's [`BashResult::annotation`] says which stopped it); an error means the
    /// command could not be run at all. A head limit configured on the sink
    /// stops the command as soon as it is satisfied (exit code 0, like `| head`).
    ///
    /// Needs a tokio runtime with IO and time enabled.
    pub async fn execute(
        &self,
        request: ExecRequest,
        sink: &mut OutputSink,
        on_chunk: Option<ChunkCallback<'_>>,
    ) -> Result<BashResult, ExecError> {
        let (hold, env) = self.hold_slot(&request).await?;

        // A call queued behind another one can be aborted while it waits: it never runs.
        let mut on_chunk = on_chunk;
        let outcome = tokio::select! {
            mut shell = hold.slot().shell.lock() => {
                let output = SinkOutput { sink: &mut *sink, on_chunk: &mut on_chunk };
                run_in(&mut shell, &request, env, output).await
            }
            () = request.cancel.cancelled() => Ok((RunOutcome::aborted(), Vec::new())),
        };
        self.release(hold, &request).await;
        let (outcome, blocked_hosts) = outcome?;

        let annotation = match outcome.stopped {
            Some(StopReason::Timeout) => Some(timeout_annotation(request.timeout.as_secs_f64())),
            Some(StopReason::Abort) => Some(CANCELLED_ANNOTATION.to_owned()),
            Some(StopReason::Head | StopReason::NeedsTerminal) | None => None,
        };
        Ok(BashResult {
            summary: match on_chunk {
                Some(on_chunk) => sink.dump_with(on_chunk),
                None => sink.dump(),
            },
            annotation,
            exit_code: outcome.exit_code,
            cancelled: matches!(
                outcome.stopped,
                Some(StopReason::Timeout | StopReason::Abort)
            ),
            timed_out: outcome.stopped == Some(StopReason::Timeout),
            session_restarted: outcome.restarted,
            blocked_hosts,
            needs_terminal: outcome.needs_terminal.map(str::to_owned),
        })
    }

    /// The shells in the cache (pids are reported for idle shells only).
    #[cfg(test)]
    pub(crate) fn shells(&self) -> Vec<ShellStatus> {
        self.cache.shells()
    }

    /// Closes every idle shell (no call running or queued), ending its whole process tree.
    pub async fn close_idle(&self) {
        close_all(self.cache.take_idle(|_, _| true)).await;
    }

    /// Closes the idle shells of one session (both surfaces), ending their whole process trees;
    /// other sessions' shells are untouched.
    pub async fn close_session(&self, session_id: &str) {
        let evicted = self
            .cache
            .take_idle(|key, _| key.session.session_id == session_id);
        close_all(evicted).await;
    }

    /// Checks `request`, then takes a hold on the slot of its shell (closing what the limits
    /// no longer allow to make room); also returns the shell's environment.
    pub(crate) async fn hold_slot(
        &self,
        request: &ExecRequest,
    ) -> Result<(SlotUse, Arc<Vec<(OsString, OsString)>>), ExecError> {
        check_request(request)?;
        self.cache.start_sweeper();
        let (env, env_key) = self.environment(request);
        let key = ShellKey {
            shell: request.shell.path.clone(),
            prefix: request.prefix.clone(),
            snapshot: request.snapshot.clone(),
            env: env_key,
            sandbox: request.sandbox.clone(),
            session: request.session.clone(),
        };
        let (hold, evicted) = self.cache.acquire(key, request.limits);
        close_all(evicted).await;
        Ok((hold, env))
    }

    /// Ends a call's hold on its slot, then closes what the limits no longer allow.
    pub(crate) async fn release(&self, hold: SlotUse, request: &ExecRequest) {
        drop(hold);
        let evicted = self.cache.trim(&request.session.session_id, request.limits);
        close_all(evicted).await;
    }

    /// The shell environment of `request` and its cache key.
    pub(crate) fn environment(
        &self,
        request: &ExecRequest,
    ) -> (Arc<Vec<(OsString, OsString)>>, Vec<u8>) {
        let base: Vec<(OsString, OsString)> = match &self.config.base_env {
            Some(base) => base.clone(),
            None => std::env::vars_os().collect(),
        };
        let mut last = self.last_env.lock().unwrap_or_else(PoisonError::into_inner);
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
}

/// Refuses what no shell can be given: a NUL in the command or the cwd.
pub(crate) fn check_request(request: &ExecRequest) -> Result<(), ExecError> {
    if request.command.contains('\0') {
        return Err(ExecError::NulInCommand);
    }
    if request.cwd.as_os_str().as_encoded_bytes().contains(&0) {
        return Err(ExecError::NulInCwd(request.cwd.display().to_string()));
    }
    Ok(())
}

/// Runs `request` on the slot's shell, starting one first when there is none, it died, or it
/// is another shell than the request's; a shell that died during the call leaves the slot.
async fn run_in(
    slot: &mut Option<ShellProcess>,
    request: &ExecRequest,
    env: Arc<Vec<(OsString, OsString)>>,
    mut output: SinkOutput<'_, '_, '_>,
) -> Result<(RunOutcome, Vec<String>), ExecError> {
    let alive = slot.as_mut().is_some_and(ShellProcess::is_alive);
    let same_shell = slot
        .as_ref()
        .is_some_and(|s| s.spec() == &request.shell && s.sandbox() == request.sandbox.as_ref());
    if !alive || !same_shell {
        if let Some(old) = slot.take() {
            old.close().await;
        }
        let started = ShellProcess::start(
            &request.shell,
            Vec::clone(&env),
            request.snapshot.as_deref(),
            &request.cwd,
            request.sandbox.as_ref(),
        )
        .await?;
        *slot = Some(started);
    }
    let shell = slot
        .as_mut()
        .ok_or_else(|| ExecError::Io(std::io::Error::other("shell slot empty after start")))?;
    let command = match request.prefix.as_deref() {
        Some(prefix) => apply_prefix(prefix, &request.command),
        None => request.command.clone(),
    };
    // What the sandbox's proxy refused for the shell's namespace while the command ran.
    let mark = shell.network_mark();
    let outcome = shell
        .run(
            &command,
            &request.cwd,
            request.timeout,
            &request.cancel,
            &mut output,
        )
        .await;
    let blocked = shell.blocked_since(mark);
    if !shell.is_alive()
        && let Some(dead) = slot.take()
    {
        dead.close().await;
    }
    outcome.map(|outcome| (outcome, blocked))
}

#[cfg(test)]
mod tests;
