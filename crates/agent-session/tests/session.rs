//! Setting a session up: it is safe by construction, or not constructed at all.

use agentsh_agent_session::{AgentSession, CwdError, SessionError, SessionOptions};

#[test]
fn a_session_needs_an_existing_absolute_directory() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("file.txt");
    std::fs::write(&file, "x").expect("file");

    // The default options have an empty cwd: every call would fail, so no session.
    let err = AgentSession::new(SessionOptions::default()).err();
    assert!(
        matches!(&err, Some(SessionError::CwdNotAbsolute { path }) if path.as_os_str().is_empty()),
        "{err:?}"
    );
    assert_eq!(
        err.map(|err| err.to_string()).as_deref(),
        Some("Working directory must be an absolute path, got \"\"")
    );

    let err = AgentSession::new(SessionOptions::new("relative/dir")).err();
    assert!(
        matches!(err, Some(SessionError::CwdNotAbsolute { .. })),
        "{err:?}"
    );

    let missing = dir.path().join("missing");
    let err = AgentSession::new(SessionOptions::new(&missing)).err();
    assert!(
        matches!(&err, Some(SessionError::Cwd(CwdError::Missing { path })) if *path == missing),
        "{err:?}"
    );
    assert_eq!(
        err.map(|err| err.to_string()),
        Some(format!(
            "Working directory does not exist: {}",
            missing.display()
        ))
    );

    let err = AgentSession::new(SessionOptions::new(&file)).err();
    assert!(
        matches!(err, Some(SessionError::Cwd(CwdError::NotDirectory { .. }))),
        "{err:?}"
    );
}
