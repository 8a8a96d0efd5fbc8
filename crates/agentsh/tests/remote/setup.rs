//! The far sides of the remote tests, and helpers over their RPC lines.

use agentsh_test_support::sshd::{Sshd, skip_without_sshd};
use serde_json::Value;

use crate::util::{AGENTSH, Finished, LIVENESS, Rpc, TestEnv, is_response};

/// A far side: a real sshd on loopback, or `agentsh rpc` under `unshare` through the generic
/// `command` transport.
pub enum Far {
    /// `--remote ssh://…` with `[remote] ssh_command = ["ssh", "-F", <config>]`.
    Ssh(Sshd),
    /// `[remote] command = ["unshare", "--mount", "--pid", "--fork", "--kill-child",
    /// "--mount-proc", "env", …, AGENTSH, "rpc"]` ([`unshare_command`]).
    Unshare,
}

impl Far {
    /// Every far side this machine offers.
    pub fn all(test: &str) -> Vec<Self> {
        let mut all = Vec::new();
        all.extend(Self::ssh(test));
        all.push(Self::Unshare);
        all
    }

    /// The sshd far side, or `None` (skipped) where sshd is missing outside CI.
    pub fn ssh(test: &str) -> Option<Self> {
        if skip_without_sshd(test) {
            return None;
        }
        Some(Self::Ssh(Sshd::start().expect("sshd starts")))
    }

    /// For messages.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Ssh(_) => "ssh",
            Self::Unshare => "unshare",
        }
    }

    /// Whether this is the sshd far side.
    pub fn is_ssh(&self) -> bool {
        matches!(self, Self::Ssh(_))
    }

    /// The program name of the local transport process (a child of the local agentsh).
    pub fn transport_comm(&self) -> &'static str {
        match self {
            Self::Ssh(_) => "ssh",
            Self::Unshare => "unshare",
        }
    }

    /// A test environment whose config has `extra`, then this far side's `[remote]` keys.
    pub fn env(&self, extra: &str) -> TestEnv {
        let env = TestEnv::with_config(extra);
        env.append_config(&self.remote_config(&env));
        env
    }

    /// The `[remote]` section for a far side in `env`.
    fn remote_config(&self, env: &TestEnv) -> String {
        match self {
            Self::Ssh(sshd) => format!(
                "[remote]\nssh_command = {}\nagentsh_path = {}\n",
                toml_array(&sshd.ssh_command()),
                toml_string(AGENTSH)
            ),
            Self::Unshare => format!(
                "[remote]\ncommand = {}\n",
                toml_array(&unshare_command(env))
            ),
        }
    }

    /// The flags that name this far side: `--remote TARGET` for ssh; none for the `command`
    /// transport, which is in the config.
    pub fn flags(&self) -> Vec<String> {
        match self {
            Self::Ssh(sshd) => vec!["--remote".to_owned(), sshd.target()],
            Self::Unshare => Vec::new(),
        }
    }

    /// `agentsh exec --config … <far side flags> <args…>`, waited for.
    pub fn exec(&self, env: &TestEnv, args: &[&str]) -> Finished {
        let flags = self.flags();
        let mut all: Vec<&str> = flags.iter().map(String::as_str).collect();
        all.extend_from_slice(args);
        env.exec(&all)
    }

    /// `agentsh rpc` forwarding to this far side, its session in the environment's work dir
    /// there (the same path: the far side is this machine).
    pub fn rpc(&self, env: &TestEnv) -> Rpc {
        self.rpc_with(env, &[])
    }

    /// [`Far::rpc`] with extra environment variables for the local agentsh.
    pub fn rpc_with(&self, env: &TestEnv, vars: &[(&str, &str)]) -> Rpc {
        let config = env.config_path();
        let work = env.work_dir();
        let mut args = vec![
            "rpc",
            "--config",
            config.to_str().expect("utf-8 path"),
            "--cwd",
            work.to_str().expect("utf-8 path"),
        ];
        let flags = self.flags();
        args.extend(flags.iter().map(String::as_str));
        let mut command = env.command(&args);
        command.envs(vars.iter().copied());
        Rpc::spawn(command)
    }

    /// Writes the far side's `~/.bashrc` (ssh only).
    pub fn write_bashrc(&self, text: &str) {
        if let Self::Ssh(sshd) = self {
            std::fs::write(sshd.home().join(".bashrc"), text).expect("write .bashrc");
        }
    }
}

/// `agentsh rpc` under `unshare` in new mount and PID namespaces, its shells' private
/// directories and its temp dirs in `env` (`far-run/`, `far-tmp/`, made here).
///
/// agentsh is PID 1 there: when the transport is killed, every process of the namespace dies
/// with it and nothing is left to remove those directories (the next agentsh start that looks
/// there would): in `env` they go with the test.
pub fn unshare_command(env: &TestEnv) -> Vec<String> {
    let run = env.root().join("far-run");
    let tmp = env.root().join("far-tmp");
    for dir in [&run, &tmp] {
        std::fs::create_dir_all(dir).expect("create dir");
    }
    [
        "unshare",
        "--mount",
        "--pid",
        "--fork",
        "--kill-child",
        "--mount-proc",
        "env",
    ]
    .into_iter()
    .map(str::to_owned)
    .chain([
        format!("XDG_RUNTIME_DIR={}", run.display()),
        format!("TMPDIR={}", tmp.display()),
        AGENTSH.to_owned(),
        "rpc".to_owned(),
    ])
    .collect()
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    serde_json::to_string(text).expect("a string serialises")
}

/// A TOML array of basic strings.
fn toml_array(words: &[String]) -> String {
    let words: Vec<String> = words.iter().map(|word| toml_string(word)).collect();
    format!("[{}]", words.join(", "))
}

/// Sends a `tool_call` and returns its events and its result (`data`), within [`LIVENESS`].
pub fn tool_call(rpc: &mut Rpc, call: &str, name: &str, arguments: &Value) -> (Vec<Value>, Value) {
    let id = format!("id-{call}");
    rpc.send_json(&serde_json::json!({
        "id": id, "type": "tool_call", "toolCallId": call, "name": name, "arguments": arguments,
    }));
    let mut lines = rpc.until(LIVENESS * 2, |line| is_response(line, &id));
    let response = lines.pop().expect("the response");
    assert_eq!(response["success"], true, "{response}");
    (lines, response["data"].clone())
}

/// A result's text, without a trailing newline.
pub fn body(result: &Value) -> &str {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .trim_end()
}

/// An event's `toolCallId`.
pub fn call_id(event: &Value) -> &str {
    event["toolCallId"].as_str().unwrap_or_default()
}
