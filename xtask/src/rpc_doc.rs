//! The example lines of `docs/rpc.md`, for tests that keep the protocol's document true.
//!
//! Every example is in a fenced block whose info string names its kind — `json rpc-request`,
//! `json rpc-response`, `json rpc-event` or `json rpc-bad-request` — with one example per line
//! (blank lines are skipped): a JSON object, except in `rpc-bad-request` blocks, which hold lines
//! the server refuses (some of them not JSON at all). [`examples`] takes them out of the Markdown, each with its line number, so a test
//! can parse each with whatever types it checks them against.

/// What an example line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
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
pub struct Example {
    /// Its kind, from its block's info string.
    pub kind: Kind,
    /// 1-based line number in the Markdown text.
    pub line: usize,
    /// The line, trimmed.
    pub text: String,
}

/// Every example line of `markdown`, in order. Fences of three or more backticks; a block of
/// another info string is skipped, and so is a block that is never closed.
pub fn examples(markdown: &str) -> Vec<Example> {
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::Value;

    use super::{Example, Kind, examples};
    use crate::workspace_root;

    /// Every request type of the protocol.
    const REQUEST_TYPES: [&str; 10] = [
        "bash",
        "abort_bash",
        "tool_call",
        "abort",
        "read_artifact",
        "list_artifacts",
        "ping",
        "hello",
        "status",
        "job_view",
    ];

    /// Every event type the server sends.
    const EVENT_TYPES: [&str; 5] = [
        "tool_execution_start",
        "tool_execution_update",
        "tool_execution_end",
        "warning",
        "bash_output",
    ];

    /// The tools a `tool_call` names.
    const TOOLS: [&str; 5] = ["bash", "job_output", "job_input", "job_kill", "job_list"];

    fn doc_text() -> String {
        let path = workspace_root().join("docs").join("rpc.md");
        std::fs::read_to_string(&path).expect("docs/rpc.md is readable")
    }

    /// The examples that must be JSON objects (all but the bad requests), parsed.
    fn doc_examples() -> Vec<(Example, serde_json::Map<String, Value>)> {
        examples(&doc_text())
            .into_iter()
            .filter(|example| example.kind != Kind::BadRequest)
            .map(|example| {
                let value: Value = serde_json::from_str(&example.text).unwrap_or_else(|err| {
                    panic!(
                        "docs/rpc.md:{}: not JSON ({err}): {}",
                        example.line, example.text
                    )
                });
                let Value::Object(object) = value else {
                    panic!("docs/rpc.md:{}: not a JSON object", example.line);
                };
                (example, object)
            })
            .collect()
    }

    fn field<'a>(object: &'a serde_json::Map<String, Value>, name: &str) -> Option<&'a str> {
        object.get(name).and_then(Value::as_str)
    }

    #[test]
    fn every_example_line_of_docs_rpc_md_is_a_json_object_of_its_kind() {
        let all = doc_examples();
        assert!(!all.is_empty(), "docs/rpc.md has no examples");
        for (example, object) in &all {
            let at = format!("docs/rpc.md:{}", example.line);
            let kind = field(object, "type");
            match example.kind {
                Kind::Response => {
                    assert_eq!(kind, Some("response"), "{at}: a response's type");
                    let success = object.get("success").and_then(Value::as_bool);
                    assert!(success.is_some(), "{at}: a response says `success`");
                    assert_eq!(
                        success == Some(false),
                        object.contains_key("error"),
                        "{at}: `error` exactly when `success` is false"
                    );
                    assert!(field(object, "command").is_some(), "{at}: `command`");
                }
                Kind::Event => assert!(
                    kind.is_some_and(|kind| EVENT_TYPES.contains(&kind)),
                    "{at}: an event type, got {kind:?}"
                ),
                Kind::Request => assert!(
                    kind.is_some_and(|kind| REQUEST_TYPES.contains(&kind)),
                    "{at}: a request type, got {kind:?} (a line meant to be refused goes in a \
                     `json rpc-bad-request` block)"
                ),
                Kind::BadRequest => unreachable!("not parsed"),
            }
        }
    }

    #[test]
    fn docs_rpc_md_shows_every_request_response_event_and_tool() {
        let all = doc_examples();
        let of = |kind: Kind, name: &str| -> BTreeSet<String> {
            all.iter()
                .filter(|(example, _)| example.kind == kind)
                .filter_map(|(_, object)| field(object, name).map(str::to_owned))
                .collect()
        };
        let requests = of(Kind::Request, "type");
        let answered = of(Kind::Response, "command");
        let events = of(Kind::Event, "type");
        let tools = of(Kind::Request, "name");
        let failed: BTreeSet<String> = all
            .iter()
            .filter(|(example, object)| {
                example.kind == Kind::Response
                    && object.get("success").and_then(Value::as_bool) == Some(false)
            })
            .filter_map(|(_, object)| field(object, "command").map(str::to_owned))
            .collect();
        let missing = |wanted: &[&str], seen: &BTreeSet<String>| -> Vec<String> {
            wanted
                .iter()
                .filter(|name| !seen.contains(**name))
                .map(|name| (*name).to_owned())
                .collect()
        };
        assert_eq!(
            missing(&REQUEST_TYPES, &requests),
            Vec::<String>::new(),
            "requests without an example"
        );
        assert_eq!(
            missing(&REQUEST_TYPES, &answered),
            Vec::<String>::new(),
            "requests without an example response"
        );
        assert_eq!(
            missing(&EVENT_TYPES, &events),
            Vec::<String>::new(),
            "events without an example"
        );
        assert_eq!(
            missing(&TOOLS, &tools),
            Vec::<String>::new(),
            "tools without a tool_call example"
        );
        assert!(
            failed.contains("parse"),
            "no example of a line that cannot be parsed"
        );
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
}
