//! Helpers of the unit tests that look inside the cache (the integration tests under `tests/`
//! have their own): real shells, a small fixed environment, one-call runners.

use std::time::{Duration, Instant};

use agentsh_output_sink::{OutputSink, SinkOptions};
use agentsh_process::shell::ShellSpec;
use agentsh_protocol::BashResult;
pub(crate) use agentsh_test_support::{alive_with_arg as alive_with, runtime};

use crate::{ExecRequest, ExecutorConfig, SessionKey, ShellExecutor, ShellLimits, Surface};

pub(crate) fn config() -> ExecutorConfig {
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

/// An executor whose shells start from a small, fixed environment.
pub(crate) fn executor() -> ShellExecutor {
    ShellExecutor::new(config())
}

pub(crate) fn session(name: &str) -> SessionKey {
    SessionKey::new(name, Surface::Tool)
}

/// Runs `body` on a fresh [`runtime`] with a fresh [`executor`] and the tool session `name`.
pub(crate) fn with_session(name: &str, body: impl AsyncFnOnce(ShellExecutor, SessionKey)) {
    runtime().block_on(body(executor(), session(name)));
}

/// A bash request of `session` with the default limits and a 20 s timeout.
pub(crate) fn request(command: &str, session: &SessionKey) -> ExecRequest {
    let mut request = ExecRequest::new(
        command,
        std::env::temp_dir(),
        Duration::from_secs(20),
        session.clone(),
    );
    request.shell = ShellSpec::from_path(agentsh_test_support::which("bash").expect("bash"));
    request
}

/// Runs `command` with a default sink and returns the result (panics on an `ExecError`).
pub(crate) async fn run(exec: &ShellExecutor, session: &SessionKey, command: &str) -> BashResult {
    run_req(exec, request(command, session)).await
}

pub(crate) async fn run_req(exec: &ShellExecutor, request: ExecRequest) -> BashResult {
    let mut sink = OutputSink::new(SinkOptions::default());
    exec.execute(request, &mut sink, None)
        .await
        .expect("the command runs")
}

/// Runs `command` under the session limits `limits`.
pub(crate) async fn run_limited(
    exec: &ShellExecutor,
    session: &SessionKey,
    limits: ShellLimits,
    command: &str,
) -> BashResult {
    let mut request = request(command, session);
    request.limits = limits;
    run_req(exec, request).await
}

pub(crate) fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
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
pub(crate) fn unique(base: &str) -> String {
    format!("{base}{:07}", std::process::id() % 10_000_000)
}

pub(crate) fn is_alive(pid: u32) -> bool {
    agentsh_process::process_info(pid).is_some_and(|p| !p.is_exited())
}

const ISOLATED_ENV: &str = "AGENTSH_EXECUTOR_UNIT_TEST_ISOLATED";

/// For tests that measure the whole process (open descriptors): re-runs the test `name`
/// alone in a fresh process of this test binary and checks that it passed there. Returns true
/// in that fresh process (the caller then does the work), false in the parent.
pub(crate) fn in_own_process(name: &str) -> bool {
    if std::env::var_os(ISOLATED_ENV).is_some() {
        return true;
    }
    let output = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(ISOLATED_ENV, "1")
        .output()
        .expect("the test binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "{name} failed in its own process:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    false
}
