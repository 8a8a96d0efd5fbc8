//! `BashTool`: the model's `bash` tool call, end to end. Depends on `session` through its
//! crate-internal API; `session` knows nothing of this file.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentsh_bash_normalize::{Limits, Normalized, merge_limits, normalize};
use agentsh_output_sink::OutputSink;
use agentsh_protocol::BashResult;
use agentsh_pty_runtime::{PtyCommand, PtyRun, TerminalSize};
use agentsh_shell_executor::CancellationToken;
use serde_json::Value;

use crate::BashArgs;
use crate::Timeout;
use crate::approval::Refusal;
use crate::audit::AuditSource;
use crate::cwd::cwd_error_result;
use crate::cwd::{CwdError, check_cwd};
use crate::pty_selection::{HostUi, use_pty};
use crate::session::AgentSession;
use crate::{PtyHost, ToolDetails, ToolOutcome, ToolResult};
use agentsh_jobs::{
    FinishedRun, HeadCapture, JobCall, ToolUpdate, blocked_result, build_tool_result,
};
use agentsh_seam::Approver;

/// What the caller of a tool call provides.
#[derive(Clone, Default)]
pub struct ToolContext {
    /// The tools available in this context; interception only suggests one of these.
    pub tool_names: Vec<String>,
    /// Cancelling it aborts the call, running or still queued behind another one.
    pub cancel: CancellationToken,
    /// The interactive UI that shows a PTY command's screen, when the context has one. With
    /// `bash.virtual_terminal = "on"` (and `AGENTSH_NO_PTY`/`PI_NO_PTY` not `1`), tool calls
    /// then run on a PTY. Print, RPC and MCP contexts leave it `None`.
    pub pty_host: Option<Arc<dyn PtyHost>>,
    /// Nobody shows live updates (print mode): none are made, and the output is not copied
    /// into a tail for them. Default `false`: updates are made.
    pub skip_live_updates: bool,
    /// Nothing outlives the call here (print mode): `run_in_background` is an argument
    /// error and no call yields. Default `false`: jobs are available.
    pub no_jobs: bool,
    /// Who answers the call's approval requests (the policy's `ask`); `None`: nobody can be
    /// asked, so a command that needs a yes is denied at once.
    pub approver: Option<Arc<dyn Approver>>,
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("tool_names", &self.tool_names)
            .field("cancelled", &self.cancel.is_cancelled())
            .field("pty_host", &self.pty_host.is_some())
            .field("skip_live_updates", &self.skip_live_updates)
            .field("no_jobs", &self.no_jobs)
            .field("approver", &self.approver.is_some())
            .finish()
    }
}

/// The `bash` tool of one session. Get it with [`AgentSession::bash_tool`].
#[derive(Clone)]
pub struct BashTool {
    session: AgentSession,
}

impl AgentSession {
    /// Runs the model's `bash` tool call; see [`BashTool::execute`].
    pub async fn execute_tool(
        &self,
        call_id: &str,
        args: &Value,
        ctx: ToolContext,
        on_update: impl FnMut(ToolUpdate) + Send,
    ) -> ToolOutcome {
        self.bash_tool()
            .execute(call_id, args, ctx, on_update)
            .await
    }

    /// The session's `bash` tool.
    pub fn bash_tool(&self) -> BashTool {
        BashTool {
            session: self.clone(),
        }
    }
}

impl BashTool {
    /// Runs one tool call: parse the arguments, normalise (`| head`/`| tail` → limits), merge
    /// the limits, intercept, check the cwd, clamp the timeout, allocate an artifact, run on the
    /// session's `tool` shell with throttled live updates (at most 20 a second, the last state
    /// always sent), and build the [`ToolResult`].
    ///
    /// Never fails: bad arguments, blocked commands, cwd errors and failing commands are
    /// results with `isError: true`; a call aborted through `ctx.cancel` is
    /// [`ToolOutcome::Aborted`].
    pub async fn execute(
        &self,
        call_id: &str,
        args: &Value,
        ctx: ToolContext,
        mut on_update: impl FnMut(ToolUpdate) + Send,
    ) -> ToolOutcome {
        let session = &self.session;
        let settings = session.settings();
        let default_timeout = settings.bash.default_timeout;
        let args = match BashArgs::from_value(args) {
            Ok(args) => args,
            Err(err) => {
                return ToolOutcome::Finished(not_run_result(
                    err.to_string(),
                    session.cwd(),
                    default_timeout,
                ));
            }
        };
        let timeout = Timeout::from_request(args.timeout, default_timeout);
        let normalized = normalize(&args.command);
        let limits = merge_limits(
            Limits {
                head: args.head,
                tail: args.tail,
            },
            normalized.limits,
        );

        // Judged before anything runs, on the command that would run; the texts show it as
        // the model wrote it. The call's timeout starts only after an approval.
        let judged = session
            .gate()
            .check(
                call_id,
                &normalized.command,
                &args.command,
                ctx.approver.as_ref(),
                &ctx.cancel,
            )
            .await;
        // Checked once: the audit line names where it runs (the session's cwd when the call's
        // is bad), and the run refuses a bad one after interception.
        let cwd = check_cwd(args.cwd.as_deref(), session.cwd(), session.home());
        let audit_cwd = cwd.as_deref().unwrap_or(session.cwd());
        let audit =
            |verdict| session.audit_decision(AuditSource::Model, &args.command, audit_cwd, verdict);
        match judged {
            Ok(verdict) => {
                if let Err(text) = audit(&verdict) {
                    return ToolOutcome::Finished(not_run_result(text, session.cwd(), timeout));
                }
            }
            Err(refusal) => {
                let _ = audit(refusal.verdict());
                let aborted = matches!(refusal, Refusal::Aborted { .. });
                let result = not_run_result(refusal.into_text(), session.cwd(), timeout);
                return if aborted {
                    ToolOutcome::Aborted(result)
                } else {
                    ToolOutcome::Finished(result)
                };
            }
        }
        let started = Instant::now();
        let outcome = self
            .run_judged(
                call_id,
                &args,
                cwd,
                &normalized,
                limits,
                timeout,
                ctx,
                &mut on_update,
            )
            .await;
        let result = outcome.result();
        let artifact_id = result.details.meta.as_ref().and_then(|meta| {
            meta.shaped
                .as_ref()
                .map(|shaped| shaped.artifact_id.as_str())
                .or_else(|| meta.truncation.as_ref()?.artifact_id.as_deref())
        });
        session.audit_end(call_id, result.details.exit_code, started, artifact_id);
        outcome
    }

    /// The rest of [`execute`](Self::execute) once the policy let the command run:
    /// interception, the cwd, and the run itself.
    #[allow(clippy::too_many_arguments)]
    async fn run_judged(
        &self,
        call_id: &str,
        args: &BashArgs,
        cwd: Result<PathBuf, CwdError>,
        normalized: &Normalized,
        limits: Limits,
        timeout: Timeout,
        ctx: ToolContext,
        mut on_update: impl FnMut(ToolUpdate) + Send,
    ) -> ToolOutcome {
        let session = &self.session;
        let settings = session.settings();
        let default_timeout = settings.bash.default_timeout;
        if let Some(interceptor) = session.interceptor()
            && let Some(blocked) = interceptor.check(&normalized.unwrapped(), &ctx.tool_names)
        {
            return ToolOutcome::Finished(blocked_result(
                &blocked,
                &args.command,
                session.cwd(),
                timeout,
            ));
        }

        let cwd = match cwd {
            Ok(cwd) => cwd,
            Err(err) => return ToolOutcome::Finished(cwd_error_result(&err, timeout)),
        };

        let job_call = JobCall {
            host: session,
            jobs: session.jobs(),
            command: &normalized.command,
            cwd: &cwd,
            timeout: args
                .timeout
                .map(|seconds| Timeout::from_request(Some(seconds), default_timeout)),
            shown_timeout: timeout,
            limits,
            raw: args.raw,
        };
        if args.run_in_background {
            if ctx.no_jobs {
                return ToolOutcome::Finished(not_run_result(
                    "argument `run_in_background`: background jobs are not available here (they \
                     need a session that outlives the call: rpc, mcp or the interactive mode)"
                        .to_owned(),
                    &cwd,
                    timeout,
                ));
            }
            return job_call.start_background(args.pty).await;
        }
        let yield_after = match args.yield_after {
            Some(seconds) if seconds <= 0.0 => None,
            Some(seconds) => Some(seconds),
            None => settings.bash.yield_after,
        };
        tracing::debug!(call_id, command = %normalized.command, ?limits, "bash tool call");
        let pty_host = ctx.pty_host.as_ref().filter(|_| {
            use_pty(
                settings.bash.virtual_terminal,
                |name| std::env::var_os(name),
                HostUi::Interactive,
            )
        });
        if let Some(host) = pty_host {
            let sink = session.new_sink(limits.head);
            let mut command = session.pty_command(&normalized.command, &cwd, timeout);
            if let Some((cols, rows)) = host.size() {
                command.size = TerminalSize::clamped(cols, rows);
            }
            let (result, sink) = run_on_pty(command, sink, host.as_ref(), call_id, &ctx).await;
            return build_tool_result(&FinishedRun {
                shaped: None,
                result: &result,
                head_capture: sink.head_text().map(|text| HeadCapture {
                    text,
                    truncated: sink.head_truncated(),
                }),
                limits,
                max_bytes: settings.output.max_bytes,
                aborted: ctx.cancel.is_cancelled(),
                cwd: &cwd,
                timeout,
                sandbox: session.sandbox(),
            });
        }
        // A call with a head limit never yields: it stops as `| head` stops a pipeline. Nor does
        // one whose host shows terminals (it runs piped only when PTYs are off).
        let yield_after = yield_after
            .filter(|_| !ctx.no_jobs && ctx.pty_host.is_none() && limits.head.is_none())
            .map(Duration::from_secs_f64);
        job_call
            .run(
                yield_after,
                !ctx.skip_live_updates,
                &ctx.cancel,
                &mut on_update,
            )
            .await
    }
}

/// A result for a call that could not run: the error text, `isError`, no exit code.
fn not_run_result(text: String, cwd: &Path, timeout: Timeout) -> ToolResult {
    ToolResult::new(text, ToolDetails::not_run(cwd, timeout), true)
}

/// Runs a tool call on a PTY shown by `host`; the caller's cancel token kills it.
async fn run_on_pty(
    command: PtyCommand,
    sink: OutputSink,
    host: &dyn PtyHost,
    call_id: &str,
    ctx: &ToolContext,
) -> (BashResult, OutputSink) {
    let session = PtyRun::start(command, sink);
    let controller = session.controller();
    host.attach(
        call_id,
        agentsh_seam::PtyAttachment::new(controller.clone()),
    );
    stop_on_cancel(session.wait_with_sink(), &ctx.cancel, || controller.kill()).await
}

/// Drives `work` to its end; when `cancel` fires first, calls `stop` and keeps driving it, so
/// the work ends with its own (aborted) result instead of being dropped.
async fn stop_on_cancel<T>(
    work: impl Future<Output = T>,
    cancel: &CancellationToken,
    stop: impl FnOnce(),
) -> T {
    tokio::pin!(work);
    tokio::select! {
        done = &mut work => done,
        () = cancel.cancelled() => {
            stop();
            work.await
        }
    }
}
