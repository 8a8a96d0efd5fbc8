//! Tool calls forwarded to the far side: results, live updates, abort, a lost connection and
//! the reconnect, artifacts, answers this side cannot read.

use agentsh_protocol::wire::{Command, Message, PartialResult, Query};
use agentsh_protocol::{RECONNECTED_LINE, REMOTE_LOST_PREFIX, RPC_PROTOCOL, ToolOutcome};
use agentsh_remote::{CancellationToken, HandleError, Reach, SessionHandle, ToolCall, json};

use crate::util::{TARGET, call_as_far_closes, connect, far_result, next_far};

#[tokio::test]
async fn a_tool_call_is_forwarded_under_an_id_of_this_side_and_its_result_returned() {
    let mut remote = connect(None).await;
    let arguments = json!({"command": "uname -n", "timeout": 5});
    let tools = ["Read".to_owned()];
    let call = ToolCall {
        tool_names: &tools,
        ..ToolCall::new("call-7", "bash", &arguments)
    };
    let sent = far_result("box\n", Some(0), false);
    let far = &mut remote.far;
    let (outcome, request) = tokio::join!(remote.session.tool_call(call), async {
        let request = far.request().await;
        far.answer(&request, &sent).await;
        request.command
    });
    assert_eq!(
        request,
        Command::ToolCall {
            tool_call_id: "remote-1".to_owned(),
            name: "bash".to_owned(),
            arguments: arguments.clone(),
            tool_names: vec!["Read".to_owned()],
            // No approver here: the far side denies what needs a yes at once.
            approvals: Some(false),
        }
    );
    assert_eq!(outcome, Ok(ToolOutcome::Finished(sent)));
}

#[tokio::test]
async fn live_updates_reach_on_update_in_order_and_other_calls_updates_do_not() {
    let mut remote = connect(None).await;
    let arguments = json!({"command": "make"});
    let mut updates = Vec::new();
    let mut on_update = |text: &str| updates.push(text.to_owned());
    let call = ToolCall {
        on_update: Some(&mut on_update),
        ..ToolCall::new("c1", "bash", &arguments)
    };
    let far = &mut remote.far;
    let update = |call: &str, text: &str| Message::ToolExecutionUpdate {
        tool_call_id: call.to_owned(),
        tool_name: "bash".to_owned(),
        partial_result: PartialResult::text(text.to_owned()),
    };
    let (outcome, ()) = tokio::join!(remote.session.tool_call(call), async {
        let request = far.request().await;
        far.send(&Message::ToolExecutionStart {
            tool_call_id: "remote-1".to_owned(),
            tool_name: "bash".to_owned(),
            args: json!({"command": "make"}),
        })
        .await;
        far.send(&update("remote-1", "cc a.c\n")).await;
        far.send(&update("remote-99", "not this call's\n")).await;
        far.send(&update("remote-1", "cc a.c\ncc b.c\n")).await;
        far.answer(&request, &far_result("cc a.c\ncc b.c\n", Some(0), false))
            .await;
    });
    assert_eq!(
        outcome.expect("answered").into_result().text(),
        "cc a.c\ncc b.c\n"
    );
    assert_eq!(updates, ["cc a.c\n", "cc a.c\ncc b.c\n"]);
}

#[tokio::test]
async fn a_cancelled_call_sends_abort_and_ends_aborted() {
    let mut remote = connect(None).await;
    let arguments = json!({"command": "sleep 100"});
    let cancel = CancellationToken::new();
    let call = ToolCall {
        cancel: cancel.clone(),
        ..ToolCall::new("c1", "bash", &arguments)
    };
    let mut aborted = far_result("Command aborted", None, true);
    aborted.details.cancelled = true;
    let far = &mut remote.far;
    let (outcome, abort) = tokio::join!(remote.session.tool_call(call), async {
        let request = far.request().await;
        cancel.cancel();
        let abort = far.request().await;
        far.answer(&request, &aborted).await;
        abort.command
    });
    assert_eq!(
        abort,
        Command::Abort {
            tool_call_id: "remote-1".to_owned(),
        }
    );
    assert_eq!(outcome, Ok(ToolOutcome::Aborted(aborted)));
}

#[tokio::test]
async fn a_lost_connection_ends_the_call_and_the_next_call_reconnects_with_the_settings() {
    let settings = json!({"sandbox": {"mode": "read-only"}});
    let mut remote = connect(Some(settings)).await;
    // Settings a client applied since: kept for every later hello.
    let applied = json!({"bash": {"default_timeout": 60}});
    let far = &mut remote.far;
    let (applying, hello) = tokio::join!(remote.session.apply_settings(applied.clone()), async {
        let hello = far.request().await;
        far.answer(
            &hello,
            &json!({"agentsh": "9.9.9", "protocol": RPC_PROTOCOL}),
        )
        .await;
        hello.command
    });
    applying.expect("applied");
    assert!(
        matches!(&hello, Command::Hello { settings: Some(sent), .. } if *sent == applied),
        "{hello:?}"
    );

    let arguments = json!({"command": "sleep 100"});
    let far = remote.far;
    let (outcome, ()) = tokio::join!(
        remote
            .session
            .tool_call(ToolCall::new("c1", "bash", &arguments)),
        async move {
            let mut far = far;
            let _request = far.request().await;
            far.die("agentsh: killed by the OOM killer\n").await;
        }
    );
    let lost = format!("{REMOTE_LOST_PREFIX}agentsh: killed by the OOM killer");
    let ToolOutcome::Finished(result) = outcome.expect("a result") else {
        panic!("not aborted");
    };
    assert_eq!(result.text(), lost);
    assert!(result.is_error);
    assert_eq!(result.details.exit_code, None);
    // A look that may not reconnect finds the link down, and opens nothing.
    assert_eq!(
        remote.session.status(Reach::IfConnected).await,
        Err(HandleError::Lost(
            "agentsh: killed by the OOM killer".to_owned()
        ))
    );
    assert!(remote.opened.try_recv().is_err(), "nothing was opened");
    assert_eq!(remote.session.sessions_opened(), 1);

    // The next call opens a new far-side session, whose hello carries both settings.
    let opened = &mut remote.opened;
    let (outcome, hello) = tokio::join!(
        remote
            .session
            .tool_call(ToolCall::new("c2", "bash", &arguments)),
        async {
            let mut far = next_far(opened).await;
            let hello = far.hello().await;
            let request = far.request().await;
            far.answer(&request, &far_result("again\n", Some(0), false))
                .await;
            hello
        }
    );
    let Command::Hello {
        settings: Some(settings),
        ..
    } = hello
    else {
        panic!("a hello with settings: {hello:?}");
    };
    assert_eq!(
        settings,
        json!({"sandbox": {"mode": "read-only"}, "bash": {"default_timeout": 60}})
    );
    let result = outcome.expect("a result").into_result();
    assert!(result.details.session_restarted, "{result:?}");
    let text = result.text();
    assert!(text.contains(RECONNECTED_LINE), "{text}");
    assert!(text.contains("again\n"), "{text}");
    assert_eq!(remote.session.sessions_opened(), 2);
}

#[tokio::test]
async fn a_far_side_that_just_closes_is_lost_saying_so() {
    let remote = connect(None).await;
    let outcome = call_as_far_closes(&remote.session, remote.far).await;
    assert_eq!(
        outcome.expect("a result").into_result().text(),
        format!("{REMOTE_LOST_PREFIX}the far side closed the connection")
    );
}

#[tokio::test]
async fn queries_pass_the_far_sides_json_through_as_written() {
    let mut remote = connect(None).await;
    let written = r#"{"text":"b\n","totalLines":3,"path":"/far/artifacts/7","extra":[1, 2]}"#;
    let far = &mut remote.far;
    let (raw, request) = tokio::join!(
        remote.session.query(
            Query::ReadArtifact {
                artifact_id: "artifact://7".to_owned(),
                offset: Some(2),
                limit: Some(1),
            },
            Reach::Reconnect
        ),
        async {
            let request = far.request().await;
            far.answer_raw(&request, written).await;
            request.command
        }
    );
    assert_eq!(
        request,
        Command::Query(Query::ReadArtifact {
            artifact_id: "artifact://7".to_owned(),
            offset: Some(2),
            limit: Some(1),
        })
    );
    assert_eq!(raw.expect("an answer").expect("data").get(), written);

    let (typed, ()) = tokio::join!(
        remote.session.read_artifact("7".to_owned(), None, None),
        async {
            let request = far.request().await;
            far.answer_raw(&request, written).await;
        }
    );
    let typed = typed.expect("data");
    assert_eq!((typed.text.as_str(), typed.total_lines), ("b\n", 3));

    let (missing, ()) = tokio::join!(
        remote.session.query(
            Query::ReadArtifact {
                artifact_id: "9".to_owned(),
                offset: None,
                limit: None,
            },
            Reach::Reconnect
        ),
        async {
            let request = far.request().await;
            far.fail(&request, "Unknown artifact: 9").await;
        }
    );
    assert_eq!(
        missing.map(|raw| raw.map(|raw| raw.get().to_owned())),
        Err(HandleError::Failed("Unknown artifact: 9".to_owned()))
    );
}

#[tokio::test]
async fn a_result_this_side_cannot_read_is_an_error_naming_it() {
    let mut remote = connect(None).await;
    let arguments = json!({"command": "true"});
    let far = &mut remote.far;
    let (outcome, ()) = tokio::join!(
        remote
            .session
            .tool_call(ToolCall::new("c1", "bash", &arguments)),
        async {
            let request = far.request().await;
            far.answer(&request, &json!("not a tool result")).await;
        }
    );
    let Err(HandleError::Failed(reason)) = outcome else {
        panic!("a failure: {outcome:?}");
    };
    assert!(
        reason.starts_with("the far side sent an answer this agentsh cannot read: "),
        "{reason}"
    );
    // The connection serves on.
    let (outcome, ()) = tokio::join!(
        remote
            .session
            .tool_call(ToolCall::new("c2", "bash", &arguments)),
        async {
            let request = far.request().await;
            far.answer(&request, &far_result("fine", Some(0), false))
                .await;
        }
    );
    assert_eq!(outcome.expect("a result").into_result().text(), "fine");
    assert_eq!(remote.session.sessions_opened(), 1);
}

#[tokio::test]
async fn a_reconnect_that_cannot_open_is_a_lost_result_and_the_next_call_tries_again() {
    let remote = connect(None).await;
    let outcome = call_as_far_closes(&remote.session, remote.far).await;
    let arguments = json!({"command": "true"});
    assert!(outcome.expect("a result").into_result().is_error);
    remote.transport.fail_next(std::io::Error::new(
        std::io::ErrorKind::ConnectionRefused,
        "ssh: connect to host box port 22: Connection refused",
    ));
    let outcome = remote
        .session
        .tool_call(ToolCall::new("c2", "bash", &arguments))
        .await;
    let result = outcome.expect("a result").into_result();
    assert_eq!(
        result.text(),
        format!(
            "{REMOTE_LOST_PREFIX}cannot reach {TARGET}: ssh: connect to host box port 22: Connection refused"
        )
    );
    assert!(result.is_error);
    assert_eq!(remote.session.sessions_opened(), 1);

    let mut opened = remote.opened;
    let (outcome, ()) = tokio::join!(
        remote
            .session
            .tool_call(ToolCall::new("c3", "bash", &arguments)),
        async {
            let mut far = next_far(&mut opened).await;
            far.hello().await;
            let request = far.request().await;
            far.answer(&request, &far_result("back\n", Some(0), false))
                .await;
        }
    );
    // A new far-side session, also after a reconnect that failed: the model is told its shell
    // state is gone.
    let result = outcome.expect("a result").into_result();
    assert!(result.details.session_restarted, "{result:?}");
    assert_eq!(result.text(), format!("back\n\n\n{RECONNECTED_LINE}"));
    assert_eq!(remote.session.sessions_opened(), 2);
}
