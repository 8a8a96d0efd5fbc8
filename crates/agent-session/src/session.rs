//! `AgentSession`: one agent session's shells, artifacts, settings, warnings and context.

mod jobs;
mod reports;
mod snapshot;

pub use snapshot::SnapshotOutcome;

use std::collections::{BTreeMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use agentsh_seam::{EventHub, lock};

use agentsh_artifact_store::{
    ArtifactError, ArtifactInfo, ArtifactReservation, ArtifactStore, ArtifactText, RetentionPolicy,
};
use agentsh_bash_interceptor::Interceptor;
use agentsh_bash_policy::{Policy, TierSource};
use agentsh_output_sink::{OutputSink, Secrets, SinkOptions, Spill, SpillSource};
use agentsh_process::sandbox::{Kernel as SandboxKernel, SandboxSpec};
use agentsh_process::shell::{ShellSpec, discover_shell, shell_prefix};
use agentsh_protocol::{BangOptions, BashResult, ResourceLimits};
use agentsh_rc_snapshot::default_cache_dir;
use agentsh_sandbox::SessionSandbox;
use agentsh_shell_executor::{
    CancellationToken, ChunkCallback, ExecRequest, ExecutorConfig, LateLimits, SessionKey,
    ShellExecutor, ShellLimits, Surface,
};

use crate::Timeout;
use crate::approval::{ApprovalGate, Verdict};
use crate::audit::{AuditDecision, AuditEnd, AuditLog, AuditSource};
use crate::cwd::check_cwd;
use crate::error::SessionError;
use agentsh_config::Settings;
use agentsh_config::{managed_policy_tiers, policy_from_tiers, project_policy_tier};
use agentsh_jobs::{Jobs, bang_context_text};
use agentsh_protocol::ApprovalResolution;

/// How an [`AgentSession`] is set up. Start from [`SessionOptions::new`], which takes the one
/// thing a session cannot do without: its working directory.
///
/// [`SessionOptions::default`] leaves `cwd` empty, which [`AgentSession::new`] rejects; it is
/// there for `..SessionOptions::default()` in a literal that sets `cwd`.
#[derive(Clone, Default)]
pub struct SessionOptions {
    /// The loaded settings.
    pub settings: Settings,
    /// The session's working directory: an existing absolute directory ([`AgentSession::new`]
    /// checks). Calls run there unless they name another `cwd`, and relative `cwd` arguments
    /// resolve against it.
    pub cwd: PathBuf,
    /// The session id; a fresh unique one when `None`.
    pub session_id: Option<String>,
    /// The user's home (rc files, `~` in `cwd`, snapshot cache); `$HOME` when `None`.
    pub home: Option<PathBuf>,
    /// The shell cache to use; the one shared by the whole process when `None`.
    pub executor: Option<Arc<ShellExecutor>>,
    /// For tests: check the sandbox as if the kernel offered at most this
    /// ([`Kernel::limited_to`](agentsh_process::sandbox::Kernel::limited_to)), to see the
    /// start-up refusal a weaker kernel gets. It can only make the check stricter; the sandbox
    /// is always built from what the running kernel offers.
    #[doc(hidden)]
    pub sandbox_kernel_limit: Option<SandboxKernel>,
    /// Where the approval policy comes from.
    pub policy: PolicySource,
    /// The mode the audit log names for the session's commands (`exec`, `rpc`, `mcp`,
    /// `interactive`); `None`: `library`.
    pub mode: Option<String>,
    /// Where the session's events go (a job asking for hidden input). Sessions made from
    /// clones of these options share it: a surface's subscription outlives a session renewed
    /// with new settings.
    pub events: EventHub,
}

/// Where a session's approval policy comes from.
#[derive(Clone, Debug, Default)]
pub enum PolicySource {
    /// The tiers the settings name: the managed file(s), the user's `[policy]`, and the
    /// project's `.agentsh/policy.toml` in the session's cwd, read when the session starts.
    #[default]
    FromSettings,
    /// A far side's session: the tiers its client sent (the client's managed, user and project
    /// tiers), plus this host's managed file(s) and its cwd's project file.
    Forwarded(Vec<TierSource>),
    /// Exactly this policy (an embedding program's own, or a test's).
    Given(Policy),
}

impl SessionOptions {
    /// Options for a session in `cwd` (an existing absolute directory), with default
    /// [`Settings`], a fresh session id, `$HOME` as home and the process-wide shell cache.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        Self {
            cwd: cwd.into(),
            ..Self::default()
        }
    }
}

/// One agent session: its id, cwd, settings, artifact store, shells (keys `(id, "tool")` and
/// `(id, "user")`), recorded context messages and warnings. Cheap to clone.
#[derive(Clone)]
pub struct AgentSession {
    inner: Arc<Inner>,
}

struct Inner {
    id: String,
    cwd: PathBuf,
    home: Option<PathBuf>,
    settings: Settings,
    /// `bash.env`, plus `TMPDIR` (the private temp dir) under a sandbox.
    env: BTreeMap<String, String>,
    /// The sandbox, `None` when `sandbox.mode` is off.
    sandbox: Option<SessionSandbox>,
    /// The artifact store, or why it could not be opened.
    store: Result<ArtifactStore, String>,
    interceptor: Option<Interceptor>,
    shell: ShellSpec,
    prefix: Option<String>,
    snapshot: Option<PathBuf>,
    /// The resource limits of each command tree (`[limits]`, resolved at start).
    resources: ResourceLimits,
    /// Where a limit passed after a call's result was sent goes: the next result's notices.
    late_limits: LateLimits,
    /// How the snapshot was had.
    snapshot_outcome: SnapshotOutcome,
    executor: Arc<ShellExecutor>,
    /// Cancelled by `shutdown`: every call's token is a child of it.
    shutdown: CancellationToken,
    bang: Mutex<Option<CancellationToken>>,
    context: Mutex<Vec<String>>,
    warnings: Mutex<Warnings>,
    /// Its background jobs (they report through `events`).
    jobs: Arc<Jobs>,
    /// The artifacts this session reserved, oldest first.
    artifact_ids: Mutex<Vec<String>>,
    /// The approval policy and what it remembers.
    gate: ApprovalGate,
    /// The secrets redacted from every output of the session (`None` with `[secrets] enabled
    /// = false`).
    secrets: Option<Arc<Secrets>>,
    /// The audit log, when `[audit]` enables it.
    audit: Option<AuditLog>,
    /// What the audit log names the session's mode.
    mode: String,
    /// The session's events and their subscribers.
    events: EventHub,
}

#[derive(Default)]
struct Warnings {
    pending: Vec<String>,
    seen: HashSet<String>,
}

/// The approval policy of a session in `cwd`.
fn session_policy(
    policy: PolicySource,
    settings: &Settings,
    cwd: &Path,
) -> Result<Policy, SessionError> {
    match policy {
        PolicySource::Given(policy) => Ok(policy),
        PolicySource::FromSettings => settings
            .load_policy(cwd, env_var)
            .map_err(SessionError::Policy),
        PolicySource::Forwarded(mut tiers) => {
            let managed = managed_policy_tiers(env_var).map_err(SessionError::Policy)?;
            // The managed tiers of this host come first; the client's follow, then the
            // project file of this host's cwd.
            let mut all = managed;
            all.append(&mut tiers);
            all.extend(project_policy_tier(cwd).map_err(SessionError::Policy)?);
            policy_from_tiers(all).map_err(SessionError::Policy)
        }
    }
}

fn env_var(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

/// The process-wide shell cache. Each session's own limits travel in its requests
/// ([`ShellLimits`]); the cache adds only the process-wide cap.
fn global_executor() -> Arc<ShellExecutor> {
    static EXECUTOR: OnceLock<Arc<ShellExecutor>> = OnceLock::new();
    Arc::clone(EXECUTOR.get_or_init(|| Arc::new(ShellExecutor::new(ExecutorConfig::default()))))
}

/// The containment warning (no cgroup per shell) is given once per process, by its first
/// session.
static CONTAINMENT_WARNED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// A session id unique within this machine and unguessable by a command (64 random bits).
fn fresh_session_id() -> String {
    agentsh_process::random_hex(8)
}

impl AgentSession {
    /// Sets a session up: discovers the shell and prefix, takes the rc snapshot (time-boxed,
    /// cached on disk), opens the artifact store and compiles the interceptor rules.
    ///
    /// `options.cwd` must be an existing absolute directory: anything else is an error before
    /// anything else is done, since every call would fail in it.
    ///
    /// Problems that are not errors (invalid rules, no snapshot, no artifact store) become
    /// warnings, each reported once by [`take_warnings`](Self::take_warnings). An unusable
    /// `bash.shell` is an error: nothing runs on a broken configuration.
    ///
    /// With `sandbox.mode` on, the writable roots are resolved here (a missing one, `/` or
    /// `$HOME` is an error), the kernel is asked whether it can enforce the sandbox (a mode it
    /// cannot is [`SessionError::Sandbox`], `Sandbox unavailable: <reason>`, before any shell
    /// or file is made: never a silent or partial fallback), and the session's private temp
    /// dir (0700) is made; it is every command's `TMPDIR` and is removed by
    /// [`shutdown`](Self::shutdown).
    pub fn new(options: SessionOptions) -> Result<Self, SessionError> {
        let SessionOptions {
            settings,
            cwd,
            session_id,
            home,
            executor,
            sandbox_kernel_limit,
            policy,
            mode,
            events,
        } = options;
        check_session_cwd(&cwd)?;
        let policy = session_policy(policy, &settings, &cwd)?;
        let audit = AuditLog::open(&settings.audit, env_var);
        // Decided on first use, which also starts the sweep of what dead agentsh processes
        // left (their cgroups, shells' private directories and sandbox temp dirs) when it is
        // due: in the background, at most once a minute per host and user.
        let containment = agentsh_process::containment();
        let mut warnings = Vec::new();
        // `[limits]` against the memory agentsh may use; their mechanism is decided before
        // any shell starts (on cgroup v2 it enables controllers in agentsh's own cgroup, which
        // only works while no process of agentsh's is in a child of it).
        let resources = settings
            .limits
            .resolve(agentsh_process::memory_agentsh_may_use());
        if resources.any() {
            agentsh_process::limits_mechanism();
        }
        // An explicit home also moves the snapshot cache under it, away from the user's.
        let cache_dir = match &home {
            Some(home) => Some(home.join(".cache/agentsh/snapshots")),
            None => default_cache_dir(env_var),
        };
        let home = home.or_else(|| env_var("HOME").map(PathBuf::from));
        let sandbox = SessionSandbox::new(
            &settings.sandbox,
            &cwd,
            home.as_deref(),
            sandbox_kernel_limit,
            settings.limits.tmp_size,
        )?;
        let mut env = settings.bash.env.clone();
        if let Some(sandbox) = &sandbox {
            env.insert(
                "TMPDIR".to_owned(),
                sandbox.temp_dir().to_string_lossy().into_owned(),
            );
            env.extend(sandbox.env());
        }

        let shell = discover_shell(settings.bash.shell.as_deref(), env_var)?;
        let prefix = shell_prefix(settings.bash.prefix.as_deref(), env_var);

        // The snapshot runs the user's rc files in a shell: under the session's sandbox when
        // it has one (which the kernel can enforce, or the session would not exist).
        let (snapshot, snapshot_outcome) = snapshot::session_snapshot(
            &shell,
            home.as_deref(),
            cache_dir.as_deref(),
            &settings,
            sandbox.as_ref().map(SessionSandbox::snapshot_spec),
        );
        if let SnapshotOutcome::Failed(warning) = &snapshot_outcome {
            warnings.push(warning.clone());
        }

        let store = open_store(&settings).map_err(|err| {
            let reason = err.to_string();
            warnings.push(format!("artifacts disabled: {reason}"));
            reason
        });

        let interceptor = settings.bash_interceptor.enabled.then(|| {
            let (interceptor, diagnostics) = Interceptor::new(&settings.bash_interceptor.rules);
            warnings.extend(diagnostics.iter().map(ToString::to_string));
            interceptor
        });

        if let Some(warning) = containment.warning()
            && !CONTAINMENT_WARNED.swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            warnings.push(warning);
        }

        let secrets = settings.secrets.session_secrets(&settings.bash.env);
        let executor = executor.unwrap_or_else(global_executor);
        let jobs = Arc::new(Jobs::new(events.clone()));
        // A limit passed by what a command left running is told on the session's next result.
        let late_limits = {
            let jobs = Arc::downgrade(&jobs);
            LateLimits::new(move |hit| {
                if let Some(jobs) = jobs.upgrade() {
                    jobs.tell_next_result(hit.closing_line());
                }
            })
        };
        let session = Self {
            inner: Arc::new(Inner {
                id: session_id.unwrap_or_else(fresh_session_id),
                cwd,
                home,
                settings,
                env,
                sandbox,
                store,
                interceptor,
                shell,
                prefix,
                snapshot,
                resources,
                late_limits,
                snapshot_outcome,
                executor,
                shutdown: CancellationToken::new(),
                bang: Mutex::new(None),
                context: Mutex::new(Vec::new()),
                warnings: Mutex::new(Warnings::default()),
                jobs,
                artifact_ids: Mutex::new(Vec::new()),
                gate: ApprovalGate::new(policy),
                secrets,
                audit,
                mode: mode.unwrap_or_else(|| "library".to_owned()),
                events,
            }),
        };
        for warning in warnings {
            session.warn(warning);
        }
        Ok(session)
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.inner.id
    }

    /// The session's working directory.
    pub fn cwd(&self) -> &Path {
        &self.inner.cwd
    }

    /// The shell the session's commands run in (`bash.shell`, else the one found).
    pub fn shell_path(&self) -> &Path {
        &self.inner.shell.path
    }

    /// The rc snapshot the session's shells source, if it has one.
    pub(crate) fn snapshot_path(&self) -> Option<&Path> {
        self.inner.snapshot.as_deref()
    }

    /// How the session got its rc snapshot (made, cached, none, or why not).
    pub fn snapshot_outcome(&self) -> &SnapshotOutcome {
        &self.inner.snapshot_outcome
    }

    /// The settings the session runs with.
    pub fn settings(&self) -> &Settings {
        &self.inner.settings
    }

    /// The sandbox every command of the session runs under, `None` when
    /// `sandbox.mode` is off: its mode, its writable roots as resolved (the cwd in
    /// `workspace-write`, the private temp dir, `sandbox.writable`) and whether the network is
    /// reachable.
    pub fn sandbox(&self) -> Option<&SandboxSpec> {
        self.inner.sandbox.as_ref().map(|sandbox| &sandbox.policy)
    }

    /// The artifact store, when it could be opened.
    pub fn artifacts(&self) -> Option<&ArtifactStore> {
        self.inner.store.as_ref().ok()
    }

    /// Warnings not yet reported. Each distinct warning is returned once per session.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut lock(&self.inner.warnings).pending)
    }

    fn warn(&self, warning: String) {
        let mut warnings = lock(&self.inner.warnings);
        if warnings.seen.insert(warning.clone()) {
            warnings.pending.push(warning);
        }
    }

    /// Runs a user bang command (`!cmd`, RPC `bash`) on the session's `user` shell: no
    /// normalisation, no interception, never a PTY; default timeout and artifacts as for tool
    /// calls. One at a time per session. No live output: see
    /// [`execute_bash_with`](Self::execute_bash_with) for that.
    pub async fn execute_bash(
        &self,
        command: &str,
        options: BangOptions,
    ) -> Result<BashResult, SessionError> {
        self.run_bang(command, options, None).await
    }

    /// [`execute_bash`](Self::execute_bash), handing `on_output` each piece of text the
    /// command's output sink commits while it runs, in order, each piece once (the unfinished
    /// last line when the command ends): the sink's sanitised text, so a live view needs no
    /// sanitiser of its own. The pieces are not throttled or copied: a UI coalesces them. For
    /// an output within `output.max_bytes`, the pieces joined are the result's output.
    pub async fn execute_bash_with(
        &self,
        command: &str,
        options: BangOptions,
        mut on_output: impl FnMut(&str) + Send,
    ) -> Result<BashResult, SessionError> {
        self.run_bang(command, options, Some(&mut on_output)).await
    }

    /// The bang path of [`execute_bash`](Self::execute_bash) and
    /// [`execute_bash_with`](Self::execute_bash_with): without a callback the sink hands its
    /// text to no one.
    async fn run_bang(
        &self,
        command: &str,
        options: BangOptions,
        on_output: Option<ChunkCallback<'_>>,
    ) -> Result<BashResult, SessionError> {
        let cancel = {
            let mut bang = lock(&self.inner.bang);
            if bang.is_some() {
                return Err(SessionError::AlreadyRunning);
            }
            let token = self.inner.shutdown.child_token();
            *bang = Some(token.clone());
            token
        };
        let _running = BangGuard(self);
        let timeout =
            Timeout::from_request(options.timeout, self.inner.settings.bash.default_timeout);
        let mut sink = self.new_sink(None);
        let result = self
            .run(
                command,
                self.inner.cwd.clone(),
                timeout,
                Surface::User,
                cancel,
                &mut sink,
                on_output,
            )
            .await?;
        if !options.exclude_from_context {
            let text = self.bang_text(command, &result);
            lock(&self.inner.context).push(text);
        }
        Ok(result)
    }

    /// The text of a bang command's result as the model's context gets it
    /// (`bang_context_text` with the session's byte limit and sandbox): what
    /// [`context_messages`](Self::context_messages) records for it, with the sandbox line
    /// after the outcome when a sandboxed command failed with a denial. The RPC
    /// `bash` response carries it as `text`.
    pub fn bang_text(&self, command: &str, result: &BashResult) -> String {
        // A secret the person typed into the command line is not for the model either.
        let command = self.redact(command);
        bang_context_text(
            &command,
            result,
            self.inner.settings.output.max_bytes,
            self.sandbox(),
        )
    }

    /// Aborts the running bang command, if any; returns at once.
    pub fn abort_bash(&self) {
        if let Some(token) = lock(&self.inner.bang).as_ref() {
            token.cancel();
        }
    }

    /// Whether a bang command is running.
    pub fn is_bash_running(&self) -> bool {
        lock(&self.inner.bang).is_some()
    }

    /// The context messages recorded so far (bang results not excluded with `!!`).
    pub fn context_messages(&self) -> Vec<String> {
        lock(&self.inner.context).clone()
    }

    /// The artifact store, or why it could not be opened.
    fn open_store(&self) -> Result<&ArtifactStore, SessionError> {
        self.inner
            .store
            .as_ref()
            .map_err(|reason| SessionError::NoArtifactStore {
                reason: reason.clone(),
            })
    }

    /// Reads an artifact (`artifact://ID` or a bare id) with an optional line range.
    pub fn read_artifact(
        &self,
        id_or_url: &str,
        offset: Option<u64>,
        limit: Option<u64>,
    ) -> Result<ArtifactText, SessionError> {
        let store = self.open_store()?;
        Ok(store.read(id_or_url, offset, limit)?)
    }

    /// The session's own artifacts (its outputs and job logs), newest first, with their sizes
    /// and times (RPC `list_artifacts`; the MCP resources list the same ones). Other
    /// sessions sharing the store's directory are not listed: a client sees only its own.
    /// Looks at each of its files (not at the rest of the directory): call it off the async
    /// threads.
    pub fn list_artifacts(&self) -> Result<Vec<ArtifactInfo>, SessionError> {
        let store = self.open_store()?;
        let ids = lock(&self.inner.artifact_ids).clone();
        // One gone since (retention, a person): not listed.
        Ok(ids
            .iter()
            .rev()
            .filter_map(|id| store.info(id).ok())
            .collect())
    }

    /// The ids of the artifacts this session wrote that still exist, newest first, at most
    /// `limit` (MCP lists them as resources).
    pub fn artifact_ids(&self, limit: usize) -> Vec<String> {
        let Some(store) = self.artifacts() else {
            return Vec::new();
        };
        let ids = lock(&self.inner.artifact_ids).clone();
        ids.into_iter()
            .rev()
            .filter(|id| store.resolve(id).is_ok())
            .take(limit)
            .collect()
    }

    /// Ends every running command and background job of the session (whole process trees) and
    /// closes its shells; returns once they are gone.
    pub async fn shutdown(&self) {
        self.inner.shutdown.cancel();
        self.inner.jobs.shutdown().await;
        self.inner.executor.close_session(&self.inner.id).await;
        if let Some(sandbox) = &self.inner.sandbox {
            sandbox.remove_temp_dir();
            sandbox.shut_down_network();
        }
    }

    /// A sink with the session's byte limit, spilling to an artifact allocated when the output
    /// first overflows: a call whose output fits creates no file.
    pub(crate) fn new_sink(&self, head_lines: Option<u32>) -> OutputSink {
        let spill = self.inner.store.is_ok().then(|| {
            Box::new(ArtifactOnDemand {
                session: self.clone(),
            }) as Box<dyn SpillSource>
        });
        OutputSink::new(SinkOptions {
            max_bytes: usize::try_from(self.inner.settings.output.max_bytes).unwrap_or(usize::MAX),
            head_lines,
            spill,
            secrets: self.secrets(),
        })
    }

    /// Allocates an artifact, best effort: a failure is a warning (reported with the call's
    /// result), the call runs and truncates without one.
    pub(crate) fn allocate_artifact(&self) -> Option<ArtifactReservation> {
        let store = self.inner.store.as_ref().ok()?;
        match store.allocate() {
            Ok(reservation) => {
                lock(&self.inner.artifact_ids).push(reservation.id().to_owned());
                Some(reservation)
            }
            Err(err) => {
                self.warn(format!("cannot allocate an artifact: {err}"));
                None
            }
        }
    }

    /// Runs `command` on the session's shell for `surface`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn run(
        &self,
        command: &str,
        cwd: PathBuf,
        timeout: Timeout,
        surface: Surface,
        cancel: CancellationToken,
        sink: &mut OutputSink,
        on_chunk: Option<ChunkCallback<'_>>,
    ) -> Result<BashResult, SessionError> {
        let request = self.exec_request(command, &cwd, timeout, surface, cancel);
        Ok(self.inner.executor.execute(request, sink, on_chunk).await?)
    }

    /// The request that runs `command` with the session's shell, environment, prefix, snapshot,
    /// limits and sandbox (one the kernel can enforce: [`new`](Self::new) checked).
    pub(crate) fn exec_request(
        &self,
        command: &str,
        cwd: &Path,
        timeout: Timeout,
        surface: Surface,
        cancel: CancellationToken,
    ) -> ExecRequest {
        let inner = &self.inner;
        ExecRequest {
            command: command.to_owned(),
            cwd: cwd.to_path_buf(),
            timeout: timeout.duration(),
            session: SessionKey::new(inner.id.clone(), surface),
            shell: inner.shell.clone(),
            env: inner.env.clone(),
            prefix: inner.prefix.clone(),
            snapshot: inner.snapshot.clone(),
            cancel,
            limits: ShellLimits {
                max_shells: inner.settings.bash.max_shells,
                idle_timeout: inner.settings.bash.shell_idle_timeout(),
            },
            sandbox: self.sandbox().cloned(),
            resources: inner.resources,
            late_limits: Some(inner.late_limits.clone()),
        }
    }

    // The crate-internal API of the tool path (tool.rs): what a tool call needs of its session,
    // without reaching into its state.

    /// The user's home (`~` in `cwd` arguments).
    pub(crate) fn home(&self) -> Option<&Path> {
        self.inner.home.as_deref()
    }

    /// The interception rules, when interception is enabled.
    pub(crate) fn gate(&self) -> &ApprovalGate {
        &self.inner.gate
    }

    /// The approval policy the session judges commands by.
    pub fn policy(&self) -> &Policy {
        self.inner.gate.policy()
    }

    /// Writes a command's decision line to the audit log (when there is one). `Err` only when
    /// the line could not be written and `[audit] required` is set: the command must not run.
    pub(crate) fn audit_decision(
        &self,
        source: AuditSource,
        command: &str,
        cwd: &Path,
        verdict: &Verdict,
    ) -> Result<(), String> {
        let Some(audit) = &self.inner.audit else {
            return Ok(());
        };
        let rule = verdict.rule.as_deref();
        let (answer, answered_by) = match verdict.answer {
            Some(ApprovalResolution::Answered(answer)) => {
                (Some(answer.decision.as_str()), Some(answer.answered_by))
            }
            Some(ApprovalResolution::TimedOut) => (Some("timeout"), None),
            Some(ApprovalResolution::Unanswered) => (Some("deny"), None),
            Some(ApprovalResolution::Aborted) | None => (None, None),
        };
        // A secret written into the command line itself stays out of the log too.
        let command = self.redact(command);
        let written = audit.decision(&AuditDecision {
            session: self.id(),
            mode: &self.inner.mode,
            source,
            command: &command,
            cwd,
            decision: verdict.decision,
            rule,
            answer,
            answered_by,
        });
        if let Some(warning) = audit.take_warning() {
            self.warn(warning);
        }
        match written {
            Err(reason) if audit.required() => Err(format!(
                "Command not run: the audit log is required and cannot be written: {reason}"
            )),
            _ => Ok(()),
        }
    }

    /// Writes a command's end line to the audit log (when there is one).
    pub(crate) fn audit_end(
        &self,
        call_id: &str,
        exit_code: Option<i32>,
        started: std::time::Instant,
        artifact_id: Option<&str>,
    ) {
        let Some(audit) = &self.inner.audit else {
            return;
        };
        audit.end(&AuditEnd {
            session: self.id(),
            call_id,
            exit_code,
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            artifact_id,
        });
        if let Some(warning) = audit.take_warning() {
            self.warn(warning);
        }
    }

    pub(crate) fn interceptor(&self) -> Option<&Interceptor> {
        self.inner.interceptor.as_ref()
    }

    /// A fresh token for one call, cancelled when the session shuts down.
    pub(crate) fn call_token(&self) -> CancellationToken {
        self.inner.shutdown.child_token()
    }
}

/// The spill source of one call's sink: allocates the artifact when the output first overflows.
struct ArtifactOnDemand {
    session: AgentSession,
}

impl SpillSource for ArtifactOnDemand {
    fn open(self: Box<Self>) -> Option<Box<dyn Spill>> {
        let reservation = self.session.allocate_artifact()?;
        Some(Box::new(reservation))
    }
}

/// Clears the running bang command when it ends, however it ends.
struct BangGuard<'a>(&'a AgentSession);

impl Drop for BangGuard<'_> {
    fn drop(&mut self) {
        lock(&self.0.inner.bang).take();
    }
}

/// A session's cwd must be an existing absolute directory (symlinks followed).
fn check_session_cwd(cwd: &Path) -> Result<(), SessionError> {
    if !cwd.is_absolute() {
        return Err(SessionError::CwdNotAbsolute {
            path: cwd.to_path_buf(),
        });
    }
    check_cwd(None, cwd, None)
        .map(drop)
        .map_err(SessionError::Cwd)
}

fn open_store(settings: &Settings) -> Result<ArtifactStore, ArtifactError> {
    let dir = match &settings.artifacts.dir {
        Some(dir) => dir.clone(),
        None => ArtifactStore::default_dir()?,
    };
    let store = ArtifactStore::open(
        dir,
        RetentionPolicy {
            max_age_days: settings.artifacts.max_age_days,
            max_bytes: settings.artifacts.max_bytes,
        },
    )?;
    // Retention looks at every artifact: off the start's path, in a thread, when the store's
    // last pass (by any session) is a sweep period old.
    drop(store.retain_when_due(agentsh_process::sweep_period()));
    Ok(store)
}
