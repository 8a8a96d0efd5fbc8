//! `serve_listener`: the protocol over real sockets, one session per connection, and how
//! connections and the server end.

use serde_json::json;

use crate::util::{
    Served, World, assert_no_survivor, marked_sleep, unique_marker, wait_for_process, wait_until,
};

#[test]
fn a_tool_call_over_the_socket_gets_its_events_and_response() {
    let world = World::new("");
    let served = Served::start(&world, None);
    let mut client = served.connect();
    client.send(&json!({
        "id": "1", "type": "tool_call", "toolCallId": "c1", "name": "bash",
        "arguments": {"command": "echo first; sleep 1; echo second"}
    }));
    let lines = client.until_response("1");
    assert_eq!(
        lines[0],
        json!({"type": "tool_execution_start", "toolCallId": "c1", "toolName": "bash",
               "args": {"command": "echo first; sleep 1; echo second"}})
    );
    let updates: Vec<&str> = lines
        .iter()
        .filter(|line| line["type"] == "tool_execution_update")
        .map(|line| {
            assert_eq!(
                (&line["toolCallId"], &line["toolName"]),
                (&json!("c1"), &json!("bash"))
            );
            line["partialResult"]["content"][0]["text"]
                .as_str()
                .expect("update text")
        })
        .collect();
    assert!(
        updates.iter().any(|text| text.contains("first")),
        "a live update with the output so far: {lines:#?}"
    );
    let [.., end, response] = lines.as_slice() else {
        panic!("an end event and a response: {lines:#?}");
    };
    assert_eq!(end["type"], "tool_execution_end");
    assert_eq!(end["isError"], false);
    assert_eq!(end["result"]["content"][0]["text"], "first\nsecond");
    assert_eq!(
        (&response["command"], &response["success"]),
        (&json!("tool_call"), &json!(true))
    );
    assert_eq!(response["data"], end["result"]);
}

#[test]
fn two_connections_are_two_sessions() {
    let world = World::new("");
    let served = Served::start(&world, None);
    let mut one = served.connect();
    let mut two = served.connect();
    let tool = |id: &str, command: &str| {
        json!({"id": id, "type": "tool_call", "toolCallId": id, "name": "bash",
               "arguments": {"command": command}})
    };
    one.send(&tool("1", "export X=1"));
    assert_eq!(one.response("1")["success"], true);
    two.send(&tool("2", "echo \"X=${X-unset}\""));
    assert_eq!(two.response("2")["data"]["content"][0]["text"], "X=unset");
    one.send(&tool("3", "echo \"X=${X-unset}\""));
    assert_eq!(one.response("3")["data"]["content"][0]["text"], "X=1");
    // The same toolCallId on two connections: each its own.
    two.send(&tool("1", "echo two"));
    assert_eq!(two.response("1")["data"]["content"][0]["text"], "two");
}

#[test]
fn warnings_go_to_the_connection_as_events() {
    // An invalid rule is a warning, not an error.
    let world = World::new(
        "[bash_interceptor]\nenabled = true\n[[bash_interceptor.rules]]\npattern = \"(\"\ntool = \"read\"\nmessage = \"m\"\n",
    );
    let served = Served::start(&world, None);
    let mut client = served.connect();
    client.send(&json!({"id": "1", "type": "bash", "command": "true"}));
    let lines = client.until_response("1");
    assert!(
        lines
            .iter()
            .any(|line| line["type"] == "warning" && line["message"].as_str().is_some()),
        "{lines:#?}"
    );
}

#[test]
fn a_session_that_cannot_start_is_a_warning_and_the_end_of_the_connection() {
    let world = World::new("");
    // Its working directory is gone: no session can be made in it.
    std::fs::remove_dir(world.root().join("work")).expect("remove work/");
    let served = Served::start(&world, None);
    let mut client = served.connect();
    let lines = client.rest_until_closed();
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert_eq!(lines[0]["type"], "warning");
    let message = lines[0]["message"].as_str().expect("a message");
    assert!(
        message.starts_with("cannot start a session: ") && message.contains("work"),
        "{message}"
    );
    // The server goes on serving.
    std::fs::create_dir(world.root().join("work")).expect("mkdir work/");
    let mut next = served.connect();
    next.send(&json!({"id": "1", "type": "bash", "command": "echo ok"}));
    assert_eq!(next.response("1")["data"]["output"], "ok\n");
}

#[test]
fn a_client_that_disconnects_mid_call_ends_the_commands_tree() {
    let world = World::new("");
    let served = Served::start(&world, None);
    let marker = unique_marker();
    let mut client = served.connect();
    client.send(&json!({
        "id": "1", "type": "tool_call", "toolCallId": "c", "name": "bash",
        "arguments": {"command": marked_sleep(&marker)}
    }));
    let bang = unique_marker();
    let mut other = served.connect();
    other.send(&json!({"id": "b", "type": "bash", "command": marked_sleep(&bang)}));
    wait_for_process(&marker);
    wait_for_process(&bang);
    drop(client);
    assert_no_survivor(&marker);
    // The other connection's command runs on.
    assert!(!agentsh_test_support::alive_containing(&bang).is_empty());
    drop(other);
    assert_no_survivor(&bang);
}

#[test]
fn shutdown_ends_every_connections_calls_and_sessions() {
    let world = World::new("");
    let mut served = Served::start(&world, None);
    let (tool, bang, job) = (unique_marker(), unique_marker(), unique_marker());
    let mut one = served.connect();
    one.send(&json!({
        "id": "1", "type": "tool_call", "toolCallId": "c", "name": "bash",
        "arguments": {"command": marked_sleep(&tool)}
    }));
    let mut two = served.connect();
    two.send(&json!({"id": "2", "type": "bash", "command": marked_sleep(&bang)}));
    two.send(&json!({
        "id": "3", "type": "tool_call", "toolCallId": "j", "name": "bash",
        "arguments": {"command": marked_sleep(&job), "run_in_background": true}
    }));
    for marker in [&tool, &bang, &job] {
        wait_for_process(marker);
    }
    assert_eq!(
        two.response("3")["data"]["details"]["job"]["state"],
        "running"
    );

    served.shut_down();
    for marker in [&tool, &bang, &job] {
        assert_no_survivor(marker);
    }
    // Each call was answered with its abort before the connection closed.
    let one_lines = one.rest_until_closed();
    let answer = one_lines
        .iter()
        .find(|line| line["type"] == "response" && line["id"] == "1")
        .unwrap_or_else(|| panic!("the tool call is answered: {one_lines:#?}"));
    assert_eq!(answer["success"], true);
    assert_eq!(answer["data"]["isError"], true);
    let two_lines = two.rest_until_closed();
    let answer = two_lines
        .iter()
        .find(|line| line["type"] == "response" && line["id"] == "2")
        .unwrap_or_else(|| panic!("the bash request is answered: {two_lines:#?}"));
    assert_eq!(answer["data"]["cancelled"], true);
    assert!(!world.socket_path().exists());
    assert!(std::os::unix::net::UnixStream::connect(world.socket_path()).is_err());
}

/// A client that never reads its answers cannot hold the server's shutdown up.
#[test]
fn a_client_that_does_not_read_cannot_hold_shutdown_up() {
    let world = World::new("");
    let mut served = Served::start(&world, None);
    let mut client = served.connect();
    // Some 4 MB of answers (each result holds a 50 KB tail, twice), far more than a socket
    // buffers, each call leaving a file when its output is out.
    let ran = world.root().join("ran");
    std::fs::create_dir(&ran).expect("mkdir");
    for n in 0..40 {
        client.send(&json!({
            "id": n, "type": "tool_call", "toolCallId": format!("c{n}"), "name": "bash",
            "arguments": {"command": format!("seq 1 30000; touch '{}/{n}'", ran.display())}
        }));
    }
    wait_until("every call ran", || {
        std::fs::read_dir(&ran).is_ok_and(|dir| dir.count() == 40)
    });
    served.shut_down();
    drop(client);
}

#[test]
fn a_socket_answers_hello_ping_and_list_artifacts_but_takes_no_hello_settings() {
    let world = World::new("");
    let served = Served::start(&world, None);
    let mut client = served.connect();
    client.send(&json!({"id": "h", "type": "hello", "protocol": agentsh_rpc::PROTOCOL}));
    assert_eq!(
        client.response("h"),
        json!({"id": "h", "type": "response", "command": "hello", "success": true,
               "data": {"agentsh": env!("CARGO_PKG_VERSION"), "protocol": 2}})
    );
    client.send(&json!({"id": "p", "type": "ping"}));
    assert_eq!(
        client.response("p"),
        json!({"id": "p", "type": "response", "command": "ping", "success": true})
    );
    client.send(&json!({"id": "s", "type": "hello", "settings": {"output": {"max_bytes": 5}}}));
    assert_eq!(
        client.response("s"),
        json!({"id": "s", "type": "response", "command": "hello", "success": false,
               "error": "this server does not take settings in a hello (only `agentsh rpc` does)"})
    );
    client.send(&json!({"id": "l", "type": "list_artifacts"}));
    assert_eq!(
        client.response("l"),
        json!({"id": "l", "type": "response", "command": "list_artifacts", "success": true,
               "data": {"artifacts": []}})
    );
}
