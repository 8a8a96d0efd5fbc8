//! Name resolution: the system's resolver, or a fixed map for tests.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;

/// The environment variable that replaces the system's resolver with a fixed map:
/// `name=127.0.0.1,other.test=127.0.0.2,v6.test=::1` (a name may appear more than once, for
/// several addresses). While it is set, a name the map does not hold does not resolve: no
/// query reaches the system's resolver.
pub const TEST_RESOLVE_ENV: &str = "AGENTSH_TEST_RESOLVE";

/// Where names are resolved: the system's resolver or a fixed map.
///
/// The proxy resolves a name once per connection (or request), and the addresses it checks
/// are the ones it connects to.
///
/// ```
/// use agentsh_net_proxy::Resolver;
///
/// let resolver = Resolver::test_map("pypi.test=127.0.0.1, pypi.test=::1").unwrap();
/// assert!(resolver.is_test_map());
/// let err = Resolver::test_map("pypi.test").unwrap_err();
/// assert_eq!(err.to_string(),
///     "AGENTSH_TEST_RESOLVE: `pypi.test`: expected name=address");
/// ```
#[derive(Debug, Clone, Default)]
pub struct Resolver {
    map: Option<Arc<HashMap<String, Vec<IpAddr>>>>,
}

/// A test map that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{TEST_RESOLVE_ENV}: `{part}`: {reason}")]
pub struct ResolverError {
    /// The part of the map that is wrong.
    pub part: String,
    /// Why.
    pub reason: &'static str,
}

impl Resolver {
    /// The system's resolver.
    pub fn system() -> Self {
        Self::default()
    }

    /// A fixed map, written as [`TEST_RESOLVE_ENV`] is: comma-separated `name=address`.
    /// Names are compared case-insensitively, without a trailing dot.
    pub fn test_map(spec: &str) -> Result<Self, ResolverError> {
        let mut map: HashMap<String, Vec<IpAddr>> = HashMap::new();
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let error = |reason| ResolverError {
                part: part.to_owned(),
                reason,
            };
            let (name, addr) = part
                .split_once('=')
                .ok_or_else(|| error("expected name=address"))?;
            let name = normalize(name.trim());
            if name.is_empty() {
                return Err(error("the name is empty"));
            }
            let addr = addr.trim();
            let bare = addr
                .strip_prefix('[')
                .and_then(|a| a.strip_suffix(']'))
                .unwrap_or(addr);
            let addr: IpAddr = bare
                .parse()
                .map_err(|_| error("the address is not an IP address"))?;
            map.entry(name).or_default().push(addr);
        }
        Ok(Self {
            map: Some(Arc::new(map)),
        })
    }

    /// The map of [`TEST_RESOLVE_ENV`] when it is set, else the system's resolver.
    pub fn from_env() -> Result<Self, ResolverError> {
        match std::env::var_os(TEST_RESOLVE_ENV) {
            None => Ok(Self::system()),
            Some(value) => match value.to_str() {
                Some(spec) => Self::test_map(spec),
                None => Err(ResolverError {
                    part: value.to_string_lossy().into_owned(),
                    reason: "not UTF-8",
                }),
            },
        }
    }

    /// Whether this is a fixed map rather than the system's resolver.
    pub fn is_test_map(&self) -> bool {
        self.map.is_some()
    }

    /// The addresses of `name`, in the resolver's order; empty when it does not resolve.
    pub async fn lookup(&self, name: &str) -> Vec<IpAddr> {
        let name = normalize(name);
        match &self.map {
            Some(map) => map.get(&name).cloned().unwrap_or_default(),
            None => match tokio::net::lookup_host((name.as_str(), 0)).await {
                Ok(addrs) => {
                    let mut found: Vec<IpAddr> = Vec::new();
                    for addr in addrs {
                        if !found.contains(&addr.ip()) {
                            found.push(addr.ip());
                        }
                    }
                    found
                }
                Err(err) => {
                    tracing::debug!(%name, %err, "name does not resolve");
                    Vec::new()
                }
            },
        }
    }
}

/// A name as it is looked up: lower-case, without a trailing dot.
fn normalize(name: &str) -> String {
    name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(resolver: &Resolver, name: &str) -> Vec<String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        runtime
            .block_on(resolver.lookup(name))
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn test_maps_parse() {
        let resolver = Resolver::test_map(
            "pypi.test=127.0.0.1, Other.Test.=127.0.0.2,v6.test=[::1],pypi.test=::2,",
        )
        .expect("a valid map");
        let cases: &[(&str, &[&str])] = &[
            ("pypi.test", &["127.0.0.1", "::2"]),
            ("PYPI.test.", &["127.0.0.1", "::2"]),
            ("other.test", &["127.0.0.2"]),
            ("v6.test", &["::1"]),
            ("missing.test", &[]),
            ("localhost", &[]),
        ];
        for (name, expected) in cases {
            assert_eq!(lookup(&resolver, name), *expected, "{name}");
        }
        assert!(Resolver::test_map("").expect("empty").is_test_map());
        assert!(!Resolver::system().is_test_map());
    }

    #[test]
    fn bad_test_maps_name_the_bad_part() {
        let cases: &[(&str, &str, &str)] = &[
            ("a.test=127.0.0.1,b.test", "b.test", "expected name=address"),
            ("=127.0.0.1", "=127.0.0.1", "the name is empty"),
            (
                "a.test=127.1",
                "a.test=127.1",
                "the address is not an IP address",
            ),
            ("a.test=", "a.test=", "the address is not an IP address"),
            (
                "a.test=example.com",
                "a.test=example.com",
                "the address is not an IP address",
            ),
        ];
        for (spec, part, reason) in cases {
            let err = Resolver::test_map(spec).expect_err(spec);
            assert_eq!((err.part.as_str(), err.reason), (*part, *reason), "{spec}");
        }
    }
}
