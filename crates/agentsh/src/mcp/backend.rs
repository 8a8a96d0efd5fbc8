//! Where the MCP server's calls run: a local session, or a far side over a remote connection
//! (SPEC §17: tools, jobs and artifact resources are all the far side's).

use agentsh_agent_session::{AgentSession, ToolContext, ToolResult, ToolUpdate};
use agentsh_remote::{RemoteCall, RemoteSession};
use serde_json::{Map, Value};

/// A session the MCP server serves.
#[derive(Clone)]
pub enum Backend {
    /// Commands run here.
    Local(AgentSession),
    /// Commands run on a far side.
    Remote(RemoteSession),
}

/// One artifact as a resource lists it.
pub struct Listed {
    pub id: String,
    pub size: Option<u64>,
}

impl Backend {
    /// Warnings not reported yet.
    pub fn take_warnings(&self) -> Vec<String> {
        match self {
            Self::Local(session) => session.take_warnings(),
            Self::Remote(remote) => remote.take_warnings(),
        }
    }

    /// A `bash` call; `on_update` gets the output's text so far (only when the context wants
    /// live updates).
    pub async fn bash(
        &self,
        arguments: &Value,
        context: ToolContext,
        mut on_update: impl FnMut(&str) + Send + 'static,
    ) -> ToolResult {
        match self {
            Self::Local(session) => session
                .execute_tool("mcp", arguments, context, move |update: ToolUpdate| {
                    on_update(&update.text);
                })
                .await
                .into_result(),
            Self::Remote(remote) => {
                let call = RemoteCall {
                    name: agentsh_agent_session::BASH_TOOL,
                    arguments,
                    tool_names: &context.tool_names,
                };
                remote.call_tool(call, &context.cancel, on_update).await
            }
        }
    }

    /// A job tool call (`job_output`, …); `None` when `name` is no job tool.
    pub async fn job_tool(&self, name: &str, arguments: &Value) -> Option<ToolResult> {
        match self {
            Self::Local(session) => session
                .execute_job_tool(name, arguments)
                .await
                .map(agentsh_agent_session::ToolOutcome::into_result),
            Self::Remote(remote) => {
                let call = RemoteCall {
                    name,
                    arguments,
                    tool_names: &[],
                };
                let never = tokio_util::sync::CancellationToken::new();
                Some(remote.call_tool(call, &never, |_| {}).await)
            }
        }
    }

    /// The newest artifacts, at most `limit`.
    pub async fn artifacts(&self, limit: usize) -> Result<Vec<Listed>, String> {
        match self {
            Self::Local(session) => {
                let session = session.clone();
                // It looks at the files: off the async threads.
                let listed = tokio::task::spawn_blocking(move || session.list_artifacts())
                    .await
                    .map_err(|err| err.to_string())?;
                // A session without a store has nothing to list.
                Ok(listed
                    .unwrap_or_default()
                    .into_iter()
                    .take(limit)
                    .map(|info| Listed {
                        id: info.id.to_string(),
                        size: Some(info.size),
                    })
                    .collect())
            }
            Self::Remote(remote) => {
                let data = remote_request(remote, "list_artifacts", Map::new()).await?;
                Ok(data
                    .get("artifacts")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|artifact| {
                        Some(Listed {
                            id: artifact.get("id")?.as_str()?.to_owned(),
                            size: artifact.get("size").and_then(Value::as_u64),
                        })
                    })
                    .take(limit)
                    .collect())
            }
        }
    }

    /// The size of artifact `id` (digits), if it can be found.
    pub async fn artifact_size(&self, id: &str) -> Result<Option<u64>, String> {
        match self {
            Self::Local(session) => {
                let store = session
                    .artifacts()
                    .ok_or_else(|| "artifacts are unavailable in this session".to_owned())?;
                let path = store.resolve(id).map_err(|err| err.to_string())?;
                Ok(std::fs::metadata(&path).ok().map(|meta| meta.len()))
            }
            Self::Remote(_) => {
                let digits = id.strip_prefix("artifact://").unwrap_or(id);
                Ok(self
                    .artifacts(usize::MAX)
                    .await?
                    .into_iter()
                    .find(|listed| listed.id == digits)
                    .and_then(|listed| listed.size))
            }
        }
    }

    /// Lines of an artifact (or all of it).
    pub async fn read_artifact(
        &self,
        id: &str,
        offset: Option<u64>,
        limit: Option<u64>,
    ) -> Result<String, String> {
        match self {
            Self::Local(session) => {
                let session = session.clone();
                let id = id.to_owned();
                tokio::task::spawn_blocking(move || session.read_artifact(&id, offset, limit))
                    .await
                    .map_err(|err| err.to_string())?
                    .map(|artifact| artifact.text)
                    .map_err(|err| err.to_string())
            }
            Self::Remote(remote) => {
                let mut request = Map::new();
                request.insert("artifactId".to_owned(), Value::from(id));
                if let Some(offset) = offset {
                    request.insert("offset".to_owned(), Value::from(offset));
                }
                if let Some(limit) = limit {
                    request.insert("limit".to_owned(), Value::from(limit));
                }
                let data = remote_request(remote, "read_artifact", request).await?;
                Ok(data
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned())
            }
        }
    }

    /// Ends every job and shell (here, or on the far side).
    pub async fn shutdown(&self) {
        match self {
            Self::Local(session) => session.shutdown().await,
            Self::Remote(remote) => remote.shutdown().await,
        }
    }
}

/// A request's `data`, or its error as text.
async fn remote_request(
    remote: &RemoteSession,
    kind: &str,
    fields: Map<String, Value>,
) -> Result<Value, String> {
    remote
        .request_data(kind, fields)
        .await
        .map_err(|err| err.to_string())
}
