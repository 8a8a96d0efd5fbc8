//! Faults through the proxy: a far server that closes mid-transfer, a client that gives up
//! mid-transfer, 200 connections at once — no hang, no descriptor left in agentsh, and the
//! session's next call works.

use std::time::{Duration, Instant};

use super::servers::Route;
use super::{HELLO, LISTED, bash, env_with, output, rpc, web};
use crate::util::LIVENESS;

/// The descriptors agentsh `pid` holds.
fn descriptors(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("read agentsh's descriptors")
        .count()
}

/// Waits (a while) for agentsh's descriptors to come back to `baseline`; the count at the end.
fn settle(pid: u32, baseline: usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now = descriptors(pid);
        if now <= baseline || Instant::now() > deadline {
            return now;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn faults_leave_nothing_behind_and_the_session_goes_on() {
    let env = env_with(LISTED);
    let server = web();
    let port = server.port();
    server.route(
        "/truncated",
        Route::Truncated {
            claimed: 10_000_000,
            sent: 100_000,
        },
    );
    server.route("/slow", Route::Slow { total: 50 << 20 });
    let mut rpc = rpc(&env);
    let url = |path: &str| format!("http://web.test:{port}{path}");

    // Warm: the shell, its namespace and its link to the proxy exist.
    let data = bash(&mut rpc, "warm", &format!("curl -sS {}", url("/hello.txt")));
    assert_eq!(output(&data), HELLO, "{data}");
    let baseline = descriptors(rpc.pid());

    // The far server closes mid-transfer: curl says so (18, partial file).
    let data = bash(
        &mut rpc,
        "far",
        &format!("curl -sS -o /dev/null {}", url("/truncated")),
    );
    assert_eq!(data["exitCode"], 18, "{data}");

    // The client gives up mid-transfer (the server keeps sending).
    let data = bash(
        &mut rpc,
        "client",
        &format!(
            "curl -sS --max-time 1 -o /dev/null {}; curl -sS {} | head -c 1000 | wc -c",
            url("/slow"),
            url("/slow")
        ),
    );
    assert!(output(&data).lines().any(|line| line == "1000"), "{data}");

    // 200 connections at once through the one proxy.
    let data = bash(
        &mut rpc,
        "crowd",
        &format!(
            "for i in $(seq 200); do curl -sS -o /dev/null -w '%{{http_code}}\\n' {} & done; wait",
            url("/hello.txt")
        ),
    );
    let codes = output(&data);
    assert_eq!(codes.lines().filter(|l| *l == "200").count(), 200, "{data}");

    let left = settle(rpc.pid(), baseline);
    assert!(
        left <= baseline,
        "agentsh holds {left} descriptors, {baseline} before the faults"
    );
    let data = bash(
        &mut rpc,
        "after",
        &format!("curl -sS {}", url("/hello.txt")),
    );
    assert_eq!(output(&data), HELLO, "{data}");
    rpc.close(LIVENESS);
}
