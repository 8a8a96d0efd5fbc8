//! Proxy benchmark, on loopback: a download through a `CONNECT` tunnel against the same
//! download direct, and the time a tunnel adds to setting up a connection, both measured with
//! their baselines in the same run.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use agentsh_bench_support::{Filter, Row, mb_per_s, median, quick};
use agentsh_net_proxy::{Allowlist, Proxy, ProxyConfig, Resolver};

/// Goal of the throughput row: at least this share of the direct speed.
const THROUGHPUT_GOAL: f64 = 0.8;
/// Goal of the set-up row, in milliseconds added.
const SETUP_GOAL_MS: f64 = 1.0;

fn main() {
    let filter = Filter::from_args();
    let (bytes, rounds, connections) = if quick() {
        (20_000_000, 1, 50)
    } else {
        (200_000_000, 3, 500)
    };
    let runtime = agentsh_test_support::runtime();
    let allowlist = Allowlist::parse(&["127.0.0.1".into()]).expect("the bench allowlist");
    let proxy = Proxy::new(
        ProxyConfig::new(allowlist, Resolver::system()),
        runtime.handle().clone(),
    );
    let listener = TcpListener::bind("127.0.0.1:0").expect("a proxy listener");
    let proxy_port = listener.local_addr().expect("its address").port();
    let _link = proxy.attach(listener);

    if filter.wants("proxy throughput") {
        let server = download_server(bytes);
        let relay = blocking_relay(server);
        let (mut direct, mut proxied, mut relayed) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            direct.push(download(server, None, bytes));
            proxied.push(download(server, Some(proxy_port), bytes));
            relayed.push(download(relay, None, bytes));
        }
        let direct = mb_per_s(bytes as u64, median(&direct));
        let proxied = mb_per_s(bytes as u64, median(&proxied));
        let relayed = mb_per_s(bytes as u64, median(&relayed));
        let ratio = proxied / direct;
        Row::new(
            "net-proxy",
            format!("{} MB download through a CONNECT tunnel", bytes / 1_000_000),
        )
        .value(proxied, "MB/s")
        .ratio(ratio, format!("direct on loopback ({direct:.0} MB/s)"))
        .goal(format!("≥ {THROUGHPUT_GOAL}×"), ratio >= THROUGHPUT_GOAL)
        .report();
        // What any relay that copies through user space gets on this machine: the ceiling of
        // the ratio when the copies, not the network, are the limit.
        println!(
            "  (a blocking relay thread with a 1 MiB buffer, same run: {relayed:.0} MB/s, {:.3}× \
             direct)",
            relayed / direct
        );
    }

    if filter.wants("proxy setup") {
        let server = first_byte_server();
        let direct: Vec<Duration> = (0..connections).map(|_| set_up(server, None)).collect();
        let proxied: Vec<Duration> = (0..connections)
            .map(|_| set_up(server, Some(proxy_port)))
            .collect();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let added = ms(median(&proxied)) - ms(median(&direct));
        Row::new(
            "net-proxy",
            format!("connection set-up added by the proxy (median of {connections})"),
        )
        .value(added, "ms")
        .ratio(
            ms(median(&proxied)) / ms(median(&direct)).max(f64::MIN_POSITIVE),
            format!(
                "direct connect + first byte ({:.3} ms)",
                ms(median(&direct))
            ),
        )
        .goal(format!("≤ {SETUP_GOAL_MS} ms"), added <= SETUP_GOAL_MS)
        .report();
    }
    proxy.shutdown();
}

/// A server that sends `bytes` bytes on each connection, then closes it.
fn download_server(bytes: usize) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a download listener");
    let port = listener.local_addr().expect("its address").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut stream = stream;
                let _ = stream.set_nodelay(true);
                let block = vec![0x5a; 1024 * 1024];
                let mut left = bytes;
                while left > 0 {
                    let n = left.min(block.len());
                    if stream.write_all(&block[..n]).is_err() {
                        return;
                    }
                    left -= n;
                }
            });
        }
    });
    port
}

/// A server that sends one byte on each connection, then closes it.
fn first_byte_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a first-byte listener");
    let port = listener.local_addr().expect("its address").port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let _ = stream.set_nodelay(true);
            let _ = stream.write_all(b"!");
        }
    });
    port
}

/// Connects to the server on `port`, through the proxy on `proxy` when given; returns the
/// stream once the tunnel is established.
fn open(port: u16, proxy: Option<u16>) -> TcpStream {
    let Some(proxy) = proxy else {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("the server accepts");
        stream.set_nodelay(true).expect("nodelay");
        return stream;
    };
    let mut stream = TcpStream::connect(("127.0.0.1", proxy)).expect("the proxy accepts");
    stream.set_nodelay(true).expect("nodelay");
    stream
        .write_all(format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n").as_bytes())
        .expect("CONNECT sent");
    let expected = b"HTTP/1.1 200 Connection established\r\n\r\n";
    let mut head = [0; 39];
    stream
        .read_exact(&mut head)
        .expect("the tunnel is established");
    assert_eq!(&head, expected);
    stream
}

/// The time to download `bytes` bytes.
fn download(port: u16, proxy: Option<u16>, bytes: usize) -> Duration {
    let start = Instant::now();
    let mut stream = open(port, proxy);
    let mut buf = vec![0; 256 * 1024];
    let mut got = 0;
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(err) => panic!("download failed after {got} bytes: {err}"),
        }
    }
    let elapsed = start.elapsed();
    assert_eq!(got, bytes, "the whole download arrived");
    elapsed
}

/// The time from connecting to the first byte of the server.
fn set_up(port: u16, proxy: Option<u16>) -> Duration {
    let start = Instant::now();
    let mut stream = open(port, proxy);
    let mut byte = [0];
    stream.read_exact(&mut byte).expect("the first byte");
    start.elapsed()
}

/// A plain relay for comparison: one blocking thread per connection copying the server's bytes
/// to the client through a 1 MiB buffer.
fn blocking_relay(port: u16) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a relay listener");
    let relay_port = listener.local_addr().expect("its address").port();
    std::thread::spawn(move || {
        for mut client in listener.incoming().flatten() {
            let Ok(mut server) = TcpStream::connect(("127.0.0.1", port)) else {
                continue;
            };
            std::thread::spawn(move || {
                let mut buf = vec![0; 1024 * 1024];
                while let Ok(n @ 1..) = server.read(&mut buf) {
                    if client.write_all(&buf[..n]).is_err() {
                        return;
                    }
                }
            });
        }
    });
    relay_port
}
