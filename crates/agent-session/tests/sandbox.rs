//! A session's sandbox above the spawner (SPEC §16): its writable roots as resolved, the roots
//! it refuses, its private temp dir, and that every command path runs confined.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use agentsh_agent_session::{
    AgentSession, BangOptions, SandboxError, SandboxMode, SandboxPolicy, SessionError,
    SessionOptions, Settings, ToolContext,
};
use serde_json::json;
use tempfile::TempDir;

use crate::world::temp_session;

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

/// Every command path of a sandboxed session (bang, tool call, background job, yielding call)
/// runs confined: its cwd writable, nothing outside the roots; a session without a sandbox in
/// the same process writes where it likes.
#[tokio::test(flavor = "multi_thread")]
async fn every_command_path_runs_confined() {
    let (dir, sandboxed) = temp_session("[sandbox]\nmode = \"workspace-write\"\n");
    let (_plain_dir, plain) = temp_session("");
    let inside = dir.path().join("work");
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).expect("outside dir");
    // Each path writes one file in the cwd (a writable root) and one outside every root.
    let writes = |name: &str| {
        format!(
            "touch {}/{name}; touch {}/{name}",
            inside.display(),
            outside.display()
        )
    };

    let bang = sandboxed
        .execute_bash(&writes("bang"), BangOptions::default())
        .await
        .expect("a bang command runs, confined");
    assert_ne!(bang.exit_code, Some(0), "{bang:?}");
    assert!(
        bang.summary.output.contains("Permission denied"),
        "{bang:?}"
    );

    for (name, mut args) in [
        ("tool", json!({})),
        ("job", json!({ "run_in_background": true })),
        ("yield", json!({ "yield_after": 5 })),
    ] {
        args["command"] = json!(writes(name));
        let result = sandboxed
            .execute_tool("call-1", &args, ToolContext::default(), |_| {})
            .await
            .into_result();
        assert!(!result.text().contains("Sandbox unavailable"), "{args}");
    }
    // The tool call's own result names the sandbox after its denial (SPEC §16).
    let result = sandboxed
        .execute_tool(
            "call-2",
            &json!({ "command": writes("denied") }),
            ToolContext::default(),
            |_| {},
        )
        .await
        .into_result();
    assert!(result.is_error);
    assert!(
        result.text().contains("Permission denied")
            && result
                .text()
                .contains("[sandbox: workspace-write; writable: ")
            && result.text().contains("; network off]"),
        "{}",
        result.text()
    );
    // The background job wrote what it could by the time it is gone.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !inside.join("job").exists() && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    for name in ["bang", "tool", "job", "yield", "denied"] {
        assert!(inside.join(name).exists(), "{name}: the cwd is writable");
        assert!(
            !outside.join(name).exists(),
            "{name}: a write outside the roots went through"
        );
    }

    // The other session is not affected.
    let result = plain
        .execute_tool(
            "call-1",
            &json!({ "command": format!("touch {}/plain && echo plain", outside.display()) }),
            ToolContext::default(),
            |_| {},
        )
        .await
        .into_result();
    assert_eq!(result.text(), "plain");
    assert!(outside.join("plain").exists());
    sandboxed.shutdown().await;
    plain.shutdown().await;
}

/// The rc snapshot runs the user's rc files in a shell: under the session's sandbox, so an rc
/// that writes outside the roots cannot.
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
