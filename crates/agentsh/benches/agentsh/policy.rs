//! The approval policy's cost on a call (issue 27): a `true` tool call over `agentsh rpc` with a
//! 50-rule policy in the user's configuration against the same call on a server without a
//! policy, warm, sampled alternately in blocks (goal ≤ 1.10×: judging a line takes
//! microseconds, a call takes a fraction of a millisecond).

use std::path::Path;

use super::{AGENTSH, Env, RPC_BLOCK, RpcServer, WARM_UP_CALLS, paired};

/// The policy: 50 rules (git, npm, cargo, rm, curl… prefixes, some with globs, a few regexes)
/// that allow what no rule names, as a team that guards only the risky commands writes it.
const POLICY: &str = r#"
[policy]
default = "allow"
unknown = "ask"
rules = [
  { prefix = ["rm", "-rf", "/"], decision = "deny", reason = "Deleting the root is never right." },
  { prefix = ["rm", "-r*"], decision = "ask" },
  { prefix = ["rm"], decision = "ask" },
  { prefix = ["sudo"], decision = "ask" },
  { prefix = ["git", "push", "--force*"], decision = "deny" },
  { prefix = ["git", "push"], decision = "ask", reason = "Pushing publishes work." },
  { prefix = ["git", "reset", "--hard"], decision = "ask" },
  { prefix = ["git", "clean", "-*f*"], decision = "ask" },
  { prefix = ["git", "status"], decision = "allow" },
  { prefix = ["git", "log"], decision = "allow" },
  { prefix = ["git", "diff"], decision = "allow" },
  { prefix = ["git", "show"], decision = "allow" },
  { prefix = ["git", "add"], decision = "allow" },
  { prefix = ["git", "commit"], decision = "allow" },
  { prefix = ["git", "checkout", "-b"], decision = "allow" },
  { prefix = ["git", "branch"], decision = "allow" },
  { prefix = ["npm", "publish"], decision = "deny" },
  { prefix = ["npm", "install"], decision = "ask" },
  { prefix = ["npm", "test"], decision = "allow" },
  { prefix = ["npm", "run", "*"], decision = "allow" },
  { prefix = ["cargo", "publish"], decision = "deny" },
  { prefix = ["cargo", "build"], decision = "allow" },
  { prefix = ["cargo", "test"], decision = "allow" },
  { prefix = ["cargo", "clippy"], decision = "allow" },
  { prefix = ["cargo", "fmt"], decision = "allow" },
  { prefix = ["curl"], decision = "ask" },
  { prefix = ["wget"], decision = "ask" },
  { regex = '(curl|wget) .*https?://(localhost|127\.0\.0\.1)[:/]', decision = "allow" },
  { prefix = ["ls"], decision = "allow" },
  { prefix = ["cat"], decision = "allow" },
  { prefix = ["grep"], decision = "allow" },
  { prefix = ["find"], decision = "allow" },
  { prefix = ["echo"], decision = "allow" },
  { prefix = ["head"], decision = "allow" },
  { prefix = ["tail"], decision = "allow" },
  { prefix = ["wc"], decision = "allow" },
  { prefix = ["sort"], decision = "allow" },
  { prefix = ["uniq"], decision = "allow" },
  { prefix = ["awk"], decision = "allow" },
  { prefix = ["sed", "-i*"], decision = "ask" },
  { prefix = ["sed"], decision = "allow" },
  { prefix = ["chmod", "777", "*"], decision = "deny" },
  { prefix = ["chmod"], decision = "ask" },
  { prefix = ["chown"], decision = "ask" },
  { prefix = ["dd"], decision = "deny" },
  { prefix = ["mkfs*"], decision = "deny" },
  { regex = '(shutdown|reboot|halt|poweroff)( |$)', decision = "deny" },
  { prefix = ["kill", "-9", "*"], decision = "ask" },
  { prefix = ["docker", "run", "--privileged"], decision = "deny" },
  { regex = 'ssh(-keygen)? ', decision = "ask" },
]

"#;

/// The rows; `calls` warm calls per side.
pub fn rows(env: &Env, calls: usize) {
    let path = env.root.join("policy.toml");
    let plain = std::fs::read_to_string(env.root.join("agentsh.toml")).expect("config");
    std::fs::write(&path, format!("{plain}{POLICY}")).expect("policy config");
    let config = path.to_str().expect("a UTF-8 temp path");
    let mut judged =
        RpcServer::start_with(env, Path::new(AGENTSH), &["rpc", "--config", config], false);
    let mut plain = RpcServer::start_with(env, Path::new(AGENTSH), &["rpc"], false);
    for _ in 0..WARM_UP_CALLS {
        judged.tool_true();
        plain.tool_true();
    }
    // What is measured is a policy: a denied command is refused there, not here.
    assert!(judged.tool_is_error("dd if=/dev/zero of=/dev/null count=1"));
    assert!(!plain.tool_is_error("dd if=/dev/zero of=/dev/null count=1"));
    paired(
        calls,
        RPC_BLOCK,
        || judged.tool_true(),
        || plain.tool_true(),
    )
    .report(
        format!("rpc `true` tool call, 50-rule policy vs none, warm (median of {calls})"),
        "the same call on a server without a policy",
        3,
        1.10,
    );
    judged.stop();
    plain.stop();
}
