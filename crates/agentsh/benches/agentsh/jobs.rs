//! The `jobs` group (issue 12): what background jobs cost.
//!
//! - `run_in_background` of `true`, from the request to its result (a new shell per job), vs
//!   spawning `bash -c true`.
//! - `job_output` round trip on an idle job (a `sleep 300` job with no new output), vs a
//!   foreground `true` tool call on the same server.
//! - a foreground `true` tool call on a server with 10 `sleep 300` jobs running vs one without
//!   jobs, sampled alternately in blocks (goal ≤ 1.05×: jobs cost calls nothing).

use std::path::Path;
use std::time::Duration;

use agentsh_bench_support::{Row, median};
use serde_json::{Value, json};

use super::{
    AGENTSH, BENCH, Env, Paired, RPC_BLOCK, RpcServer, WARM_UP_CALLS, paired, spawn_bash_true,
};

/// Jobs running on the server of the "with jobs" row.
const IDLE_JOBS: usize = 10;

impl RpcServer {
    /// One `tool_call` of tool `name` with `arguments`, timed until its response; returns the
    /// result.
    pub(crate) fn tool_call(&mut self, name: &str, arguments: &Value) -> (Value, Duration) {
        self.calls += 1;
        let id = self.calls.to_string();
        let request = json!({
            "id": id, "type": "tool_call", "toolCallId": id, "name": name, "arguments": arguments,
        });
        self.request_data(&request)
    }

    /// A foreground `true` tool call, timed (its result must be a success).
    pub(crate) fn tool_true(&mut self) -> Duration {
        let (result, elapsed) = self.tool_call("bash", &json!({"command": "true"}));
        assert_eq!(result["isError"], false, "{result}");
        elapsed
    }

    /// Whether a `bash` tool call of `command` ends with an error result.
    pub(crate) fn tool_is_error(&mut self, command: &str) -> bool {
        let (result, _) = self.tool_call("bash", &json!({"command": command}));
        result["isError"] == true
    }

    /// Starts `command` as a job: its id.
    fn start_job(&mut self, command: &str) -> String {
        let (result, _) = self.tool_call(
            "bash",
            &json!({"command": command, "run_in_background": true}),
        );
        assert_eq!(result["isError"], false, "{result}");
        result["details"]["job"]["id"]
            .as_str()
            .unwrap_or_else(|| panic!("a job: {result}"))
            .to_owned()
    }

    /// A server warmed up on the tool-call surface too (its tool shell started).
    fn start_for_tools(env: &Env) -> Self {
        let mut server = Self::start(env, Path::new(AGENTSH));
        for _ in 0..WARM_UP_CALLS {
            server.tool_true();
        }
        server
    }
}

/// The rows of the `jobs` group, `calls` samples each.
pub fn rows(env: &Env, calls: usize) {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;

    let mut server = RpcServer::start_for_tools(env);
    let background = paired(
        calls,
        RPC_BLOCK,
        || {
            let (result, elapsed) = server.tool_call(
                "bash",
                &json!({"command": "true", "run_in_background": true}),
            );
            assert_eq!(result["isError"], false, "{result}");
            assert!(result["details"]["job"].is_object(), "a job: {result}");
            elapsed
        },
        spawn_bash_true,
    );
    Row::new(
        BENCH,
        format!("rpc tool_call `true` with run_in_background, to its result (median of {calls})"),
    )
    .value(ms(background.subject), "ms")
    .ratio(
        background.ratio(),
        format!("spawning bash -c true, {:.2} ms", ms(background.baseline)),
    )
    .report();

    let idle = server.start_job("sleep 300");
    let arguments = json!({"jobId": idle});
    // Both on one server: blocks of `job_output`, then as many `true` calls.
    let (mut outputs, mut trues) = (Vec::with_capacity(calls), Vec::with_capacity(calls));
    while outputs.len() < calls {
        let count = RPC_BLOCK.min(calls - outputs.len());
        for _ in 0..count {
            let (result, elapsed) = server.tool_call("job_output", &arguments);
            assert_eq!(result["isError"], false, "{result}");
            outputs.push(elapsed);
        }
        trues.extend((0..count).map(|_| server.tool_true()));
    }
    let output = Paired {
        subject: median(&outputs),
        baseline: median(&trues),
    };
    Row::new(
        BENCH,
        format!("rpc job_output round trip on an idle job (median of {calls})"),
    )
    .value(ms(output.subject), "ms")
    .ratio(
        output.ratio(),
        format!(
            "a foreground `true` tool call, {:.3} ms",
            ms(output.baseline)
        ),
    )
    .report();
    server.stop();

    let mut without = RpcServer::start_for_tools(env);
    let mut with = RpcServer::start_for_tools(env);
    for _ in 0..IDLE_JOBS {
        with.start_job("sleep 300");
    }
    paired(
        calls,
        RPC_BLOCK,
        || with.tool_true(),
        || without.tool_true(),
    )
    .report(
        format!("rpc tool_call `true` with {IDLE_JOBS} jobs running (median of {calls})"),
        "the same call without jobs",
        3,
        1.05,
    );
    with.stop();
    without.stop();
}
