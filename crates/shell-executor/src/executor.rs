//! [`ShellExecutor`]: one call from request to result, on a shell of the cache.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::sync::{Arc, Mutex, PoisonError};

use std::time::Duration;

use agentsh_output_sink::OutputSink;
use agentsh_process::env::{TerminalKind, env_cache_key, hardened_env};
use agentsh_protocol::BashResult;

#[cfg(test)]
use crate::cache::ShellStatus;
use crate::cache::{ShellCache, ShellKey, SlotUse, close_all};
use crate::call::{CommandExit, Finished, Ran, Running};
use crate::error::ExecError;
use crate::request::{ExecRequest, ExecutorConfig, ShellLimits};
use crate::shell::{Output, ShellProcess};

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

/// What a caller gives [`ShellExecutor::execute`]: a sink, and who sees the text it commits.
struct SinkOutput<'a, 'b> {
    sink: &'a mut OutputSink,
    on_chunk: Option<ChunkCallback<'b>>,
}

impl Output for SinkOutput<'_, '_> {
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

    /// Runs `request` in the shell of its key, streaming every output chunk to `sink` and the
    /// text it commits to `on_chunk`: [`run`](Self::run) with a sink, never yielding, its
    /// result built.
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
        let timeout = request.timeout;
        let finished = self
            .run(request, SinkOutput { sink, on_chunk }, None)
            .await?
            .finish()
            .await?;
        let SinkOutput { sink, on_chunk } = finished.output;
        let summary = match on_chunk {
            Some(on_chunk) => sink.dump_with(on_chunk),
            None => sink.dump(),
        };
        Ok(finished
            .exit
            .result(summary, timeout, finished.blocked_hosts))
    }

    /// Runs `request` in the shell of its key (started on first use, replaced transparently
    /// when it died), every raw output chunk going to `output`: the one way a foreground call
    /// runs. With `yield_after`, a command still running then is handed back as
    /// [`Ran::Running`], no longer the session's: its shell leaves the cache (the session's
    /// next call starts a new one) and the caller makes it a job ([`Running::into_job`]) or
    /// waits for it ([`Running::finish`]).
    ///
    /// Timeouts, aborts (`request.cancel`), non-zero exits and dead shells end in
    /// [`Finished::exit`]; an error means the command could not be run at all. An `output`
    /// whose head is satisfied stops the command (exit code 0, like `| head`). A call queued
    /// behind another one can be aborted while it waits: it never runs.
    ///
    /// Needs a tokio runtime with IO and time enabled.
    pub async fn run<'o, O: Output + 'o>(
        &self,
        request: ExecRequest,
        output: O,
        yield_after: Option<Duration>,
    ) -> Result<Ran<'o, O>, ExecError> {
        let (hold, env) = self.hold_slot(&request).await?;
        // What the release needs: the request itself moves into the run.
        let (session_id, limits) = (request.session.session_id.clone(), request.limits);
        let cancel = request.cancel.clone();
        let ran = async {
            let mut slot = tokio::select! {
                slot = hold.slot().shell.lock() => slot,
                () = cancel.cancelled() => {
                    let exit = CommandExit { killed: true, ..CommandExit::default() };
                    return Ok(Ran::Finished(Finished { exit, blocked_hosts: Vec::new(), output }));
                }
            };
            let shell = take_shell(&mut slot, &request, &env).await?;
            let mut call = Running::new(shell, request, output);
            let done = match yield_after {
                None => Some(call.run.as_mut().await),
                Some(after) => match tokio::time::timeout(after, call.run.as_mut()).await {
                    Ok(done) => Some(done),
                    // A command that ended just as the time ran out is not made a job.
                    Err(_elapsed) => poll_once(call.run.as_mut()),
                },
            };
            let Some((mut shell, outcome, output)) = done else {
                // The slot stays empty: the session's next call starts a new shell.
                return Ok(Ran::Running(call));
            };
            let exit = CommandExit::from_outcome(&outcome);
            let blocked_hosts = shell.blocked_since(call.mark);
            if shell.is_alive() {
                *slot = Some(shell);
            } else {
                shell.close().await;
            }
            outcome?;
            Ok(Ran::Finished(Finished {
                exit,
                blocked_hosts,
                output,
            }))
        }
        .await;
        self.release(hold, &session_id, limits).await;
        ran
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

    /// Ends a call's hold on its slot, then closes what `session`'s `limits` no longer allow.
    async fn release(&self, hold: SlotUse, session: &str, limits: ShellLimits) {
        drop(hold);
        let evicted = self.cache.trim(session, limits);
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

/// `future`'s output if it is ready at this poll.
fn poll_once<F: Future + ?Sized>(future: std::pin::Pin<&mut F>) -> Option<F::Output> {
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    match future.poll(&mut context) {
        std::task::Poll::Ready(output) => Some(output),
        std::task::Poll::Pending => None,
    }
}

/// The shell of a call: the slot's, when it is alive and the request's shell; else a new one
/// (the old one closed). Taken out of the slot: a call puts it back when it is kept.
async fn take_shell(
    slot: &mut Option<ShellProcess>,
    request: &ExecRequest,
    env: &[(OsString, OsString)],
) -> Result<ShellProcess, ExecError> {
    let usable = slot.as_mut().is_some_and(|shell| {
        shell.is_alive()
            && shell.spec() == &request.shell
            && shell.sandbox() == request.sandbox.as_ref()
    });
    match slot.take() {
        Some(shell) if usable => Ok(shell),
        old => {
            if let Some(old) = old {
                old.close().await;
            }
            start_shell(request, env).await
        }
    }
}

/// A new shell for `request`: its shell, environment, rc snapshot, cwd and sandbox.
pub(crate) async fn start_shell(
    request: &ExecRequest,
    env: &[(OsString, OsString)],
) -> Result<ShellProcess, ExecError> {
    ShellProcess::start(
        &request.shell,
        env.to_vec(),
        request.snapshot.as_deref(),
        &request.cwd,
        request.sandbox.as_ref(),
        request.resources,
    )
    .await
}

#[cfg(test)]
mod tests;
