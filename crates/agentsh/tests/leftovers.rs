//! The directories agentsh makes are gone once it ends, however it ends: a shell's private
//! directory (`agentsh-XXXXXX` in `$XDG_RUNTIME_DIR`, else `/dev/shm`) and a sandboxed
//! session's temp dir (`agentsh-sandbox-XXXXXX` in `$TMPDIR`), within 3 s of the end of every
//! mode — at the end of input, by SIGTERM, by SIGKILL, with jobs running — and, when nothing of
//! agentsh survives to remove them (the end of its PID namespace), by the sweep of a later
//! start, within one sweep period (shortened here by `AGENTSH_TEST_SWEEP_PERIOD_S`).
//!
//! Each run points both at directories of its own test environment (`run/`, `tmp/`), so what
//! it finds there is its own whatever runs beside it. Sandboxed runs are skipped, with a note,
//! where the kernel cannot enforce the sandbox.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use agentsh_test_support::tmux::skip_without_tmux;
use serde_json::{Value, json};

use crate::interactive::{Tui, pane_builder};
use crate::util::{
    AGENTSH, LIVENESS, Rpc, TestEnv, assert_no_survivor, finish, marked_sleeper, processes_with,
    unique_marker, wait_for_process, wait_timeout,
};

/// How long after its end an agentsh's directories may still be there.
const GONE_WITHIN: Duration = Duration::from_secs(3);

/// The config of a sandboxed session.
const SANDBOXED: &str = "[sandbox]\nmode = \"workspace-write\"\n";

/// How a run of agentsh ends.
#[derive(Debug, Clone, Copy)]
enum End {
    /// Its own way: the end of input, Ctrl+D, a command that returns.
    Normal,
    /// SIGTERM.
    Term,
    /// SIGKILL.
    Kill,
}

const ENDS: [End; 3] = [End::Normal, End::Term, End::Kill];

/// The directory of the shells' private directories in `env`.
fn run_dir(env: &TestEnv) -> PathBuf {
    env.root().join("run")
}

/// The temporary directory (`TMPDIR`) of agentsh in `env`.
fn tmp_dir(env: &TestEnv) -> PathBuf {
    env.root().join("tmp")
}

/// A test environment (sandboxed or not) with its own `run/` and `tmp/`.
pub fn private_env(sandboxed: bool) -> TestEnv {
    let env = TestEnv::with_config(if sandboxed { SANDBOXED } else { "" });
    for dir in [run_dir(&env), tmp_dir(&env)] {
        std::fs::create_dir(dir).expect("create dir");
    }
    env
}

/// `agentsh <args…>` in `env`, its directories in `env`'s `run/` and `tmp/`.
pub fn private_command(env: &TestEnv, args: &[&str]) -> Command {
    with_private_dirs(env, env.command(args))
}

/// `command` with `env`'s `run/` as `XDG_RUNTIME_DIR` and `tmp/` as `TMPDIR`.
fn with_private_dirs(env: &TestEnv, mut command: Command) -> Command {
    command
        .env("XDG_RUNTIME_DIR", run_dir(env))
        .env("TMPDIR", tmp_dir(env));
    command
}

/// The directories agentsh made in `env`'s `run/` and `tmp/`, by name.
pub fn made(env: &TestEnv) -> Vec<String> {
    let names = |dir: PathBuf, prefix: &str| -> Vec<String> {
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| entry.file_name().into_string().ok())
            .filter(|name| name.starts_with(prefix))
            .collect()
    };
    let mut all = names(run_dir(env), "agentsh-");
    all.extend(names(tmp_dir(env), "agentsh-sandbox-"));
    all.sort();
    all
}

/// Asserts that a shell's private directory and, when `sandboxed`, the session's temp dir are
/// there (the places looked at are the right ones); returns them.
fn assert_made(env: &TestEnv, sandboxed: bool, context: &str) -> Vec<String> {
    let now = made(env);
    let shells = now.iter().filter(|n| !n.starts_with("agentsh-sandbox-"));
    assert!(shells.count() > 0, "{context}: no shell directory: {now:?}");
    let temps = now.iter().filter(|n| n.starts_with("agentsh-sandbox-"));
    assert_eq!(
        temps.count(),
        usize::from(sandboxed),
        "{context}: sandbox temp dirs: {now:?}"
    );
    now
}

/// Asserts that none of `names` is left in `env` within [`GONE_WITHIN`].
pub fn assert_gone(env: &TestEnv, names: &[String], context: &str) {
    let deadline = Instant::now() + GONE_WITHIN;
    loop {
        let left: Vec<String> = made(env)
            .into_iter()
            .filter(|name| names.contains(name))
            .collect();
        if left.is_empty() {
            return;
        }
        if Instant::now() >= deadline {
            let described: Vec<String> = left.iter().map(|name| describe(env, name)).collect();
            panic!("{context}: left after {GONE_WITHIN:?}: {described:#?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The sweep's period of the starts that must sweep, in seconds: short, so that a start comes
/// after it soon; not 0, so that the period itself is in play.
const SWEEP_PERIOD_S: &str = "0.2";

/// Starts `agentsh exec -- true` in `env` (its directories in `env`'s, the sweep's period
/// [`SWEEP_PERIOD_S`]) again and again until `done` holds, within [`LIVENESS`]: the sweep of
/// what dead agentsh processes left runs in the background of a start, at most once a period.
pub fn start_until(env: &TestEnv, context: &str, mut done: impl FnMut() -> bool) {
    let [flag, config] = config_args(env);
    let deadline = Instant::now() + LIVENESS;
    while !done() {
        assert!(
            Instant::now() < deadline,
            "{context}: not swept within {LIVENESS:?} of starts"
        );
        let mut start = private_command(env, &["exec", &flag, &config, "--", "true"]);
        start
            .env("AGENTSH_TEST_SWEEP_PERIOD_S", SWEEP_PERIOD_S)
            .stdin(Stdio::null());
        let started = finish(start);
        assert_eq!(started.code(), 0, "{context}: {started:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether none of `names` is left in `env`.
pub fn all_gone(env: &TestEnv, names: &[String]) -> bool {
    made(env).iter().all(|name| !names.contains(name))
}

/// Whether the lock of the directory `path` can be taken (it is dropped again at once).
fn lock_free(path: &std::path::Path) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd as _;
    let dir = std::fs::File::open(path)?;
    // SAFETY: flock on a descriptor this function owns; closing `dir` drops the lock.
    Ok(unsafe { libc::flock(dir.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0)
}

/// The path of the directory `name` agentsh made in `env`.
fn made_path(env: &TestEnv, name: &str) -> PathBuf {
    if name.starts_with("agentsh-sandbox-") {
        tmp_dir(env).join(name)
    } else {
        run_dir(env).join(name)
    }
}

/// What a failed test needs to know of a directory left behind: its mode, whether its lock is
/// held, and what is in it (the mark among them).
fn describe(env: &TestEnv, name: &str) -> String {
    use std::os::unix::fs::PermissionsExt as _;
    let path = made_path(env, name);
    let mode = std::fs::metadata(&path).map(|m| format!("{:o}", m.permissions().mode()));
    let locked = lock_free(&path).map(|free| !free);
    let mut entries: Vec<String> = std::fs::read_dir(&path)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    entries.sort();
    format!("{name}: mode {mode:?}, locked {locked:?}, entries {entries:?}")
}

/// Waits (within [`LIVENESS`]) until the lock of each of `names` is free: every process of
/// the agentsh that made them is gone. A SIGKILLed process drops its locks as it exits, which
/// on a busy machine can come after its killer has returned.
fn wait_unlocked(env: &TestEnv, names: &[String]) {
    let deadline = Instant::now() + LIVENESS;
    for name in names {
        let path = made_path(env, name);
        loop {
            // A directory already gone has no lock left to wait for.
            if lock_free(&path).unwrap_or(true) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{name} still locked {LIVENESS:?} after its agentsh was killed"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The sandbox settings to run with: off, and on where this kernel can enforce it.
fn sandbox_variants(test: &str) -> Vec<bool> {
    static WORKS: OnceLock<Result<(), String>> = OnceLock::new();
    let works = WORKS.get_or_init(|| {
        let env = private_env(true);
        let config = env.config_path();
        let probe = finish(
            private_command(
                &env,
                &[
                    "exec",
                    "--config",
                    config.to_str().expect("utf-8"),
                    "--",
                    "true",
                ],
            )
            .stdin(Stdio::null()),
        );
        if probe.stderr.contains("Sandbox unavailable") {
            Err(probe.stderr)
        } else {
            assert_eq!(probe.code(), 0, "{probe:?}");
            Ok(())
        }
    });
    match works {
        Ok(()) => vec![false, true],
        Err(reason) => {
            eprintln!("skipped: {test} with a sandbox: {}", reason.trim());
            vec![false]
        }
    }
}

fn signal(pid: u32, signal: libc::c_int) {
    assert!(
        agentsh_test_support::send_signal(pid, signal),
        "kill -{signal} {pid}"
    );
}

/// `--config <env's config>`, as the words of a command line.
fn config_args(env: &TestEnv) -> [String; 2] {
    [
        "--config".to_owned(),
        env.config_path().to_str().expect("utf-8").to_owned(),
    ]
}

#[test]
fn exec_leaves_no_directory_however_it_ends() {
    for sandboxed in sandbox_variants("exec_leaves_no_directory") {
        for end in ENDS {
            let context = format!("exec, sandboxed {sandboxed}, {end:?}");
            let env = private_env(sandboxed);
            let [flag, config] = config_args(&env);
            let marker = unique_marker();
            let command = match end {
                // The command shows that its shell's directory is where it is looked for.
                End::Normal => "ls \"$XDG_RUNTIME_DIR\"".to_owned(),
                End::Term | End::Kill => marked_sleeper(&marker),
            };
            let mut child = private_command(&env, &["exec", &flag, &config, "--", &command])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn agentsh exec");
            let names = match end {
                End::Normal => {
                    let done = crate::util::wait_output(child, LIVENESS);
                    assert_eq!(done.code(), 0, "{context}: {done:?}");
                    assert!(done.stdout.contains("agentsh-"), "{context}: {done:?}");
                    made(&env)
                }
                End::Term | End::Kill => {
                    // agentsh's own argv holds the marker, and so does its supervisor's (a
                    // fork of agentsh) from the moment it exists: the signal comes at any
                    // moment from then on, while the supervisor sets up or once the command
                    // runs, as a person's `kill` would.
                    let deadline = Instant::now() + LIVENESS;
                    while processes_with(&marker).iter().all(|&pid| pid == child.id()) {
                        assert!(
                            Instant::now() < deadline,
                            "{context}: the command did not start"
                        );
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    let names = assert_made(&env, sandboxed, &context);
                    let (number, code) = match end {
                        End::Term => (libc::SIGTERM, Some(143)),
                        _ => (libc::SIGKILL, None),
                    };
                    signal(child.id(), number);
                    let status = wait_timeout(&mut child, LIVENESS);
                    assert_eq!(status.code(), code, "{context}: {status:?}");
                    names
                }
            };
            assert_gone(&env, &names, &context);
            assert_eq!(made(&env), Vec::<String>::new(), "{context}");
            assert_no_survivor(&marker);
        }
    }
}

/// Starts a background job and a foreground call (each a marked `sleep 300`) on `rpc`;
/// returns their markers once both run.
fn rpc_job_and_call(rpc: &mut Rpc) -> [String; 2] {
    let (job, call) = (unique_marker(), unique_marker());
    rpc.send_json(
        &json!({"id": "job", "type": "tool_call", "toolCallId": "job", "name": "bash",
        "arguments": {"command": marked_sleeper(&job), "run_in_background": true}}),
    );
    let started = rpc.response("job");
    assert_eq!(started["success"], true, "{started}");
    rpc.send_json(&json!({"id": "call", "type": "bash", "command": marked_sleeper(&call)}));
    wait_for_process(&job);
    wait_for_process(&call);
    [job, call]
}

/// Ends `rpc` (or MCP over the same pipes) as `end` says; asserts its exit status.
fn end_server(server: Rpc, end: End, context: &str) {
    let status = match end {
        End::Normal => server.close(LIVENESS).0,
        End::Term => {
            signal(server.pid(), libc::SIGTERM);
            server.wait(LIVENESS).0
        }
        End::Kill => {
            signal(server.pid(), libc::SIGKILL);
            server.wait(LIVENESS).0
        }
    };
    let code = match end {
        End::Normal => Some(0),
        End::Term => Some(143),
        End::Kill => None,
    };
    assert_eq!(status.code(), code, "{context}: {status:?}");
}

#[test]
fn rpc_with_a_job_running_leaves_no_directory_however_it_ends() {
    for sandboxed in sandbox_variants("rpc_leaves_no_directory") {
        for end in ENDS {
            let context = format!("rpc, sandboxed {sandboxed}, {end:?}");
            let env = private_env(sandboxed);
            let [flag, config] = config_args(&env);
            let mut rpc = Rpc::spawn(private_command(&env, &["rpc", &flag, &config]));
            let markers = rpc_job_and_call(&mut rpc);
            let names = assert_made(&env, sandboxed, &context);
            end_server(rpc, end, &context);
            assert_gone(&env, &names, &context);
            for marker in &markers {
                assert_no_survivor(marker);
            }
        }
    }
}

/// Initialises `mcp` and starts a background job (a marked `sleep 300`); returns its marker
/// once it runs.
fn mcp_job(mcp: &mut Rpc) -> String {
    mcp.send_json(
        &json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "agentsh-leftovers-test", "version": "0"}}}),
    );
    mcp.until(LIVENESS, |line| line["id"] == "init");
    mcp.send(r#"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#);
    let marker = unique_marker();
    mcp.send_json(
        &json!({"jsonrpc": "2.0", "id": "job", "method": "tools/call", "params": {
        "name": "bash",
        "arguments": {"command": marked_sleeper(&marker), "run_in_background": true}}}),
    );
    let answer = mcp
        .until(LIVENESS, |line| {
            line["id"] == "job" && line.get("method").is_none()
        })
        .pop()
        .unwrap_or(Value::Null);
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("[Running in the background as job 1."),
        "{answer}"
    );
    wait_for_process(&marker);
    marker
}

#[test]
fn mcp_with_a_job_running_leaves_no_directory_however_it_ends() {
    for sandboxed in sandbox_variants("mcp_leaves_no_directory") {
        for end in ENDS {
            let context = format!("mcp, sandboxed {sandboxed}, {end:?}");
            let env = private_env(sandboxed);
            let [flag, config] = config_args(&env);
            let mut mcp = Rpc::spawn(private_command(&env, &["mcp", &flag, &config]));
            let marker = mcp_job(&mut mcp);
            let names = assert_made(&env, sandboxed, &context);
            end_server(mcp, end, &context);
            assert_gone(&env, &names, &context);
            assert_no_survivor(&marker);
        }
    }
}

#[test]
fn the_interactive_mode_with_a_job_running_leaves_no_directory_however_it_ends() {
    let test = "interactive_leaves_no_directory";
    if skip_without_tmux(test) {
        return;
    }
    for sandboxed in sandbox_variants(test) {
        for end in ENDS {
            let context = format!("interactive, sandboxed {sandboxed}, {end:?}");
            let env = private_env(sandboxed);
            let pane = pane_builder(&env, [AGENTSH])
                .env("XDG_RUNTIME_DIR", run_dir(&env))
                .env("TMPDIR", tmp_dir(&env))
                .start()
                .expect("tmux starts");
            let tui = Tui { pane, env };
            tui.wait_text(if sandboxed {
                "sandbox workspace-write"
            } else {
                "sandbox off"
            });
            let marker = unique_marker();
            let line = json!({"command": marked_sleeper(&marker), "run_in_background": true});
            tui.submit(&line.to_string());
            tui.wait_text_for("[Running in the background as job 1.", LIVENESS);
            wait_for_process(&marker);
            let names = assert_made(&tui.env, sandboxed, &context);
            let code = match end {
                End::Normal => {
                    tui.pane.send_keys(&["C-d"]);
                    tui.wait_text("Ctrl+D again ends them");
                    tui.pane.send_keys(&["C-d"]);
                    Some(0)
                }
                End::Term => {
                    signal(tui.pane.pane_pid(), libc::SIGTERM);
                    Some(143)
                }
                End::Kill => {
                    signal(tui.pane.pane_pid(), libc::SIGKILL);
                    None
                }
            };
            let status = tui.wait_exit();
            assert_eq!(status.code(), code, "{context}: {status:?}");
            assert_gone(&tui.env, &names, &context);
            assert_no_survivor(&marker);
        }
    }
}

/// When agentsh is PID 1 of a PID namespace, its end kills every process in it: no supervisor
/// survives to remove anything. The sweep of a later agentsh start (here an `exec`), within one
/// period, removes what it left, since no live process holds its lock; the new agentsh's own
/// directories stay its own.
#[test]
fn what_the_end_of_a_pid_namespace_leaves_goes_within_a_sweep_period() {
    let probe = Command::new("unshare")
        .args(["--mount", "--pid", "--fork", "--mount-proc", "true"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    if !probe.as_ref().is_ok_and(|out| out.status.success()) {
        eprintln!("skipped: no PID namespaces with unshare here: {probe:?}");
        return;
    }
    for sandboxed in sandbox_variants("what_the_end_of_a_pid_namespace_leaves") {
        let context = format!("PID namespace, sandboxed {sandboxed}");
        let env = private_env(sandboxed);
        let [flag, config] = config_args(&env);
        let unshare = env.program(
            "unshare",
            &[
                "--mount",
                "--pid",
                "--fork",
                "--kill-child",
                "--mount-proc",
                AGENTSH,
                "rpc",
                &flag,
                &config,
            ],
        );
        let mut rpc = Rpc::spawn(with_private_dirs(&env, unshare));
        let markers = rpc_job_and_call(&mut rpc);
        let names = assert_made(&env, sandboxed, &context);
        // `unshare` SIGKILLs agentsh, PID 1 there, and with it every process of the namespace.
        rpc.kill();
        for marker in &markers {
            assert_no_survivor(marker);
        }
        // The later starts come after the end of everything the namespace held (its locks
        // included), as they would after a real crash; else a sweep rightly keeps a directory
        // whose owner is still exiting.
        wait_unlocked(&env, &names);
        start_until(&env, &context, || all_gone(&env, &names));
        // A sweep leaves its stamp beside the shells' directories, private.
        let stamps: Vec<std::fs::Metadata> = std::fs::read_dir(run_dir(&env))
            .expect("run dir")
            .flatten()
            .filter(|entry| {
                entry
                    .file_name()
                    .to_string_lossy()
                    .starts_with(".agentsh-swept-")
            })
            .filter_map(|entry| entry.metadata().ok())
            .collect();
        assert_eq!(stamps.len(), 1, "{context}: one stamp");
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(stamps[0].permissions().mode() & 0o777, 0o600, "{context}");
    }
}
