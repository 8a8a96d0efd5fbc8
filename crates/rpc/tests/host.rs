//! A `CallHost`: what it is told, its `cancel`, its PTY host.

use std::sync::{Arc, Mutex};

use agentsh_seam::lock;

use agentsh_rpc::{
    CallEnd, CallHooks, CallHost, CallObserver, HostedCall, HostedCallKind, PtyHost,
};
use serde_json::json;

use crate::util::{
    Served, World, assert_no_survivor, marked_sleep, unique_marker, wait_for_process, wait_until,
};

/// What a [`Recorder`] was told, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seen {
    Started(String),
    Update(String, String),
    /// A call ended: its id, whether it was aborted, its text.
    Finished(String, bool, String),
}

type Log = Arc<Mutex<Vec<Seen>>>;

/// A host that records every call and what its observer was told.
#[derive(Default)]
struct Recorder {
    calls: Mutex<Vec<HostedCall>>,
    log: Log,
    pty_host: Option<Arc<dyn PtyHost>>,
}

impl Recorder {
    fn seen(&self) -> Vec<Seen> {
        lock(&self.log).clone()
    }

    /// The hosted call with `id`, once it started.
    fn call(&self, id: &str) -> HostedCall {
        wait_until("the host is told of the call", || {
            lock(&self.calls).iter().any(|call| call.id == id)
        });
        lock(&self.calls)
            .iter()
            .find(|call| call.id == id)
            .cloned()
            .expect("the call")
    }
}

impl CallHost for Recorder {
    fn call_started(&self, call: HostedCall) -> CallHooks {
        let id = call.id.clone();
        lock(&self.log).push(Seen::Started(id.clone()));
        lock(&self.calls).push(call);
        CallHooks {
            pty_host: self.pty_host.clone(),
            observer: Some(Box::new(Observer {
                id,
                log: Arc::clone(&self.log),
            })),
            ..CallHooks::default()
        }
    }
}

struct Observer {
    id: String,
    log: Log,
}

impl CallObserver for Observer {
    fn update(&mut self, text: &str) {
        lock(&self.log).push(Seen::Update(self.id.clone(), text.to_owned()));
    }

    fn finished(self: Box<Self>, end: CallEnd<'_>) {
        let (aborted, text) = match end {
            CallEnd::Tool(outcome) => (outcome.is_aborted(), outcome.result().text()),
            CallEnd::Bash(Ok(data)) => (data.result.cancelled, data.result.summary.output.clone()),
            CallEnd::Bash(Err(err)) => (false, err.to_string()),
        };
        lock(&self.log).push(Seen::Finished(self.id.clone(), aborted, text));
    }
}

#[test]
fn the_host_sees_each_calls_updates_and_exactly_one_end() {
    let world = World::new("");
    let host = Arc::new(Recorder::default());
    let served = Served::start(&world, Some(host.clone()));
    let mut client = served.connect();
    client.send(&json!({
        "id": "1", "type": "tool_call", "toolCallId": "c1", "name": "bash",
        "arguments": {"command": "echo first; sleep 1; echo second"}
    }));
    let lines = client.until_response("1");
    client.send(&json!({"id": "2", "type": "tool_call", "toolCallId": "c2", "name": "job_list", "arguments": {}}));
    let listed = client.response("2");
    client.send(&json!({"id": "3", "type": "bash", "command": "echo bang"}));
    assert_eq!(client.response("3")["data"]["output"], "bang\n");

    let seen = host.seen();
    // The updates the client got, the host got, in order, between start and end.
    let sent: Vec<Seen> = lines
        .iter()
        .filter(|line| line["type"] == "tool_execution_update")
        .map(|line| {
            let text = line["partialResult"]["content"][0]["text"].as_str();
            Seen::Update("c1".into(), text.expect("text").to_owned())
        })
        .collect();
    assert!(!sent.is_empty(), "{lines:#?}");
    let mut expected = vec![Seen::Started("c1".into())];
    expected.extend(sent);
    expected.push(Seen::Finished("c1".into(), false, "first\nsecond".into()));
    expected.push(Seen::Started("c2".into()));
    let job_text = listed["data"]["content"][0]["text"].as_str().expect("text");
    expected.push(Seen::Finished("c2".into(), false, job_text.to_owned()));
    // A bash request's output reaches the host as it comes, then its end.
    let [
        ..,
        Seen::Started(bash_id),
        Seen::Update(updated_id, output),
        Seen::Finished(finished_id, false, bang),
    ] = seen.as_slice()
    else {
        panic!("the bash request is seen last: {seen:#?}");
    };
    assert!(bash_id.starts_with("bash-"), "{bash_id}");
    assert_eq!((updated_id, output.as_str()), (bash_id, "bang\n"));
    assert_eq!((finished_id, bang.as_str()), (bash_id, "bang\n"));
    assert_eq!(seen[..seen.len() - 3], expected[..]);

    let calls = lock(&host.calls).clone();
    assert_eq!(
        calls
            .iter()
            .map(|call| call.kind.clone())
            .collect::<Vec<_>>(),
        [
            HostedCallKind::Tool {
                name: "bash".into(),
                arguments: json!({"command": "echo first; sleep 1; echo second"})
            },
            HostedCallKind::Tool {
                name: "job_list".into(),
                arguments: json!({})
            },
            HostedCallKind::Bash {
                command: "echo bang".into()
            },
        ]
    );
    assert!(
        calls
            .iter()
            .all(|call| session_cwd(call) == world.root().join("work").to_string_lossy())
    );
}

#[test]
fn a_refused_request_is_not_a_hosted_call() {
    let world = World::new("");
    let host = Arc::new(Recorder::default());
    let served = Served::start(&world, Some(host.clone()));
    let mut client = served.connect();
    client.send(&json!({"id": "1", "type": "tool_call", "toolCallId": "c", "name": "nope", "arguments": {}}));
    assert_eq!(client.response("1")["success"], false);
    assert_eq!(host.seen(), []);
}

#[test]
fn the_hosts_cancel_aborts_a_tool_call_as_abort_would() {
    let world = World::new("");
    let host = Arc::new(Recorder::default());
    let served = Served::start(&world, Some(host.clone()));
    let mut client = served.connect();
    let marker = unique_marker();
    client.send(&json!({
        "id": "1", "type": "tool_call", "toolCallId": "c", "name": "bash",
        "arguments": {"command": marked_sleep(&marker)}
    }));
    wait_for_process(&marker);
    host.call("c").cancel.cancel();
    let lines = client.until_response("1");
    let [.., end, response] = lines.as_slice() else {
        panic!("an end event and a response: {lines:#?}");
    };
    assert_eq!(end["type"], "tool_execution_end");
    assert_eq!(end["isError"], true);
    let text = end["result"]["content"][0]["text"].as_str().expect("text");
    assert!(text.ends_with("Command aborted"), "{text}");
    assert_eq!(response["success"], true);
    assert_eq!(response["data"], end["result"]);
    assert_no_survivor(&marker);
    assert!(matches!(
        host.seen().last(),
        Some(Seen::Finished(id, true, _)) if id == "c"
    ));
    // Its id is free again and the session goes on.
    client.send(&json!({
        "id": "2", "type": "tool_call", "toolCallId": "c", "name": "bash",
        "arguments": {"command": "echo again"}
    }));
    assert_eq!(client.response("2")["data"]["content"][0]["text"], "again");
}

#[test]
fn the_hosts_cancel_aborts_a_bash_request_as_abort_bash_would() {
    let world = World::new("");
    let host = Arc::new(Recorder::default());
    let served = Served::start(&world, Some(host.clone()));
    let mut client = served.connect();
    let marker = unique_marker();
    client.send(&json!({"id": "1", "type": "bash", "command": marked_sleep(&marker)}));
    wait_for_process(&marker);
    let call = lock(&host.calls).first().cloned().expect("a hosted call");
    assert!(matches!(call.kind, HostedCallKind::Bash { .. }));
    call.cancel.cancel();
    let response = client.response("1");
    assert_eq!(response["success"], true);
    assert_eq!(response["data"]["cancelled"], true);
    assert_no_survivor(&marker);
}

/// A PTY host that records the calls it was given.
#[derive(Default)]
struct Screens(Mutex<Vec<String>>);

impl PtyHost for Screens {
    fn attach(&self, call_id: &str, _program: agentsh_rpc::PtyAttachment) {
        lock(&self.0).push(call_id.to_owned());
    }
}

#[test]
fn the_hosts_pty_host_runs_tool_calls_on_a_pty() {
    let world = World::new("[bash]\nvirtual_terminal = \"on\"\n");
    let screens = Arc::new(Screens::default());
    let host = Arc::new(Recorder {
        pty_host: Some(screens.clone()),
        ..Recorder::default()
    });
    let served = Served::start(&world, Some(host));
    let mut client = served.connect();
    client.send(&json!({
        "id": "1", "type": "tool_call", "toolCallId": "p", "name": "bash",
        "arguments": {"command": "tty"}
    }));
    let text = client.response("1")["data"]["content"][0]["text"].clone();
    assert!(
        text.as_str()
            .is_some_and(|text| text.starts_with("/dev/pts/")),
        "{text}"
    );
    assert_eq!(*lock(&screens.0), ["p"]);
}

#[test]
fn without_a_host_tool_calls_never_run_on_a_pty() {
    let world = World::new("[bash]\nvirtual_terminal = \"on\"\n");
    let served = Served::start(&world, None);
    let mut client = served.connect();
    client.send(&json!({
        "id": "1", "type": "tool_call", "toolCallId": "p", "name": "bash",
        "arguments": {"command": "tty"}
    }));
    let text = client.response("1")["data"]["content"][0]["text"].clone();
    assert!(
        text.as_str()
            .is_some_and(|text| text.starts_with("not a tty")),
        "{text}"
    );
}

/// A host that keeps every call (and with it its session, as a transcript would) and whose
/// hook panics on the call named `panic`.
#[derive(Default)]
struct Panicking(Mutex<Vec<HostedCall>>);

impl CallHost for Panicking {
    fn call_started(&self, call: HostedCall) -> CallHooks {
        let fails = call.id == "panic";
        lock(&self.0).push(call);
        assert!(!fails, "the host fails");
        CallHooks::default()
    }
}

#[test]
fn a_panicking_host_still_ends_the_sessions_trees() {
    let world = World::new("");
    let served = Served::start(&world, Some(Arc::new(Panicking::default())));
    let mut client = served.connect();
    let (running, job) = (unique_marker(), unique_marker());
    client.send(&json!({
        "id": "1", "type": "tool_call", "toolCallId": "j", "name": "bash",
        "arguments": {"command": marked_sleep(&job), "run_in_background": true}
    }));
    assert_eq!(
        client.response("1")["data"]["details"]["job"]["state"],
        "running"
    );
    client.send(&json!({
        "id": "2", "type": "tool_call", "toolCallId": "c", "name": "bash",
        "arguments": {"command": marked_sleep(&running)}
    }));
    wait_for_process(&running);
    client.send(&json!({
        "id": "3", "type": "tool_call", "toolCallId": "panic", "name": "bash",
        "arguments": {"command": "true"}
    }));
    assert_no_survivor(&running);
    assert_no_survivor(&job);
    client.rest_until_closed();
    // The server goes on serving other connections.
    let mut next = served.connect();
    next.send(&json!({"id": "1", "type": "bash", "command": "echo ok"}));
    assert_eq!(next.response("1")["data"]["output"], "ok\n");
}

/// The cwd of the session `call` runs on, as its status says (a session here answers at once).
fn session_cwd(call: &HostedCall) -> String {
    let status = agentsh_rpc::ready_now(call.session.status(agentsh_rpc::Reach::IfConnected));
    match status {
        Ok(Ok(status)) => status.cwd,
        _ => panic!("a session here answers its status at once"),
    }
}
