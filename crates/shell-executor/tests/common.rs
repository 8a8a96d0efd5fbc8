//! Helpers shared by the integration tests: a runtime, a one-call runner, process probes.

use std::path::Path;
use std::time::{Duration, Instant};

use agentsh_output_sink::{OutputSink, SinkOptions};
use agentsh_process::shell::ShellSpec;
use agentsh_protocol::BashResult;
use agentsh_shell_executor::{ExecRequest, ExecutorConfig, SessionKey, ShellExecutor, Surface};
pub use agentsh_test_support::{alive_with_arg as alive_with, runtime, which};

/// An executor whose shells start from a small, fixed environment.
pub fn executor() -> ShellExecutor {
    ShellExecutor::new(config())
}

pub fn config() -> ExecutorConfig {
    ExecutorConfig {
        base_env: Some(vec![
            ("PATH".into(), std::env::var_os("PATH").unwrap_or_default()),
            (
                "HOME".into(),
                std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into()),
            ),
        ]),
        ..ExecutorConfig::default()
    }
}

pub fn bash() -> ShellSpec {
    ShellSpec::from_path(which("bash").expect("bash on PATH"))
}

pub fn session(name: &str) -> SessionKey {
    SessionKey::new(name, Surface::Tool)
}

/// Runs `body` on a fresh [`runtime`] with a fresh [`executor`] and the tool session `name`.
pub fn with_session(name: &str, body: impl AsyncFnOnce(ShellExecutor, SessionKey)) {
    runtime().block_on(body(executor(), session(name)));
}

pub fn request(command: &str, session: &SessionKey, timeout: Duration) -> ExecRequest {
    let mut request = ExecRequest::new(command, std::env::temp_dir(), timeout, session.clone());
    request.shell = bash();
    request
}

/// Runs `command` with a default sink and returns the result (panics on an `ExecError`).
pub async fn run(executor: &ShellExecutor, session: &SessionKey, command: &str) -> BashResult {
    run_req(executor, request(command, session, Duration::from_secs(20))).await
}

/// Runs `command` in `spec`'s shell of `session` with `timeout` (panics on an `ExecError`).
pub async fn run_on(
    executor: &ShellExecutor,
    session: &SessionKey,
    spec: &ShellSpec,
    command: &str,
    timeout: Duration,
) -> BashResult {
    let mut req = request(command, session, timeout);
    req.shell = spec.clone();
    run_req(executor, req).await
}

pub async fn run_req(executor: &ShellExecutor, request: ExecRequest) -> BashResult {
    let mut sink = OutputSink::new(SinkOptions::default());
    run_into(executor, request, &mut sink).await
}

/// Runs `request` into `sink` (panics on an `ExecError`).
pub async fn run_into(
    executor: &ShellExecutor,
    request: ExecRequest,
    sink: &mut OutputSink,
) -> BashResult {
    executor
        .execute(request, sink, None)
        .await
        .expect("the command runs")
}

/// A sink that stops the command after `lines` lines, as `| head -n <lines>` does.
pub fn head_sink(lines: u32) -> OutputSink {
    OutputSink::new(SinkOptions {
        head_lines: Some(lines),
        ..SinkOptions::default()
    })
}

/// Runs with a timeout and reports how long the call took.
pub async fn run_with_timeout(
    executor: &ShellExecutor,
    session: &SessionKey,
    command: &str,
    timeout: Duration,
) -> (BashResult, Duration) {
    let start = Instant::now();
    let result = run_req(executor, request(command, session, timeout)).await;
    (result, start.elapsed())
}

pub fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done()
}

/// A marker unique to this test process, e.g. `100.4711023456` (a valid `sleep` argument).
pub fn unique(base: &str) -> String {
    format!("{base}{:07}", std::process::id() % 10_000_000)
}

pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

pub fn path_str(path: &Path) -> String {
    path.display().to_string()
}
