//! SOCKS5 on the same port.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpStream};

use crate::support::{HttpServer, curl, echo_server, harness, have, read_all};

/// Greets without authentication and checks the method chosen.
fn greet(client: &mut TcpStream) {
    client.write_all(&[5, 1, 0]).expect("greeting sent");
    let mut chosen = [0; 2];
    client.read_exact(&mut chosen).expect("a method");
    assert_eq!(chosen, [5, 0]);
}

/// A request for `command` to a name.
fn by_name(command: u8, name: &str, port: u16) -> Vec<u8> {
    let mut request = vec![5, command, 0, 3, u8::try_from(name.len()).expect("short")];
    request.extend_from_slice(name.as_bytes());
    request.extend_from_slice(&port.to_be_bytes());
    request
}

/// A request for `command` to an IPv4 address.
fn by_address(command: u8, ip: Ipv4Addr, port: u16) -> Vec<u8> {
    let mut request = vec![5, command, 0, 1];
    request.extend_from_slice(&ip.octets());
    request.extend_from_slice(&port.to_be_bytes());
    request
}

/// The reply's code, after reading the whole reply.
fn reply(client: &mut TcpStream) -> u8 {
    let mut head = [0; 4];
    client.read_exact(&mut head).expect("a reply");
    assert_eq!(head[0], 5);
    let rest = match head[3] {
        1 => 6,
        4 => 18,
        other => panic!("address type {other}"),
    };
    let mut bound = vec![0; rest];
    client.read_exact(&mut bound).expect("the bound address");
    head[1]
}

#[test]
fn connect_by_name_and_address_with_refusals() {
    let echo = echo_server("127.0.0.1");
    let port = echo.port();
    let proxy = harness(
        &["echo.test", "127.0.0.1"],
        "echo.test=127.0.0.1,evil.test=127.0.0.1",
    );
    let mark = proxy.link.mark();
    let run = |request: Vec<u8>| {
        let mut client = proxy.client();
        greet(&mut client);
        client.write_all(&request).expect("request sent");
        let code = reply(&mut client);
        (code, client)
    };
    for request in [
        by_name(1, "echo.test", port),
        by_address(1, Ipv4Addr::LOCALHOST, port),
    ] {
        let (code, mut client) = run(request);
        assert_eq!(code, 0);
        client.write_all(b"socks").expect("sent");
        let mut back = [0; 5];
        client.read_exact(&mut back).expect("echoed");
        assert_eq!(&back, b"socks");
    }
    let refused = [
        by_name(1, "evil.test", port),
        by_name(1, "127.1", port),
        by_address(1, Ipv4Addr::new(127, 0, 0, 2), port),
    ];
    for request in refused {
        let (code, mut client) = run(request);
        assert_eq!(code, 2, "connection not allowed by ruleset");
        assert_eq!(read_all(&mut client), "", "then closed");
    }
    assert_eq!(
        proxy.link.refused_since(mark),
        [
            format!("evil.test:{port}"),
            format!("127.1:{port}"),
            format!("127.0.0.2:{port}")
        ]
    );
    let (code, _) = run(by_name(1, "gone.test", port));
    assert_eq!(code, 2, "not listed");
}

#[test]
fn ipv6_requests_are_served() {
    let echo = echo_server("::1");
    let proxy = harness(&["::1"], "");
    let mut client = proxy.client();
    greet(&mut client);
    let mut request = vec![5, 1, 0, 4];
    request.extend_from_slice(&std::net::Ipv6Addr::LOCALHOST.octets());
    request.extend_from_slice(&echo.port().to_be_bytes());
    client.write_all(&request).expect("sent");
    assert_eq!(reply(&mut client), 0);
}

#[test]
fn failures_have_their_reply_codes() {
    let proxy = harness(&["gone.test", "127.0.0.1"], "");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = closed.local_addr().expect("addr").port();
    drop(closed);
    let cases = [
        (by_name(1, "gone.test", 443), 4),
        (by_address(1, Ipv4Addr::LOCALHOST, port), 5),
        (by_address(2, Ipv4Addr::LOCALHOST, port), 7),
        (by_address(3, Ipv4Addr::LOCALHOST, port), 7),
        (vec![5, 1, 0, 9, 1, 2, 3, 4, 0, 80], 8),
    ];
    for (request, code) in cases {
        let mut client = proxy.client();
        greet(&mut client);
        client.write_all(&request).expect("sent");
        assert_eq!(reply(&mut client), code, "{request:?}");
    }
}

#[test]
fn a_greeting_without_no_auth_is_refused() {
    let proxy = harness(&["127.0.0.1"], "");
    let mut client = proxy.client();
    client.write_all(&[5, 2, 1, 2]).expect("greeting sent");
    let mut answer = Vec::new();
    client.read_to_end(&mut answer).expect("closed");
    assert_eq!(answer, [5, 0xff]);
    // Positive control: the same methods with "no authentication" among them.
    let mut client = proxy.client();
    client.write_all(&[5, 3, 1, 2, 0]).expect("greeting sent");
    let mut chosen = [0; 2];
    client.read_exact(&mut chosen).expect("a method");
    assert_eq!(chosen, [5, 0]);
}

#[test]
fn curl_socks5_hostname_goes_through() {
    if !have("curl") {
        return;
    }
    let server = HttpServer::start("127.0.0.1");
    let proxy = harness(&["pypi.test", "127.0.0.1"], "pypi.test=127.0.0.1");
    let via = format!("127.0.0.1:{}", proxy.port);
    let url = format!("http://pypi.test:{}/socks", server.port);
    let (code, out) = curl(&["--socks5-hostname", &via, &url]);
    assert_eq!(
        (code, out),
        (
            0,
            format!("GET /socks host=pypi.test:{} body=", server.port)
        )
    );
    let denied = format!("http://evil.test:{}/", server.port);
    let (code, out) = curl(&["--socks5-hostname", &via, &denied]);
    assert_eq!(
        (code, out.as_str()),
        (97, ""),
        "curl reports the refused SOCKS connect"
    );
    assert_eq!(
        proxy.link.refused_since(0),
        [format!("evil.test:{}", server.port)]
    );
}
