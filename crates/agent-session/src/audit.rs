//! The audit log: two JSON lines per command, one when it is decided and one when it ends.
//!
//! The file is shared by every agentsh process that uses it, so each line is written under an
//! exclusive `flock` on a lock file beside it (`<file>.lock`), with one `write` on an
//! `O_APPEND` descriptor opened for that line. Under the same lock, a file that would grow
//! past [`AUDIT_ROTATE_BYTES`] is rotated first: `<file>.1` … `<file>.5`, the oldest dropped.
//! The file is 0600 in a 0700 directory (made if missing; a looser mode is tightened). Nothing
//! here panics, and no write waits for the lock longer than [`LOCK_WAIT`].

use std::ffi::OsString;
use std::fs::{self, DirBuilder, File, OpenOptions, Permissions, TryLockError};
use std::io::{self, Write};
use std::num::NonZero;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use agentsh_bash_policy::Decision;
use agentsh_protocol::Answerer;
use serde::Serialize;
use time::OffsetDateTime;
use time::format_description::well_known::Iso8601;
use time::format_description::well_known::iso8601::{Config, EncodedConfig, TimePrecision};

use agentsh_config::AuditSettings;

/// The size at which the audit log is rotated: 10 MiB.
pub const AUDIT_ROTATE_BYTES: u64 = 10 << 20;
/// How many rotated files are kept (`.1` … `.5`).
pub const AUDIT_ROTATED_FILES: u32 = 5;
/// The longest a write waits for another process's lock before it fails.
const LOCK_WAIT: Duration = Duration::from_secs(1);
/// How long a write sleeps between two tries of a busy lock.
const LOCK_RETRY: Duration = Duration::from_millis(2);

/// RFC 3339 in UTC with milliseconds: `2026-12-02T13:45:01.123Z`.
const TIME_FORMAT: EncodedConfig = Config::DEFAULT
    .set_time_precision(TimePrecision::Second {
        decimal_digits: NonZero::new(3),
    })
    .encode();

/// Who a command came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AuditSource {
    /// The model: a `bash` tool call or a job.
    Model,
    /// The person: a bang command, or an RPC `bash` request on stdio.
    User,
}

/// The decision line of a command, written before it runs.
#[derive(Debug, Clone)]
pub struct AuditDecision<'a> {
    /// The session's id.
    pub session: &'a str,
    /// The mode the session runs in (`rpc`, `mcp`, `interactive`, `exec`).
    pub mode: &'a str,
    /// Who the command came from.
    pub source: AuditSource,
    /// The command line (with secrets already redacted).
    pub command: &'a str,
    /// The directory it runs in.
    pub cwd: &'a Path,
    /// What the policy decided.
    pub decision: Decision,
    /// The rule that decided, as `policy check` names it, when one did.
    pub rule: Option<&'a str>,
    /// The answer to an approval request: `allow`, `allow_session`, `deny` or `timeout`.
    pub answer: Option<&'a str>,
    /// Who answered it.
    pub answered_by: Option<Answerer>,
}

/// The end line of a command, written after it ran.
#[derive(Debug, Clone)]
pub struct AuditEnd<'a> {
    /// The session's id.
    pub session: &'a str,
    /// The tool call's (or bang command's) id.
    pub call_id: &'a str,
    /// The exit code; `None` when there is none (killed, timed out, not started).
    pub exit_code: Option<i32>,
    /// How long it ran, in milliseconds.
    pub duration_ms: u64,
    /// The artifact holding its full output, when one was kept.
    pub artifact_id: Option<&'a str>,
}

/// The decision line as written.
#[derive(Serialize)]
struct DecisionLine<'a> {
    phase: &'static str,
    time: &'a str,
    session: &'a str,
    mode: &'a str,
    source: AuditSource,
    command: &'a str,
    cwd: &'a str,
    decision: Decision,
    #[serde(skip_serializing_if = "Option::is_none")]
    rule: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    answer: Option<&'a str>,
    #[serde(rename = "answeredBy", skip_serializing_if = "Option::is_none")]
    answered_by: Option<Answerer>,
}

/// The end line as written.
#[derive(Serialize)]
struct EndLine<'a> {
    phase: &'static str,
    time: &'a str,
    session: &'a str,
    #[serde(rename = "callId")]
    call_id: &'a str,
    #[serde(rename = "exitCode")]
    exit_code: Option<i32>,
    #[serde(rename = "durationMs")]
    duration_ms: u64,
    #[serde(rename = "artifactId", skip_serializing_if = "Option::is_none")]
    artifact_id: Option<&'a str>,
}

/// An open audit log; clones share it.
#[derive(Debug, Clone)]
pub struct AuditLog {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// The log file; `None` when no path could be found (every write fails).
    path: Option<PathBuf>,
    /// Whether a failed decision line denies the call.
    required: bool,
    /// The size past which the file is rotated.
    rotate_at: u64,
    /// Serialises this process's writes (the `flock` serialises processes).
    writing: Mutex<()>,
    /// Whether a write has failed yet.
    failed: AtomicBool,
    /// The warning of the first failed write, until it is taken.
    warning: Mutex<Option<String>>,
}

impl AuditLog {
    /// The audit log `settings` describe; `None` when it is disabled. Nothing is written or
    /// created before the first line. When no path can be found (no `audit.path`, and neither
    /// `XDG_STATE_HOME` nor `HOME`), every write fails.
    ///
    /// `env` looks a variable up (pass `std::env::var_os` in production).
    pub fn open(
        settings: &AuditSettings,
        env: impl Fn(&str) -> Option<OsString>,
    ) -> Option<AuditLog> {
        settings.enabled.then(|| {
            Self::with_rotation(
                settings.resolved_path(env),
                settings.required,
                AUDIT_ROTATE_BYTES,
            )
        })
    }

    /// A log at `path` rotated past `rotate_at` bytes (for tests: a small threshold).
    #[doc(hidden)]
    pub fn with_rotation(path: Option<PathBuf>, required: bool, rotate_at: u64) -> AuditLog {
        AuditLog {
            inner: Arc::new(Inner {
                path,
                required,
                rotate_at,
                writing: Mutex::new(()),
                failed: AtomicBool::new(false),
                warning: Mutex::new(None),
            }),
        }
    }

    /// The log file, when one was found (what the tests look at).
    #[cfg(test)]
    pub(crate) fn path(&self) -> Option<&Path> {
        self.inner.path.as_deref()
    }

    /// Writes the decision line of a command.
    ///
    /// # Errors
    ///
    /// The write failed (the text says why): the caller denies the call when
    /// [`required`](Self::required). The first failure also leaves a warning for
    /// [`take_warning`](Self::take_warning).
    pub fn decision(&self, entry: &AuditDecision<'_>) -> Result<(), String> {
        let time = now();
        let cwd = entry.cwd.to_string_lossy();
        let line = DecisionLine {
            phase: "decision",
            time: &time,
            session: entry.session,
            mode: entry.mode,
            source: entry.source,
            command: entry.command,
            cwd: &cwd,
            decision: entry.decision,
            rule: entry.rule,
            answer: entry.answer,
            answered_by: entry.answered_by,
        };
        self.write_line(&line)
    }

    /// Writes the end line of a command; a failure is a warning, once.
    pub fn end(&self, entry: &AuditEnd<'_>) {
        let time = now();
        let line = EndLine {
            phase: "end",
            time: &time,
            session: entry.session,
            call_id: entry.call_id,
            exit_code: entry.exit_code,
            duration_ms: entry.duration_ms,
            artifact_id: entry.artifact_id,
        };
        // The failure is recorded as the warning; an end line has nothing to deny.
        let _ = self.write_line(&line);
    }

    /// Whether a call whose decision line cannot be written is denied.
    pub fn required(&self) -> bool {
        self.inner.required
    }

    /// The warning of the first failed write, once (then `None`).
    pub fn take_warning(&self) -> Option<String> {
        self.inner
            .warning
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// Serialises `line` and appends it; a failure is returned, and the first one is kept as
    /// the warning.
    fn write_line(&self, line: &impl Serialize) -> Result<(), String> {
        let result = match serde_json::to_vec(line) {
            Ok(mut bytes) => {
                bytes.push(b'\n');
                self.append(&bytes)
            }
            Err(err) => Err(format!("cannot encode the line: {err}")),
        };
        result.map_err(|err| {
            let text = match &self.inner.path {
                Some(path) => format!("cannot write the audit log {}: {err}", path.display()),
                None => format!("cannot write the audit log: {err}"),
            };
            if !self.inner.failed.swap(true, Ordering::SeqCst) {
                *self
                    .inner
                    .warning
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = Some(text.clone());
            }
            text
        })
    }

    /// Appends `bytes` (one line) to the log under the lock, rotating first when it would grow
    /// past the threshold.
    fn append(&self, bytes: &[u8]) -> Result<(), String> {
        let Some(path) = self.inner.path.as_deref() else {
            return Err(
                "no file to write it to: set `audit.path`, XDG_STATE_HOME or HOME".to_owned(),
            );
        };
        let _writing = self
            .inner
            .writing
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let dir = path
            .parent()
            .filter(|dir| !dir.as_os_str().is_empty())
            .ok_or_else(|| "the path has no directory".to_owned())?;
        private_dir(dir)?;
        let lock = lock(&with_suffix(path, ".lock"))?;
        let mut file = open_log(path)?;
        let size = file
            .metadata()
            .map_err(|err| format!("cannot read its size: {err}"))?
            .len();
        if size > 0 && size.saturating_add(bytes.len() as u64) > self.inner.rotate_at {
            rotate(path)?;
            file = open_log(path)?;
        }
        let written = file.write(bytes).map_err(|err| err.to_string())?;
        drop(lock);
        if written == bytes.len() {
            Ok(())
        } else {
            Err(format!("a short write: {written} of {} bytes", bytes.len()))
        }
    }
}

/// The current time as the log writes it.
fn now() -> String {
    OffsetDateTime::now_utc()
        .format(&Iso8601::<TIME_FORMAT>)
        // Formatting a current UTC time cannot fail; the Unix epoch would show it did.
        .unwrap_or_else(|_| "1970-01-01T00:00:00.000Z".to_owned())
}

/// `path` with `suffix` added to its file name: `audit.jsonl.1`, `audit.jsonl.lock`.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Makes `dir` (and its missing parents) 0700, or tightens an existing one to 0700.
fn private_dir(dir: &Path) -> Result<(), String> {
    match DirBuilder::new().recursive(true).mode(0o700).create(dir) {
        Ok(()) => {}
        Err(err) => {
            return Err(format!(
                "cannot make the directory {}: {err}",
                dir.display()
            ));
        }
    }
    let mode = fs::metadata(dir)
        .map_err(|err| format!("cannot read the directory {}: {err}", dir.display()))?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        fs::set_permissions(dir, Permissions::from_mode(0o700)).map_err(|err| {
            format!(
                "the directory {} is open to others ({:o}) and cannot be made 0700: {err}",
                dir.display(),
                mode & 0o777
            )
        })?;
    }
    Ok(())
}

/// Opens (creating it 0600) the file `path` for appending, refusing a symbolic link, and
/// tightens a looser mode to 0600.
fn open_file(path: &Path, append: bool) -> io::Result<File> {
    let file = OpenOptions::new()
        .create(true)
        .append(append)
        .write(!append)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    let mode = file.metadata()?.permissions().mode();
    if mode & 0o077 != 0 {
        file.set_permissions(Permissions::from_mode(0o600))?;
    }
    Ok(file)
}

/// The log file, opened for one line.
fn open_log(path: &Path) -> Result<File, String> {
    open_file(path, true).map_err(|err| format!("cannot open it: {err}"))
}

/// Takes the exclusive lock on `lock_path`, waiting at most [`LOCK_WAIT`]; it is held until
/// the returned file is dropped.
fn lock(lock_path: &Path) -> Result<File, String> {
    let file = open_file(lock_path, false)
        .map_err(|err| format!("cannot open the lock file {}: {err}", lock_path.display()))?;
    let start = Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(TryLockError::WouldBlock) if start.elapsed() < LOCK_WAIT => {
                std::thread::sleep(LOCK_RETRY);
            }
            Err(TryLockError::WouldBlock) => {
                return Err(format!(
                    "another process held the lock {} for over {} s",
                    lock_path.display(),
                    LOCK_WAIT.as_secs()
                ));
            }
            Err(TryLockError::Error(err)) => {
                return Err(format!("cannot lock {}: {err}", lock_path.display()));
            }
        }
    }
}

/// Moves `path` to `path.1`, each `path.N` to `path.N+1`, dropping `path.5`.
fn rotate(path: &Path) -> Result<(), String> {
    let numbered = |n: u32| with_suffix(path, &format!(".{n}"));
    let oldest = numbered(AUDIT_ROTATED_FILES);
    ignore_missing(fs::remove_file(&oldest))
        .map_err(|err| format!("cannot remove {}: {err}", oldest.display()))?;
    for n in (1..AUDIT_ROTATED_FILES).rev() {
        let (from, to) = (numbered(n), numbered(n + 1));
        ignore_missing(fs::rename(&from, &to))
            .map_err(|err| format!("cannot rotate {}: {err}", from.display()))?;
    }
    fs::rename(path, numbered(1)).map_err(|err| format!("cannot rotate it: {err}"))
}

/// `result`, with a missing file counting as done.
fn ignore_missing(result: io::Result<()>) -> io::Result<()> {
    match result {
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests;
