//! Timeouts, links, shutdown, and what is left once connections are gone.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use agentsh_net_proxy::Proxy;

use crate::support::{
    HttpServer, attach, client, config, echo_server, forbidden, harness, harness_with, read_all,
    read_head, read_response, wait_for,
};

const ESTABLISHED: &str = "HTTP/1.1 200 Connection established\r\n\r\n";

#[test]
fn a_silent_client_is_dropped_after_the_head_timeout() {
    let echo = echo_server("127.0.0.1");
    let mut settings = config(&["127.0.0.1"], "");
    settings.head_timeout = Duration::from_millis(300);
    let proxy = harness_with(settings);
    let cases: [(&[u8], &str); 4] = [
        (b"", ""),
        (b"CONNECT 127.0.0.1:1 HTTP/1.1\r\n", ""),
        (b"\x05", ""),
        // A whole greeting (answered) and a part of a request.
        (b"\x05\x01\x00\x05\x01", "\x05\x00"),
    ];
    for (sent, answer) in cases {
        let start = Instant::now();
        let mut silent = proxy.client();
        silent.write_all(sent).expect("sent");
        assert_eq!(read_all(&mut silent), answer);
        let waited = start.elapsed();
        assert!(
            waited >= Duration::from_millis(250) && waited < Duration::from_secs(5),
            "{sent:?}: {waited:?}"
        );
    }
    // Positive control: a prompt client is served, and its tunnel outlives the head timeout.
    let mut prompt = proxy.client();
    prompt
        .write_all(format!("CONNECT {echo} HTTP/1.1\r\n\r\n").as_bytes())
        .expect("sent");
    assert_eq!(read_head(&mut prompt), ESTABLISHED);
    std::thread::sleep(Duration::from_millis(500));
    prompt.write_all(b"still").expect("sent");
    let mut back = [0; 5];
    prompt.read_exact(&mut back).expect("echoed");
    assert_eq!(&back, b"still");
}

#[test]
fn an_idle_kept_alive_connection_is_closed() {
    let server = HttpServer::start("127.0.0.1");
    let mut settings = config(&["127.0.0.1"], "");
    settings.idle_timeout = Duration::from_millis(300);
    let proxy = harness_with(settings);
    let mut client = proxy.client();
    let request = format!("GET http://127.0.0.1:{}/a HTTP/1.1\r\n\r\n", server.port);
    client.write_all(request.as_bytes()).expect("sent");
    let (_, body) = read_response(&mut client);
    assert_eq!(body, format!("GET /a host=127.0.0.1:{} body=", server.port));
    // A second request within the idle time is served (positive control)…
    std::thread::sleep(Duration::from_millis(100));
    client.write_all(request.as_bytes()).expect("sent");
    read_response(&mut client);
    // …and then, silent, the connection is closed.
    let start = Instant::now();
    assert_eq!(read_all(&mut client), "");
    assert!(
        start.elapsed() >= Duration::from_millis(250),
        "{:?}",
        start.elapsed()
    );
    proxy.settle();
}

#[test]
fn refusals_are_recorded_per_link_since_a_mark() {
    let proxy = harness(&["pypi.test", "127.0.0.1"], "pypi.test=127.0.0.1");
    let (other, other_port) = attach(&proxy.proxy);
    let list = "pypi.test, 127.0.0.1";
    let refuse = |port: u16, host: &str| {
        let mut stream = client(port);
        stream
            .write_all(format!("CONNECT {host}:443 HTTP/1.1\r\n\r\n").as_bytes())
            .expect("sent");
        assert_eq!(
            read_all(&mut stream),
            forbidden(&format!("{}:443", host.to_ascii_lowercase()), list)
        );
    };
    let start = proxy.link.mark();
    refuse(proxy.port, "before.test");
    let mark = proxy.link.mark();
    let other_mark = other.mark();
    refuse(proxy.port, "One.test");
    refuse(proxy.port, "two.test");
    refuse(proxy.port, "one.test");
    refuse(proxy.port, "before.test");
    refuse(other_port, "elsewhere.test");
    assert_eq!(
        proxy.link.refused_since(mark),
        ["one.test:443", "two.test:443", "before.test:443"]
    );
    assert_eq!(
        proxy.link.refused_since(start),
        ["before.test:443", "one.test:443", "two.test:443"]
    );
    assert_eq!(other.refused_since(other_mark), ["elsewhere.test:443"]);
    let later = proxy.link.mark();
    assert!(proxy.link.refused_since(later).is_empty());
    // Many distinct refusals stay bounded; the latest are kept.
    for i in 0..600 {
        refuse(other_port, &format!("h{i}.test"));
    }
    let all = other.refused_since(0);
    assert!(all.len() <= 600 && all.len() >= 100, "{}", all.len());
    assert_eq!(all.last().map(String::as_str), Some("h599.test:443"));
}

#[test]
fn a_dropped_link_stops_accepting_but_its_connections_go_on() {
    let echo = echo_server("127.0.0.1");
    let proxy = harness(&["127.0.0.1"], "");
    let (link, port) = attach(&proxy.proxy);
    let mut open = client(port);
    open.write_all(format!("CONNECT {echo} HTTP/1.1\r\n\r\n").as_bytes())
        .expect("sent");
    assert_eq!(read_head(&mut open), ESTABLISHED);
    drop(link);
    // New connections fail, or are closed without an answer.
    wait_for(
        || match std::net::TcpStream::connect(("127.0.0.1", port)) {
            Err(_) => true,
            Ok(mut late) => {
                let _ = late.set_read_timeout(Some(Duration::from_secs(5)));
                let _ = late.write_all(format!("CONNECT {echo} HTTP/1.1\r\n\r\n").as_bytes());
                let mut answer = Vec::new();
                match late.read_to_end(&mut answer) {
                    Ok(_) => answer.is_empty(),
                    Err(err) => err.kind() != std::io::ErrorKind::WouldBlock,
                }
            }
        },
        "the dropped link's listener to close",
    );
    // The connection accepted before goes on.
    open.write_all(b"on").expect("sent");
    let mut back = [0; 2];
    open.read_exact(&mut back).expect("echoed");
    assert_eq!(&back, b"on");
    // The proxy's other link still serves (positive control).
    let mut still = proxy.client();
    still
        .write_all(format!("CONNECT {echo} HTTP/1.1\r\n\r\n").as_bytes())
        .expect("sent");
    assert_eq!(read_head(&mut still), ESTABLISHED);
}

#[test]
fn shutdown_ends_every_connection() {
    let echo = echo_server("127.0.0.1");
    let proxy = harness(&["127.0.0.1"], "");
    let mut open = proxy.client();
    open.write_all(format!("CONNECT {echo} HTTP/1.1\r\n\r\n").as_bytes())
        .expect("sent");
    assert_eq!(read_head(&mut open), ESTABLISHED);
    let mut idle = proxy.client();
    wait_for(|| proxy.proxy.open_connections() == 2, "two connections");
    proxy.proxy.shutdown();
    let mut rest = Vec::new();
    let open_end = open.read_to_end(&mut rest).map_err(|e| e.kind());
    let idle_end = idle.read_to_end(&mut rest).map_err(|e| e.kind());
    assert_eq!((open_end, idle_end), (Ok(0), Ok(0)));
    proxy.settle();
}

#[test]
fn dropping_the_proxy_and_its_links_ends_every_connection() {
    let echo = echo_server("127.0.0.1");
    let runtime = agentsh_test_support::runtime();
    let proxy = Proxy::new(config(&["127.0.0.1"], ""), runtime.handle().clone());
    let (link, port) = attach(&proxy);
    let mut open = client(port);
    open.write_all(format!("CONNECT {echo} HTTP/1.1\r\n\r\n").as_bytes())
        .expect("sent");
    assert_eq!(read_head(&mut open), ESTABLISHED);
    let watcher = proxy.clone();
    drop(proxy);
    // A clone is still alive: the connection goes on.
    open.write_all(b"x").expect("sent");
    let mut back = [0; 1];
    open.read_exact(&mut back).expect("echoed");
    drop(watcher);
    // The link still holds the proxy: still on.
    open.write_all(b"y").expect("sent");
    open.read_exact(&mut back).expect("echoed");
    drop(link);
    assert_eq!(read_all(&mut open), "");
}

#[test]
fn a_thousand_connections_leave_no_descriptor_behind() {
    // Alone in a process of its own: other tests' sockets would blur the count.
    if agentsh_test_support::rerun_with_env(
        "lifecycle::a_thousand_connections_leave_no_descriptor_behind",
        "AGENTSH_NET_PROXY_FD_TEST",
    ) {
        return;
    }
    let echo = echo_server("127.0.0.1");
    let server = HttpServer::start("127.0.0.1");
    let proxy = harness(&["127.0.0.1", "pypi.test"], "pypi.test=127.0.0.1");
    // One of each kind first, so that lazily opened descriptors are in the baseline.
    let kinds = |i: usize| {
        let mut stream = proxy.client();
        match i % 5 {
            0 => {}
            1 => {
                stream
                    .write_all(format!("CONNECT {echo} HTTP/1.1\r\n\r\nx").as_bytes())
                    .expect("sent");
                let mut head = [0; ESTABLISHED.len() + 1];
                stream.read_exact(&mut head).expect("answered");
            }
            2 => {
                let request = format!("GET http://pypi.test:{}/ HTTP/1.1\r\n\r\n", server.port);
                stream.write_all(request.as_bytes()).expect("sent");
                read_response(&mut stream);
            }
            3 => {
                stream
                    .write_all(b"CONNECT evil.test:443 HTTP/1.1\r\n\r\n")
                    .expect("sent");
                read_all(&mut stream);
            }
            _ => stream
                .write_all(b"GET http://127.0.0.1:1/ HT")
                .expect("sent"),
        }
    };
    for i in 0..5 {
        kinds(i);
    }
    proxy.settle();
    std::thread::sleep(Duration::from_millis(200));
    let before = agentsh_test_support::open_fds();
    for i in 0..1000 {
        kinds(i);
    }
    proxy.settle();
    let mut after = agentsh_test_support::open_fds();
    let start = Instant::now();
    while after > before && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
        after = agentsh_test_support::open_fds();
    }
    assert!(
        after <= before,
        "descriptors: {before} before, {after} after"
    );
    assert_eq!(proxy.proxy.open_connections(), 0);
}
