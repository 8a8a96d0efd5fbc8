//! Remote execution's cost (issue 17), over a private sshd on loopback
//! (`agentsh_test_support::sshd`):
//!
//! - a `true` round trip through `agentsh rpc --remote ssh://…` once connected vs a plain
//!   `ssh host true` (goal ≤ 0.2×: the connection and the far side's shell persist);
//! - 100 MB through the connection (a `read_artifact` of a 100 MB artifact, the whole response
//!   line read here) vs `ssh host cat` of the same file.

use std::io::Read;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use agentsh_bench_support::Row;
use agentsh_test_support::sshd::{Sshd, sshd_available};

use super::{AGENTSH, BENCH, Env, RpcServer, paired};

/// Round trips per side.
const CALLS: usize = 100;
/// Alternating blocks.
const BLOCK: usize = 10;
/// Rounds of the transfer, best kept.
const TRANSFER_ROUNDS: usize = 3;

/// The rows; `bytes` for the transfer (100 MB unless quick).
pub fn rows(env: &Env, bytes: u64) {
    if !sshd_available() {
        eprintln!(
            "{BENCH}: remote: no /usr/sbin/sshd (scripts/install-test-deps installs it); skipped"
        );
        return;
    }
    let sshd = Sshd::start().expect("sshd starts");
    let config = env.root.join("remote.toml");
    let plain = std::fs::read_to_string(env.root.join("agentsh.toml")).expect("config");
    std::fs::write(
        &config,
        format!(
            "{plain}[remote]\nssh_command = {}\nagentsh_path = {}\n",
            serde_json::to_string(&sshd.ssh_command()).expect("json"),
            serde_json::to_string(AGENTSH).expect("json"),
        ),
    )
    .expect("remote config");
    let config = config.to_str().expect("a UTF-8 temp path");
    let target = sshd.target();
    let cwd = env.root.to_str().expect("a UTF-8 temp path");
    let args = ["rpc", "--config", config, "--remote", &target, "--cwd", cwd];
    let mut remote = RpcServer::start_with(env, Path::new(AGENTSH), &args, true);
    let ssh_true = || {
        let start = Instant::now();
        let status = sshd.command("true").status().expect("ssh");
        assert!(status.success(), "{}", sshd.log());
        start.elapsed()
    };
    paired(CALLS, BLOCK, || remote.call(), ssh_true).report(
        format!("rpc --remote ssh `true` round trip, connected (median of {CALLS})"),
        "ssh host true",
        2,
        0.2,
    );

    // A far-side artifact of `bytes` bytes in 80-byte lines.
    let produce = format!("yes {} | head -c {bytes}", "a".repeat(79));
    let (data, _) = remote.bash(&produce);
    let artifact = data["artifactId"]
        .as_str()
        .unwrap_or_else(|| panic!("an artifact: {data}"))
        .to_owned();
    // Where the far side keeps it (its own home's store; the far side is this machine).
    let (first, _) = remote.request_data(&serde_json::json!({
        "id": "path", "type": "read_artifact", "artifactId": artifact, "offset": 1, "limit": 1,
    }));
    let path = std::path::PathBuf::from(first["path"].as_str().expect("the artifact's path"));
    assert_eq!(
        std::fs::metadata(&path).map(|meta| meta.len()).ok(),
        Some(bytes),
        "the far side's artifact holds every byte"
    );
    let read = serde_json::json!({"id": "read", "type": "read_artifact", "artifactId": artifact});
    let mut through = Vec::new();
    let mut cat = Vec::new();
    for _ in 0..TRANSFER_ROUNDS {
        let (data, took) = remote.request_data(&read);
        // Every byte came back (the last line's newline may be left out of the text).
        let text = data["text"].as_str().map_or(0, str::len) as u64;
        assert!(
            text == bytes || text + 1 == bytes,
            "{text} of {bytes} bytes came back"
        );
        through.push(took);
        cat.push(ssh_cat(&sshd, &path, bytes));
    }
    remote.stop();
    let best = |runs: &[Duration]| runs.iter().min().copied().unwrap_or_default();
    let mb_s = |took: Duration| bytes as f64 / 1e6 / took.as_secs_f64();
    let (ours, floor) = (mb_s(best(&through)), mb_s(best(&cat)));
    Row::new(
        BENCH,
        format!(
            "{} MB through rpc --remote ssh (read_artifact), best of {TRANSFER_ROUNDS}",
            bytes / 1_000_000
        ),
    )
    .value(ours, "MB/s")
    .ratio(
        ours / floor,
        format!("ssh host cat of the same file, {floor:.0} MB/s"),
    )
    .report();
}

/// `ssh host cat FILE`, its output read and counted here, timed.
fn ssh_cat(sshd: &Sshd, path: &Path, bytes: u64) -> Duration {
    let start = Instant::now();
    let mut child = sshd
        .command(&format!("cat {}", path.display()))
        .stdout(Stdio::piped())
        .spawn()
        .expect("ssh cat");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = stdout.read(&mut buf).expect("read");
        if n == 0 {
            break;
        }
        total += n as u64;
    }
    assert!(child.wait().expect("wait").success());
    assert_eq!(total, bytes, "ssh cat brought every byte");
    start.elapsed()
}
