//! Hosts as clients and allowlists write them: names, canonical IP addresses, and the
//! numeric forms that are refused (`127.1`, `2130706433`, `0x7f.1`, `0177.0.0.1`).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Longest host name (RFC 1035), without a trailing dot.
const MAX_NAME: usize = 253;
/// Longest label of a host name.
const MAX_LABEL: usize = 63;

/// A host, parsed and canonical: a lower-case name without a trailing dot, or an IP address
/// (an IPv4-mapped IPv6 address is its IPv4 address).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Host {
    Name(String),
    Ip(IpAddr),
}

/// Why a host is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HostError {
    /// Empty.
    Empty,
    /// Its last label is a number, but it is not a canonical dotted quad.
    NonCanonical,
    /// A character or a label no host name has.
    Invalid,
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Empty => "the host is empty",
            Self::NonCanonical => {
                "a numeric host must be a canonical IP address (such as 10.1.2.3)"
            }
            Self::Invalid => "not a host name or an IP address",
        })
    }
}

impl Host {
    /// Parses a host without brackets or port: `example.com`, `10.1.2.3`, `::1`.
    pub(crate) fn parse(text: &str) -> Result<Self, HostError> {
        if text.is_empty() {
            return Err(HostError::Empty);
        }
        if text.contains(':') {
            return text
                .parse::<Ipv6Addr>()
                .map(|ip| Self::Ip(IpAddr::V6(ip).to_canonical()))
                .map_err(|_| HostError::Invalid);
        }
        if ends_in_number(text) {
            // Rust's parser takes exactly four decimal octets without leading zeros.
            return text
                .parse::<Ipv4Addr>()
                .map(|ip| Self::Ip(IpAddr::V4(ip)))
                .map_err(|_| HostError::NonCanonical);
        }
        let name = text.strip_suffix('.').unwrap_or(text).to_ascii_lowercase();
        if valid_name(&name) {
            Ok(Self::Name(name))
        } else {
            Err(HostError::Invalid)
        }
    }
}

/// Whether the last label of `text` (ignoring one trailing dot) is a number: decimal digits,
/// or `0x` and hex digits. Such a host is an attempt at an IPv4 address.
fn ends_in_number(text: &str) -> bool {
    let text = text.strip_suffix('.').unwrap_or(text);
    let last = text.rsplit('.').next().unwrap_or(text);
    if !last.is_empty() && last.bytes().all(|b| b.is_ascii_digit()) {
        return true;
    }
    last.strip_prefix("0x")
        .or_else(|| last.strip_prefix("0X"))
        .is_some_and(|hex| hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Whether `name` (lower-case, no trailing dot) is a host name: dot-separated labels of
/// letters, digits, `-` and `_`, none empty or longer than 63, at most 253 in all.
fn valid_name(name: &str) -> bool {
    name.len() <= MAX_NAME
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= MAX_LABEL
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

/// `host:port` as refusals show it: the host as written, lower-cased; an IPv6 address in
/// brackets (`[::1]:443`).
pub(crate) fn target(host: &str, port: u16) -> String {
    let host = host.to_ascii_lowercase();
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// Why an authority (`host:port`) cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AuthorityError {
    /// No host.
    NoHost,
    /// A port is required and missing.
    NoPort,
    /// The port is not a number from 1 to 65535.
    BadPort,
    /// An IPv6 address outside brackets, or text after the closing bracket.
    BadBrackets,
}

impl fmt::Display for AuthorityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NoHost => "no host",
            Self::NoPort => "no port (host:port is required)",
            Self::BadPort => "the port is not a number from 1 to 65535",
            Self::BadBrackets => "an IPv6 address must be written in brackets, as [::1]:443",
        })
    }
}

/// Splits `host[:port]` (`[v6][:port]`) into the host as written (brackets removed) and the
/// port, `default` when absent (absent and no default: an error).
pub(crate) fn split_authority(
    text: &str,
    default: Option<u16>,
) -> Result<(&str, u16), AuthorityError> {
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or(AuthorityError::BadBrackets)?;
        let port = match after {
            "" => None,
            _ => Some(after.strip_prefix(':').ok_or(AuthorityError::BadBrackets)?),
        };
        (host, port)
    } else {
        match text.rsplit_once(':') {
            Some((host, _)) if host.contains(':') => return Err(AuthorityError::BadBrackets),
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        }
    };
    if host.is_empty() {
        return Err(AuthorityError::NoHost);
    }
    let port = match port {
        Some(port) => parse_port(port).ok_or(AuthorityError::BadPort)?,
        None => default.ok_or(AuthorityError::NoPort)?,
    };
    Ok((host, port))
}

/// A port: 1 to 5 decimal digits, 1 to 65535.
pub(crate) fn parse_port(text: &str) -> Option<u16> {
    if text.is_empty() || text.len() > 5 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<u16>().ok().filter(|port| *port != 0)
}

#[cfg(test)]
#[path = "host_tests.rs"]
mod tests;
