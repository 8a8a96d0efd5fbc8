//! The network allowlist's cost (issue 28), side by side in one run: a download by curl in a
//! sandbox whose list names the host (through the session's proxy) against the same download
//! with `network = true` (direct), goal ≥ 0.8× the direct throughput; and a connection's
//! set-up through the proxy (connect, `CONNECT`, `200`) against a direct connect, the
//! medians of 500 each, goal ≤ 1 ms more.

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

use agentsh_bench_support::{Row, median};
use serde_json::Value;

use super::{AGENTSH, BENCH, Env, RpcServer};

/// Downloads per side, alternating.
const ROUNDS: usize = 5;
/// Connections per side for the set-up row.
const CONNECTS: usize = 500;

/// A loopback server answering every request with `size` bytes (from memory), and every other
/// connection (one that sends no request line) by closing.
fn download_server(size: u64) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    std::thread::spawn(move || {
        let block = vec![b'x'; 1 << 20];
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            let block = block.clone();
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    match stream.read(&mut byte) {
                        Ok(1) => head.push(byte[0]),
                        _ => return,
                    }
                }
                let _ = stream.write_all(
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {size}\r\nConnection: close\r\n\r\n"
                    )
                    .as_bytes(),
                );
                let mut left = size;
                while left > 0 {
                    let n = left.min(block.len() as u64);
                    if stream.write_all(&block[..n as usize]).is_err() {
                        return;
                    }
                    left -= n;
                }
            });
        }
    });
    port
}

/// An `agentsh rpc` server with `sandbox` (TOML lines) added to the environment's config and
/// the test resolver naming `dl.test`.
fn server(env: &Env, name: &str, sandbox: &str) -> RpcServer {
    let path = env.root.join(format!("{name}.toml"));
    let plain = std::fs::read_to_string(env.root.join("agentsh.toml")).expect("config");
    std::fs::write(
        &path,
        format!("{plain}[sandbox]\nmode = \"workspace-write\"\n{sandbox}"),
    )
    .expect("network config");
    let config = path.to_str().expect("a UTF-8 temp path");
    let mut command = env.binary(Path::new(AGENTSH), &["rpc", "--config", config]);
    command.env("AGENTSH_TEST_RESOLVE", "dl.test=127.0.0.1");
    let mut server = RpcServer::spawn(command);
    server.call();
    server
}

fn output(data: &Value) -> &str {
    data["output"].as_str().unwrap_or_default()
}

/// The set-up script: `connects` connections, each timed from `connect` to the first byte of
/// the answer (`CONNECT`'s `200` through the proxy; the server's close, direct); prints the
/// median in microseconds.
fn setup_script(port: u16, through_proxy: bool, connects: usize) -> String {
    let (address, request) = if through_proxy {
        (
            "('127.0.0.1', int(os.environ['HTTP_PROXY'].rsplit(':', 1)[1]))".to_owned(),
            format!("b'CONNECT dl.test:{port} HTTP/1.1\\r\\nHost: dl.test:{port}\\r\\n\\r\\n'"),
        )
    } else {
        (format!("('127.0.0.1', {port})"), "b''".to_owned())
    };
    format!(
        r#"python3 - <<'EOF'
import os, socket, statistics, time
times = []
for _ in range({connects}):
    start = time.perf_counter_ns()
    s = socket.create_connection({address})
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    request = {request}
    if request:
        s.sendall(request)
        answer = s.recv(64)
        assert answer.startswith(b"HTTP/1.1 200"), answer
    times.append(time.perf_counter_ns() - start)
    s.close()
print(statistics.median(times) / 1000)
EOF"#
    )
}

/// The rows.
pub fn rows(env: &Env, download_bytes: u64) {
    let port = download_server(download_bytes);
    let mut proxied = server(env, "allowlist", "network = [\"dl.test\", \"127.0.0.1\"]\n");
    let mut direct = server(env, "network-on", "network = true\n");
    let curl = |url: &str, extra: &str| {
        format!("curl -sS {extra} -o /dev/null -w '%{{size_download}}' {url}")
    };
    // Through a CONNECT tunnel, the way every HTTPS download goes.
    let through = curl(&format!("http://dl.test:{port}/big"), "--proxytunnel");
    let straight = curl(&format!("http://127.0.0.1:{port}/big"), "--noproxy '*'");
    // What is measured is the proxy: the allowlist server's curl goes through it (the direct
    // address is out of its namespace), the other's does not.
    let (data, _) = proxied.bash(&straight);
    assert_ne!(
        data["exitCode"], 0,
        "the sandbox reached the server directly: {data}"
    );
    let (mut via, mut plain) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let (data, took) = proxied.bash(&through);
        assert_eq!(output(&data), download_bytes.to_string(), "{data}");
        via.push(took);
        let (data, took) = direct.bash(&straight);
        assert_eq!(output(&data), download_bytes.to_string(), "{data}");
        plain.push(took);
    }
    let mb = download_bytes as f64 / 1e6;
    let rate = |d: Duration| mb / d.as_secs_f64();
    let (via_rate, plain_rate) = (rate(median(&via)), rate(median(&plain)));
    let ratio = via_rate / plain_rate;
    Row::new(
        BENCH,
        format!(
            "curl download of {mb:.0} MB through the allowlist proxy (CONNECT) vs network = true (median of {ROUNDS})"
        ),
    )
    .value(via_rate, "MB/s")
    .ratio(ratio, format!("network = true, {plain_rate:.0} MB/s"))
    .goal("≥ 0.80×", ratio >= 0.8)
    .report();

    let median_us = |server: &mut RpcServer, through_proxy: bool| -> f64 {
        let (data, _) = server.bash(&setup_script(port, through_proxy, CONNECTS));
        output(&data)
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("a median: {data}"))
    };
    let via_us = median_us(&mut proxied, true);
    let plain_us = median_us(&mut direct, false);
    let extra_ms = (via_us - plain_us) / 1e3;
    Row::new(
        BENCH,
        format!("connection set-up through the proxy minus direct (median of {CONNECTS})"),
    )
    .value(extra_ms, "ms")
    .ratio(
        via_us / plain_us,
        format!("direct, {:.3} ms", plain_us / 1e3),
    )
    .goal("≤ 1 ms", extra_ms <= 1.0)
    .report();
    proxied.stop();
    direct.stop();
}
