//! The approval policy's cost on a call (issue 27): a `true` tool call over `agentsh rpc` with a
//! 50-rule policy in the user's configuration against the same call on a server without a
//! policy, warm, sampled alternately in blocks (goal ≤ 1.10×: judging a line takes
//! microseconds, a call takes a fraction of a millisecond).

use std::path::Path;

use super::{AGENTSH, Env, RPC_BLOCK, RpcServer, WARM_UP_CALLS, paired};

/// The policy's 50 rules (git, npm, cargo, rm, curl… prefixes, some with globs, a few regexes).
const RULES: &str = include_str!("../../../../fixtures/policy/fifty-rules.toml");

/// The rows; `calls` warm calls per side.
pub fn rows(env: &Env, calls: usize) {
    let path = env.root.join("policy.toml");
    let plain = std::fs::read_to_string(env.root.join("agentsh.toml")).expect("config");
    // What no rule names is allowed, as a team that guards only the risky commands writes it.
    let policy = format!("[policy]\ndefault = \"allow\"\nunknown = \"ask\"\n{RULES}");
    std::fs::write(&path, format!("{plain}{policy}")).expect("policy config");
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
