//! What the server says on its own (warnings, job ends), the artifacts as resources, and how
//! serving ends.

use std::time::Duration;

use agentsh_protocol::{JobEnd, JobState, JobSummary, SessionStatus};
use agentsh_seam::SessionEvent;
use agentsh_test_support::session::{Reply, wait_cancelled};
use serde_json::json;

use crate::util::{Mcp, result, text};

#[tokio::test]
async fn warnings_go_out_as_warning_logs_after_a_call() {
    let mut mcp = Mcp::initialized().await;
    mcp.session.warn("the sandbox is off: no Landlock");
    let response = mcp.call("bash", json!({"command": "true"})).await;
    assert_eq!(text(result(&response)), "fake: bash ran");
    let log = mcp.notification("notifications/message").await;
    let params = &log["params"];
    assert_eq!(params["level"], "warning", "{log}");
    assert_eq!(params["logger"], "agentsh", "{log}");
    assert_eq!(params["data"], "the sandbox is off: no Landlock", "{log}");
    assert!(mcp.session.with_state(|state| state.warnings.is_empty()));
}

#[tokio::test]
async fn a_job_end_is_an_info_log_with_the_job_end_event_and_its_line() {
    let mut mcp = Mcp::initialized().await;
    mcp.session.set_status(SessionStatus {
        cwd: "/fake/cwd".to_owned(),
        shell: "/bin/sh".to_owned(),
        sandbox: None,
        jobs: vec![JobSummary {
            id: "3".to_owned(),
            state: JobState::Exited,
            exit_code: Some(2),
            pty: false,
            command: "make test".to_owned(),
            run_time: Duration::from_millis(1500),
            output_bytes: 10,
            usage: None,
        }],
    });
    mcp.session.wait_for_subscriptions(1).await;
    let end = JobEnd {
        job_id: "3".to_owned(),
        state: JobState::Exited,
        exit_code: Some(2),
        run_time: Duration::from_millis(1500),
        reason: None,
    };
    mcp.session.send_event(SessionEvent::JobEnd(end.clone()));
    let log = mcp.notification("notifications/message").await;
    let params = &log["params"];
    assert_eq!(params["level"], "info", "{log}");
    assert_eq!(params["logger"], "agentsh", "{log}");
    let data = &params["data"];
    assert_eq!(data["type"], "job_end", "{log}");
    assert_eq!(data["jobId"], "3", "{log}");
    assert_eq!(data["state"], "exited", "{log}");
    assert_eq!(data["exitCode"], 2, "{log}");
    assert_eq!(data["runTimeMs"], 1500, "{log}");
    let line = data["message"].as_str().expect("a message");
    assert_eq!(line, end.line(Some("make test")));
    assert!(
        line.starts_with("job 3 (make test) exited with code 2 after "),
        "{line}"
    );
}

#[tokio::test]
async fn artifacts_are_resources_read_whole_or_by_line_range() {
    let mut mcp = Mcp::initialized().await;
    mcp.session.add_artifact("7", "a\nb\nc\n");
    let listed = mcp.request("resources/list", json!({})).await;
    let resources = listed["result"]["resources"].as_array().expect("resources");
    assert_eq!(resources.len(), 1, "{listed}");
    assert_eq!(resources[0]["uri"], "artifact://7", "{listed}");
    assert_eq!(resources[0]["name"], "artifact 7", "{listed}");
    assert_eq!(resources[0]["size"], 6, "{listed}");
    assert_eq!(resources[0]["mimeType"], "text/plain", "{listed}");

    let whole = mcp
        .request("resources/read", json!({"uri": "artifact://7"}))
        .await;
    assert_eq!(
        whole["result"]["contents"][0]["text"], "a\nb\nc\n",
        "{whole}"
    );
    let range = mcp
        .request(
            "resources/read",
            json!({"uri": "artifact://7?offset=2&limit=1"}),
        )
        .await;
    let contents = &range["result"]["contents"][0];
    assert_eq!(contents["text"], "b\n", "{range}");
    assert_eq!(contents["uri"], "artifact://7?offset=2&limit=1", "{range}");

    let bad = mcp
        .request("resources/read", json!({"uri": "artifact://7?from=2"}))
        .await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert_eq!(
        bad["error"]["message"],
        "unknown parameter \"from\" in artifact://7?from=2 (offset, limit)",
        "{bad}"
    );
    let missing = mcp
        .request("resources/read", json!({"uri": "artifact://9?offset=1"}))
        .await;
    assert_eq!(missing["error"]["code"], -32002, "{missing}");
    assert_eq!(
        missing["error"]["message"], "No artifact artifact://9",
        "{missing}"
    );
}

#[tokio::test]
async fn end_of_input_cancels_a_running_call_and_shuts_the_session_down() {
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
    mcp.close_input();
    wait_cancelled(&call.cancel, "the running call").await;
    assert_eq!(mcp.finished().await, None);
    assert_eq!(mcp.session.with_state(|state| state.shutdowns), 1);
}

#[tokio::test]
async fn a_stop_ends_serving_with_its_reason_and_shuts_the_session_down() {
    let mut mcp = Mcp::initialized().await;
    mcp.stop.cancel();
    assert_eq!(mcp.finished().await, Some("stopped"));
    assert_eq!(mcp.session.with_state(|state| state.shutdowns), 1);
}

#[tokio::test]
async fn a_client_that_leaves_before_initialize_still_shuts_the_session_down() {
    let mut mcp = Mcp::start();
    mcp.close_input();
    assert_eq!(mcp.finished().await, None);
    mcp.session.wait_for_shutdown().await;
}
