//! HTTP/1 request heads, read with `httparse`, and the parts of them the proxy needs.

use crate::host::{AuthorityError, split_authority};

/// The longest request head taken (request line and headers).
pub(crate) const MAX_HEAD: usize = 64 * 1024;
/// The most headers a request may have.
const MAX_HEADERS: usize = 256;

/// A request head, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Head {
    pub(crate) method: String,
    pub(crate) target: String,
    /// The minor version: `HTTP/1.0` or `HTTP/1.1`.
    pub(crate) version: u8,
    pub(crate) headers: Vec<(String, Vec<u8>)>,
    /// Its length in bytes, the blank line included.
    pub(crate) len: usize,
}

/// What the buffer holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Parsed {
    Complete(Head),
    Partial,
    TooLarge,
    Malformed(String),
}

/// Parses the head at the start of `buf`. `scanned` is how far a previous call looked for the
/// head's end (it is updated), so that a head arriving byte by byte is not parsed over and
/// over.
pub(crate) fn parse_head(buf: &[u8], scanned: &mut usize) -> Parsed {
    // Blank lines before the request line are skipped (by httparse too): a blank line among
    // them ends nothing, else a head that arrives after them would be judged by a scan that
    // already passed its start.
    let lead = buf
        .iter()
        .position(|&b| b != b'\r' && b != b'\n')
        .unwrap_or(buf.len());
    let from = scanned.saturating_sub(3).max(lead).min(buf.len());
    let ended = buf[from..].windows(2).any(|w| w == b"\n\n" || w == b"\n\r");
    // The next call looks at the new bytes only (and the three before them).
    *scanned = buf.len();
    if !ended {
        return if buf.len() > MAX_HEAD {
            Parsed::TooLarge
        } else {
            Parsed::Partial
        };
    }
    let mut headers = vec![httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(buf) {
        Ok(httparse::Status::Complete(len)) if len > MAX_HEAD => Parsed::TooLarge,
        Ok(httparse::Status::Complete(len)) => Parsed::Complete(Head {
            method: request.method.unwrap_or_default().to_owned(),
            target: request.path.unwrap_or_default().to_owned(),
            version: request.version.unwrap_or(1),
            headers: request
                .headers
                .iter()
                .map(|h| (h.name.to_owned(), h.value.to_vec()))
                .collect(),
            len,
        }),
        // A blank line before the request line: read on.
        Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD => Parsed::TooLarge,
        Ok(httparse::Status::Partial) => Parsed::Partial,
        Err(httparse::Error::TooManyHeaders) => Parsed::TooLarge,
        Err(err) => Parsed::Malformed(err.to_string()),
    }
}

impl Head {
    /// The values of the header `name` (any case).
    pub(crate) fn values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.headers
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_slice())
    }

    /// Whether the comma-separated tokens of the header `name` hold `token` (any case).
    pub(crate) fn has_token(&self, name: &str, token: &str) -> bool {
        self.values(name).any(|value| {
            value
                .split(|&b| b == b',')
                .any(|t| t.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
        })
    }

    /// How the request's body is framed.
    pub(crate) fn framing(&self) -> Result<Framing, String> {
        if self.values("transfer-encoding").next().is_some() {
            let last = self
                .values("transfer-encoding")
                .flat_map(|v| v.split(|&b| b == b','))
                .map(<[u8]>::trim_ascii)
                .filter(|t| !t.is_empty())
                .last();
            return if last.is_some_and(|t| t.eq_ignore_ascii_case(b"chunked")) {
                Ok(Framing::Chunked)
            } else {
                Err("a request body's Transfer-Encoding must end with chunked".to_owned())
            };
        }
        let mut length = None;
        for value in self.values("content-length") {
            for part in value.split(|&b| b == b',') {
                let part = part.trim_ascii();
                let n = std::str::from_utf8(part)
                    .ok()
                    .filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                    .and_then(|p| p.parse::<u64>().ok())
                    .ok_or("the Content-Length is not a number")?;
                if length.is_some_and(|l| l != n) {
                    return Err("the Content-Length values differ".to_owned());
                }
                length = Some(n);
            }
        }
        Ok(length.map_or(Framing::None, Framing::Length))
    }

    /// Whether the request asks to switch protocols (`Connection: Upgrade`, a websocket).
    pub(crate) fn upgrades(&self) -> bool {
        self.has_token("connection", "upgrade") && self.values("upgrade").next().is_some()
    }

    /// The head as the upstream gets it: the request line in origin form, without the
    /// proxy's own headers, with a `Host` (`authority` when the client sent none), and without
    /// a `Content-Length` beside a `Transfer-Encoding`.
    pub(crate) fn forwarded(&self, origin: &str, authority: &str, framing: Framing) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len + authority.len() + 16);
        out.extend_from_slice(self.method.as_bytes());
        out.push(b' ');
        out.extend_from_slice(origin.as_bytes());
        out.extend_from_slice(if self.version == 0 {
            b" HTTP/1.0\r\n"
        } else {
            b" HTTP/1.1\r\n"
        });
        let mut has_host = false;
        for (name, value) in &self.headers {
            let dropped = name.eq_ignore_ascii_case("proxy-connection")
                || name.eq_ignore_ascii_case("proxy-authorization")
                || (framing == Framing::Chunked && name.eq_ignore_ascii_case("content-length"));
            if dropped {
                continue;
            }
            has_host |= name.eq_ignore_ascii_case("host");
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value);
            out.extend_from_slice(b"\r\n");
        }
        if !has_host {
            out.extend_from_slice(b"Host: ");
            out.extend_from_slice(authority.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"\r\n");
        out
    }
}

/// How a request body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    None,
    Length(u64),
    Chunked,
}

/// An absolute `http://` URI, split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Absolute<'a> {
    /// `host[:port]` as written.
    pub(crate) authority: &'a str,
    /// The host, brackets removed.
    pub(crate) host: &'a str,
    pub(crate) port: u16,
    /// Path and query, at least `/`.
    pub(crate) origin: String,
}

/// The message for a request the proxy does not take.
pub(crate) const NOT_ABSOLUTE: &str =
    "agentsh sandbox: the proxy takes absolute http:// URIs or CONNECT";

/// Splits an absolute `http://` URI; the error is the client's message.
pub(crate) fn absolute(target: &str) -> Result<Absolute<'_>, String> {
    let rest = target
        .get(..7)
        .filter(|scheme| scheme.eq_ignore_ascii_case("http://"))
        .map(|_| &target[7..])
        .ok_or_else(|| NOT_ABSOLUTE.to_owned())?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    if authority.contains('@') {
        return Err("agentsh sandbox: bad request: user info in the URI".to_owned());
    }
    let (host, port) = split_authority(authority, Some(80))
        .map_err(|err: AuthorityError| format!("agentsh sandbox: bad request: {err}"))?;
    let path = path.split('#').next().unwrap_or_default();
    let origin = if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("/{path}")
    };
    Ok(Absolute {
        authority,
        host,
        port,
        origin,
    })
}

#[cfg(test)]
#[path = "head_tests.rs"]
mod tests;
