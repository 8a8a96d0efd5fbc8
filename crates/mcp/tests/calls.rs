//! `tools/call`: what reaches the session, what comes back, cancellation, progress and
//! approvals through elicitation.

use agentsh_protocol::{
    Answerer, ApprovalAnswer, ApprovalDecision, ApprovalRequest, AskedSegment, REMOTE_LOST_PREFIX,
};
use agentsh_seam::HandleError;
use agentsh_test_support::session::{Reply, wait_cancelled};
use serde_json::json;

use crate::util::{Mcp, OTHER_TOOLS, result, text};

#[tokio::test]
async fn a_bash_call_reaches_the_session_and_returns_its_result_and_is_error() {
    let mut mcp = Mcp::initialized().await;
    mcp.session.reply(Reply::text("hi\n"));
    mcp.session.reply(Reply::error_text("boom\n[exit code: 1]"));
    let arguments = json!({"command": "echo hi", "timeout": 5});
    let ok = mcp.call("bash", arguments.clone()).await;
    let ok = result(&ok);
    assert_eq!(text(ok), "hi\n");
    assert_eq!(ok["isError"], false, "{ok}");
    assert_eq!(ok["structuredContent"]["text"], "hi\n", "{ok}");
    assert_eq!(ok["structuredContent"]["exitCode"], 0, "{ok}");
    assert_eq!(ok["structuredContent"]["cwd"], "/fake/cwd", "{ok}");

    let failed = mcp.call("bash", json!({"command": "false"})).await;
    let failed = result(&failed);
    assert_eq!(text(failed), "boom\n[exit code: 1]");
    assert_eq!(failed["isError"], true, "{failed}");
    assert_eq!(failed["structuredContent"]["exitCode"], 1, "{failed}");

    let calls = mcp.session.calls();
    assert_eq!(calls.len(), 2);
    let call = &calls[0];
    assert_eq!((call.id.as_str(), call.name.as_str()), ("mcp", "bash"));
    assert_eq!(call.arguments, arguments);
    assert_eq!(call.tool_names, OTHER_TOOLS);
    // No progress token: no live updates are made. No elicitation: nobody is asked.
    assert!(!call.live_updates && !call.approver && !call.pty_host && !call.no_jobs);
    assert!(!call.cancel.is_cancelled());
}

#[tokio::test]
async fn a_job_tool_reaches_the_session_by_its_name() {
    let mut mcp = Mcp::initialized().await;
    mcp.session.reply(Reply::text("job 1 running: sleep 100"));
    let response = mcp.call("job_list", json!({})).await;
    assert_eq!(text(result(&response)), "job 1 running: sleep 100");
    let calls = mcp.session.calls();
    assert_eq!(calls[0].name, "job_list");
    assert_eq!(calls[0].arguments, json!({}));
    // Job tools get no live updates, and not the agent's other tools.
    assert!(!calls[0].live_updates);
    assert!(calls[0].tool_names.is_empty());
}

#[tokio::test]
async fn a_session_that_cannot_take_the_call_gives_a_tool_error_in_its_words() {
    let mut mcp = Mcp::initialized().await;
    mcp.session.reply(Reply::failure(HandleError::Failed(
        "A bash command is already running".to_owned(),
    )));
    mcp.session.reply(Reply::failure(HandleError::Unreachable(
        "cannot reach ssh://box: Connection refused".to_owned(),
    )));
    mcp.session.reply(Reply::failure(HandleError::Lost(
        "the far side closed the connection".to_owned(),
    )));
    let expected = [
        "A bash command is already running".to_owned(),
        format!("{REMOTE_LOST_PREFIX}cannot reach ssh://box: Connection refused"),
        format!("{REMOTE_LOST_PREFIX}the far side closed the connection"),
    ];
    for expected in expected {
        let response = mcp.call("bash", json!({"command": "true"})).await;
        let result = result(&response);
        assert_eq!(text(result), expected);
        assert_eq!(result["isError"], true, "{result}");
        // A call that never ran has no exit code.
        assert_eq!(
            result["structuredContent"]["exitCode"],
            json!(null),
            "{result}"
        );
    }
}

#[tokio::test]
async fn a_clients_cancel_cancels_the_calls_token_and_gets_no_answer() {
    let mut mcp = Mcp::initialized().await;
    mcp.session.reply(Reply::until_cancelled());
    let id = mcp.id();
    mcp.send_request(
        id,
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "sleep 100"}}),
    )
    .await;
    let call = mcp.session.wait_for_calls(1).await.remove(0);
    assert!(!call.cancel.is_cancelled());
    mcp.send(&json!({
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": id, "reason": "the user pressed Esc"}
    }))
    .await;
    wait_cancelled(&call.cancel, "the call's token").await;
    mcp.session
        .wait_for("the aborted call's return", |state| state.returned == [0])
        .await;
    // No answer to the cancelled request; its id is free for a new one.
    mcp.send_request(
        id,
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "true"}}),
    )
    .await;
    let response = mcp.response(id).await;
    assert_eq!(text(result(&response)), "fake: bash ran");
    assert!(
        mcp.unclaimed()
            .iter()
            .all(|message| message["id"] != json!(id)),
        "{:?}",
        mcp.unclaimed()
    );
    assert_eq!(mcp.session.calls().len(), 2);
}

#[tokio::test]
async fn a_progress_token_gets_the_live_updates_as_progress() {
    let mut mcp = Mcp::initialized().await;
    mcp.session
        .reply(Reply::text("line 1\nline 2\n").with_updates(["line 1\n"]));
    let id = mcp.id();
    mcp.send_request(
        id,
        "tools/call",
        json!({
            "name": "bash",
            "arguments": {"command": "make"},
            "_meta": {"progressToken": "build-1"}
        }),
    )
    .await;
    let progress = mcp.notification("notifications/progress").await;
    let params = &progress["params"];
    assert_eq!(params["progressToken"], "build-1", "{progress}");
    assert_eq!(params["progress"], 1.0, "{progress}");
    assert_eq!(params["message"], "line 1\n", "{progress}");
    let response = mcp.response(id).await;
    assert_eq!(text(result(&response)), "line 1\nline 2\n");
    assert!(mcp.session.calls()[0].live_updates);
}

#[tokio::test]
async fn an_approval_request_is_an_elicitation_and_its_answer_goes_back() {
    let mut mcp = Mcp::initialized_with(json!({"elicitation": {}})).await;
    let request = ApprovalRequest {
        request_id: "ap-1".to_owned(),
        tool_call_id: "mcp".to_owned(),
        command: "rm -rf build".to_owned(),
        segments: vec![AskedSegment {
            command: "rm -rf build".to_owned(),
            reason: "deletes files".to_owned(),
        }],
    };
    mcp.session.reply(Reply::text("removed").asking(request));
    let id = mcp.id();
    mcp.send_request(
        id,
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "rm -rf build"}}),
    )
    .await;
    let elicit = mcp
        .find(|message| message["method"] == "elicitation/create")
        .await;
    let params = &elicit["params"];
    assert_eq!(
        params["message"],
        "Allow agentsh to run this command?\n\nrm -rf build\n\nIt needs approval because:\n- rm -rf build: deletes files\n",
        "{elicit}"
    );
    let decision = &params["requestedSchema"]["properties"]["decision"];
    assert_eq!(
        decision["enum"],
        json!(["allow", "allow_session", "deny"]),
        "{elicit}"
    );
    assert_eq!(params["requestedSchema"]["required"], json!(["decision"]));
    mcp.send(&json!({
        "jsonrpc": "2.0",
        "id": elicit["id"],
        "result": {"action": "accept", "content": {"decision": "allow_session"}}
    }))
    .await;
    let response = mcp.response(id).await;
    assert_eq!(text(result(&response)), "removed");
    let answers = mcp.session.with_state(|state| state.answers.clone());
    assert_eq!(
        answers,
        [Some(ApprovalAnswer {
            decision: ApprovalDecision::AllowSession,
            answered_by: Answerer::Mcp,
        })]
    );
    assert!(mcp.session.calls()[0].approver);
}

#[tokio::test]
async fn a_declined_elicitation_denies() {
    let mut mcp = Mcp::initialized_with(json!({"elicitation": {}})).await;
    let request = ApprovalRequest {
        request_id: "ap-2".to_owned(),
        tool_call_id: "mcp".to_owned(),
        command: "git push --force".to_owned(),
        segments: Vec::new(),
    };
    mcp.session
        .reply(Reply::error_text("denied").asking(request));
    let id = mcp.id();
    mcp.send_request(
        id,
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "git push --force"}}),
    )
    .await;
    let elicit = mcp
        .find(|message| message["method"] == "elicitation/create")
        .await;
    mcp.send(&json!({"jsonrpc": "2.0", "id": elicit["id"], "result": {"action": "decline"}}))
        .await;
    mcp.response(id).await;
    let answers = mcp.session.with_state(|state| state.answers.clone());
    assert_eq!(
        answers,
        [Some(ApprovalAnswer {
            decision: ApprovalDecision::Deny,
            answered_by: Answerer::Mcp,
        })]
    );
}
