//! `[remote]`: where commands run when they run on another machine. Its `target`
//! is parsed by protocol's [`SshTarget::parse`].

use serde::Deserialize;

use agentsh_protocol::SshTarget;

use super::key_path::{Invalid, invalid};

/// Default of `remote.ssh_command`: the system `ssh`, found on `PATH`.
pub const DEFAULT_SSH_COMMAND: &[&str] = &["ssh"];
/// Default of `remote.agentsh_path`: `agentsh`, found on the far side's `PATH`.
pub const DEFAULT_AGENTSH_PATH: &str = "agentsh";

/// `[remote]`: run every command on another machine. At most one of `target` and
/// `command` is set; with neither, commands run here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteSettings {
    /// `target`: `ssh://[user@]host[:port]`, reached through `ssh_command`. Default: none.
    pub target: Option<SshTarget>,
    /// `command`: a program and its arguments whose stdin and stdout reach a far `agentsh rpc`
    /// (`["kubectl", "exec", "-i", "POD", "--", "agentsh", "rpc"]`); never empty, its program
    /// never empty. Default: none.
    pub command: Option<Vec<String>>,
    /// `ssh_command`: the program and leading arguments that replace `ssh` for a `target`;
    /// never empty, its program never empty. Default `["ssh"]`.
    pub ssh_command: Vec<String>,
    /// `agentsh_path`: the far side's agentsh binary for a `target`; never empty, no control
    /// characters. It is a word of the remote command line, which the far side's shell reads:
    /// whoever builds that line quotes it. Default `agentsh`.
    pub agentsh_path: String,
}

impl Default for RemoteSettings {
    fn default() -> Self {
        Self {
            target: None,
            command: None,
            ssh_command: DEFAULT_SSH_COMMAND.iter().map(|&s| s.to_owned()).collect(),
            agentsh_path: DEFAULT_AGENTSH_PATH.to_owned(),
        }
    }
}

/// `[remote]` as written.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default, expecting = "a table")]
pub(super) struct RawRemote {
    target: Option<String>,
    command: Option<Vec<String>>,
    ssh_command: Option<Vec<String>>,
    agentsh_path: Option<String>,
}

impl RawRemote {
    pub(super) fn check(self) -> Result<RemoteSettings, Invalid> {
        if self.target.is_some() && self.command.is_some() {
            return Err(invalid(
                "remote",
                "`target` and `command` cannot both be set (`command` replaces ssh and its \
                 target altogether)",
            ));
        }
        let defaults = RemoteSettings::default();
        let agentsh_path = match self.agentsh_path {
            None => defaults.agentsh_path,
            Some(path) if path.is_empty() => {
                return Err(invalid("remote.agentsh_path", "must not be empty"));
            }
            Some(path) if path.chars().any(char::is_control) => {
                return Err(invalid(
                    "remote.agentsh_path",
                    format!("must not contain control characters, got {path:?}"),
                ));
            }
            Some(path) => path,
        };
        Ok(RemoteSettings {
            target: self
                .target
                .map(|target| SshTarget::parse(&target))
                .transpose()
                .map_err(|reason| invalid("remote.target", reason.to_string()))?,
            command: self
                .command
                .map(|argv| checked_argv("remote.command", argv))
                .transpose()?,
            ssh_command: match self.ssh_command {
                Some(argv) => checked_argv("remote.ssh_command", argv)?,
                None => defaults.ssh_command,
            },
            agentsh_path,
        })
    }
}

/// A program and its arguments: not empty, the program not empty, no NUL anywhere.
fn checked_argv(key: &str, argv: Vec<String>) -> Result<Vec<String>, Invalid> {
    if argv.is_empty() {
        return Err(invalid(
            key,
            "must not be empty: a program, then its arguments",
        ));
    }
    if argv[0].is_empty() {
        return Err(invalid(
            &format!("{key}[0]"),
            "the program must not be empty",
        ));
    }
    if let Some(index) = argv.iter().position(|arg| arg.contains('\0')) {
        return Err(invalid(
            &format!("{key}[{index}]"),
            "must not contain a NUL character",
        ));
    }
    Ok(argv)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::Settings;

    fn remote(text: &str) -> Result<RemoteSettings, String> {
        Settings::from_toml(text, Path::new("/x/config.toml"), None)
            .map(|settings| settings.remote)
            .map_err(|err| err.to_string())
    }

    #[test]
    fn the_remote_section_is_read() {
        assert_eq!(
            remote("").unwrap(),
            RemoteSettings {
                target: None,
                command: None,
                ssh_command: vec!["ssh".to_owned()],
                agentsh_path: "agentsh".to_owned(),
            }
        );
        assert_eq!(
            remote(
                "[remote]\ntarget = \"ssh://ann@box:2200\"\nssh_command = [\"ssh\", \"-F\", \"/cfg\"]\nagentsh_path = \"~/.local/bin/agentsh\"\n"
            )
            .unwrap(),
            RemoteSettings {
                target: Some(SshTarget {
                    user: Some("ann".to_owned()),
                    host: "box".to_owned(),
                    port: Some(2200),
                }),
                command: None,
                ssh_command: vec!["ssh".to_owned(), "-F".to_owned(), "/cfg".to_owned()],
                agentsh_path: "~/.local/bin/agentsh".to_owned(),
            }
        );
        assert_eq!(
            remote(
                "[remote]\ncommand = [\"docker\", \"exec\", \"-i\", \"c1\", \"agentsh\", \"rpc\"]\n"
            )
            .unwrap()
            .command,
            Some(
                ["docker", "exec", "-i", "c1", "agentsh", "rpc"]
                    .map(str::to_owned)
                    .to_vec()
            )
        );
    }

    #[test]
    fn bad_remote_values_name_file_key_and_reason() {
        let cases = [
            (
                "[remote]\ntarget = \"ssh://-oProxyCommand=sh\"",
                "remote.target: the host must not start with `-` (ssh would read it as an option), got \"-oProxyCommand=sh\"",
            ),
            (
                "[remote]\ntarget = \"box\"",
                "remote.target: must look like ssh://[user@]host[:port], got \"box\"",
            ),
            (
                "[remote]\ntarget = \"ssh://box:0\"",
                "remote.target: the port must be a number from 1 to 65535, got \"0\"",
            ),
            (
                "[remote]\ntarget = \"ssh://box\"\ncommand = [\"kubectl\"]",
                "remote: `target` and `command` cannot both be set (`command` replaces ssh and its target altogether)",
            ),
            (
                "[remote]\ncommand = []",
                "remote.command: must not be empty: a program, then its arguments",
            ),
            (
                "[remote]\ncommand = [\"\", \"x\"]",
                "remote.command[0]: the program must not be empty",
            ),
            (
                "[remote]\nssh_command = []",
                "remote.ssh_command: must not be empty: a program, then its arguments",
            ),
            (
                "[remote]\nssh_command = [\"ssh\", \"a\\u0000b\"]",
                "remote.ssh_command[1]: must not contain a NUL character",
            ),
            (
                "[remote]\nagentsh_path = \"\"",
                "remote.agentsh_path: must not be empty",
            ),
            (
                "[remote]\nagentsh_path = \"a\\nb\"",
                "remote.agentsh_path: must not contain control characters, got \"a\\nb\"",
            ),
            (
                "[remote]\ntarget = 3",
                "remote.target: invalid type: integer `3`, expected a string",
            ),
            (
                "[remote]\ncommand = \"kubectl exec\"",
                "remote.command: invalid type: string \"kubectl exec\", expected a sequence",
            ),
            (
                "[remote]\nhost = \"box\"",
                "remote.host: unknown field `host`, expected one of `target`, `command`, `ssh_command`, `agentsh_path`",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(
                remote(text),
                Err(format!("config error in /x/config.toml: {want}")),
                "{text}"
            );
        }
    }
}
