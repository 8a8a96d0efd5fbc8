//! The time-boxed run of the generating shell: started under a supervisor like every shell
//! (a session of its own without a controlling terminal, the same containment: a cgroup of its
//! own, or agentsh as subreaper), given its time box, and then ended with its whole
//! tree — whatever the rc started, also with `setsid` or a double fork (`eval $(ssh-agent)`).

use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::time::Duration;

use agentsh_process::sandbox::SandboxSpec;
use agentsh_process::shell::ShellSpec;
use agentsh_process::{
    BlockingSupervisor, ChildExit, ChildStdio, SpawnError, SpawnSpec, random_hex,
};

use crate::dump::{Dump, render};
use crate::error::{SnapshotError, io_error};
use crate::script::{GENERATOR_NAME, Generator};

/// Largest generated dump read back; beyond it there is no snapshot.
const MAX_DUMP_BYTES: u64 = 32 * 1024 * 1024;

/// How much of the child's stderr is kept for a warning.
const MAX_STDERR_BYTES: u64 = 64 * 1024;

/// Runs the generating shell, for at most `timeout` from its start, and turns its dump into
/// snapshot text.
#[expect(
    clippy::too_many_arguments,
    reason = "the private seam between snapshot_with and the run; a struct would only rename them"
)]
pub(crate) fn generate(
    generator: &Generator,
    shell: &ShellSpec,
    rc: &Path,
    home: &Path,
    cache_dir: &Path,
    env: &[(OsString, OsString)],
    sandbox: Option<&SandboxSpec>,
    timeout: Duration,
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

    let mut spec = SpawnSpec::new(&shell.path);
    spec.arg0 = shell.path.clone().into_os_string();
    spec.args = generator.flags.iter().map(OsString::from).collect();
    spec.args.extend([
        OsString::from(generator.script),
        OsString::from(GENERATOR_NAME),
        dump_file.path().as_os_str().to_owned(),
        rc.as_os_str().to_owned(),
        OsString::from(&marker),
    ]);
    spec.env = env.iter().filter(|(k, _)| k != "HOME").cloned().collect();
    spec.env.push(("HOME".into(), home.as_os_str().to_owned()));
    spec.cwd = home.to_path_buf();
    // stdin and stdout /dev/null: the rc can neither read from nor write to the user's
    // terminal (and has none: the supervisor's session has no controlling terminal).
    spec.stdio[2] = ChildStdio::Fd(child_stderr.into());
    spec.sandbox = sandbox.map(|policy| {
        let mut policy = policy.clone();
        policy.writable.push(cache_dir.to_path_buf());
        policy
    });
    let mut child = BlockingSupervisor::spawn(spec).map_err(|error| SnapshotError::Spawn {
        shell: shell.path.clone(),
        error: match error {
            SpawnError::Exec { error, .. } | SpawnError::Cwd { error, .. } => error,
            other => std::io::Error::other(other.to_string()),
        },
    })?;
    let status = child.wait_child(timeout);
    // Whatever is left of its tree (the shell itself on time-out) ends before going on.
    child.shutdown();

    let stderr = read_stderr(&mut stderr_file);
    let detail = rc_messages(&stderr, rc);
    let Some(status) = status else {
        return Err(SnapshotError::Timeout {
            rc: rc.to_path_buf(),
            timeout,
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
    format!("__agentsh_snapshot_{}", random_hex(12))
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

fn describe_status(status: ChildExit) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        (None, None) => format!("wait status {}", status.into_raw()),
    }
}
