//! A session's sandbox (SPEC §16) above the spawner: its writable roots resolved from the
//! settings, its private temp dir, the one place that decides whether it can be enforced, and
//! the denial line of a result.
//!
//! The policy itself ([`SandboxPolicy`]) and its enforcement in the child are
//! `agentsh-process`'s; this module builds the policy a session's every shell, PTY session and
//! job is started with.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use agentsh_process::sandbox::{SandboxError, SandboxMode, SandboxPolicy};

use crate::session::SessionError;
use crate::settings::SandboxSettings;

/// What a failed sandboxed command's output shows when the sandbox denied it something (SPEC
/// §16), as the tools print it (`strerror` texts, resolver and curl messages):
///
/// - files: `Permission denied` (EACCES, what Landlock answers), `Read-only file system`
///   (EROFS), `Operation not permitted` (EPERM: seccomp's `socket(AF_UNIX, …)`, `unshare`,
///   `mount`, `setpriv`, `nsenter`);
/// - name lookups in a network namespace with only loopback: glibc's `Temporary failure in
///   name resolution` (EAI_AGAIN) and `Name or service not known` (EAI_NONAME), musl's and
///   Python's `Name does not resolve`, curl's `Could not resolve host`, git's `Could not
///   resolve hostname`, Go's `no such host`;
/// - connects: `Network is unreachable` (ENETUNREACH: no route but loopback),
///   `Connection refused` (ECONNREFUSED: a port on the private loopback where nothing
///   listens, e.g. a proxy on 127.0.0.1 outside), `Cannot assign requested address`
///   (EADDRNOTAVAIL), `No route to host` (EHOSTUNREACH).
///
/// Matched as plain substrings, case-sensitive (tools print them in this case; `permission
/// denied` in lower case is how Go and Rust print EACCES, hence the second spelling).
pub const DENIAL_MARKERS: &[&str] = &[
    "Permission denied",
    "permission denied",
    "Read-only file system",
    "read-only file system",
    "Operation not permitted",
    "operation not permitted",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Name does not resolve",
    "Could not resolve host",
    "no such host",
    "Network is unreachable",
    "network is unreachable",
    "Connection refused",
    "connection refused",
    "Cannot assign requested address",
    "No route to host",
];

/// Whether `text` (a failed command's output) shows a denial: one of [`DENIAL_MARKERS`].
pub fn shows_denial(text: &str) -> bool {
    DENIAL_MARKERS.iter().any(|marker| text.contains(marker))
}

/// The line a failed sandboxed command's result gets when its output shows a denial (SPEC
/// §16): `[sandbox: <mode>; writable: <roots>; network off]` (`network on` when allowed), the
/// roots comma-separated as resolved.
///
/// ```
/// use std::path::PathBuf;
/// use agentsh_agent_session::{SandboxMode, SandboxPolicy, sandbox_denial_line};
///
/// let policy = SandboxPolicy {
///     mode: SandboxMode::WorkspaceWrite,
///     writable: vec![PathBuf::from("/src/app"), PathBuf::from("/tmp/agentsh-sandbox-x")],
///     network: false,
/// };
/// assert_eq!(
///     sandbox_denial_line(&policy),
///     "[sandbox: workspace-write; writable: /src/app, /tmp/agentsh-sandbox-x; network off]"
/// );
/// ```
pub fn sandbox_denial_line(policy: &SandboxPolicy) -> String {
    let roots: Vec<String> = policy
        .writable
        .iter()
        .map(|root| root.display().to_string())
        .collect();
    format!(
        "[sandbox: {}; writable: {}; network {}]",
        policy.mode,
        roots.join(", "),
        if policy.network { "on" } else { "off" }
    )
}

/// The denial line a result gets, if any: the command ran under `sandbox`, failed (`failed`:
/// a non-zero exit or no exit status) and its output (`outputs`: every text of it the result
/// was built from) shows a denial.
pub(crate) fn denial_line_for(
    sandbox: Option<&SandboxPolicy>,
    failed: bool,
    outputs: &[&str],
) -> Option<String> {
    let policy = sandbox?;
    (failed && outputs.iter().any(|text| shows_denial(text))).then(|| sandbox_denial_line(policy))
}

/// Whether a sandbox can be had for `policy` — **the one place** a session asks before it
/// starts anything under one: the kernel's answer (`agentsh_process::sandbox::check`: Landlock,
/// user namespaces, seccomp). Every command path of the session (tool calls piped and on a
/// PTY, jobs, yielding calls, bang commands) goes through it, by way of
/// `AgentSession::exec_request` and `AgentSession::pty_command`; the spawner then confines the
/// child (`SpawnSpec::sandbox`), and a refusal there is the same error.
pub(crate) fn can_enforce(policy: &SandboxPolicy) -> Result<(), SandboxError> {
    agentsh_process::sandbox::check(policy)
}

/// A session's sandbox: the policy its processes run under and its private temp dir (0700,
/// `TMPDIR` of every command), removed when the session shuts down or is dropped.
#[derive(Debug)]
pub(crate) struct SessionSandbox {
    pub(crate) policy: SandboxPolicy,
    temp_path: PathBuf,
    temp: Mutex<Option<tempfile::TempDir>>,
}

impl SessionSandbox {
    /// The sandbox of a session in `cwd` (absolute, existing) whose user's home is `home`, or
    /// `None` when `settings.mode` is off. Writable roots, canonicalised: in `workspace-write`
    /// `cwd`, the private temp dir and `settings.writable`; in `read-only` the private temp dir
    /// alone. `/` or `home` as one is refused.
    pub(crate) fn new(
        settings: &SandboxSettings,
        cwd: &Path,
        home: Option<&Path>,
    ) -> Result<Option<Self>, SessionError> {
        let Some(mode) = settings.mode else {
            return Ok(None);
        };
        let home = home.and_then(|home| home.canonicalize().ok());
        // The roots are checked before the temp dir is made: a refused one leaves nothing.
        let mut configured = Vec::new();
        if mode == SandboxMode::WorkspaceWrite {
            configured.push(writable_root(cwd, home.as_deref())?);
            for root in &settings.writable {
                configured.push(writable_root(root, home.as_deref())?);
            }
        }
        let temp = tempfile::Builder::new()
            .prefix("agentsh-sandbox-")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()
            .map_err(SessionError::SandboxTempDir)?;
        let temp_path = temp
            .path()
            .canonicalize()
            .map_err(SessionError::SandboxTempDir)?;
        // In the order of SPEC §16: the cwd, the temp dir, `writable`; each root once.
        let mut writable: Vec<PathBuf> = Vec::new();
        let (cwd_root, rest) = configured
            .split_first()
            .map_or((None, &[][..]), |(c, r)| (Some(c), r));
        for root in cwd_root
            .into_iter()
            .chain(std::iter::once(&temp_path))
            .chain(rest)
        {
            if !writable.contains(root) {
                writable.push(root.clone());
            }
        }
        Ok(Some(Self {
            policy: SandboxPolicy {
                mode,
                writable,
                network: settings.network,
            },
            temp_path,
            temp: Mutex::new(Some(temp)),
        }))
    }

    /// The private temp dir (`TMPDIR` of every command of the session).
    pub(crate) fn temp_dir(&self) -> &Path {
        &self.temp_path
    }

    /// Removes the private temp dir and everything in it (at shutdown).
    pub(crate) fn remove_temp_dir(&self) {
        let temp = self
            .temp
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(temp) = temp
            && let Err(err) = temp.close()
        {
            tracing::warn!("cannot remove the sandbox's temp dir: {err}");
        }
    }
}

/// `root` canonicalised, refused when it is `/` or `home` (canonical).
fn writable_root(root: &Path, home: Option<&Path>) -> Result<PathBuf, SessionError> {
    let resolved = root
        .canonicalize()
        .map_err(|error| SessionError::SandboxRoot {
            path: root.to_path_buf(),
            error,
        })?;
    if resolved == Path::new("/") || Some(resolved.as_path()) == home {
        return Err(SessionError::Sandbox(SandboxError::RefusedRoot(
            root.to_path_buf(),
        )));
    }
    Ok(resolved)
}
