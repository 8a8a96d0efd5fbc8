//! An ssh target, `ssh://[user@]host[:port]`, as `--remote` and `[remote] target`
//! name it and the ssh transport reaches it.
//!
//! A target goes on `ssh`'s command line (and, through a `ProxyCommand`'s `%h`/`%r`, possibly
//! into a shell), so its parts are held to a strict alphabet: nothing in it can be read as an
//! option or a shell word.

use std::fmt;
use std::net::Ipv6Addr;

/// An ssh target, `ssh://[user@]host[:port]`, checked by [`SshTarget::parse`]: the user and
/// the host hold only ASCII letters, digits, `.`, `_` and `-` and do not start with `-` (so
/// `ssh` can never read one as an option), or the host is an IPv6 address in brackets
/// (`ssh://[::1]:2222`). [`Display`](fmt::Display) writes it back in that form.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SshTarget {
    /// The user to log in as; ssh's own choice (its config, else the local user) when `None`.
    pub user: Option<String>,
    /// The host name or address; an IPv6 address without its brackets (`::1`).
    pub host: String,
    /// The port, 1 to 65535; ssh's own choice (its config, else 22) when `None`.
    pub port: Option<u16>,
}

/// The scheme every target starts with.
const SCHEME: &str = "ssh://";

/// Why a text is not an ssh target, as its error texts say it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshTargetError(String);

impl fmt::Display for SshTargetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SshTargetError {}

impl SshTarget {
    /// Parses `ssh://[user@]host[:port]`. The error is the reason, for a message that names the
    /// key (`remote.target: <reason>`) or the flag.
    ///
    /// ```
    /// use agentsh_protocol::SshTarget;
    ///
    /// let target = SshTarget::parse("ssh://ann@build.example.com:2222").unwrap();
    /// assert_eq!(target.user.as_deref(), Some("ann"));
    /// assert_eq!(target.host, "build.example.com");
    /// assert_eq!(target.port, Some(2222));
    /// assert_eq!(target.to_string(), "ssh://ann@build.example.com:2222");
    /// assert!(SshTarget::parse("ssh://-oProxyCommand=x").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<Self, SshTargetError> {
        let Some(rest) = text.strip_prefix(SCHEME) else {
            return Err(SshTargetError(format!(
                "must look like ssh://[user@]host[:port], got {text:?}"
            )));
        };
        if rest.contains('/') {
            return Err(SshTargetError(format!(
                "must look like ssh://[user@]host[:port], without a path: `/` after `ssh://` \
                 is not allowed, got {text:?}"
            )));
        }
        let (user, address) = match rest.split_once('@') {
            Some((_, address)) if address.contains('@') => {
                return Err(SshTargetError(format!(
                    "must have at most one `@`, got {text:?}"
                )));
            }
            Some((user, address)) => (Some(checked_name("user", user)?), address),
            None => (None, rest),
        };
        let (host, port) = if let Some(bracketed) = address.strip_prefix('[') {
            let Some((inside, after)) = bracketed.split_once(']') else {
                return Err(SshTargetError(format!(
                    "the `[` of an IPv6 address has no `]`, got {text:?}"
                )));
            };
            if inside.parse::<Ipv6Addr>().is_err() {
                return Err(SshTargetError(format!(
                    "`[…]` must hold an IPv6 address, got {inside:?} in {text:?}"
                )));
            }
            let port = match after {
                "" => None,
                _ => match after.strip_prefix(':') {
                    Some(port) => Some(port),
                    None => {
                        return Err(SshTargetError(format!(
                            "only `:port` may follow the `]` of an IPv6 address, got {text:?}"
                        )));
                    }
                },
            };
            (inside.to_owned(), port)
        } else {
            let (host, port) = match address.split_once(':') {
                Some((_, port)) if port.contains(':') => {
                    return Err(SshTargetError(format!(
                        "an IPv6 address must be in brackets (ssh://[::1]:22), got {text:?}"
                    )));
                }
                Some((host, port)) => (host, Some(port)),
                None => (address, None),
            };
            (checked_name("host", host)?, port)
        };
        let port = port.map(checked_port).transpose()?;
        Ok(Self { user, host, port })
    }
}

impl std::str::FromStr for SshTarget {
    type Err = SshTargetError;

    fn from_str(text: &str) -> Result<Self, SshTargetError> {
        Self::parse(text)
    }
}

impl fmt::Display for SshTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(SCHEME)?;
        if let Some(user) = &self.user {
            write!(f, "{user}@")?;
        }
        if self.host.contains(':') {
            write!(f, "[{}]", self.host)?;
        } else {
            f.write_str(&self.host)?;
        }
        if let Some(port) = self.port {
            write!(f, ":{port}")?;
        }
        Ok(())
    }
}

/// A user or host name: not empty, not starting with `-`, only ASCII letters, digits, `.`, `_`
/// and `-`.
fn checked_name(what: &str, name: &str) -> Result<String, SshTargetError> {
    if name.is_empty() {
        return Err(SshTargetError(format!("the {what} is empty")));
    }
    if name.starts_with('-') {
        return Err(SshTargetError(format!(
            "the {what} must not start with `-` (ssh would read it as an option), got {name:?}"
        )));
    }
    if let Some(bad) = name
        .chars()
        .find(|&c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Err(SshTargetError(format!(
            "the {what} must hold only ASCII letters, digits, `.`, `_` and `-`, got {bad:?} \
             in {name:?}"
        )));
    }
    Ok(name.to_owned())
}

/// A port: decimal digits only, 1 to 65535.
fn checked_port(port: &str) -> Result<u16, SshTargetError> {
    if port.is_empty() {
        return Err(SshTargetError("the port after `:` is empty".to_owned()));
    }
    port.bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| port.parse::<u16>().ok())
        .flatten()
        .filter(|&port| port != 0)
        .ok_or_else(|| {
            SshTargetError(format!(
                "the port must be a number from 1 to 65535, got {port:?}"
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(user: Option<&str>, host: &str, port: Option<u16>) -> SshTarget {
        SshTarget {
            user: user.map(str::to_owned),
            host: host.to_owned(),
            port,
        }
    }

    #[test]
    fn targets_parse_and_display_back() {
        let cases = [
            ("ssh://build", target(None, "build", None)),
            ("ssh://ann@build", target(Some("ann"), "build", None)),
            ("ssh://build:2222", target(None, "build", Some(2222))),
            (
                "ssh://a.b-c_d@host-1.example.com:65535",
                target(Some("a.b-c_d"), "host-1.example.com", Some(65535)),
            ),
            ("ssh://127.0.0.1:22", target(None, "127.0.0.1", Some(22))),
            ("ssh://[::1]", target(None, "::1", None)),
            (
                "ssh://root@[fe80::1:2]:2222",
                target(Some("root"), "fe80::1:2", Some(2222)),
            ),
        ];
        for (text, expected) in cases {
            let parsed = SshTarget::parse(text).unwrap_or_else(|err| panic!("{text}: {err}"));
            assert_eq!(parsed, expected, "{text}");
            assert_eq!(parsed.to_string(), text);
            assert_eq!(text.parse::<SshTarget>(), Ok(expected));
        }
    }

    #[test]
    fn targets_ssh_could_misread_are_refused() {
        let cases = [
            (
                "build",
                "must look like ssh://[user@]host[:port], got \"build\"",
            ),
            (
                "SSH://build",
                "must look like ssh://[user@]host[:port], got \"SSH://build\"",
            ),
            ("ssh://", "the host is empty"),
            ("ssh://ann@", "the host is empty"),
            ("ssh://@build", "the user is empty"),
            ("ssh://:22", "the host is empty"),
            (
                "ssh://-oProxyCommand=x",
                "the host must not start with `-` (ssh would read it as an option), got \"-oProxyCommand=x\"",
            ),
            (
                "ssh://-l@build",
                "the user must not start with `-` (ssh would read it as an option), got \"-l\"",
            ),
            (
                "ssh://bu ild",
                "the host must hold only ASCII letters, digits, `.`, `_` and `-`, got ' ' in \"bu ild\"",
            ),
            (
                "ssh://build\n",
                "the host must hold only ASCII letters, digits, `.`, `_` and `-`, got '\\n' in \"build\\n\"",
            ),
            (
                "ssh://an\tn@build",
                "the user must hold only ASCII letters, digits, `.`, `_` and `-`, got '\\t' in \"an\\tn\"",
            ),
            (
                "ssh://b$(id)",
                "the host must hold only ASCII letters, digits, `.`, `_` and `-`, got '$' in \"b$(id)\"",
            ),
            (
                "ssh://a@b@c",
                "must have at most one `@`, got \"ssh://a@b@c\"",
            ),
            (
                "ssh://build/dir",
                "must look like ssh://[user@]host[:port], without a path: `/` after `ssh://` is not allowed, got \"ssh://build/dir\"",
            ),
            ("ssh://build:", "the port after `:` is empty"),
            (
                "ssh://build:0",
                "the port must be a number from 1 to 65535, got \"0\"",
            ),
            (
                "ssh://build:65536",
                "the port must be a number from 1 to 65535, got \"65536\"",
            ),
            (
                "ssh://build:+22",
                "the port must be a number from 1 to 65535, got \"+22\"",
            ),
            (
                "ssh://build:22:23",
                "an IPv6 address must be in brackets (ssh://[::1]:22), got \"ssh://build:22:23\"",
            ),
            (
                "ssh://::1",
                "an IPv6 address must be in brackets (ssh://[::1]:22), got \"ssh://::1\"",
            ),
            (
                "ssh://[::1",
                "the `[` of an IPv6 address has no `]`, got \"ssh://[::1\"",
            ),
            (
                "ssh://[build]",
                "`[…]` must hold an IPv6 address, got \"build\" in \"ssh://[build]\"",
            ),
            (
                "ssh://[::1]x",
                "only `:port` may follow the `]` of an IPv6 address, got \"ssh://[::1]x\"",
            ),
            (
                "ssh://[::1]:0",
                "the port must be a number from 1 to 65535, got \"0\"",
            ),
            (
                "ssh://bü",
                "the host must hold only ASCII letters, digits, `.`, `_` and `-`, got 'ü' in \"bü\"",
            ),
        ];
        for (text, reason) in cases {
            assert_eq!(
                SshTarget::parse(text).map_err(|err| err.to_string()),
                Err(reason.to_owned()),
                "{text:?}"
            );
        }
    }
}
