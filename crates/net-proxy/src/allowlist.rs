//! The allowed hosts: `name`, `*.name`, IP addresses, each optionally limited to a port.

use std::net::IpAddr;

use crate::host::{Host, HostError, parse_port};

/// What an entry matches.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pattern {
    /// This name only.
    Name(String),
    /// Names under this one, at any depth, not the name itself.
    Subdomains(String),
    /// This address only.
    Ip(IpAddr),
}

/// One parsed entry.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    pattern: Pattern,
    /// The only port allowed; any port when `None`.
    port: Option<u16>,
}

impl Entry {
    fn matches(&self, host: &Host, port: u16) -> bool {
        if self.port.is_some_and(|allowed| allowed != port) {
            return false;
        }
        match (&self.pattern, host) {
            (Pattern::Name(name), Host::Name(host)) => name == host,
            (Pattern::Subdomains(name), Host::Name(host)) => host
                .strip_suffix(name.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
            (Pattern::Ip(ip), Host::Ip(host)) => ip == host,
            _ => false,
        }
    }
}

/// The hosts commands may reach, parsed from the `network` list of the sandbox settings.
///
/// - `name` matches that host only; `*.name` matches its subdomains at any depth
///   (`a.b.name`), not `name` itself. Names are compared case-insensitively, without a
///   trailing dot.
/// - An IP address matches itself only: `10.1.2.3`, `::1`, `[::1]`.
/// - A `:port` suffix limits the entry to that port (`registry.npmjs.org:443`,
///   `[::1]:443`); without it every port is allowed.
///
/// A numeric host must be a canonical IP address: `127.1`, `2130706433`, `0x7f.1` and
/// `0177.0.0.1` are refused, in entries as in requests.
///
/// ```
/// use agentsh_net_proxy::Allowlist;
///
/// let list = Allowlist::parse(&["github.com".into(), "*.pythonhosted.org".into(),
///     "registry.npmjs.org:443".into(), "10.1.2.3".into()]).unwrap();
/// assert!(list.allows("GitHub.com.", 22));
/// assert!(list.allows("files.pythonhosted.org", 443));
/// assert!(!list.allows("pythonhosted.org", 443));
/// assert!(!list.allows("registry.npmjs.org", 80));
/// assert!(!list.allows("10.1.2.4", 80));
/// assert_eq!(list.display(),
///     "github.com, *.pythonhosted.org, registry.npmjs.org:443, 10.1.2.3");
/// assert!(Allowlist::parse(&["https://github.com".into()]).is_err());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allowlist {
    entries: Vec<Entry>,
    written: Vec<String>,
}

/// An entry of the allowlist that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("network entry `{entry}`: {reason}")]
pub struct AllowlistError {
    /// The entry as written.
    pub entry: String,
    /// Why it cannot be read.
    pub reason: String,
}

impl Allowlist {
    /// Parses the entries; the first bad one is the error.
    pub fn parse(entries: &[String]) -> Result<Self, AllowlistError> {
        let parsed = entries
            .iter()
            .map(|text| {
                parse_entry(text).map_err(|reason| AllowlistError {
                    entry: text.clone(),
                    reason: reason.to_owned(),
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            entries: parsed,
            written: entries.to_vec(),
        })
    }

    /// The entries as written.
    pub fn entries(&self) -> &[String] {
        &self.written
    }

    /// Whether no host is allowed.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries as written, joined with `, ` (what refusals show).
    pub fn display(&self) -> String {
        self.written.join(", ")
    }

    /// Whether `host` (a name or an IP address, an IPv6 address with or without brackets) is
    /// allowed on `port`. A host that is not canonical is never allowed.
    pub fn allows(&self, host: &str, port: u16) -> bool {
        let bare = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        Host::parse(bare).is_ok_and(|host| self.allows_host(&host, port))
    }

    /// Whether an IP entry lists `addr` (an IPv4-mapped address as its IPv4 address) on
    /// `port`.
    pub fn allows_address(&self, addr: IpAddr, port: u16) -> bool {
        self.allows_host(&Host::Ip(addr.to_canonical()), port)
    }

    pub(crate) fn allows_host(&self, host: &Host, port: u16) -> bool {
        self.entries.iter().any(|entry| entry.matches(host, port))
    }
}

/// One entry, or why it is refused.
fn parse_entry(text: &str) -> Result<Entry, &'static str> {
    if text.is_empty() {
        return Err("the entry is empty");
    }
    if text.chars().any(char::is_whitespace) {
        return Err("an entry is a host, without spaces");
    }
    if text.contains("://") {
        return Err("an entry is a host, not a URL: drop the scheme");
    }
    if text.contains('/') {
        return Err("an entry is a host, without a path");
    }
    let (host, port, bracketed) = split_entry(text)?;
    if bracketed && !host.contains(':') {
        return Err("brackets hold an IPv6 address");
    }
    let port = match port {
        Some(port) => Some(parse_port(port).ok_or("the port is not a number from 1 to 65535")?),
        None => None,
    };
    let host_error = |err: HostError| match err {
        HostError::Empty => "the host is empty",
        HostError::NonCanonical => {
            "a numeric host must be a canonical IP address (such as 10.1.2.3)"
        }
        HostError::Invalid => "not a host name or an IP address",
    };
    if host == "*" {
        return Err("`*` alone would allow every host");
    }
    if let Some(parent) = host.strip_prefix("*.") {
        if parent.contains('*') {
            return Err("a wildcard is allowed only as a leading `*.`");
        }
        return match Host::parse(parent).map_err(host_error)? {
            Host::Name(name) => Ok(Entry {
                pattern: Pattern::Subdomains(name),
                port,
            }),
            Host::Ip(_) => Err("a wildcard needs a name after `*.`, not an address"),
        };
    }
    if host.contains('*') {
        return Err("a wildcard is allowed only as a leading `*.`");
    }
    let pattern = match Host::parse(host).map_err(host_error)? {
        Host::Name(name) => Pattern::Name(name),
        Host::Ip(ip) => Pattern::Ip(ip),
    };
    Ok(Entry { pattern, port })
}

/// `(host, port, bracketed)`: `[v6]:port`, `[v6]`, a bare IPv6 address (two colons or more,
/// no port), `host:port`, `host`.
fn split_entry(text: &str) -> Result<(&str, Option<&str>, bool), &'static str> {
    if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or("a `[` without its `]`")?;
        return match after {
            "" => Ok((host, None, true)),
            _ => after
                .strip_prefix(':')
                .map(|port| (host, Some(port), true))
                .ok_or("only `:port` may follow `]`"),
        };
    }
    match text.split_once(':') {
        Some((host, port)) if !port.contains(':') => Ok((host, Some(port), false)),
        _ => Ok((text, None, false)),
    }
}

#[cfg(test)]
#[path = "allowlist_tests.rs"]
mod tests;
