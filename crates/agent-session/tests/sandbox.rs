//! A session's sandbox above the spawner (SPEC §16): its writable roots as resolved, the roots
//! it refuses, its private temp dir, and that nothing runs while this build cannot enforce it.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use agentsh_agent_session::{
    AgentSession, BangOptions, SANDBOX_NOT_ENFORCED, SandboxError, SandboxMode, SandboxPolicy,
    SessionError, SessionOptions, Settings, ToolContext,
};
use serde_json::json;
use tempfile::TempDir;

use crate::world::temp_session;

const UNAVAILABLE: &str = "Sandbox unavailable: not enforced by this build";

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().expect("canonical path")
}

/// A session in `cwd` with home `dir/home` and `toml` as its config.
fn new_session(dir: &TempDir, cwd: &Path, toml: &str) -> Result<AgentSession, SessionError> {
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let toml = format!(
        "[artifacts]\ndir = \"{}\"\n{toml}",
        dir.path().join("artifacts").display()
    );
    let settings = Settings::from_toml(&toml, &dir.path().join("config.toml"), Some(&home))
        .expect("valid test config");
    AgentSession::new(SessionOptions {
        settings,
        cwd: cwd.to_path_buf(),
        home: Some(home),
        ..SessionOptions::default()
    })
}

/// The error of a session that must not start.
fn session_error(dir: &TempDir, cwd: &Path, toml: &str) -> SessionError {
    match new_session(dir, cwd, toml) {
        Ok(_) => panic!("the session started: {toml}"),
        Err(err) => err,
    }
}

#[test]
fn workspace_write_resolves_cwd_temp_dir_and_writable() {
    let (dir, session) = temp_session(
        "[sandbox]\nmode = \"workspace-write\"\nwritable = [\"work/sub\", \"work\"]\n",
    );
    let policy = session.sandbox().expect("a sandbox").clone();
    assert_eq!(policy.mode, SandboxMode::WorkspaceWrite);
    assert!(!policy.network);
    let [cwd, temp, sub] = policy.writable.as_slice() else {
        panic!("three roots (the cwd given twice counts once): {policy:?}");
    };
    assert_eq!(cwd, &canonical(&dir.path().join("work")));
    assert_eq!(sub, &canonical(&dir.path().join("work/sub")));
    // The private temp dir: made by the session, 0700, under the system temp dir.
    assert!(
        temp.starts_with(canonical(&std::env::temp_dir())),
        "{temp:?}"
    );
    let mode = std::fs::metadata(temp)
        .expect("temp dir")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
    tokio::runtime::Runtime::new()
        .expect("runtime")
        .block_on(session.shutdown());
    assert!(!temp.exists(), "shutdown removes the temp dir");
}

#[test]
fn read_only_writes_only_its_temp_dir_and_network_is_as_set() {
    let (_dir, session) = temp_session(
        "[sandbox]\nmode = \"read-only\"\nnetwork = true\nwritable = [\"work/sub\"]\n",
    );
    let policy: &SandboxPolicy = session.sandbox().expect("a sandbox");
    assert_eq!(policy.mode, SandboxMode::ReadOnly);
    assert!(policy.network);
    assert_eq!(policy.writable.len(), 1, "{policy:?}");
    assert!(
        policy.writable[0]
            .file_name()
            .is_some_and(|name| name.to_string_lossy().starts_with("agentsh-sandbox-")),
        "{policy:?}"
    );
}

#[test]
fn no_sandbox_when_off() {
    let (_dir, session) = temp_session("[sandbox]\nmode = \"off\"\nwritable = [\"work\"]\n");
    assert_eq!(session.sandbox(), None);
}

#[test]
fn root_and_home_are_refused_as_writable_roots() {
    let dir = tempfile::tempdir().expect("temp dir");
    let home = dir.path().join("home");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).expect("work");
    std::fs::create_dir_all(&home).expect("home");
    std::os::unix::fs::symlink(&home, work.join("to-home")).expect("symlink");
    let refused = |cwd: &Path, toml: &str, path: &str| {
        let err = session_error(&dir, cwd, toml);
        assert!(
            matches!(&err, SessionError::Sandbox(SandboxError::RefusedRoot(p)) if p == Path::new(path)),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!("Sandbox refuses a writable root of {path}")
        );
    };
    let ws = "[sandbox]\nmode = \"workspace-write\"\n";
    refused(&work, &format!("{ws}writable = [\"/\"]\n"), "/");
    refused(
        &work,
        &format!("{ws}writable = [\"~\"]\n"),
        &home.display().to_string(),
    );
    // Canonicalised: a symlink to the home, or a path that walks up to `/`.
    refused(
        &work,
        &format!("{ws}writable = [\"work/to-home\"]\n"),
        &work.join("to-home").display().to_string(),
    );
    refused(&home, ws, &home.display().to_string());
    refused(Path::new("/"), ws, "/");
    // In read-only the cwd is not a writable root: a session in the home is fine.
    let session = new_session(&dir, &home, "[sandbox]\nmode = \"read-only\"\n")
        .expect("a read-only session in the home");
    assert!(session.sandbox().is_some());
}

#[test]
fn a_missing_writable_root_is_an_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).expect("work");
    let err = session_error(
        &dir,
        &work,
        "[sandbox]\nmode = \"workspace-write\"\nwritable = [\"gone\"]\n",
    );
    assert_eq!(
        err.to_string(),
        format!(
            "Sandbox cannot use the writable root {}: No such file or directory (os error 2)",
            dir.path().join("gone").display()
        )
    );
}

/// Until the spawner enforces it, a sandboxed session runs nothing on any path — never
/// unconfined — while a session without one in the same process runs as always.
#[tokio::test(flavor = "multi_thread")]
async fn nothing_runs_unconfined() {
    assert_eq!(SANDBOX_NOT_ENFORCED, "not enforced by this build");
    let (dir, sandboxed) = temp_session("[sandbox]\nmode = \"workspace-write\"\n");
    let (_plain_dir, plain) = temp_session("");
    let marker = dir.path().join("work/ran");
    let touch = format!("touch {}", marker.display());

    let err = sandboxed
        .execute_bash(&touch, BangOptions::default())
        .await
        .expect_err("a bang command must not run");
    assert!(
        matches!(err, SessionError::Sandbox(SandboxError::Unavailable(_))),
        "{err:?}"
    );
    assert_eq!(err.to_string(), UNAVAILABLE);

    for args in [
        json!({ "command": touch }),
        json!({ "command": touch, "run_in_background": true }),
        json!({ "command": touch, "yield_after": 5 }),
    ] {
        let result = sandboxed
            .execute_tool("call-1", &args, ToolContext::default(), |_| {})
            .await
            .into_result();
        assert!(result.is_error, "{args}");
        assert_eq!(result.text(), UNAVAILABLE, "{args}");
    }
    assert!(!marker.exists(), "a command ran unconfined");

    // The other session is not affected.
    let result = plain
        .execute_tool(
            "call-1",
            &json!({ "command": "echo plain" }),
            ToolContext::default(),
            |_| {},
        )
        .await
        .into_result();
    assert_eq!(result.text(), "plain");
    sandboxed.shutdown().await;
    plain.shutdown().await;
}

/// The rc snapshot runs the user's rc files in a shell: under a sandbox that cannot be
/// enforced it is not taken, so that nothing of the session runs unconfined.
#[test]
fn no_rc_snapshot_runs_unconfined() {
    // Each session in a world of its own: no snapshot cache shared between them.
    let rc_ran = |toml: &str| {
        let dir = tempfile::tempdir().expect("temp dir");
        let home = dir.path().join("home");
        let work = dir.path().join("work");
        std::fs::create_dir_all(&home).expect("home");
        std::fs::create_dir_all(&work).expect("work");
        std::fs::write(home.join(".bashrc"), "touch \"$HOME/rc-ran\"\n").expect("rc");
        let session = new_session(&dir, &work, &format!("[bash]\nshell = \"bash\"\n{toml}"))
            .expect("the session starts");
        drop(session);
        home.join("rc-ran").exists()
    };
    // Control: without a sandbox the snapshot sources the rc file.
    assert!(
        rc_ran(""),
        "the rc file was not sourced: the test proves nothing"
    );
    assert!(
        !rc_ran("[sandbox]\nmode = \"workspace-write\"\n"),
        "the rc file ran unconfined"
    );
}
