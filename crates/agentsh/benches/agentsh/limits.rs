//! The cost of resource limits (issue 42): a warm `true` round trip over `agentsh rpc` with
//! every limit on (memory, processes, CPU time) against the same server with them off, on each
//! mechanism this machine has: its own (a cgroup the kernel holds, where agentsh may write one)
//! and the watchdog every Linux has (goal ≤ 1.05× each: an ordinary command costs a read of its
//! cgroup, or nothing until the watchdog's first look at 100 ms).

use std::path::Path;

use super::{AGENTSH, Env, RPC_BLOCK, RpcServer, WARM_UP_CALLS, paired};

/// Writes a config next to the environment's own with `limits` appended; returns its path.
fn config_with(env: &Env, name: &str, limits: &str) -> std::path::PathBuf {
    let path = env.root.join(name);
    let plain = std::fs::read_to_string(env.root.join("agentsh.toml")).expect("config");
    std::fs::write(&path, format!("{plain}[limits]\n{limits}")).expect("limits config");
    path
}

/// A warm server with `config`, its limits by `mechanism` (`None`: agentsh's choice).
fn server(env: &Env, config: &Path, mechanism: Option<&str>) -> RpcServer {
    let config = config.to_str().expect("a UTF-8 temp path");
    let mut command = env.binary(Path::new(AGENTSH), &["rpc", "--config", config]);
    if let Some(mechanism) = mechanism {
        command.env("AGENTSH_LIMITS_MECHANISM", mechanism);
    }
    let mut server = RpcServer::spawn(command);
    for _ in 0..WARM_UP_CALLS {
        server.call();
    }
    server
}

/// The rows; `calls` warm calls per side.
pub fn rows(env: &Env, calls: usize) {
    let on = config_with(
        env,
        "limits-on.toml",
        "memory = \"4GiB\"\nprocesses = 4096\ncpu_time = 3600\n",
    );
    let off = config_with(
        env,
        "limits-off.toml",
        "memory = \"off\"\nprocesses = \"off\"\ncpu_time = \"off\"\n",
    );
    let here = agentsh_process::limits_mechanism();
    let mut mechanisms = vec![("the watchdog", Some("watchdog"))];
    if here.is_kernel_enforced() {
        mechanisms.insert(0, ("cgroups", None));
    }
    for (name, mechanism) in mechanisms {
        let mut limited = server(env, &on, mechanism);
        let mut unlimited = server(env, &off, mechanism);
        paired(calls, RPC_BLOCK, || limited.call(), || unlimited.call()).report(
            format!("rpc `true` round trip, limits on vs off, {name}, warm (median of {calls})"),
            "the same server with limits off",
            3,
            1.05,
        );
        limited.stop();
        unlimited.stop();
    }
}
