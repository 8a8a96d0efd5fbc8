//! The per-call cost of a change: this build's round trips against another agentsh binary's
//! (`AGENTSH_BENCH_BASELINE`, e.g. a release build from before the change), sampled
//! alternately (goal ≤ 1.05× each): the `bash` request, the `tool_call` of `bash` and the MCP
//! `tools/call` in blocks of calls to one warm server each, and `agentsh exec -- true` one run
//! each in turn.

use std::path::Path;

use std::time::Instant;

use super::mcp::McpServer;
use super::{AGENTSH, Env, Paired, RPC_BLOCK, RpcServer, paired};

/// The `true` round trip of this build against another agentsh binary (`AGENTSH_BENCH_BASELINE`,
/// e.g. a build from before a change), sampled alternately in blocks: the per-call cost of
/// what a change added.
pub(crate) fn rpc(env: &Env, baseline: &Path, calls: usize) -> Paired {
    let mut subject = RpcServer::start(env, Path::new(AGENTSH));
    let mut base = RpcServer::start(env, baseline);
    let timings = paired(calls, RPC_BLOCK, || subject.call(), || base.call());
    subject.stop();
    base.stop();
    timings
}

/// [`rpc`] for a `tool_call` of `bash` `true` (the model's tool path).
pub(crate) fn rpc_tool_call(env: &Env, baseline: &Path, calls: usize) -> Paired {
    let mut subject = RpcServer::start(env, Path::new(AGENTSH));
    let mut base = RpcServer::start(env, baseline);
    let timings = paired(
        calls,
        RPC_BLOCK,
        || subject.tool_true(),
        || base.tool_true(),
    );
    subject.stop();
    base.stop();
    timings
}

/// The MCP round trip of this build against another agentsh binary's
/// (`AGENTSH_BENCH_BASELINE`), sampled alternately in blocks.
pub(crate) fn mcp(env: &Env, baseline: &Path, calls: usize) -> Paired {
    let mut subject = McpServer::start(env, Path::new(AGENTSH));
    let mut base = McpServer::start(env, baseline);
    let timings = paired(calls, RPC_BLOCK, || subject.call(), || base.call());
    subject.stop();
    base.stop();
    timings
}

/// `agentsh exec -- true` of this build against another agentsh binary's
/// (`AGENTSH_BENCH_BASELINE`), one run of each in turn, after a warm-up run of each (the rc
/// snapshot is cached by then).
pub(crate) fn exec(env: &Env, baseline: &Path, runs: usize) -> Paired {
    let once = |binary: &Path| {
        let start = Instant::now();
        let status = env
            .binary(binary, &["exec", "--", "true"])
            .status()
            .expect("agentsh exec");
        assert!(status.success(), "{} exec -- true failed", binary.display());
        start.elapsed()
    };
    let subject = Path::new(AGENTSH);
    once(subject);
    once(baseline);
    paired(runs, 1, || once(subject), || once(baseline))
}
