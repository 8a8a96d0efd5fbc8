//! `docs/rpc.md`, the protocol's document in the repository, kept true: every example line in
//! it is read with the server's own types (requests by the server's parser, responses and
//! events as `agentsh_protocol::wire` messages, each response's `data` as the type its request
//! answers with), every request type, event and tool has an example, and every request example
//! is answered by a real server over a real socket.
//!
//! Every example is in a fenced block whose info string names its kind — `json rpc-request`,
//! `json rpc-response`, `json rpc-event` or `json rpc-bad-request` — with one example per line
//! (blank lines are skipped): a JSON object, except in `rpc-bad-request` blocks, which hold lines
//! the server refuses (some of them not JSON at all).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use agentsh_agent_session::{AgentSession, LocalHandle, SessionOptions, Settings};
use agentsh_protocol::wire::{
    ArtifactData, ArtifactList, BashData, Command, Completions, HelloData, Message, RequestType,
};
use agentsh_protocol::{JobView, SessionStatus, TOOL_NAMES, ToolResult};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;

use crate::request::parse_line;

/// What an example line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A line a client sends (`json rpc-request`).
    Request,
    /// A line the server answers a request with (`json rpc-response`).
    Response,
    /// A line the server sends on its own, an event (`json rpc-event`).
    Event,
    /// A line a client should not send, which the server answers with a failure
    /// (`json rpc-bad-request`): not necessarily JSON.
    BadRequest,
}

impl Kind {
    /// The kind a fence's info string names, if it names one.
    fn from_info(info: &str) -> Option<Self> {
        let mut words = info.split_whitespace();
        if words.next() != Some("json") {
            return None;
        }
        let kind = match words.next()? {
            "rpc-request" => Self::Request,
            "rpc-response" => Self::Response,
            "rpc-event" => Self::Event,
            "rpc-bad-request" => Self::BadRequest,
            _ => return None,
        };
        words.next().is_none().then_some(kind)
    }
}

/// One example line.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Example {
    /// Its kind, from its block's info string.
    kind: Kind,
    /// 1-based line number in the Markdown text.
    line: usize,
    /// The line, trimmed.
    text: String,
}

/// Every example line of `markdown`, in order. Fences of three or more backticks; a block of
/// another info string is skipped, and so is a block that is never closed.
fn examples(markdown: &str) -> Vec<Example> {
    let mut found = Vec::new();
    let mut open: Option<(String, Option<Kind>, Vec<Example>)> = None; // (fence, kind, lines)
    for (index, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        match open.as_mut() {
            None => {
                let ticks = trimmed.chars().take_while(|&c| c == '`').count();
                if ticks >= 3 {
                    let kind = Kind::from_info(trimmed[ticks..].trim());
                    open = Some(("`".repeat(ticks), kind, Vec::new()));
                }
            }
            Some((fence, kind, lines)) => {
                if trimmed.starts_with(fence.as_str()) && trimmed.trim_matches('`').is_empty() {
                    found.append(lines);
                    open = None;
                } else if let Some(kind) = kind
                    && !trimmed.trim().is_empty()
                {
                    lines.push(Example {
                        kind: *kind,
                        line: index + 1,
                        text: trimmed.trim_end().to_owned(),
                    });
                }
            }
        }
    }
    found
}

fn doc_text() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/rpc.md");
    std::fs::read_to_string(&path).expect("docs/rpc.md is readable")
}

fn doc_examples(kind: Kind) -> Vec<Example> {
    examples(&doc_text())
        .into_iter()
        .filter(|example| example.kind == kind)
        .collect()
}

/// The `data` of a successful response to `command`, read as the type the server writes it
/// with; `Err` naming what is wrong.
fn check_data(command: &str, data: Option<&str>) -> Result<(), String> {
    fn read<T: serde::de::DeserializeOwned>(data: Option<&str>) -> Result<(), String> {
        let data = data.ok_or("no `data`")?;
        serde_json::from_str::<T>(data)
            .map(drop)
            .map_err(|err| err.to_string())
    }
    let Ok(kind) = RequestType::from_name(command) else {
        return Err(format!("`{command}` is no request type"));
    };
    match kind {
        RequestType::Bash => read::<BashData>(data),
        RequestType::ToolCall => read::<ToolResult>(data),
        RequestType::ReadArtifact => read::<ArtifactData>(data),
        RequestType::ListArtifacts => read::<ArtifactList>(data),
        RequestType::Hello => read::<HelloData>(data),
        RequestType::Status => read::<SessionStatus>(data),
        RequestType::JobView => read::<JobView>(data),
        RequestType::Complete => read::<Completions>(data),
        RequestType::Abort
        | RequestType::AbortBash
        | RequestType::Ping
        | RequestType::Approval
        | RequestType::SecretInput => match data {
            None => Ok(()),
            Some(data) => Err(format!("unexpected `data`: {data}")),
        },
    }
}

#[test]
fn every_request_example_is_read_by_the_servers_parser() {
    let requests = doc_examples(Kind::Request);
    let mut types = BTreeSet::new();
    let mut tools = BTreeSet::new();
    for example in &requests {
        let request = parse_line(example.text.as_bytes())
            .unwrap_or_else(|err| {
                panic!(
                    "docs/rpc.md:{}: refused ({}): {}",
                    example.line, err.error, example.text
                )
            })
            .unwrap_or_else(|| panic!("docs/rpc.md:{}: a blank request", example.line));
        if let Command::ToolCall { name, .. } = &request.command {
            tools.insert(name.clone());
        }
        types.insert(request.command.name());
    }
    let missing: Vec<&str> = RequestType::ALL
        .iter()
        .map(|kind| kind.name())
        .filter(|name| !types.contains(name))
        .collect();
    assert!(
        missing.is_empty(),
        "requests without an example: {missing:?}"
    );
    let missing: Vec<&&str> = TOOL_NAMES
        .iter()
        .filter(|name| !tools.contains(**name))
        .collect();
    assert!(missing.is_empty(), "tools without an example: {missing:?}");
}

#[test]
fn every_bad_request_example_is_refused() {
    let bad = doc_examples(Kind::BadRequest);
    assert!(!bad.is_empty(), "docs/rpc.md shows no refused line");
    let parse_failures = bad
        .iter()
        .filter(|example| parse_line(example.text.as_bytes()).is_err())
        .count();
    assert!(
        parse_failures > 0,
        "no example of a line that cannot be read"
    );
}

#[test]
fn every_response_and_event_example_is_a_message_of_the_wire() {
    let mut answered = BTreeSet::new();
    let mut failed = BTreeSet::new();
    for example in doc_examples(Kind::Response) {
        let at = format!("docs/rpc.md:{}", example.line);
        let message: Message = serde_json::from_str(&example.text)
            .unwrap_or_else(|err| panic!("{at}: no message ({err}): {}", example.text));
        let Message::Response {
            command,
            success,
            data,
            error,
            ..
        } = message
        else {
            panic!("{at}: not a response: {}", example.text);
        };
        assert_eq!(
            !success,
            error.is_some(),
            "{at}: `error` exactly on failure"
        );
        if success {
            check_data(
                &command,
                data.as_deref().map(serde_json::value::RawValue::get),
            )
            .unwrap_or_else(|err| panic!("{at}: the `data` of `{command}`: {err}"));
            answered.insert(command);
        } else {
            failed.insert(command);
        }
    }
    let unanswered: Vec<&str> = RequestType::ALL
        .iter()
        .map(|kind| kind.name())
        .filter(|name| !answered.contains(*name) && !failed.contains(*name))
        .collect();
    assert!(
        unanswered.is_empty(),
        "requests without an example response: {unanswered:?}"
    );
    assert!(
        failed.contains("parse"),
        "no response to an unreadable line"
    );

    let mut events = BTreeSet::new();
    for example in doc_examples(Kind::Event) {
        let at = format!("docs/rpc.md:{}", example.line);
        let message: Message = serde_json::from_str(&example.text)
            .unwrap_or_else(|err| panic!("{at}: no message ({err}): {}", example.text));
        let kind = match message {
            Message::Response { .. } => panic!("{at}: a response among the events"),
            Message::ToolExecutionStart { .. } => "tool_execution_start",
            Message::ToolExecutionUpdate { .. } => "tool_execution_update",
            Message::ToolExecutionEnd { result, .. } => {
                serde_json::from_str::<ToolResult>(result.get())
                    .unwrap_or_else(|err| panic!("{at}: the end's result: {err}"));
                "tool_execution_end"
            }
            Message::BashOutput { .. } => "bash_output",
            Message::Warning { .. } => "warning",
            Message::ApprovalRequest { .. } => "approval_request",
            Message::ApprovalResolved { .. } => "approval_resolved",
            Message::InputRequest { .. } => "input_request",
            Message::JobEnd { .. } => "job_end",
        };
        events.insert(kind);
    }
    assert_eq!(
        events.len(),
        9,
        "every kind of event has an example: {events:?}"
    );
}

/// Every request example (and every refused line) gets its response from a real server: a
/// session here, served on one end of a socket pair, the lines written to the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_example_is_answered_by_a_real_server() {
    let lines: Vec<Example> = examples(&doc_text())
        .into_iter()
        .filter(|example| matches!(example.kind, Kind::Request | Kind::BadRequest))
        .collect();
    let root = tempfile::tempdir().expect("a temp dir");
    let home = root.path().join("home");
    std::fs::create_dir_all(&home).expect("a home");
    std::fs::write(root.path().join("notes.txt"), "a note\n").expect("notes.txt");
    let mut options = SessionOptions::new(root.path());
    options.home = Some(home);
    options.settings = Settings::default();
    options.settings.artifacts.dir = Some(root.path().join("artifacts"));
    let session = LocalHandle::new(AgentSession::new(options).expect("a session"));

    let (server_end, client_end) = tokio::net::UnixStream::pair().expect("a socket pair");
    let shutdown = CancellationToken::new();
    let served = tokio::spawn(crate::serve_connection(
        server_end,
        Arc::new(session),
        None,
        shutdown.clone(),
    ));
    let (read, mut write) = client_end.into_split();
    // Which ids should be answered, and how often (one response a line; a line whose id
    // cannot be read is answered without one).
    let mut expected: BTreeMap<Option<String>, usize> = BTreeMap::new();
    for example in &lines {
        let id = parse_line(example.text.as_bytes()).map_or_else(
            |err| err.id,
            |request| request.and_then(|request| request.id),
        );
        *expected.entry(id.map(|id| id.to_string())).or_default() += 1;
        write
            .write_all(format!("{}\n", example.text).as_bytes())
            .await
            .expect("write a request");
    }
    let mut seen: BTreeMap<Option<String>, usize> = BTreeMap::new();
    let mut reader = BufReader::new(read).lines();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    while seen.values().sum::<usize>() < lines.len() {
        let line = tokio::time::timeout_at(deadline, reader.next_line())
            .await
            .unwrap_or_else(|_| panic!("not every line was answered: {seen:?} of {expected:?}"))
            .expect("read")
            .expect("the server ended before answering every line");
        let message: Message = serde_json::from_str(&line)
            .unwrap_or_else(|err| panic!("the server wrote no message ({err}): {line}"));
        if let Message::Response { id, .. } = message {
            *seen.entry(id.map(|id| id.to_string())).or_default() += 1;
        }
    }
    assert_eq!(seen, expected, "one response for each line");
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(30), served)
        .await
        .expect("the server ends")
        .expect("the server does not panic");
}

#[test]
fn takes_the_lines_of_rpc_blocks_only() {
    let md = "text\n```json rpc-request\n{\"type\":\"ping\"}\n\n{\"id\":1,\"type\":\"status\"}\n```\n\
              ```json\n{\"not\":\"an example\"}\n```\n\
              ````json rpc-event\n{\"type\":\"warning\",\"message\":\"```\"}\n````\n\
              ```json rpc-response\n  {\"type\":\"response\"}\n```\n";
    let got: Vec<(Kind, usize, String)> = examples(md)
        .into_iter()
        .map(|e| (e.kind, e.line, e.text))
        .collect();
    assert_eq!(
        got,
        [
            (Kind::Request, 3, "{\"type\":\"ping\"}".to_owned()),
            (
                Kind::Request,
                5,
                "{\"id\":1,\"type\":\"status\"}".to_owned()
            ),
            (
                Kind::Event,
                11,
                "{\"type\":\"warning\",\"message\":\"```\"}".to_owned()
            ),
            (Kind::Response, 14, "{\"type\":\"response\"}".to_owned()),
        ]
    );
}

#[test]
fn an_info_string_names_one_kind_exactly() {
    assert_eq!(Kind::from_info("json rpc-request"), Some(Kind::Request));
    assert_eq!(Kind::from_info("json  rpc-event"), Some(Kind::Event));
    assert_eq!(
        Kind::from_info("json rpc-bad-request"),
        Some(Kind::BadRequest)
    );
    assert_eq!(Kind::from_info("json"), None);
    assert_eq!(Kind::from_info("rpc-request"), None);
    assert_eq!(Kind::from_info("json rpc-request extra"), None);
    assert_eq!(Kind::from_info("json rpc-other"), None);
}
