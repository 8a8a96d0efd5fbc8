//! A session in a private temp world, shared by the test modules: its own home, artifact store
//! and working directory (`work/`, with `work/sub/` and `work/file.txt`).

use agentsh_agent_session::{AgentSession, SessionOptions, Settings};
use tempfile::TempDir;

/// The world's directory (dropped with it) and a session in `work/` configured by
/// `extra_toml` on top of the world's artifact store.
pub fn temp_session(extra_toml: &str) -> (TempDir, AgentSession) {
    let dir = tempfile::tempdir().expect("temp dir");
    let home = dir.path().join("home");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::create_dir_all(work.join("sub")).expect("work");
    std::fs::write(work.join("file.txt"), "x\n").expect("file");
    let toml = format!(
        "[artifacts]\ndir = \"{}\"\n{extra_toml}",
        dir.path().join("artifacts").display()
    );
    let settings = Settings::from_toml(&toml, &dir.path().join("config.toml"), Some(&home))
        .expect("valid test config");
    let session = AgentSession::new(SessionOptions {
        settings,
        cwd: work,
        home: Some(home),
        ..SessionOptions::default()
    })
    .expect("session starts");
    (dir, session)
}
