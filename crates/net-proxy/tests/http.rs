//! Absolute `http://` requests: passed on in origin form, each request checked.

use std::io::{Read, Write};

use crate::support::{
    HttpServer, curl, forbidden, harness, have, read_all, read_response, status_response,
};

#[test]
fn an_allowed_request_goes_on_in_origin_form() {
    let server = HttpServer::start("127.0.0.1");
    let proxy = harness(&["pypi.test", "127.0.0.1"], "pypi.test=127.0.0.1");
    let mut client = proxy.client();
    let request = format!(
        "GET http://pypi.test:{}/simple/?q=1 HTTP/1.1\r\nHost: pypi.test:{0}\r\n\
         Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic eDp5\r\nAccept: */*\r\n\r\n",
        server.port
    );
    client.write_all(request.as_bytes()).expect("sent");
    let (head, body) = read_response(&mut client);
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert_eq!(
        body,
        format!("GET /simple/?q=1 host=pypi.test:{} body=", server.port)
    );
    assert_eq!(
        server.heads(),
        [format!(
            "GET /simple/?q=1 HTTP/1.1\r\nHost: pypi.test:{}\r\nAccept: */*\r\n\r\n",
            server.port
        )]
    );
}

#[test]
fn a_missing_host_header_is_added() {
    let server = HttpServer::start("127.0.0.1");
    let proxy = harness(&["127.0.0.1"], "");
    let mut client = proxy.client();
    let request = format!("GET http://127.0.0.1:{}/ HTTP/1.0\r\n\r\n", server.port);
    client.write_all(request.as_bytes()).expect("sent");
    let (_, body) = read_response(&mut client);
    assert_eq!(body, format!("GET / host=127.0.0.1:{} body=", server.port));
}

#[test]
fn a_second_request_to_an_unlisted_host_is_refused() {
    let server = HttpServer::start("127.0.0.1");
    let proxy = harness(
        &["pypi.test", "127.0.0.1"],
        "pypi.test=127.0.0.1,evil.test=127.0.0.1",
    );
    let mark = proxy.link.mark();
    let mut client = proxy.client();
    let first = format!(
        "GET http://pypi.test:{}/a HTTP/1.1\r\nHost: pypi.test\r\n\r\n",
        server.port
    );
    client.write_all(first.as_bytes()).expect("sent");
    let (head, body) = read_response(&mut client);
    assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
    assert_eq!(body, "GET /a host=pypi.test body=");
    // The same connection, kept alive: the next request names another host.
    let second = format!(
        "GET http://evil.test:{}/b HTTP/1.1\r\nHost: evil.test\r\n\r\n",
        server.port
    );
    client.write_all(second.as_bytes()).expect("sent");
    let expected = forbidden(
        &format!("evil.test:{}", server.port),
        "pypi.test, 127.0.0.1",
    );
    assert_eq!(read_all(&mut client), expected);
    assert_eq!(
        server.heads().len(),
        1,
        "the refused request never reached a server"
    );
    assert_eq!(
        proxy.link.refused_since(mark),
        [format!("evil.test:{}", server.port)]
    );
}

#[test]
fn kept_alive_requests_may_change_host() {
    let (one, two) = (
        HttpServer::start("127.0.0.1"),
        HttpServer::start("127.0.0.1"),
    );
    let proxy = harness(
        &["pypi.test", "other.test", "127.0.0.1"],
        "pypi.test=127.0.0.1,other.test=127.0.0.1",
    );
    let mut client = proxy.client();
    for (host, server, path) in [
        ("pypi.test", &one, "/1"),
        ("pypi.test", &one, "/2"),
        ("other.test", &two, "/3"),
        ("pypi.test", &one, "/4"),
    ] {
        let request = format!(
            "GET http://{host}:{}{path} HTTP/1.1\r\nHost: {host}\r\n\r\n",
            server.port
        );
        client.write_all(request.as_bytes()).expect("sent");
        let (_, body) = read_response(&mut client);
        assert_eq!(body, format!("GET {path} host={host} body="));
    }
    assert_eq!(one.heads().len(), 3);
    assert_eq!(two.heads().len(), 1);
}

#[test]
fn request_bodies_follow_their_framing() {
    let server = HttpServer::start("127.0.0.1");
    let proxy = harness(&["127.0.0.1"], "");
    let mut client = proxy.client();
    let url = format!("http://127.0.0.1:{}", server.port);
    // A length, then chunks with an extension and a trailer, then a length again: each body
    // ends exactly where it should, or the next request would be garbled.
    let requests = [
        format!("POST {url}/len HTTP/1.1\r\nContent-Length: 11\r\n\r\nhello world"),
        format!(
            "POST {url}/chunked HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n\
             5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Sum: 11\r\n\r\n"
        ),
        format!("PUT {url}/again HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"),
    ];
    let expected = [
        "POST /len host=127.0.0.1:PORT body=hello world",
        "POST /chunked host=127.0.0.1:PORT body=hello world[trailer X-Sum: 11]",
        "PUT /again host=127.0.0.1:PORT body=abc",
    ];
    // Sent in small pieces, so that bodies arrive in several reads.
    for (request, expected) in requests.iter().zip(expected) {
        for piece in request.as_bytes().chunks(7) {
            client.write_all(piece).expect("sent");
            client.flush().expect("flushed");
        }
        let (_, body) = read_response(&mut client);
        assert_eq!(body, expected.replace("PORT", &server.port.to_string()));
    }
    // All three, pipelined in one write.
    client
        .write_all(requests.concat().as_bytes())
        .expect("sent");
    for expected in expected {
        let (_, body) = read_response(&mut client);
        assert_eq!(body, expected.replace("PORT", &server.port.to_string()));
    }
}

#[test]
fn an_answer_without_length_ends_with_the_connection() {
    let server = HttpServer::start("127.0.0.1");
    let proxy = harness(&["127.0.0.1"], "");
    let request = format!(
        "GET http://127.0.0.1:{}/close HTTP/1.1\r\n\r\n",
        server.port
    );
    let answer = proxy.exchange(request.as_bytes());
    assert_eq!(
        answer,
        format!(
            "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nGET /close host=127.0.0.1:{} body=",
            server.port
        )
    );
    proxy.settle();
}

#[test]
fn requests_that_are_not_absolute_http_are_bad() {
    let proxy = harness(&["127.0.0.1"], "");
    let not_absolute = "agentsh sandbox: the proxy takes absolute http:// URIs or CONNECT";
    let cases: &[(&str, String)] = &[
        (
            "GET / HTTP/1.1\r\nHost: a\r\n\r\n",
            status_response("400 Bad Request", not_absolute),
        ),
        (
            "GET https://127.0.0.1/ HTTP/1.1\r\n\r\n",
            status_response("400 Bad Request", not_absolute),
        ),
        (
            "GET http://u@127.0.0.1/ HTTP/1.1\r\n\r\n",
            status_response(
                "400 Bad Request",
                "agentsh sandbox: bad request: user info in the URI",
            ),
        ),
        (
            "CONNECT 127.0.0.1 HTTP/1.1\r\n\r\n",
            status_response(
                "400 Bad Request",
                "agentsh sandbox: bad CONNECT target: no port (host:port is required)",
            ),
        ),
        (
            "POST http://127.0.0.1:1/ HTTP/1.1\r\nContent-Length: x\r\n\r\n",
            status_response(
                "400 Bad Request",
                "agentsh sandbox: bad request: the Content-Length is not a number",
            ),
        ),
    ];
    for (request, expected) in cases {
        assert_eq!(&proxy.exchange(request.as_bytes()), expected, "{request:?}");
    }
}

#[test]
fn malformed_and_oversized_heads_are_answered() {
    let proxy = harness(&["127.0.0.1"], "");
    let malformed = proxy.exchange(b"GET http://127.0.0.1/ HTTP/1.1\r\nBad Header: x\r\n\r\n");
    assert_eq!(
        malformed,
        status_response(
            "400 Bad Request",
            "agentsh sandbox: malformed request head: invalid header name"
        )
    );
    let garbage = proxy.exchange(b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\n\n");
    assert!(
        garbage.starts_with("HTTP/1.1 400 Bad Request\r\n"),
        "{garbage}"
    );

    let mut long = b"GET http://127.0.0.1/ HTTP/1.1\r\nX-Long: ".to_vec();
    long.resize(70 * 1024, b'a');
    long.extend_from_slice(b"\r\n\r\n");
    let too_large = status_response(
        "431 Request Header Fields Too Large",
        "agentsh sandbox: the request head is over 64 KiB",
    );
    assert_eq!(proxy.exchange(&long), too_large);
    // A head just under the limit is fine (positive control): it is refused for its host only.
    let mut fits = b"GET http://127.0.0.2/ HTTP/1.1\r\nX-Long: ".to_vec();
    fits.resize(60 * 1024, b'a');
    fits.extend_from_slice(b"\r\n\r\n");
    assert_eq!(
        proxy.exchange(&fits),
        forbidden("127.0.0.2:80", "127.0.0.1")
    );
}

#[test]
fn curl_fetches_through_the_proxy() {
    if !have("curl") {
        return;
    }
    let server = HttpServer::start("127.0.0.1");
    let proxy = harness(&["pypi.test", "127.0.0.1"], "pypi.test=127.0.0.1");
    let via = format!("http://127.0.0.1:{}", proxy.port);
    let url = format!("http://pypi.test:{}/simple/", server.port);
    let (code, out) = curl(&["--proxy", &via, &url]);
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            format!("GET /simple/ host=pypi.test:{} body=", server.port).as_str()
        )
    );
    let (code, out) = curl(&["--proxy", &via, "--data", "a=1", &url]);
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            format!("POST /simple/ host=pypi.test:{} body=a=1", server.port).as_str()
        )
    );
    // Denied (negative of the same): curl shows the proxy's body.
    let denied = format!("http://files.test:{}/", server.port);
    let (code, out) = curl(&["--proxy", &via, &denied]);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        format!(
            "agentsh sandbox: files.test:{} is not in the allowed hosts (pypi.test, 127.0.0.1)",
            server.port
        )
    );
}

#[test]
fn python_fetches_through_the_proxy() {
    if !have("python3") {
        return;
    }
    let server = HttpServer::start("127.0.0.1");
    let proxy = harness(&["pypi.test", "127.0.0.1"], "pypi.test=127.0.0.1");
    let script = "import sys, urllib.request\n\
                  try:\n    print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode(), end='')\n\
                  except urllib.error.HTTPError as e:\n    print(e.code, e.read().decode(), end='')\n";
    let run = |url: &str| {
        let output = std::process::Command::new("python3")
            .args(["-c", script, url])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("http_proxy", format!("http://127.0.0.1:{}", proxy.port))
            .output()
            .expect("python3 runs");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    assert_eq!(
        run(&format!("http://pypi.test:{}/x", server.port)),
        format!("GET /x host=pypi.test:{} body=", server.port)
    );
    assert_eq!(
        run("http://evil.test/x"),
        "403 agentsh sandbox: evil.test:80 is not in the allowed hosts (pypi.test, 127.0.0.1)"
    );
}

#[test]
fn an_upgraded_connection_becomes_a_raw_copy() {
    use std::io::{BufRead, BufReader, Read};
    // A websocket-like server: reads the head, switches protocols, then echoes.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        let (stream, _) = listener.accept().expect("a connection");
        let mut reader = BufReader::new(stream.try_clone().expect("clone"));
        let mut line = String::new();
        while reader.read_line(&mut line).is_ok_and(|n| n > 0) && !line.ends_with("\r\n\r\n") {}
        let mut writer = stream;
        writer
            .write_all(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n")
            .expect("101");
        let mut buf = [0; 1024];
        while let Ok(n @ 1..) = reader.read(&mut buf) {
            writer.write_all(&buf[..n]).expect("echo");
        }
    });
    let proxy = harness(&["127.0.0.1"], "");
    let mut client = proxy.client();
    let request = format!(
        "GET http://127.0.0.1:{port}/ws HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nframe-1"
    );
    client.write_all(request.as_bytes()).expect("sent");
    let head = crate::support::read_head(&mut client);
    assert!(
        head.starts_with("HTTP/1.1 101 Switching Protocols\r\n"),
        "{head}"
    );
    let mut frame = [0; 7];
    client.read_exact(&mut frame).expect("echoed");
    assert_eq!(&frame, b"frame-1");
    // Not a request head: raw bytes go through as they are.
    client.write_all(b"\x81\x05hello").expect("sent");
    let mut back = [0; 7];
    client.read_exact(&mut back).expect("echoed");
    assert_eq!(&back, b"\x81\x05hello");
    client
        .shutdown(std::net::Shutdown::Write)
        .expect("half close");
    assert_eq!(read_all(&mut client), "");
    proxy.settle();
}

#[test]
fn garbage_never_stops_the_proxy() {
    let server = HttpServer::start("127.0.0.1");
    let mut settings = crate::support::config(&["127.0.0.1"], "");
    settings.head_timeout = std::time::Duration::from_millis(200);
    settings.idle_timeout = std::time::Duration::from_millis(200);
    let proxy = crate::support::harness_with(settings);
    // A fixed pseudo-random sequence: heads, SOCKS greetings and bytes, cut anywhere.
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let seeds: [&[u8]; 4] = [
        b"GET http://127.0.0.1/ HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"\x05\x02\x00\x01\x05\x01\x00\x03\xff",
        b"CONNECT [::1 HTTP/1.1\r\n\r\n",
        b"POST http://127.0.0.1:1/ HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
    ];
    let cases: Vec<Vec<u8>> = (0..200)
        .map(|i| {
            let seed = seeds[i % seeds.len()];
            let mut bytes = seed[..(next() as usize % (seed.len() + 1))].to_vec();
            for _ in 0..(next() % 8) {
                let at = next() as usize % (bytes.len() + 1);
                bytes.insert(at, next() as u8);
            }
            bytes
        })
        .collect();
    std::thread::scope(|scope| {
        for (i, batch) in cases.chunks(10).enumerate() {
            let proxy = &proxy;
            scope.spawn(move || {
                for bytes in batch {
                    let mut client = proxy.client();
                    let _ = client.write_all(bytes);
                    // Half of the clients say they are done; the others wait for a timeout.
                    if i % 2 == 0 {
                        let _ = client.shutdown(std::net::Shutdown::Write);
                    }
                    let mut sink = Vec::new();
                    let _ = client.read_to_end(&mut sink);
                }
            });
        }
    });
    proxy.settle();
    // Still serving (positive control).
    let mut client = proxy.client();
    let request = format!(
        "GET http://127.0.0.1:{}/after HTTP/1.1\r\n\r\n",
        server.port
    );
    client.write_all(request.as_bytes()).expect("sent");
    let (_, body) = read_response(&mut client);
    assert_eq!(
        body,
        format!("GET /after host=127.0.0.1:{} body=", server.port)
    );
}
