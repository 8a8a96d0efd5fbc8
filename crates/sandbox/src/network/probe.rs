//! Whether a network allowlist can work on this host: the probe `agentsh doctor` runs.

use std::io::Read as _;
use std::os::fd::OwnedFd;
use std::path::Path;

use agentsh_process::sandbox::{Kernel, SandboxMode, SandboxNetwork, SandboxSpec};
use agentsh_process::{ChildStdio, SpawnSpec, Supervisor};

use super::SessionNetwork;

/// A host no list names: the probe's request must be refused.
const PROBE_HOST: &str = "agentsh-probe.invalid";

/// Checks, for real, that a sandbox with a network allowlist works here: the kernel can give a
/// sandboxed process a network namespace of its own (Landlock, user namespaces, seccomp), the
/// process's listener reaches a proxy outside, and the proxy answers through it — a `bash`
/// inside the sandbox connects to `127.0.0.1:<port>` and asks to `CONNECT` to a host the
/// probe's list does not name, and must read the proxy's `403`. Nothing leaves the machine
/// (the refused host is never resolved).
///
/// Returns what was seen on success; on failure, why the allowlist cannot work (the sandbox's
/// own reason when the kernel cannot enforce it).
///
/// Needs a tokio runtime with IO and time enabled.
///
/// # Errors
///
/// A sentence saying what failed.
pub async fn probe_network_allowlist() -> Result<String, String> {
    let bash = ["/bin/bash", "/usr/bin/bash"]
        .into_iter()
        .map(Path::new)
        .find(|path| path.is_file())
        .ok_or("no bash at /bin/bash or /usr/bin/bash to run the probe with")?;
    let temp = tempfile::Builder::new()
        .prefix("agentsh-probe-")
        .tempdir()
        .map_err(|err| format!("cannot make a temporary directory: {err}"))?;
    let isolated = SandboxSpec {
        mode: SandboxMode::ReadOnly,
        writable: vec![temp.path().to_path_buf()],
        read_only: Vec::new(),
        network: SandboxNetwork::Off,
        temp_dir: None,
        temp_fs: None,
    };
    agentsh_process::sandbox::check_with(&isolated, Kernel::probe()).map_err(|e| e.to_string())?;
    let network = SessionNetwork::new(&["agentsh-probe-allowed.invalid".to_owned()])
        .map_err(|err| err.to_string())?;
    let port = network.proxy.port;
    let policy = SandboxSpec {
        network: SandboxNetwork::Allowlist(network.proxy.clone()),
        temp_dir: None,
        temp_fs: None,
        ..isolated
    };
    let (mut reader, writer) =
        std::io::pipe().map_err(|err| format!("cannot make a pipe: {err}"))?;
    let writer: OwnedFd = writer.into();
    let mut spec = SpawnSpec::new(bash);
    spec.args = vec![
        "-c".into(),
        format!(
            "exec 3<>/dev/tcp/127.0.0.1/{port} && \
             printf 'CONNECT {PROBE_HOST}:443 HTTP/1.1\\r\\nHost: {PROBE_HOST}:443\\r\\n\\r\\n' >&3 && \
             head -c 12 <&3"
        )
        .into(),
    ];
    spec.env = vec![("PATH".into(), "/usr/bin:/bin".into())];
    spec.cwd = temp.path().to_path_buf();
    spec.stdio = [
        ChildStdio::Null,
        ChildStdio::Fd(writer.try_clone().map_err(|err| err.to_string())?),
        ChildStdio::Fd(writer),
    ];
    spec.sandbox = Some(policy);
    let mut supervisor = Supervisor::spawn(spec)
        .await
        .map_err(|err| format!("cannot start a sandboxed process: {err}"))?;
    let ended = tokio::time::timeout(std::time::Duration::from_secs(10), supervisor.wait_child())
        .await
        .map_err(|_| "the sandboxed process did not end within 10 s".to_owned())
        .and_then(|exit| exit.map_err(|err| err.to_string()));
    let refused = supervisor
        .network_link()
        .map(|link| link.refused_since(0))
        .unwrap_or_default();
    let handed_over = supervisor.network_link().is_some();
    supervisor.shutdown().await;
    network.shut_down();
    ended?;
    let mut answer = String::new();
    let _ = reader.read_to_string(&mut answer);
    if !handed_over {
        return Err("the sandboxed process did not hand its listener over".to_owned());
    }
    let expected = format!("{PROBE_HOST}:443");
    if answer.starts_with("HTTP/1.1 403") && refused == [expected] {
        Ok(format!(
            "a sandboxed process reached the proxy at 127.0.0.1:{port} in its own network \
             namespace and was refused an unlisted host"
        ))
    } else {
        Err(format!(
            "the proxy did not answer the sandboxed process as expected: it read {answer:?}"
        ))
    }
}
