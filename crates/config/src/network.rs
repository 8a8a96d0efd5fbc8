//! `sandbox.network`: `false`, `true`, or the list of hosts a sandboxed command may reach
//! through the session's proxy.

use std::fmt;

use agentsh_net_proxy::Allowlist;
use serde::Deserialize;
use serde::de::{self, Deserializer, SeqAccess, Visitor};

use super::key_path::{Invalid, invalid};

/// `sandbox.network`: how sandboxed commands reach the network.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum NetworkSetting {
    /// `false` (default): a private network namespace with loopback only, no
    /// `socket(AF_UNIX, …)`.
    #[default]
    Off,
    /// `true`: the machine's network.
    On,
    /// A list of hosts (`"github.com"`, `"*.pythonhosted.org"`, `"registry.npmjs.org:443"`,
    /// `"10.1.2.3"`): as `false`, and the listed hosts reached through the session's proxy,
    /// as written (each entry checked at load).
    Allowlist(Vec<String>),
}

impl NetworkSetting {
    /// The allowed hosts of a list, as written.
    pub fn hosts(&self) -> Option<&[String]> {
        match self {
            Self::Allowlist(hosts) => Some(hosts),
            Self::Off | Self::On => None,
        }
    }
}

/// `sandbox.network` as written: a boolean or a list of strings.
pub(super) struct RawNetwork(NetworkSetting);

impl<'de> Deserialize<'de> for RawNetwork {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NetworkVisitor;
        impl<'de> Visitor<'de> for NetworkVisitor {
            type Value = RawNetwork;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("true, false or a list of hosts")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<RawNetwork, E> {
                Ok(RawNetwork(if v {
                    NetworkSetting::On
                } else {
                    NetworkSetting::Off
                }))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawNetwork, A::Error> {
                let mut hosts = Vec::new();
                while let Some(host) = seq.next_element::<String>()? {
                    hosts.push(host);
                }
                Ok(RawNetwork(NetworkSetting::Allowlist(hosts)))
            }
        }
        deserializer.deserialize_any(NetworkVisitor)
    }
}

impl RawNetwork {
    /// The setting, each listed host checked (a bad one names its index); a list needs a
    /// sandbox (`sandbox_on`), having no namespace to keep the rest out otherwise.
    pub(super) fn check(self, sandbox_on: bool) -> Result<NetworkSetting, Invalid> {
        let Self(setting) = self;
        if let NetworkSetting::Allowlist(hosts) = &setting {
            if !sandbox_on {
                return Err(invalid(
                    "sandbox.network",
                    "a list of hosts needs sandbox.mode `read-only` or `workspace-write` \
                     (with the sandbox off every host is reachable)",
                ));
            }
            for (index, host) in hosts.iter().enumerate() {
                Allowlist::parse(std::slice::from_ref(host)).map_err(|err| {
                    invalid(&format!("sandbox.network[{index}]"), err.to_string())
                })?;
            }
        }
        Ok(setting)
    }
}
