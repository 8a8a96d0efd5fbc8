//! The time-boxed run of the generating shell: started in a session of its own, given
//! [`SNAPSHOT_TIMEOUT`], and ended with everything it left in its session by the crate's one
//! tree-kill loop.

use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::dump::{Dump, render};
use super::script::{GENERATOR_NAME, Generator};
use super::{SNAPSHOT_TIMEOUT, SnapshotError, io_error};
use crate::shell::ShellSpec;

/// Largest generated dump read back; beyond it there is no snapshot.
const MAX_DUMP_BYTES: u64 = 32 * 1024 * 1024;

/// How much of the child's stderr is kept for a warning.
const MAX_STDERR_BYTES: u64 = 64 * 1024;

/// Runs the generating shell and turns its dump into snapshot text.
pub(super) fn generate(
    generator: &Generator,
    shell: &ShellSpec,
    rc: &Path,
    home: &Path,
    cache_dir: &Path,
    env: &[(OsString, OsString)],
) -> Result<Vec<u8>, SnapshotError> {
    let dump_file = tempfile::Builder::new()
        .prefix(".dump-")
        .tempfile_in(cache_dir)
        .map_err(|error| io_error("create a file in", cache_dir, error))?;
    let mut stderr_file = tempfile::tempfile_in(cache_dir)
        .map_err(|error| io_error("create a file in", cache_dir, error))?;
    let child_stderr = stderr_file
        .try_clone()
        .map_err(|error| io_error("create a file in", cache_dir, error))?;
    let marker = new_marker();

    let mut command = Command::new(&shell.path);
    command
        .args(generator.flags)
        .arg(generator.script)
        .arg(GENERATOR_NAME)
        .arg(dump_file.path())
        .arg(rc)
        .arg(&marker)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env("HOME", home)
        .current_dir(home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(child_stderr));
    // SAFETY: `setsid` is async-signal-safe and touches no memory of the parent; it is the only
    // thing done between fork and exec. It gives the child a session of its own without a
    // controlling terminal, so the rc cannot read from or write to the user's terminal, and
    // everything it starts can be found (and killed) by session id.
    unsafe {
        command.pre_exec(|| {
            rustix::process::setsid()?;
            Ok(())
        });
    }
    let child = command.spawn().map_err(|error| SnapshotError::Spawn {
        shell: shell.path.clone(),
        error,
    })?;
    let status = wait_time_boxed(child, SNAPSHOT_TIMEOUT);

    let stderr = read_stderr(&mut stderr_file);
    let detail = rc_messages(&stderr, rc);
    let Some(status) = status else {
        return Err(SnapshotError::Timeout {
            rc: rc.to_path_buf(),
            timeout: SNAPSHOT_TIMEOUT,
        });
    };

    let len = dump_file
        .as_file()
        .metadata()
        .map_err(|error| io_error("read", dump_file.path(), error))?
        .len();
    if len > MAX_DUMP_BYTES {
        return Err(SnapshotError::TooLarge {
            rc: rc.to_path_buf(),
            max: MAX_DUMP_BYTES,
        });
    }
    let mut raw = Vec::with_capacity(len as usize);
    File::open(dump_file.path())
        .and_then(|mut f| f.read_to_end(&mut raw))
        .map_err(|error| io_error("read", dump_file.path(), error))?;
    let dump = Dump::parse(&raw, marker.as_bytes());
    if !dump.complete {
        return Err(SnapshotError::ShellEnded {
            rc: rc.to_path_buf(),
            how: describe_status(status),
            detail,
        });
    }
    if dump.status == Some(generator.syntax_error_status) {
        return Err(SnapshotError::Broken {
            rc: rc.to_path_buf(),
            status: generator.syntax_error_status,
            detail,
        });
    }
    Ok(render(shell.kind, &dump, rc))
}

/// A marker line prefix that rc content cannot contain by accident (96 random bits).
fn new_marker() -> String {
    format!("__agentsh_snapshot_{}", crate::random_hex(12))
}

/// Waits for `child` at most `timeout`. On time-out returns `None`; either way, whatever is
/// left of its session and process group (the shell itself on time-out) is killed before
/// returning.
fn wait_time_boxed(mut child: Child, timeout: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(1);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        let now = Instant::now();
        if now >= deadline {
            break None;
        }
        std::thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(10));
    };
    // The shell is the leader of its own session: its pid is the session id.
    crate::kill::kill_session(child.id());
    if status.is_none() {
        // SIGKILL has been sent; reap the shell so it does not stay a zombie.
        let _ = child.wait();
    }
    status
}

fn read_stderr(file: &mut File) -> Vec<u8> {
    let mut bytes = Vec::new();
    if file.seek(SeekFrom::Start(0)).is_ok() {
        let _ = file.take(MAX_STDERR_BYTES).read_to_end(&mut bytes);
    }
    bytes
}

/// The first few stderr lines that name the rc file (the shell's own error messages), joined
/// with ` / `.
fn rc_messages(stderr: &[u8], rc: &Path) -> String {
    let text = String::from_utf8_lossy(stderr);
    let rc = rc.to_string_lossy();
    text.lines()
        .filter(|line| line.contains(rc.as_ref()))
        .take(3)
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" / ")
}

fn describe_status(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        (None, None) => status.to_string(),
    }
}
