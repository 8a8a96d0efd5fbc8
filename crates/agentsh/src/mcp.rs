//! MCP mode: `agentsh mcp` serves the bash tool, the job tools and the session's artifacts to
//! an MCP client on stdio (crate `agentsh-mcp`, over a session here or, with `--remote`, on a
//! far side).
//!
//! One session per connection. `yield_after` defaults to `mcp.yield_after` (45 s) here, below
//! common clients' request limits. End of input ends every job and shell and exits 0; SIGINT,
//! SIGTERM and SIGHUP do the same with 130, 143 and 129.

use std::process::ExitCode;

use agentsh_mcp::{McpOptions, ToolSpec};

use crate::cli::McpArgs;
use crate::usage_error;

/// Runs `agentsh mcp` until stdin ends.
pub fn run(args: &McpArgs) -> ExitCode {
    let settings = match crate::config::load_settings(args.session.config.as_deref()) {
        Ok(settings) => settings,
        Err(err) => return usage_error(&err),
    };
    let remote = match crate::remote::choose(&args.remote, &settings, args.session.cwd.as_deref()) {
        Ok(remote) => remote.map(|mut remote| {
            // `mcp.yield_after` wins over `bash.yield_after` here: on the far side too.
            remote.set_yield_after(settings.mcp.yield_after);
            remote
        }),
        Err(message) => return usage_error(&message),
    };
    let (runtime, signals, session) = match crate::serve_session(
        "mcp",
        args.session.config.as_deref(),
        args.session.cwd.as_deref(),
        remote,
        // `mcp.yield_after` wins over `bash.yield_after` here.
        |settings| settings.bash.yield_after = settings.mcp.yield_after,
    ) {
        Ok(started) => started,
        Err(code) => return code,
    };
    let options = McpOptions {
        tools: tool_specs(settings.output.max_bytes),
        tool_names: args.tools.clone(),
        output_max_bytes: settings.output.max_bytes,
        yield_after: settings.mcp.yield_after,
    };
    agentsh_mcp::serve_stdio(runtime, session, options, signals)
        .map_or(ExitCode::SUCCESS, ExitCode::from)
}

/// The tools offered: `bash`, then the job tools, each with its arguments' schema, their
/// descriptions naming the configured output limit.
fn tool_specs(output_max_bytes: u64) -> Vec<ToolSpec> {
    agentsh_protocol::tool_specs(output_max_bytes)
        .into_iter()
        .map(|(name, description, input_schema)| ToolSpec {
            name: name.to_owned(),
            description,
            input_schema,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_and_the_job_tools_are_offered_with_object_schemas() {
        let tools = tool_specs(agentsh_protocol::DEFAULT_OUTPUT_MAX_BYTES);
        let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
        assert_eq!(
            names,
            ["bash", "job_output", "job_input", "job_kill", "job_list"]
        );
        for tool in &tools {
            assert_eq!(
                tool.input_schema.get("type"),
                Some(&serde_json::json!("object")),
                "{}",
                tool.name
            );
            assert!(!tool.description.is_empty(), "{}", tool.name);
        }
    }
}
