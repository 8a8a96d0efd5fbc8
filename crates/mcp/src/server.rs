//! The MCP handler: tools, their results and progress, cancellation, approvals through
//! elicitation, artifacts as resources, warnings as logging notifications.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agentsh_protocol::{BASH_TOOL, ToolResult, tail_of, unknown_tool};
use agentsh_seam::wire::ListedArtifact;
use agentsh_seam::{CancellationToken, Handle, HandleError, ToolCall, lock};

use crate::McpOptions;
use crate::approvals::Elicitation;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, Peer, RoleServer, ServerHandler};
use serde_json::{Value, json};

/// The most of an artifact `resources/read` returns whole.
const WHOLE_READ_LIMIT: u64 = 8 << 20;
/// Resources listed: the session's newest artifacts.
const LISTED_ARTIFACTS: usize = 100;
/// Progress messages: the tail of the output, at most this many bytes ...
const PROGRESS_TAIL: usize = 2048;
/// ... at most one per this interval ...
const PROGRESS_INTERVAL: Duration = Duration::from_secs(1);
/// ... and a heartbeat this often while the command is silent.
const HEARTBEAT: Duration = Duration::from_secs(15);

/// What the server tells a client about its tools, with the session's output limit and the
/// MCP yield time.
fn instructions(options: &McpOptions) -> String {
    format!(
        "agentsh runs shell commands for you. `bash` runs a command in a persistent shell: variables, functions and aliases persist between calls; the working directory is the project's unless you pass `cwd`. stdout and stderr are merged; output over {max} is cut to its end and kept whole as an `artifact://ID` resource (read it by line range). Use `head`/`tail` arguments instead of piping into head/tail, so the exit code stays the command's. Long-running or interactive programs (servers, watchers, REPLs, prompts): start them with `run_in_background` (and `pty: true` for a terminal), read them with `job_output` (`until` waits for a line), answer prompts with `job_input`, stop them with `job_kill`. A call still running after `yield_after` seconds ({yield_after}) returns with its output so far and goes on as a job.",
        max = agentsh_protocol::limit_text(options.output_max_bytes),
        yield_after = options.yield_after.map_or_else(
            || "never, by default: a call runs to its end".to_owned(),
            |seconds| format!("{} by default", agentsh_protocol::format_seconds(seconds)),
        ),
    )
}

/// Tells the client about every job of `session` that ends, as an `info` logging notification
/// whose data is the job's `job_end` event (and its line, `message`). Runs until the session
/// or the client is gone.
#[allow(deprecated)]
pub(crate) async fn report_job_ends(session: Handle, peer: Peer<RoleServer>) {
    let mut subscription = session.subscribe(false);
    while let Some(event) = subscription.recv().await {
        let agentsh_seam::SessionEvent::JobEnd(end) = event else {
            continue;
        };
        let command = session
            .status(agentsh_seam::Reach::IfConnected)
            .await
            .ok()
            .and_then(|status| {
                status
                    .jobs
                    .into_iter()
                    .find(|job| job.id == end.job_id)
                    .map(|job| job.command)
            });
        let mut data = serde_json::to_value(agentsh_protocol::wire::Message::job_end(&end))
            .unwrap_or_else(|_| json!({}));
        data["message"] = json!(end.line(command.as_deref()));
        let sent = peer
            .notify_logging_message(
                rmcp::model::LoggingMessageNotificationParam::new(
                    rmcp::model::LoggingLevel::Info,
                    data,
                )
                .with_logger("agentsh"),
            )
            .await;
        if sent.is_err() {
            return;
        }
    }
}

/// One connection's server: its session and its options.
#[derive(Clone)]
pub(crate) struct McpServer {
    session: Handle,
    options: Arc<McpOptions>,
    /// Cancelled at end of input: running calls are ended.
    ended: CancellationToken,
}

impl McpServer {
    pub(crate) fn new(session: Handle, options: McpOptions, ended: CancellationToken) -> Self {
        Self {
            session,
            options: Arc::new(options),
            ended,
        }
    }

    /// Warnings not yet reported, as logging notifications. Logging is deprecated by
    /// a later MCP revision (SEP-2577), but the clients of the versions agentsh negotiates show it.
    #[allow(deprecated)]
    async fn send_warnings(&self, peer: &Peer<RoleServer>) {
        for warning in self.session.take_warnings() {
            let _ = peer
                .notify_logging_message(
                    rmcp::model::LoggingMessageNotificationParam::new(
                        rmcp::model::LoggingLevel::Warning,
                        json!(warning),
                    )
                    .with_logger("agentsh"),
                )
                .await;
        }
    }

    async fn run_tool(
        &self,
        name: &str,
        arguments: &Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<ToolResult, McpError> {
        if name == BASH_TOOL {
            let progress = context
                .meta
                .get_progress_token()
                .map(|token| Arc::new(Mutex::new(Progress::new(token, context.peer.clone()))));
            let cancel = CancellationToken::new();
            let updates = progress.clone();
            let mut on_update = move |text: &str| {
                if let Some(progress) = &updates {
                    lock(progress).update(text);
                }
            };
            // Live updates are made only when the client asked for progress.
            let call = ToolCall {
                tool_names: &self.options.tool_names,
                cancel: cancel.clone(),
                on_update: progress
                    .is_some()
                    .then_some(&mut on_update as &mut (dyn FnMut(&str) + Send)),
                approver: Elicitation::for_call(context),
                ..ToolCall::new("mcp", BASH_TOOL, arguments)
            };
            let call = self.session.tool_call(call);
            tokio::pin!(call);
            // First due one period from now: a tick due "now" would still wait for the timer
            // driver's next turn, a millisecond on every call.
            let mut heartbeat =
                tokio::time::interval_at(tokio::time::Instant::now() + HEARTBEAT, HEARTBEAT);
            let mut cancelled = false;
            let outcome = loop {
                tokio::select! {
                    outcome = &mut call => break outcome.unwrap_or_else(HandleError::into_outcome),
                    // The client cancelled (no response is sent) or went away: the tree is
                    // ended.
                    () = context.ct.cancelled(), if !cancelled => {
                        cancelled = true;
                        cancel.cancel();
                    }
                    () = self.ended.cancelled(), if !cancelled => {
                        cancelled = true;
                        cancel.cancel();
                    }
                    _ = heartbeat.tick() => {
                        if let Some(progress) = &progress {
                            lock(progress).heartbeat();
                        }
                    }
                }
            };
            return Ok(outcome.into_result());
        }
        // A client's cancel ends the wait (the job goes on): the call is dropped. Text for a
        // PTY job's shell is judged as a command line, so the client may be asked here too.
        let job_tool = self.session.tool_call(ToolCall {
            approver: Elicitation::for_call(context),
            ..ToolCall::new("mcp", name, arguments)
        });
        tokio::pin!(job_tool);
        tokio::select! {
            outcome = &mut job_tool => Ok(outcome
                .unwrap_or_else(HandleError::into_outcome)
                .into_result()),
            () = context.ct.cancelled() => Err(McpError::internal_error("cancelled", None)),
            () = self.ended.cancelled() => Err(McpError::internal_error("end of input", None)),
        }
    }
}

fn unknown_tool_error(text: String) -> McpError {
    McpError::invalid_params(text, None)
}

/// Progress notifications of one call: a strictly increasing counter, the output's tail.
struct Progress {
    token: ProgressToken,
    peer: Peer<RoleServer>,
    counter: f64,
    throttle: Throttle,
}

impl Progress {
    fn new(token: ProgressToken, peer: Peer<RoleServer>) -> Self {
        Self {
            token,
            peer,
            counter: 0.0,
            throttle: Throttle::default(),
        }
    }

    fn update(&mut self, text: &str) {
        if let Some(message) = self.throttle.update(text, Instant::now()) {
            self.send(message);
        }
    }

    fn heartbeat(&mut self) {
        let message = self.throttle.heartbeat(Instant::now());
        self.send(message);
    }

    fn send(&mut self, message: String) {
        self.counter += 1.0;
        let param =
            ProgressNotificationParam::new(self.token.clone(), self.counter).with_message(message);
        let peer = self.peer.clone();
        tokio::spawn(async move {
            let _ = peer.notify_progress(param).await;
        });
    }
}

/// When a progress message goes out, and which: the output's tail (≤ [`PROGRESS_TAIL`]), at
/// most one per [`PROGRESS_INTERVAL`] (a newer tail waits for the heartbeat or the next update
/// after the interval); a heartbeat sends the waiting tail, or the last one again.
#[derive(Default)]
struct Throttle {
    last_sent: Option<Instant>,
    /// The latest tail not sent yet.
    pending: Option<String>,
    last_text: String,
}

impl Throttle {
    /// A new tail at `now`: the message to send now, if any.
    fn update(&mut self, text: &str, now: Instant) -> Option<String> {
        let tail = tail_of(text, PROGRESS_TAIL).to_owned();
        if self
            .last_sent
            .is_some_and(|sent| now.duration_since(sent) < PROGRESS_INTERVAL)
        {
            self.pending = Some(tail);
            return None;
        }
        Some(self.sent(tail, now))
    }

    /// The heartbeat's message at `now`.
    fn heartbeat(&mut self, now: Instant) -> String {
        let text = self
            .pending
            .take()
            .unwrap_or_else(|| self.last_text.clone());
        self.sent(text, now)
    }

    fn sent(&mut self, message: String, now: Instant) -> String {
        self.last_sent = Some(now);
        self.pending = None;
        self.last_text.clone_from(&message);
        message
    }
}

/// A tool result as MCP returns it: the text as content, and as `structuredContent.text` next to
/// the details.
fn to_mcp(result: &ToolResult) -> CallToolResult {
    let text = result.text();
    let mut structured = match serde_json::to_value(&result.details) {
        Ok(Value::Object(details)) => details,
        _ => serde_json::Map::new(),
    };
    structured.insert("text".to_owned(), Value::String(text.clone()));
    let mut out = if result.is_error {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    };
    out.structured_content = Some(Value::Object(structured));
    out
}

/// The `outputSchema` of every tool: the text, and the details beside it.
fn output_schema() -> Arc<JsonObject> {
    let schema = json!({
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "The result text, as in content."}
        },
        "required": ["text"],
        "additionalProperties": true
    });
    Arc::new(as_object(schema))
}

fn as_object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

/// The tools offered: each with its input schema and the one output schema.
fn tools(options: &McpOptions) -> Vec<Tool> {
    options
        .tools
        .iter()
        .map(|spec| {
            Tool::new(
                spec.name.clone(),
                spec.description.clone(),
                Arc::new(as_object(spec.input_schema.clone())),
            )
            .with_raw_output_schema(output_schema())
        })
        .collect()
}

/// `artifact://ID` or `artifact://ID?offset=N&limit=M`.
fn parse_uri(uri: &str) -> Result<(&str, Option<u64>, Option<u64>), McpError> {
    let (base, query) = uri.split_once('?').unwrap_or((uri, ""));
    let (mut offset, mut limit) = (None, None);
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let number = value.parse::<u64>().map_err(|_| {
            McpError::invalid_params(
                format!("{key} must be a whole number of lines, got {value:?} in {uri}"),
                None,
            )
        })?;
        match key {
            "offset" => offset = Some(number),
            "limit" => limit = Some(number),
            _ => {
                return Err(McpError::invalid_params(
                    format!("unknown parameter {key:?} in {uri} (offset, limit)"),
                    None,
                ));
            }
        }
    }
    Ok((base, offset, limit))
}

impl ServerHandler for McpServer {
    // `enable_logging`: see `send_warnings`.
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_logging()
                .build(),
        )
        .with_server_info(Implementation::new("agentsh", env!("CARGO_PKG_VERSION")))
        .with_instructions(instructions(&self.options))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools(&self.options)))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.as_ref();
        if let Some(unknown) = unknown_tool(name) {
            return Err(unknown_tool_error(unknown));
        }
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        let result = self.run_tool(name, &arguments, &context).await;
        self.send_warnings(&context.peer).await;
        Ok(to_mcp(&result?).into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let listed = match self.session.list_artifacts().await {
            Ok(listed) => listed,
            // A session without a store has nothing to list.
            Err(HandleError::Failed(_)) => Vec::new(),
            Err(err) => return Err(McpError::internal_error(err.to_string(), None)),
        };
        let resources = listed
            .into_iter()
            .take(LISTED_ARTIFACTS)
            .map(|ListedArtifact { id, size, .. }| {
                Resource::new(format!("artifact://{id}"), format!("artifact {id}"))
                    .with_mime_type("text/plain")
                    .with_description("Full output of a command or job log")
                    .with_size(size)
            })
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(
                "artifact://{id}?offset={offset}&limit={limit}",
                "artifact lines",
            )
            .with_mime_type("text/plain")
            .with_description(
                "Lines of an artifact: offset = first line (1-based), limit = how many",
            ),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let uri = request.uri.as_str();
        let (base, offset, limit) = parse_uri(uri)?;
        if offset.is_none() && limit.is_none() {
            let size = self
                .session
                .artifact_size(base.to_owned())
                .await
                .map_err(|err| McpError::resource_not_found(err.to_string(), None))?
                .unwrap_or(0);
            if size > WHOLE_READ_LIMIT {
                return Err(McpError::invalid_params(
                    format!(
                        "{base} is {size} bytes, more than the 8 MiB read whole: read it by range, {base}?offset=1&limit=1000"
                    ),
                    None,
                ));
            }
        }
        let text = self
            .session
            .read_artifact(base.to_owned(), offset, limit)
            .await
            .map_err(|err| McpError::resource_not_found(err.to_string(), None))?
            .text;
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, uri).with_mime_type("text/plain"),
        ])
        .into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_take_a_line_range() {
        assert_eq!(
            parse_uri("artifact://7").ok(),
            Some(("artifact://7", None, None))
        );
        assert_eq!(
            parse_uri("artifact://7?offset=2&limit=3").ok(),
            Some(("artifact://7", Some(2), Some(3)))
        );
        assert!(parse_uri("artifact://7?offset=x").is_err());
        assert!(parse_uri("artifact://7?from=1").is_err());
    }

    #[test]
    fn progress_goes_out_at_most_once_a_second_with_a_bounded_tail() {
        let mut throttle = Throttle::default();
        let start = Instant::now();
        let at = |ms| start + Duration::from_millis(ms);
        assert_eq!(throttle.update("a\n", at(0)).as_deref(), Some("a\n"));
        // Within the second: held back, the newest kept.
        assert_eq!(throttle.update("a\nb\n", at(300)), None);
        assert_eq!(throttle.update("a\nb\nc\n", at(600)), None);
        // The heartbeat sends what waits; with nothing new, the last tail again.
        assert_eq!(throttle.heartbeat(at(700)), "a\nb\nc\n");
        assert_eq!(throttle.heartbeat(at(15_700)), "a\nb\nc\n");
        // After the interval an update goes at once, cut to its last 2 KB.
        let long = "x".repeat(5000);
        let sent = throttle.update(&long, at(17_000)).expect("sent");
        assert_eq!(sent.len(), PROGRESS_TAIL);
    }

    #[test]
    fn every_tool_has_its_schema_and_the_output_schema() {
        let spec = |name: &str| crate::ToolSpec {
            name: name.to_owned(),
            description: format!("{name} does it"),
            input_schema: json!({"type": "object", "properties": {}}),
        };
        let options = McpOptions {
            tools: vec![spec("bash"), spec("job_list")],
            tool_names: Vec::new(),
            output_max_bytes: 51_200,
            yield_after: Some(45.0),
        };
        let tools = tools(&options);
        let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
        assert_eq!(names, ["bash", "job_list"]);
        for tool in &tools {
            assert_eq!(
                tool.input_schema.get("type"),
                Some(&json!("object")),
                "{}",
                tool.name
            );
            assert!(tool.output_schema.is_some());
        }
    }

    #[test]
    fn the_instructions_name_the_configured_limit_and_yield_time() {
        let mut options = McpOptions {
            tools: Vec::new(),
            tool_names: Vec::new(),
            output_max_bytes: 51_200,
            yield_after: Some(45.0),
        };
        let text = instructions(&options);
        assert!(text.contains("output over 50 KB is cut"), "{text}");
        assert!(text.contains("(45 by default)"), "{text}");
        options.output_max_bytes = 2 * 1024 * 1024;
        options.yield_after = None;
        let text = instructions(&options);
        assert!(text.contains("output over 2 MB is cut"), "{text}");
        assert!(
            text.contains("(never, by default: a call runs to its end)"),
            "{text}"
        );
    }
}
