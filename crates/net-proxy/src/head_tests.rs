use super::*;

fn parse(text: &[u8]) -> Parsed {
    parse_head(text, &mut 0)
}

fn head(text: &str) -> Head {
    match parse(text.as_bytes()) {
        Parsed::Complete(head) => head,
        other => panic!("{text:?}: {other:?}"),
    }
}

#[test]
fn heads_parse_or_say_what_is_wrong() {
    let get = head("GET http://a.test/x HTTP/1.1\r\nHost: a.test\r\n\r\nBODY");
    assert_eq!(
        (
            get.method.as_str(),
            get.target.as_str(),
            get.version,
            get.len
        ),
        ("GET", "http://a.test/x", 1, 46)
    );
    assert_eq!(get.headers, vec![("Host".to_owned(), b"a.test".to_vec())]);
    let lf_only = head("GET / HTTP/1.0\n\n");
    assert_eq!(lf_only.version, 0);
    let blank_first = head("\r\nCONNECT a.test:443 HTTP/1.1\r\n\r\n");
    assert_eq!(blank_first.method, "CONNECT");

    let cases: &[(&[u8], Parsed)] = &[
        (b"", Parsed::Partial),
        (b"GET / HTTP/1.1\r\nHost: a", Parsed::Partial),
        (b"\r\n", Parsed::Partial),
        (
            b"GET / HTTP/2.0\r\n\r\n",
            Parsed::Malformed("invalid HTTP version".into()),
        ),
        (
            b"GET  / HTTP/1.1\r\n\r\n",
            Parsed::Malformed("invalid token".into()),
        ),
        (
            b"GET / HTTP/1.1\r\nBad Header: x\r\n\r\n",
            Parsed::Malformed("invalid header name".into()),
        ),
        (
            b"\x16\x03\x01\x02\x00\n\n",
            Parsed::Malformed("invalid token".into()),
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(
            &parse(text),
            expected,
            "{:?}",
            String::from_utf8_lossy(text)
        );
    }
}

#[test]
fn long_heads_are_refused() {
    let mut long = b"GET / HTTP/1.1\r\nX: ".to_vec();
    long.resize(MAX_HEAD + 1, b'a');
    assert_eq!(parse(&long), Parsed::TooLarge);
    long.extend_from_slice(b"\r\n\r\n");
    assert_eq!(parse(&long), Parsed::TooLarge);
    let many = "X: y\r\n".repeat(300);
    assert_eq!(
        parse(format!("GET / HTTP/1.1\r\n{many}\r\n").as_bytes()),
        Parsed::TooLarge
    );
}

/// Asserts that `text`, fed to the incremental scan one byte more at a time, is partial until
/// its last byte and complete with it.
fn assert_complete_only_at_the_end(text: &[u8]) {
    let mut scanned = 0;
    for end in 1..text.len() {
        assert_eq!(
            parse_head(&text[..end], &mut scanned),
            Parsed::Partial,
            "{end}"
        );
    }
    assert!(matches!(
        parse_head(text, &mut scanned),
        Parsed::Complete(_)
    ));
}

#[test]
fn a_head_arriving_byte_by_byte_is_found() {
    assert_complete_only_at_the_end(b"GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n");
}

#[test]
fn blank_lines_before_a_head_end_nothing_whatever_the_pieces() {
    // Found by the fuzz target `proxy_head`: after the leading blank lines had been scanned,
    // a malformed request line arriving in pieces stayed `Partial` (its judgement waited for
    // the head's end) where the same bytes at once were `Malformed`.
    let text = b"\r\n\r\nGE\\ http://h/ HTTP/1.0\r\n\r\n";
    let mut scanned = 0;
    for end in 1..=text.len() {
        assert_eq!(
            parse_head(&text[..end], &mut scanned),
            parse(&text[..end]),
            "{end}"
        );
    }
    assert!(matches!(parse(text), Parsed::Malformed(_)));
    assert_eq!(parse(b"\r\n\r\n"), Parsed::Partial);
    assert_complete_only_at_the_end(b"\r\n\nGET http://h/ HTTP/1.0\r\n\r\n");
}

#[test]
fn bodies_are_framed() {
    let framing = |headers: &str| head(&format!("POST / HTTP/1.1\r\n{headers}\r\n")).framing();
    let cases: &[(&str, Result<Framing, &str>)] = &[
        ("", Ok(Framing::None)),
        ("Content-Length: 5\r\n", Ok(Framing::Length(5))),
        (
            "Content-Length: 5\r\ncontent-length: 5\r\n",
            Ok(Framing::Length(5)),
        ),
        ("Content-Length: 5, 5\r\n", Ok(Framing::Length(5))),
        (
            "Content-Length: 5\r\nContent-Length: 6\r\n",
            Err("the Content-Length values differ"),
        ),
        (
            "Content-Length: -1\r\n",
            Err("the Content-Length is not a number"),
        ),
        (
            "Content-Length: \r\n",
            Err("the Content-Length is not a number"),
        ),
        ("Transfer-Encoding: chunked\r\n", Ok(Framing::Chunked)),
        ("Transfer-Encoding: gzip, Chunked\r\n", Ok(Framing::Chunked)),
        (
            "Transfer-Encoding: chunked\r\nContent-Length: 3\r\n",
            Ok(Framing::Chunked),
        ),
        (
            "Transfer-Encoding: gzip\r\n",
            Err("a request body's Transfer-Encoding must end with chunked"),
        ),
    ];
    for (headers, expected) in cases {
        assert_eq!(
            framing(headers),
            expected.map_err(str::to_owned),
            "{headers:?}"
        );
    }
}

#[test]
fn forwarded_heads_are_in_origin_form() {
    let request = head(
        "POST http://a.test:8080/x?y HTTP/1.1\r\nProxy-Connection: keep-alive\r\n\
         Proxy-Authorization: Basic eA==\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\
         Accept: */*\r\n\r\n",
    );
    let forwarded = request.forwarded("/x?y", "a.test:8080", Framing::Chunked);
    assert_eq!(
        String::from_utf8(forwarded).expect("text"),
        "POST /x?y HTTP/1.1\r\nTransfer-Encoding: chunked\r\nAccept: */*\r\nHost: a.test:8080\r\n\r\n"
    );
    let with_host = head("GET http://a.test/ HTTP/1.0\r\nhost: A.test\r\n\r\n");
    assert_eq!(
        String::from_utf8(with_host.forwarded("/", "a.test", Framing::None)).expect("text"),
        "GET / HTTP/1.0\r\nhost: A.test\r\n\r\n"
    );
    let upgrade = head(
        "GET http://a.test/ HTTP/1.1\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n\r\n",
    );
    assert!(upgrade.upgrades());
    assert!(!with_host.upgrades());
}

#[test]
fn absolute_uris_split() {
    type Split = (&'static str, &'static str, u16, &'static str);
    let cases: &[(&str, Result<Split, &str>)] = &[
        ("http://a.test/x?y", Ok(("a.test", "a.test", 80, "/x?y"))),
        (
            "HTTP://A.test:8080",
            Ok(("A.test:8080", "A.test", 8080, "/")),
        ),
        ("http://a.test?q", Ok(("a.test", "a.test", 80, "/?q"))),
        ("http://a.test/p#frag", Ok(("a.test", "a.test", 80, "/p"))),
        ("http://[::1]:8080/", Ok(("[::1]:8080", "::1", 8080, "/"))),
        ("http://127.1/", Ok(("127.1", "127.1", 80, "/"))),
        ("/", Err(NOT_ABSOLUTE)),
        ("https://a.test/", Err(NOT_ABSOLUTE)),
        ("ftp://a.test/", Err(NOT_ABSOLUTE)),
        ("*", Err(NOT_ABSOLUTE)),
        (
            "http://u:p@a.test/",
            Err("agentsh sandbox: bad request: user info in the URI"),
        ),
        ("http:///x", Err("agentsh sandbox: bad request: no host")),
        (
            "http://a.test:x/",
            Err("agentsh sandbox: bad request: the port is not a number from 1 to 65535"),
        ),
    ];
    for (target, expected) in cases {
        let got = absolute(target).map(|a| (a.authority, a.host, a.port, a.origin));
        let expected = expected
            .map(|(a, h, p, o)| (a, h, p, o.to_owned()))
            .map_err(str::to_owned);
        assert_eq!(got, expected, "{target}");
    }
}
