//! Faults through the proxy: a far server that closes mid-transfer, a client that gives up
//! mid-transfer, 200 connections at once — no hang, no descriptor left in agentsh, and the
//! session's next call works.

use std::time::{Duration, Instant};

use super::servers::Route;
use super::{HELLO, LISTED, bash, output, session};
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
    let (_env, server, mut rpc) = session(LISTED);
    let port = server.port();
    server.route(
        "/truncated",
        Route::Truncated {
            claimed: 10_000_000,
            sent: 100_000,
        },
    );
    server.route("/slow", Route::Slow { total: 50 << 20 });
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

    // The client gives up mid-transfer (the server keeps sending). The second curl's own
    // complaint (23, the pipe closed) goes to /dev/null: curl writes it in pieces, which can
    // land on either side of wc's count in the merged output.
    let data = bash(
        &mut rpc,
        "client",
        &format!(
            "curl -sS --max-time 1 -o /dev/null {}; curl -sS {} 2>/dev/null | head -c 1000 | wc -c",
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

    // 1,000 connections opened and dropped at once, some after half a request.
    let data = bash(
        &mut rpc,
        "churn",
        r#"python3 - <<'EOF'
import os, socket
port = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])
for i in range(1000):
    s = socket.create_connection(("127.0.0.1", port))
    if i % 2:
        s.sendall(b"GET http://web.test/")
    s.close()
print("churned")
EOF"#,
    );
    assert_eq!(
        output(&data),
        "churned
",
        "{data}"
    );

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

/// Bad input through the real binary's proxy: a malformed head (400), a head over 64 KiB
/// (431), a SOCKS5 greeting without an acceptable method (`05 FF`), and a client that sends
/// nothing (dropped after 30 s); the session's next call works.
#[test]
fn bad_input_gets_a_clear_refusal_and_a_silent_client_is_dropped() {
    let (_env, server, mut rpc) = session(LISTED);
    let port = server.port();
    let script = r#"python3 - <<'EOF'
import os, socket, time
port = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])
def ask(data):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(data)
    answer = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        answer += chunk
    return answer
print(ask(b"NOT A REQUEST\r\n\r\n").split(b"\r\n")[0].decode())
print(ask(b"GET http://web.test/ HTTP/1.1\r\nX-Long: " + b"a" * 70000 + b"\r\n\r\n").split(b"\r\n")[0].decode())
print(ask(b"\x05\x01\x02").hex())
start = time.monotonic()
print("silent", ask(b""), round(time.monotonic() - start))
EOF"#;
    let data = bash(&mut rpc, "bad", script);
    let out = output(&data);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.first(), Some(&"HTTP/1.1 400 Bad Request"), "{data}");
    assert_eq!(
        lines.get(1),
        Some(&"HTTP/1.1 431 Request Header Fields Too Large"),
        "{data}"
    );
    assert_eq!(lines.get(2), Some(&"05ff"), "{data}");
    let silent: Vec<&str> = lines.get(3).unwrap_or(&"").split(' ').collect();
    assert_eq!(silent.get(..2), Some(&["silent", "b''"][..]), "{data}");
    let waited: u64 = silent.get(2).and_then(|s| s.parse().ok()).expect("seconds");
    // Dropped at 30 s (a generous bound above: the machine may be slow, not the proxy).
    assert!(
        (29..=45).contains(&waited),
        "dropped after {waited} s: {data}"
    );
    let data = bash(
        &mut rpc,
        "after",
        &format!("curl -sS http://web.test:{port}/hello.txt"),
    );
    assert_eq!(output(&data), HELLO, "{data}");
    rpc.close(LIVENESS);
}
