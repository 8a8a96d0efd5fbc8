//! `--remote TARGET` and `[remote]`: which far side a mode forwards to, and
//! `--remote-install`.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use agentsh_agent_session::POLICY_TIERS_KEY;
use agentsh_config::Settings;
use agentsh_protocol::SshTarget;

use crate::cli::RemoteArgs;
use crate::print_error;
use agentsh_remote::{
    CommandTransport, DEFAULT_LEASE, FarSide, RemoteConfig, RemoteHandle, SshTransport,
    Transport as _,
};
use agentsh_signals::Signals;

/// Overrides the far side's lease (seconds), for tests of a silent link that should not wait
/// 30 s; not a setting.
const LEASE_VARIABLE: &str = "AGENTSH_REMOTE_LEASE";

/// Where an installed agentsh goes on an ssh target, and is run from.
const INSTALL_PATH: &str = "~/.local/bin/agentsh";

/// The far side chosen by the flags and the configuration: `Ok(None)` runs locally.
pub fn choose(
    args: &RemoteArgs,
    settings: &Settings,
    cwd: Option<&Path>,
) -> Result<Option<Choice>, String> {
    let remote = &settings.remote;
    let target = match &args.remote {
        Some(text) => {
            Some(SshTarget::parse(text).map_err(|reason| format!("--remote {text}: {reason}"))?)
        }
        None => remote.target.clone(),
    };
    let transport = match (target, &remote.command) {
        (Some(target), _) => Via::Ssh(SshTransport {
            target,
            ssh_command: remote.ssh_command.clone(),
            agentsh_path: remote.agentsh_path.clone(),
        }),
        (None, Some(command)) => Via::Command(CommandTransport {
            command: command.clone(),
        }),
        (None, None) => {
            if args.remote_install {
                return Err("--remote-install needs an ssh target (--remote ssh://…)".to_owned());
            }
            return Ok(None);
        }
    };
    if args.remote_install && matches!(transport, Via::Command(_)) {
        return Err(
            "--remote-install works with ssh targets only; `[remote] command` is used as it is"
                .to_owned(),
        );
    }
    Ok(Some(Choice {
        transport,
        install: args.remote_install,
        far: FarSide {
            cwd: cwd.map(|dir| dir.to_string_lossy().into_owned()),
            lease: lease()?,
        },
        settings: hello_settings(settings)?,
    }))
}

/// What the hello of a far side carries: the execution sections as written, and the approval
/// policy's tiers of this host (its managed files, the user's `[policy]`, the project file of
/// the directory agentsh was started in), to which the far side adds its own managed files and
/// its cwd's project file.
fn hello_settings(settings: &Settings) -> Result<serde_json::Value, String> {
    let here = std::env::current_dir().map_err(|err| format!("current directory: {err}"))?;
    let policy = settings
        .load_policy(&here, |name| std::env::var_os(name))
        .map_err(|err| err.to_string())?;
    let mut hello = settings.execution_settings();
    // Always sent, also empty: the far side's own user configuration is not the client's.
    if let serde_json::Value::Object(sections) = &mut hello {
        let tiers = serde_json::to_value(policy.tiers()).map_err(|err| err.to_string())?;
        sections.insert(POLICY_TIERS_KEY.to_owned(), tiers);
    }
    Ok(hello)
}

/// The lease: 30 s, or `AGENTSH_REMOTE_LEASE`.
fn lease() -> Result<std::time::Duration, String> {
    let Some(text) = std::env::var_os(LEASE_VARIABLE) else {
        return Ok(DEFAULT_LEASE);
    };
    let text = text.to_string_lossy();
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|seconds| seconds.is_finite() && *seconds >= 0.3 && *seconds <= 86_400.0)
        .map(std::time::Duration::from_secs_f64)
        .ok_or_else(|| format!("{LEASE_VARIABLE}={text}: expected seconds between 0.3 and 86400"))
}

/// The two transports the binary offers.
#[derive(Debug, Clone)]
pub enum Via {
    /// `ssh://…`.
    Ssh(SshTransport),
    /// `[remote] command`.
    Command(CommandTransport),
}

/// A far side to connect to.
#[derive(Debug, Clone)]
pub struct Choice {
    transport: Via,
    install: bool,
    far: FarSide,
    settings: serde_json::Value,
}

impl Choice {
    /// Sets the far side's `bash.yield_after` (MCP mode's `mcp.yield_after`; `None`: never).
    pub fn set_yield_after(&mut self, seconds: Option<f64>) {
        if !self.settings.is_object() {
            self.settings = serde_json::Value::Object(serde_json::Map::new());
        }
        if let Some(sections) = self.settings.as_object_mut() {
            let bash = sections
                .entry("bash")
                .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
            if let Some(bash) = bash.as_object_mut() {
                // 0 is how the configuration says "never".
                bash.insert(
                    "yield_after".to_owned(),
                    serde_json::Value::from(seconds.unwrap_or(0.0)),
                );
            }
        }
    }

    /// How to reach the far side (installing agentsh there first with `--remote-install`).
    pub async fn config(self) -> Result<RemoteConfig, String> {
        let transport: Arc<dyn agentsh_remote::Transport> = match self.transport {
            Via::Ssh(ssh) if self.install => Arc::new(install(ssh).await?),
            Via::Ssh(ssh) => Arc::new(ssh),
            Via::Command(command) => Arc::new(command),
        };
        Ok(RemoteConfig {
            transport,
            far: self.far,
            settings: Some(self.settings),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        })
    }

    /// Connects (installing first with `--remote-install`) and says `hello`.
    pub async fn connect(self) -> Result<RemoteHandle, String> {
        RemoteHandle::connect(self.config().await?)
            .await
            .map_err(|err| err.to_string())
    }
}

/// A runtime, the signal handlers and a connected far-side session, for a server mode
/// (`rpc`, `mcp`); the exit status to end with when it cannot be had (2 when the far side
/// cannot be reached or refuses, the signal's when one came first), its error printed.
pub fn start_server(
    remote: Choice,
) -> Result<(tokio::runtime::Runtime, Signals, RemoteHandle), ExitCode> {
    let runtime = crate::runtime().map_err(|err| {
        print_error(&format_args!("cannot start the async runtime: {err}"));
        ExitCode::FAILURE
    })?;
    let connected = runtime.block_on(async {
        let mut signals = Signals::install()
            .map_err(|err| (format!("cannot handle signals: {err}"), ExitCode::FAILURE))?;
        tokio::select! {
            session = remote.connect() => session
                .map(|session| (signals, session))
                .map_err(|message| (message, ExitCode::from(2))),
            code = signals.recv() => Err((String::new(), ExitCode::from(code))),
        }
    });
    match connected {
        Ok((signals, session)) => Ok((runtime, signals, session)),
        Err((message, code)) => {
            if !message.is_empty() {
                print_error(&message);
            }
            Err(code)
        }
    }
}

/// `--remote-install`: the target's own agentsh when it runs, else this binary copied to
/// `~/.local/bin/agentsh` and checked.
async fn install(mut ssh: SshTransport) -> Result<SshTransport, String> {
    let target = ssh.describe();
    for path in [ssh.agentsh_path.clone(), INSTALL_PATH.to_owned()] {
        if runs(&ssh, &path).await?.is_ok() {
            ssh.agentsh_path = path;
            return Ok(ssh);
        }
    }
    let binary = std::env::current_exe()
        .and_then(std::fs::read)
        .map_err(|err| format!("--remote-install: cannot read this agentsh binary: {err}"))?;
    // Written beside, then renamed: a failed copy never leaves a broken agentsh there.
    let copy = "mkdir -p ~/.local/bin && tmp=~/.local/bin/.agentsh.$$ && cat > \"$tmp\" && chmod 0755 \"$tmp\" && mv -f \"$tmp\" ~/.local/bin/agentsh";
    let copied = ssh
        .run(copy, Some(binary))
        .await
        .map_err(|err| format!("--remote-install: {err}"))?;
    if copied.status != Some(0) {
        return Err(format!(
            "--remote-install: copying agentsh to {target}:{INSTALL_PATH} failed: {}",
            explain(&ssh, &copied.stderr)
        ));
    }
    match runs(&ssh, INSTALL_PATH).await? {
        Ok(()) => {
            INSTALL_PATH.clone_into(&mut ssh.agentsh_path);
            Ok(ssh)
        }
        Err(why) => Err(format!(
            "--remote-install: the copied agentsh does not run on {target}: {why}"
        )),
    }
}

/// Whether `path --version` runs on the target and says it is agentsh (`Err` inside: why not;
/// `Err` outside: ssh itself failed).
async fn runs(ssh: &SshTransport, path: &str) -> Result<Result<(), String>, String> {
    let command = format!("{} --version", agentsh_remote::shell_word(path));
    let output = ssh
        .run(&command, None)
        .await
        .map_err(|err| format!("--remote-install: {err}"))?;
    // 255: ssh's own failure (unreachable, refused key, unknown host key).
    if output.status == Some(255) {
        return Err(format!(
            "cannot reach {}: {}",
            ssh.describe(),
            explain(ssh, &output.stderr)
        ));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    if output.status == Some(0) && stdout.starts_with("agentsh ") {
        Ok(Ok(()))
    } else {
        Ok(Err(explain(ssh, &output.stderr)))
    }
}

/// ssh's stderr as the reason of a failure.
fn explain(ssh: &SshTransport, stderr: &str) -> String {
    ssh.explain(stderr).unwrap_or_else(|| {
        let text = stderr.trim();
        if text.is_empty() {
            "no message".to_owned()
        } else {
            text.to_owned()
        }
    })
}
