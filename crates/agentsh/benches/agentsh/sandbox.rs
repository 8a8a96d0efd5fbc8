//! The sandbox's cost (issue 16): a `true` round trip over `agentsh rpc` with
//! `[sandbox] mode = "workspace-write"` (network off) against the same server without a
//! sandbox, warm (goal ≤ 1.1×: confinement is set once per shell, not per command), and the
//! first call of a fresh server, which starts (and confines) its shell.

use std::path::Path;
use std::time::Duration;

use agentsh_bench_support::{Row, median};

use super::{AGENTSH, BENCH, Env, Paired, RPC_BLOCK, RpcServer, paired};

/// Fresh servers per side for the first-call row.
const FIRST_CALLS: usize = 10;

/// Writes the sandboxed config next to the environment's own and returns its path.
fn sandboxed_config(env: &Env) -> std::path::PathBuf {
    let path = env.root.join("sandboxed.toml");
    let plain = std::fs::read_to_string(env.root.join("agentsh.toml")).expect("config");
    std::fs::write(
        &path,
        format!("{plain}[sandbox]\nmode = \"workspace-write\"\nnetwork = false\n"),
    )
    .expect("sandboxed config");
    path
}

/// The rows; `calls` warm calls per side.
pub fn rows(env: &Env, calls: usize) {
    let config = sandboxed_config(env);
    let config = config.to_str().expect("a UTF-8 temp path");
    let sandboxed_args = ["rpc", "--config", config];

    let mut sandboxed = RpcServer::start_with(env, Path::new(AGENTSH), &sandboxed_args, true);
    let mut plain = RpcServer::start_with(env, Path::new(AGENTSH), &["rpc"], true);
    // What is measured is a sandbox: a write outside the roots (the environment is the cwd)
    // fails there, not here.
    let check = std::env::temp_dir().join(format!("agentsh-sandbox-check-{}", std::process::id()));
    let outside = format!("touch {}", check.display());
    let (denied, _) = sandboxed.bash(&outside);
    assert_ne!(denied["exitCode"], 0, "the sandbox is on: {denied}");
    assert_eq!(plain.bash(&outside).0["exitCode"], 0, "no sandbox");
    std::fs::remove_file(&check).expect("the plain server's file");
    paired(calls, RPC_BLOCK, || sandboxed.call(), || plain.call()).report(
        format!("rpc `true` round trip, sandbox on vs off, warm (median of {calls})"),
        "the same server without a sandbox",
        3,
        1.10,
    );
    sandboxed.stop();
    plain.stop();

    // A fresh server's first call starts its shell (the rc snapshot is cached by then).
    let first = |args: &[&str]| -> Duration {
        let mut server = RpcServer::start_with(env, Path::new(AGENTSH), args, false);
        let took = server.call();
        server.stop();
        took
    };
    let (mut on, mut off) = (Vec::new(), Vec::new());
    for _ in 0..FIRST_CALLS {
        on.push(first(&sandboxed_args));
        off.push(first(&["rpc"]));
    }
    let timings = Paired {
        subject: median(&on),
        baseline: median(&off),
    };
    Row::new(
        BENCH,
        format!("rpc first `true` of a fresh server (shell start), sandbox on vs off (median of {FIRST_CALLS})"),
    )
    .value(timings.subject.as_secs_f64() * 1e3, "ms")
    .ratio(
        timings.ratio(),
        format!(
            "the same without a sandbox, {:.1} ms",
            timings.baseline.as_secs_f64() * 1e3
        ),
    )
    .report();
}
