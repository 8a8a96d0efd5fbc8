//! The request-head reading checked against arbitrary bytes, for the fuzz target `proxy_head`
//! and its corpus replay (`crates/fuzz-checks`). Not part of the API: the head types stay
//! private, the check says what must hold of them.

use crate::head::{Framing, MAX_HEAD, Parsed, absolute, parse_head};

/// Reads `bytes` as the start of what a sandboxed client sends the proxy and panics when a
/// promise of the head reading is broken:
///
/// - read as it arrives, a few bytes at a time (the proxy's incremental scan), it gives at
///   every step what reading all that has arrived at once gives;
/// - a complete head is at most [`MAX_HEAD`] bytes, within what arrived, and ends with its
///   blank line;
/// - a request the proxy forwards (absolute `http://` target, readable framing) is sent
///   upstream as a complete head of exactly its own length, with the same method and version,
///   the origin-form target, one `Host`, none of the proxy's own headers, and no
///   `Content-Length` beside chunked framing.
pub fn check_request_head(bytes: &[u8]) {
    let mut scanned = 0;
    let mut end = 0;
    let mut step = 1;
    let outcome = loop {
        end = (end + step).min(bytes.len());
        // Pieces of 1 to 7 bytes, as a slow client's would arrive.
        step = step % 7 + 1;
        let arrived = &bytes[..end];
        let incremental = parse_head(arrived, &mut scanned);
        let at_once = parse_head(arrived, &mut 0);
        assert_eq!(
            incremental, at_once,
            "read in pieces, the first {end} bytes give another head than read at once"
        );
        if incremental != Parsed::Partial || end == bytes.len() {
            break incremental;
        }
    };
    let Parsed::Complete(head) = outcome else {
        return;
    };
    assert!(
        head.len <= end && head.len <= MAX_HEAD,
        "head length {}",
        head.len
    );
    assert!(
        bytes[..head.len].ends_with(b"\n\n") || bytes[..head.len].ends_with(b"\n\r\n"),
        "a complete head ends with a blank line"
    );
    if head.method.eq_ignore_ascii_case("CONNECT") {
        return;
    }
    let (Ok(uri), Ok(framing)) = (absolute(&head.target), head.framing()) else {
        return;
    };
    let forwarded = head.forwarded(&uri.origin, uri.authority, framing);
    let Parsed::Complete(sent) = parse_head(&forwarded, &mut 0) else {
        panic!(
            "the forwarded head is not a complete head: {:?}",
            String::from_utf8_lossy(&forwarded)
        );
    };
    assert_eq!(
        sent.len,
        forwarded.len(),
        "the forwarded head has bytes after it"
    );
    assert_eq!(sent.method, head.method);
    assert_eq!(sent.target, uri.origin);
    assert_eq!(sent.version, head.version);
    assert!(
        sent.target.starts_with('/'),
        "origin form: {:?}",
        sent.target
    );
    assert_eq!(
        sent.values("host").count(),
        head.values("host").count().max(1)
    );
    for own in ["proxy-connection", "proxy-authorization"] {
        assert_eq!(sent.values(own).count(), 0, "{own} went upstream");
    }
    if framing == Framing::Chunked {
        assert_eq!(sent.values("content-length").count(), 0);
    }
    assert_eq!(
        sent.framing(),
        Ok(framing),
        "the upstream reads another body framing"
    );
}
