//! What the far side says on its own: events for this side's subscribers, warnings, and the
//! hello that tells it a person answers hidden input here.

use std::time::Duration;

use agentsh_protocol::wire::{Capabilities, Command, Message};
use agentsh_protocol::{InputRequest, JobEnd, JobState, LimitHit, LimitKind, RPC_PROTOCOL};
use agentsh_remote::{SessionHandle, json};
use agentsh_seam::SessionEvent;

use crate::util::{LIVENESS, connect};

#[tokio::test]
async fn job_ends_and_input_requests_reach_every_subscriber_and_warnings_are_kept() {
    let mut remote = connect(None).await;
    let mut first = remote.session.subscribe(false);
    let mut second = remote.session.subscribe(false);
    let far = &mut remote.far;
    far.send(&Message::Warning {
        message: "the far side's sandbox is off".to_owned(),
    })
    .await;
    far.send(&Message::InputRequest {
        job_id: "2".to_owned(),
        prompt: "Password: ".to_owned(),
        command: "sudo -k true".to_owned(),
        hidden: true,
    })
    .await;
    far.send(&Message::JobEnd {
        job_id: "4".to_owned(),
        state: JobState::Killed,
        exit_code: None,
        run_time_ms: 2500,
        reason: Some(LimitHit {
            kind: LimitKind::Memory,
            limit: 256 << 20,
            used: 257 << 20,
        }),
    })
    .await;
    let expected = [
        SessionEvent::InputRequest(InputRequest {
            job_id: "2".to_owned(),
            prompt: "Password: ".to_owned(),
            command: "sudo -k true".to_owned(),
        }),
        SessionEvent::JobEnd(JobEnd {
            job_id: "4".to_owned(),
            state: JobState::Killed,
            exit_code: None,
            run_time: Duration::from_millis(2500),
            reason: Some(LimitHit {
                kind: LimitKind::Memory,
                limit: 256 << 20,
                used: 257 << 20,
            }),
        }),
    ];
    for subscription in [&mut first, &mut second] {
        for event in &expected {
            let got = tokio::time::timeout(LIVENESS, subscription.recv())
                .await
                .expect("an event within the liveness limit");
            assert_eq!(got.as_ref(), Some(event));
        }
    }
    // The warning came first: it is there, once.
    assert_eq!(
        SessionHandle::take_warnings(&remote.session),
        ["the far side's sandbox is off"]
    );
    assert!(SessionHandle::take_warnings(&remote.session).is_empty());
}

#[tokio::test]
async fn a_subscriber_that_answers_secrets_is_told_to_the_far_side_and_its_going_too() {
    let mut remote = connect(None).await;
    let hello = |secret_input| Command::Hello {
        protocol: Some(u64::from(RPC_PROTOCOL)),
        settings: None,
        capabilities: Some(Capabilities {
            approvals: true,
            secret_input,
        }),
    };
    // At once after connecting, before the task that tells the far side first ran.
    let answering = remote.session.subscribe(true);
    assert!(answering.answers_secrets());
    let told = remote.far.request().await;
    assert_eq!(told.command, hello(true));
    remote
        .far
        .answer(
            &told,
            &json!({"agentsh": "9.9.9", "protocol": RPC_PROTOCOL}),
        )
        .await;
    // A second one changes nothing; the last one going is told.
    let watching = remote.session.subscribe(false);
    drop(watching);
    drop(answering);
    let told = remote.far.request().await;
    assert_eq!(told.command, hello(false));
}
