//! The `hello` handshake, refusals, a far side that prints garbage, and the orderly end.

use std::io;

use agentsh_protocol::RPC_PROTOCOL;
use agentsh_protocol::wire::{Capabilities, Command};
use agentsh_remote::{FarVersion, RemoteError, SessionHandle, json};

use crate::util::{
    FAR_VERSION, FarEnd, LIVENESS, Scripted, TARGET, VERSION, config, connect, refused,
};

#[tokio::test]
async fn hello_carries_the_protocol_the_settings_and_the_capabilities() {
    let settings = json!({"sandbox": {"mode": "workspace-write"}});
    let remote = connect(Some(settings.clone())).await;
    assert_eq!(
        remote.hello,
        Command::Hello {
            protocol: Some(u64::from(RPC_PROTOCOL)),
            settings: Some(settings),
            capabilities: Some(Capabilities {
                approvals: true,
                secret_input: false,
            }),
        }
    );
    assert_eq!(remote.far.far.cwd.as_deref(), Some("/srv/project"));
    let session = &remote.session;
    assert_eq!(
        session.far_version(),
        Some(FarVersion {
            agentsh: FAR_VERSION.to_owned(),
            protocol: u64::from(RPC_PROTOCOL),
        })
    );
    assert_eq!(session.sessions_opened(), 1);
    assert_eq!(SessionHandle::id(session), TARGET);
    assert_eq!(session.location().as_deref(), Some(TARGET));
}

#[tokio::test]
async fn a_far_side_of_another_protocol_is_refused_naming_both_versions() {
    let error = refused(async |mut far: FarEnd| {
        let hello = far.request().await;
        far.answer(&hello, &json!({"agentsh": "0.1.0", "protocol": 99}))
            .await;
    })
    .await;
    let reason = format!(
        "Protocol mismatch: this agentsh {VERSION} speaks protocol {RPC_PROTOCOL}, the far side's agentsh 0.1.0 speaks protocol 99"
    );
    assert_eq!(
        error.to_string(),
        format!("{TARGET} refused the session: {reason}")
    );
    assert_eq!(
        error,
        RemoteError::Refused {
            target: TARGET.to_owned(),
            reason,
        }
    );
}

#[tokio::test]
async fn a_hello_the_far_side_fails_is_refused_with_its_reason() {
    let error = refused(async |mut far: FarEnd| {
        let hello = far.request().await;
        far.fail(
            &hello,
            "sandbox.mode = \"workspace-write\" needs Landlock, which this kernel lacks",
        )
        .await;
    })
    .await;
    assert_eq!(
        error,
        RemoteError::Refused {
            target: TARGET.to_owned(),
            reason: "sandbox.mode = \"workspace-write\" needs Landlock, which this kernel lacks"
                .to_owned(),
        }
    );
}

#[tokio::test]
async fn a_hello_answer_this_side_cannot_read_is_refused_naming_why() {
    let error = refused(async |mut far: FarEnd| {
        let hello = far.request().await;
        far.answer(&hello, &json!({"weird": true})).await;
    })
    .await;
    let RemoteError::Refused { target, reason } = error else {
        panic!("refused: {error:?}");
    };
    assert_eq!(target, TARGET);
    assert!(
        reason.starts_with(
            "the far side sent an answer this agentsh cannot read: missing field `agentsh`"
        ),
        "{reason}"
    );
}

#[tokio::test]
async fn a_far_side_that_closes_before_hello_cannot_be_reached() {
    let error = refused(async |mut far: FarEnd| {
        let _hello = far.next_line().await;
        far.die("bash: agentsh: command not found\n").await;
    })
    .await;
    assert_eq!(
        error,
        RemoteError::Connect {
            target: TARGET.to_owned(),
            reason: "bash: agentsh: command not found".to_owned(),
        }
    );
}

#[tokio::test]
async fn a_transport_that_cannot_open_is_a_connect_error() {
    let (transport, _opened) = Scripted::new();
    transport.fail_next(io::Error::new(
        io::ErrorKind::NotFound,
        "cannot run `kubectl`: No such file or directory",
    ));
    let error = agentsh_remote::RemoteHandle::connect(config(transport, None))
        .await
        .expect_err("no channel");
    assert_eq!(
        error.to_string(),
        format!("cannot reach {TARGET}: cannot run `kubectl`: No such file or directory")
    );
}

#[tokio::test]
async fn lines_that_are_no_messages_are_skipped_before_and_after_hello() {
    let (transport, mut opened) = Scripted::new();
    let connecting = agentsh_remote::RemoteHandle::connect(config(transport, None));
    let (session, mut far) = tokio::join!(connecting, async {
        let mut far = crate::util::next_far(&mut opened).await;
        // A chatty rc file prints before the far side's agentsh speaks.
        far.send_line("Welcome to box.example!").await;
        far.send_line("\u{1b}[1mLast login: yesterday\u{1b}[0m")
            .await;
        far.hello().await;
        far
    });
    let session = session.expect("the banner is skipped");
    let arguments = json!({"command": "true"});
    let call = agentsh_remote::ToolCall::new("c1", "bash", &arguments);
    let (outcome, ()) = tokio::join!(session.tool_call(call), async {
        let request = far.request().await;
        far.send_line("{not json").await;
        far.send_line(r#"{"type": "mystery", "toolCallId": "remote-1"}"#)
            .await;
        far.answer(&request, &crate::util::far_result("done", Some(0), false))
            .await;
    });
    let result = outcome.expect("answered").into_result();
    assert_eq!(result.text(), "done");
}

#[tokio::test]
async fn shutdown_closes_the_far_sides_input_and_returns_once_it_is_gone() {
    let remote = connect(None).await;
    let mut far = remote.far;
    let session = remote.session;
    let shutdown = async {
        tokio::time::timeout(LIVENESS, session.shutdown())
            .await
            .expect("shut down within the liveness limit");
    };
    tokio::join!(shutdown, async move {
        far.expect_end_of_input().await;
        // The far side ends its trees, then exits: its output closes.
        drop(far);
    });
}
