//! `CONNECT` tunnels, and the checks every destination goes through.

use std::io::{Read, Write};
use std::time::Duration;

use crate::support::{
    HttpServer, curl, echo_server, forbidden, harness, have, read_all, read_head, status_response,
    stream_server, wait_for,
};

const ESTABLISHED: &str = "HTTP/1.1 200 Connection established\r\n\r\n";

#[test]
fn a_tunnel_carries_bytes_both_ways_including_pipelined_ones() {
    let echo = echo_server("127.0.0.1");
    let proxy = harness(&["tls.test", "127.0.0.1"], "tls.test=127.0.0.1");
    let mut client = proxy.client();
    // The head and the first bytes of the tunnel in one write.
    let request = format!(
        "CONNECT tls.test:{} HTTP/1.1\r\nHost: tls.test\r\n\r\n\x16\x03\x01hello",
        echo.port()
    );
    client.write_all(request.as_bytes()).expect("sent");
    assert_eq!(read_head(&mut client), ESTABLISHED);
    let mut echoed = [0; 8];
    client
        .read_exact(&mut echoed)
        .expect("the early bytes come back");
    assert_eq!(&echoed, b"\x16\x03\x01hello");
    client.write_all(b" and more").expect("sent");
    let mut more = [0; 9];
    client.read_exact(&mut more).expect("echoed");
    assert_eq!(&more, b" and more");
    client
        .shutdown(std::net::Shutdown::Write)
        .expect("half close");
    assert_eq!(
        read_all(&mut client),
        "",
        "the half close reaches the far side and back"
    );
    proxy.settle();
}

#[test]
fn unlisted_hosts_are_refused_and_listed_ones_pass() {
    let echo = echo_server("127.0.0.1");
    let port = echo.port();
    let proxy = harness(
        &["pypi.test", "127.0.0.1"],
        "pypi.test=127.0.0.1,evil.test=127.0.0.1",
    );
    let list = "pypi.test, 127.0.0.1";
    let connect =
        |host: &str| proxy.exchange(format!("CONNECT {host}:{port} HTTP/1.1\r\n\r\n").as_bytes());
    let tunnel = |host: &str| {
        let mut client = proxy.client();
        client
            .write_all(format!("CONNECT {host}:{port} HTTP/1.1\r\n\r\nping").as_bytes())
            .expect("sent");
        let head = read_head(&mut client);
        let mut ping = [0; 4];
        client.read_exact(&mut ping).expect("echoed");
        (head, ping)
    };
    // Positive controls: the listed name and the listed address.
    assert_eq!(tunnel("pypi.test"), (ESTABLISHED.to_owned(), *b"ping"));
    assert_eq!(tunnel("PyPI.Test."), (ESTABLISHED.to_owned(), *b"ping"));
    assert_eq!(tunnel("127.0.0.1"), (ESTABLISHED.to_owned(), *b"ping"));
    assert_eq!(
        tunnel("[::ffff:127.0.0.1]"),
        (ESTABLISHED.to_owned(), *b"ping")
    );
    // An unlisted name (that would resolve), unlisted and non-canonical addresses.
    let cases = [
        ("evil.test", "evil.test"),
        ("EVIL.test", "evil.test"),
        ("127.0.0.2", "127.0.0.2"),
        ("127.1", "127.1"),
        ("2130706433", "2130706433"),
        ("0x7f.0.0.1", "0x7f.0.0.1"),
        ("0177.0.0.1", "0177.0.0.1"),
        ("[::1]", "[::1]"),
    ];
    for (host, shown) in cases {
        let shown = format!("{shown}:{port}");
        assert_eq!(connect(host), forbidden(&shown, list), "{host}");
    }
}

#[test]
fn an_unlisted_address_is_refused_even_with_a_server_on_it() {
    let listed = echo_server("127.0.0.1");
    let unlisted = echo_server("127.0.0.2");
    let proxy = harness(&["127.0.0.1"], "");
    let request = |addr: std::net::SocketAddr| {
        let mut client = proxy.client();
        client
            .write_all(format!("CONNECT {addr} HTTP/1.1\r\n\r\n").as_bytes())
            .expect("sent");
        client
    };
    let mut allowed = request(listed);
    assert_eq!(read_head(&mut allowed), ESTABLISHED);
    let mut refused = request(unlisted);
    assert_eq!(
        read_all(&mut refused),
        forbidden(&unlisted.to_string(), "127.0.0.1")
    );
}

#[test]
fn a_name_resolving_to_loopback_needs_loopback_listed() {
    let echo = echo_server("127.0.0.1");
    let port = echo.port();
    let request = format!("CONNECT pypi.test:{port} HTTP/1.1\r\n\r\n");
    let refused = harness(&["pypi.test"], "pypi.test=127.0.0.1");
    let mark = refused.link.mark();
    assert_eq!(
        refused.exchange(request.as_bytes()),
        status_response(
            "403 Forbidden",
            "agentsh sandbox: pypi.test resolves to 127.0.0.1, which is not listed"
        )
    );
    assert_eq!(
        refused.link.refused_since(mark),
        [format!("pypi.test:{port}")]
    );
    // A listed address on another port does not count for this one.
    let other_port = harness(&["pypi.test", "127.0.0.1:1"], "pypi.test=127.0.0.1");
    assert!(
        other_port
            .exchange(request.as_bytes())
            .starts_with("HTTP/1.1 403 Forbidden\r\n")
    );
    // The metadata address, even among others: the first dropped one is named.
    let metadata = harness(
        &["meta.test"],
        "meta.test=169.254.169.254,meta.test=10.0.0.1",
    );
    assert_eq!(
        metadata.exchange(b"CONNECT meta.test:80 HTTP/1.1\r\n\r\n"),
        status_response(
            "403 Forbidden",
            "agentsh sandbox: meta.test resolves to 169.254.169.254, which is not listed"
        )
    );
    // Positive control: with 127.0.0.1 listed, the same name connects; a special address
    // among the answers is skipped for the one that is listed.
    let allowed = harness(
        &["pypi.test", "127.0.0.1"],
        "pypi.test=10.9.9.9,pypi.test=127.0.0.1",
    );
    let mut client = allowed.client();
    client.write_all(request.as_bytes()).expect("sent");
    assert_eq!(read_head(&mut client), ESTABLISHED);
}

#[test]
fn ipv6_destinations_are_bracketed() {
    let echo = echo_server("::1");
    let port = echo.port();
    let proxy = harness(&["[::1]", "v6.test"], "v6.test=::1");
    let mut client = proxy.client();
    client
        .write_all(format!("CONNECT [::1]:{port} HTTP/1.1\r\n\r\nv6").as_bytes())
        .expect("sent");
    assert_eq!(read_head(&mut client), ESTABLISHED);
    let mut echoed = [0; 2];
    client.read_exact(&mut echoed).expect("echoed");
    assert_eq!(&echoed, b"v6");
    let mut by_name = proxy.client();
    by_name
        .write_all(format!("CONNECT v6.test:{port} HTTP/1.1\r\n\r\n").as_bytes())
        .expect("sent");
    assert_eq!(read_head(&mut by_name), ESTABLISHED);
    let list = "[::1], v6.test";
    assert_eq!(
        proxy.exchange(format!("CONNECT [::2]:{port} HTTP/1.1\r\n\r\n").as_bytes()),
        forbidden(&format!("[::2]:{port}"), list)
    );
    let mark = 0;
    assert_eq!(proxy.link.refused_since(mark), [format!("[::2]:{port}")]);
}

#[test]
fn resolution_and_connection_failures_are_bad_gateways() {
    let proxy = harness(&["gone.test", "127.0.0.1"], "");
    let mark = proxy.link.mark();
    assert_eq!(
        proxy.exchange(b"CONNECT gone.test:443 HTTP/1.1\r\n\r\n"),
        status_response(
            "502 Bad Gateway",
            "agentsh sandbox: cannot resolve gone.test"
        )
    );
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = closed.local_addr().expect("addr").port();
    drop(closed);
    assert_eq!(
        proxy.exchange(format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n").as_bytes()),
        status_response(
            "502 Bad Gateway",
            &format!(
                "agentsh sandbox: cannot connect to 127.0.0.1:{port}: Connection refused (os error 111)"
            )
        )
    );
    assert!(
        proxy.link.refused_since(mark).is_empty(),
        "failures are not refusals"
    );
}

#[test]
fn curl_tunnels_through_connect() {
    if !have("curl") {
        return;
    }
    let server = HttpServer::start("127.0.0.1");
    let proxy = harness(&["pypi.test", "127.0.0.1"], "pypi.test=127.0.0.1");
    let via = format!("http://127.0.0.1:{}", proxy.port);
    let url = format!("http://pypi.test:{}/tunnelled", server.port);
    let (code, out) = curl(&["--proxytunnel", "--proxy", &via, &url]);
    assert_eq!(
        (code, out),
        (
            0,
            format!("GET /tunnelled host=pypi.test:{} body=", server.port)
        )
    );
    let denied = format!("http://evil.test:{}/", server.port);
    let (code, _) = curl(&["--proxytunnel", "--proxy", &via, &denied]);
    assert_eq!(code, 56, "curl fails on the refused CONNECT");
}

#[test]
fn a_far_server_closing_mid_transfer_ends_the_tunnel() {
    let (port, ended) = stream_server(Some(3 * 1024 * 1024 + 17));
    let proxy = harness(&["127.0.0.1"], "");
    let mut client = proxy.client();
    client
        .write_all(format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n").as_bytes())
        .expect("sent");
    assert_eq!(read_head(&mut client), ESTABLISHED);
    let mut received = Vec::new();
    client.read_to_end(&mut received).expect("the stream ends");
    assert_eq!(received.len(), 3 * 1024 * 1024 + 17);
    assert_eq!(*ended.lock().expect("count"), 1);
    drop(client);
    proxy.settle();
}

#[test]
fn a_client_closing_mid_transfer_ends_the_tunnel() {
    let (port, ended) = stream_server(None);
    let proxy = harness(&["127.0.0.1"], "");
    for _ in 0..3 {
        let mut client = proxy.client();
        client
            .write_all(format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n").as_bytes())
            .expect("sent");
        assert_eq!(read_head(&mut client), ESTABLISHED);
        let mut some = vec![0; 1024 * 1024];
        client
            .read_exact(&mut some)
            .expect("the endless stream flows");
        drop(client);
    }
    // The proxy drops both sides, so the endless server's writes fail and it stops.
    wait_for(
        || *ended.lock().expect("count") == 3,
        "the far server to see the close",
    );
    proxy.settle();
}

#[test]
fn two_hundred_parallel_tunnels_all_work() {
    let echo = echo_server("127.0.0.1");
    let proxy = harness(&["echo.test", "127.0.0.1"], "echo.test=127.0.0.1");
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..200)
            .map(|i| {
                let proxy = &proxy;
                scope.spawn(move || {
                    let mut client = proxy.client();
                    let request = format!("CONNECT echo.test:{} HTTP/1.1\r\n\r\n", echo.port());
                    client.write_all(request.as_bytes()).expect("sent");
                    assert_eq!(read_head(&mut client), ESTABLISHED);
                    let payload = format!("payload {i} ").repeat(1000);
                    client.write_all(payload.as_bytes()).expect("sent");
                    let mut back = vec![0; payload.len()];
                    client.read_exact(&mut back).expect("echoed");
                    assert_eq!(back, payload.as_bytes());
                })
            })
            .collect();
        for handle in handles {
            handle.join().expect("a client thread");
        }
    });
    proxy.settle();
    std::thread::sleep(Duration::from_millis(10));
}
