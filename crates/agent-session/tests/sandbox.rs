//! A session's sandbox above the spawner: its writable roots as resolved, the roots
//! it refuses, its private temp dir, and that every command path runs confined.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use agentsh_agent_session::{
    AgentSession, BangOptions, PtyHost, SandboxError, SandboxKernel, SandboxMode, SandboxSpec,
    SessionError, SessionOptions, Settings, ToolContext, ToolResult,
};
use serde_json::json;
use tempfile::TempDir;

use crate::world::temp_session;

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().expect("canonical path")
}

/// A session in `cwd` with home `dir/home` and `toml` as its config.
fn new_session(dir: &TempDir, cwd: &Path, toml: &str) -> Result<AgentSession, SessionError> {
    new_session_on(dir, cwd, toml, None)
}

/// [`new_session`], its sandbox checked as if the kernel offered at most `kernel_limit`.
fn new_session_on(
    dir: &TempDir,
    cwd: &Path,
    toml: &str,
    kernel_limit: Option<SandboxKernel>,
) -> Result<AgentSession, SessionError> {
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
        sandbox_kernel_limit: kernel_limit,
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
    assert_eq!(policy.network, agentsh_agent_session::SandboxNetwork::Off);
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
    let policy: &SandboxSpec = session.sandbox().expect("a sandbox");
    assert_eq!(policy.mode, SandboxMode::ReadOnly);
    assert_eq!(policy.network, agentsh_agent_session::SandboxNetwork::On);
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
    // The tool call's own result names the sandbox after its denial.
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
    // The background job wrote what it could by the time it is gone: its end is awaited (its
    // first file alone does not say that it tried the second yet).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let out = sandboxed
            .execute_job_tool("job_output", &json!({"jobId": "1", "wait": 1}))
            .await
            .expect("a job tool")
            .into_result();
        let state = out.details.job.as_ref().map(|job| job.state);
        if state == Some(agentsh_agent_session::JobState::Exited) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the job did not end: {}",
            out.text()
        );
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

/// What the running kernel offers within `limit`'s changes (the seam asks for less).
const fn limit(landlock_abi: i32, user_namespaces: bool, seccomp: bool) -> SandboxKernel {
    SandboxKernel {
        landlock_abi,
        user_namespaces,
        seccomp,
    }
}

/// A sandbox the kernel cannot enforce is an error when the session is made
/// (`Sandbox unavailable: <reason>`, never a silent or partial fallback): no shell starts (the
/// rc snapshot, which would write in the cwd, does not run), no file is written (not even the
/// artifact store). A limit the kernel meets changes nothing.
#[test]
fn a_sandbox_the_kernel_cannot_enforce_fails_the_session_at_start() {
    let ws = "[bash]\nshell = \"bash\"\n[sandbox]\nmode = \"workspace-write\"\n";
    // One world per attempt: its rc file writes in the cwd, a writable root.
    let attempt = |toml: &str, kernel: Option<SandboxKernel>| {
        let dir = tempfile::tempdir().expect("temp dir");
        let work = dir.path().join("work");
        std::fs::create_dir_all(dir.path().join("home")).expect("home");
        std::fs::create_dir_all(&work).expect("work");
        std::fs::write(
            dir.path().join("home/.bashrc"),
            format!("touch {}/rc-ran\n", work.display()),
        )
        .expect("rc");
        let session = new_session_on(&dir, &work, toml, kernel);
        let rc_ran = work.join("rc-ran").exists();
        let wrote = dir.path().join("artifacts").exists();
        (session, rc_ran, wrote)
    };
    // Control: on the real kernel the session starts and its snapshot's shell ran the rc.
    let (session, rc_ran, wrote) = attempt(ws, None);
    assert!(
        session.is_ok(),
        "the real kernel can sandbox: {session:?}",
        session = session.err()
    );
    assert!(rc_ran && wrote, "the test proves nothing: no shell ran");

    for (kernel, toml, reason) in [
        (limit(0, true, true), ws, "Landlock is not enabled"),
        (limit(2, true, true), ws, "Landlock ABI is 2, at least 3"),
        (
            limit(i32::MAX, false, true),
            ws,
            "user namespaces are not allowed",
        ),
        (
            limit(i32::MAX, true, false),
            ws,
            "seccomp filters are not available",
        ),
        (
            limit(0, true, true),
            "[bash]\nshell = \"bash\"\n[sandbox]\nmode = \"read-only\"\nnetwork = true\n",
            "Landlock is not enabled",
        ),
    ] {
        let (session, rc_ran, wrote) = attempt(toml, Some(kernel));
        let Err(err) = session else {
            panic!("a session started on {kernel:?} with {toml}");
        };
        assert!(
            matches!(&err, SessionError::Sandbox(SandboxError::Unavailable(_))),
            "{err:?}"
        );
        let text = err.to_string();
        assert!(
            text.starts_with("Sandbox unavailable: ") && text.contains(reason),
            "{kernel:?}: {text}"
        );
        assert!(!rc_ran, "{kernel:?}: a shell started");
        assert!(!wrote, "{kernel:?}: the session wrote its artifact store");
    }

    // A limit the kernel meets, or one above it, only keeps what the kernel offers; seccomp
    // is needed only for `network = false`.
    for (kernel, toml) in [
        (limit(3, true, true), ws),
        (limit(99, true, true), ws),
        (
            limit(i32::MAX, true, false),
            "[sandbox]\nmode = \"workspace-write\"\nnetwork = true\n",
        ),
        // No sandbox: nothing to check.
        (limit(0, false, false), ""),
    ] {
        let (session, _, _) = attempt(toml, Some(kernel));
        assert!(session.is_ok(), "{kernel:?} {toml}: {:?}", session.err());
    }
}

/// A session's `bash` tool on a terminal: a PTY host and `virtual_terminal = on`.
struct QuietHost;

impl PtyHost for QuietHost {
    fn attach(&self, _call_id: &str, _program: agentsh_agent_session::PtyAttachment) {}
}

/// The PTY path runs confined too (every PTY session): a tool call on a terminal
/// writes in the cwd, cannot write outside the roots, and its result names the sandbox after
/// the denial; so does a PTY job's.
#[tokio::test(flavor = "multi_thread")]
async fn the_pty_path_runs_confined_and_names_the_sandbox() {
    let (dir, session) =
        temp_session("[bash]\nvirtual_terminal = \"on\"\n[sandbox]\nmode = \"workspace-write\"\n");
    let inside = dir.path().join("work");
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).expect("outside dir");
    let host: std::sync::Arc<dyn PtyHost> = std::sync::Arc::new(QuietHost);
    let command = format!(
        "tty | sed 's/[0-9]*$/N/'; touch {in}/pty; touch {out}/pty",
        in = inside.display(),
        out = outside.display()
    );
    let result = session
        .execute_tool(
            "call-1",
            &json!({ "command": command }),
            ToolContext {
                pty_host: Some(host),
                ..ToolContext::default()
            },
            |_| {},
        )
        .await
        .into_result();
    let text = result.text();
    assert!(text.starts_with("/dev/pts/N\n"), "on a terminal: {text}");
    assert!(result.is_error, "{text}");
    let line = agentsh_sandbox::sandbox_denial_line(session.sandbox().expect("sandbox"));
    assert!(
        text.ends_with(&format!(
            "Permission denied\n\nCommand exited with code 1\n\n{line}"
        )),
        "{text}"
    );
    assert!(inside.join("pty").exists(), "the cwd is writable");
    assert!(
        !outside.join("pty").exists(),
        "a PTY wrote outside the roots"
    );

    // A PTY job (`pty: true`): the same confinement, the line once it failed.
    let started = session
        .execute_tool(
            "call-2",
            &json!({
                "command": format!("touch {}/ptyjob; exit 3", outside.display()),
                "run_in_background": true,
                "pty": true,
            }),
            ToolContext::default(),
            |_| {},
        )
        .await
        .into_result();
    let ended = job_tool(&session, "job_output", json!({"jobId": "1", "wait": 10})).await;
    let texts = format!("{}\n---\n{}", started.text(), ended.text());
    assert!(
        texts.contains("Permission denied") && texts.contains("[job 1: exited with code 3]"),
        "{texts}"
    );
    assert!(
        ended
            .text()
            .ends_with(&format!("\n\n{line}\n\n[job 1: exited with code 3]")),
        "{texts}"
    );
    assert!(!outside.join("ptyjob").exists(), "a PTY job wrote outside");
    session.shutdown().await;
}

async fn job_tool(session: &AgentSession, name: &str, args: serde_json::Value) -> ToolResult {
    session
        .execute_job_tool(name, &args)
        .await
        .expect("a job tool")
        .into_result()
}

/// The result that reports job `id`'s end: `started` when the job ended within its first
/// second, else `job_output` waiting for it.
async fn end_of(session: &AgentSession, id: &str, started: ToolResult) -> ToolResult {
    if started.text().contains(&format!("[job {id}: exited")) {
        return started;
    }
    job_tool(session, "job_output", json!({"jobId": id, "wait": 30})).await
}

/// A sandboxed background job that failed with a denial gets the sandbox line in
/// the result that reports its end, before the state line (the closing lines' order) — also when
/// the denial was shown by an earlier result — and on `job_kill`; never while it runs, for a
/// job that succeeded, or for one whose output shows no denial.
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_job_with_a_denial_names_the_sandbox() {
    let (dir, session) = temp_session("[sandbox]\nmode = \"workspace-write\"\n");
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).expect("outside dir");
    let line = agentsh_sandbox::sandbox_denial_line(session.sandbox().expect("sandbox"));
    let start = |command: String| {
        let session = session.clone();
        async move {
            session
                .execute_tool(
                    "call",
                    &json!({ "command": command, "run_in_background": true }),
                    ToolContext::default(),
                    |_| {},
                )
                .await
                .into_result()
        }
    };
    let touch = |name: &str| format!("touch {}/{name}", outside.display());
    // What job `id` printed up to its line `waiting`, as its results showed it.
    let until_waiting = |id: &'static str, started: ToolResult| {
        let session = session.clone();
        async move {
            let more = job_tool(
                &session,
                "job_output",
                json!({"jobId": id, "until": "^waiting$"}),
            )
            .await;
            format!("{}\n{}", started.text(), more.text())
        }
    };

    // Job 1 fails at once (usually within its first second: the starting result says so).
    let one = start(touch("one")).await;
    let one = end_of(&session, "1", one).await;
    assert!(
        one.text().ends_with(&format!(
            "Permission denied\n\n{line}\n\n[job 1: exited with code 1]"
        )),
        "{}",
        one.text()
    );

    // Job 2 shows its denial while running (no line then), then fails: the line comes with
    // the end, though no new output does. It ends once the test opens its gate.
    let gate = dir.path().join("gate");
    let two = start(format!(
        "{}; echo waiting; until [ -e {} ]; do sleep 0.05; done; exit 4",
        touch("two"),
        gate.display()
    ))
    .await;
    let shown = until_waiting("2", two).await;
    assert!(shown.contains("Permission denied"), "{shown}");
    assert!(!shown.contains("[sandbox:"), "{shown}");
    assert!(shown.ends_with("[job 2: running]"), "{shown}");
    std::fs::write(&gate, "").expect("open the gate");
    let ended = job_tool(&session, "job_output", json!({"jobId": "2", "wait": 30})).await;
    assert_eq!(
        ended.text(),
        format!("(no new output)\n\n{line}\n\n[job 2: exited with code 4]")
    );

    // Job 3 is killed after its denial: `job_kill`'s answer has the line.
    let three = start(format!("{}; echo waiting; sleep 300", touch("three"))).await;
    let shown = until_waiting("3", three).await;
    assert!(shown.contains("Permission denied"), "{shown}");
    let killed = job_tool(&session, "job_kill", json!({"jobId": "3"})).await;
    assert!(
        killed
            .text()
            .ends_with(&format!("{line}\n\n[job 3: killed]")),
        "{}",
        killed.text()
    );

    // No line: a success despite the text, and a failure without a denial.
    let fine = start("echo Permission denied; true".to_owned()).await;
    let fine = end_of(&session, "4", fine).await;
    let failed = start("echo nothing to see; exit 5".to_owned()).await;
    let failed = end_of(&session, "5", failed).await;
    for (result, state) in [
        (&fine, "[job 4: exited with code 0]"),
        (&failed, "[job 5: exited with code 5]"),
    ] {
        assert!(result.text().ends_with(state), "{}", result.text());
    }
    for name in ["one", "two", "three"] {
        assert!(!outside.join(name).exists(), "job {name} wrote outside");
    }
    session.shutdown().await;
}

/// `<cwd>/.agentsh` is kept read-only when it is a directory at session start (not when it is
/// missing or a symlink): a tool call cannot change, move or remove it, while it writes the
/// rest of the cwd; on a terminal, `tty` names the command's own terminal and PTYs of its own
/// work.
#[tokio::test(flavor = "multi_thread")]
async fn the_agentsh_dir_is_read_only_and_terminals_work() {
    let dir = tempfile::tempdir().expect("temp dir");
    let toml = "[bash]\nvirtual_terminal = \"on\"\n[sandbox]\nmode = \"workspace-write\"\n";
    let plain = dir.path().join("plain");
    let linked = dir.path().join("linked");
    let work = dir.path().join("work");
    for cwd in [&plain, &linked, &work] {
        std::fs::create_dir(cwd).expect("cwd");
    }
    std::os::unix::fs::symlink(&plain, linked.join(".agentsh")).expect("symlink");
    for cwd in [&plain, &linked] {
        let session = new_session(&dir, cwd, toml).expect("session");
        let policy = session.sandbox().expect("a sandbox");
        assert!(policy.read_only.is_empty(), "{policy:?}");
        session.shutdown().await;
    }

    let project = work.join(".agentsh");
    std::fs::create_dir(&project).expect("mkdir");
    std::fs::write(project.join("policy.toml"), "[policy]\n").expect("policy");
    let session = new_session(&dir, &work, toml).expect("session");
    assert_eq!(
        session.sandbox().expect("a sandbox").read_only,
        vec![canonical(&project)]
    );
    let result = session
        .execute_tool(
            "call-1",
            &json!({ "command": "echo > .agentsh/policy.toml; touch .agentsh/x; mv .agentsh y; rm -rf .agentsh; echo ok > file && cat file" }),
            ToolContext::default(),
            |_| {},
        )
        .await
        .into_result();
    let text = result.text();
    assert!(text.contains("Read-only file system"), "{text}");
    assert!(text.lines().any(|line| line == "ok"), "{text}");
    assert_eq!(
        std::fs::read_to_string(project.join("policy.toml")).expect("still there"),
        "[policy]\n"
    );
    assert!(
        !project.join("x").exists() && !work.join("y").exists(),
        "{text}"
    );

    if agentsh_test_support::which("script").is_none() {
        eprintln!("skipped the terminal part: script (util-linux) is not installed");
        session.shutdown().await;
        return;
    }
    let host: std::sync::Arc<dyn PtyHost> = std::sync::Arc::new(QuietHost);
    let result = session
        .execute_tool(
            "call-2",
            &json!({ "command": "tty; script -qc true /dev/null && echo script-ok" }),
            ToolContext {
                pty_host: Some(host),
                ..ToolContext::default()
            },
            |_| {},
        )
        .await
        .into_result();
    let text = result.text();
    assert!(text.starts_with("/dev/pts/"), "{text}");
    assert!(text.contains("script-ok"), "{text}");
    assert!(!result.is_error, "{text}");
    session.shutdown().await;
}

/// The probe `agentsh doctor` runs for the network allowlist: on a kernel that can sandbox,
/// a sandboxed bash reaches the proxy through its namespace's listener and is refused; on one
/// that cannot, the probe says why (the sandbox's own reason).
#[test]
fn the_allowlist_probe_says_whether_it_works_here() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let probed = runtime.block_on(agentsh_sandbox::probe_network_allowlist());
    let isolated = agentsh_agent_session::SandboxSpec {
        mode: agentsh_agent_session::SandboxMode::ReadOnly,
        writable: vec![std::env::temp_dir()],
        read_only: Vec::new(),
        network: agentsh_agent_session::SandboxNetwork::Off,
        temp_dir: None,
        temp_fs: None,
    };
    match agentsh_process::sandbox::check(&isolated) {
        Ok(()) => {
            let seen = probed.expect("the allowlist works on a kernel that can sandbox");
            assert!(seen.contains("was refused an unlisted host"), "{seen}");
        }
        Err(reason) => assert_eq!(probed, Err(reason.to_string())),
    }
}
