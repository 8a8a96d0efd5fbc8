//! Hidden input through `--remote`: the local client says `capabilities.secretInput`, a far
//! side's PTY job asks for a password, its `input_request` reaches the local client, and the
//! client's `secret_input` reaches the job; what the program prints back is redacted there.
//! A far side's job end reaches the local client as it happens, and its next result.

use serde_json::{Value, json};

use super::on_every_far_side;
use super::setup::{body, tool_call};
use crate::util::{LIVENESS, is_response};

/// What the person types.
const TYPED: &str = "far-side-passw0rd";

#[test]
fn a_far_sides_password_prompt_is_answered_by_the_local_client() {
    on_every_far_side("secret_input_through_remote", |far| {
        let env = far.env("");
        let mut rpc = far.rpc(&env);
        rpc.send_json(&json!({"id": "h", "type": "hello", "capabilities": {"secretInput": true}}));
        assert_eq!(rpc.response("h")["success"], true, "{}", far.name());

        let command =
            "read -s -p 'Password: ' pw; echo; echo \"got ${#pw}\"; echo \"it was $pw\"; sleep 60";
        rpc.send_json(&json!({
            "id": "start", "type": "tool_call", "toolCallId": "start", "name": "bash",
            "arguments": {"command": command, "run_in_background": true, "pty": true},
        }));
        // The event and the starting call's response, in either order.
        let mut request: Option<Value> = None;
        let mut started = false;
        while request.is_none() || !started {
            let line = rpc.next_or(LIVENESS * 2, "the input_request and the start");
            if line["type"] == "input_request" {
                request = Some(line);
            } else if is_response(&line, "start") {
                started = true;
            }
        }
        let request = request.expect("the event");
        assert_eq!(
            request,
            json!({"type": "input_request", "jobId": "1", "prompt": "Password:",
                   "command": command, "hidden": true}),
            "{}",
            far.name()
        );

        rpc.send_json(&json!({"id": "s", "type": "secret_input", "jobId": "1", "text": TYPED}));
        let sent = rpc.response("s");
        assert_eq!(sent["success"], true, "{} {sent}", far.name());
        let (_, answered) = tool_call(
            &mut rpc,
            "out",
            "job_output",
            &json!({"jobId": "1", "until": "it was", "wait": 20}),
        );
        let text = body(&answered);
        assert!(text.contains(&format!("got {}", TYPED.len())), "{text}");
        assert!(text.contains("it was [REDACTED:input]"), "{text}");
        assert!(!text.contains(TYPED), "{text}");
        tool_call(&mut rpc, "kill", "job_kill", &json!({"jobId": "1"}));
        rpc.close(LIVENESS);
    });
}

#[test]
fn a_far_sides_job_end_reaches_the_local_client_and_its_next_result() {
    on_every_far_side("job_end_through_remote", |far| {
        let env = far.env("");
        let mut rpc = far.rpc(&env);
        let (_, started) = tool_call(
            &mut rpc,
            "start",
            "bash",
            &json!({"command": "sleep 2; exit 3", "run_in_background": true}),
        );
        assert!(
            body(&started).contains("[Running in the background as job 1."),
            "{started}"
        );
        let lines = rpc.until(LIVENESS * 2, |line| line["type"] == "job_end");
        let event = lines.last().expect("the event");
        assert_eq!(event["jobId"], "1", "{} {event}", far.name());
        assert_eq!(event["state"], "exited", "{event}");
        assert_eq!(event["exitCode"], 3, "{event}");
        // `2s`, or more where a loaded machine made the job take longer.
        let ms = event["runTimeMs"].as_u64().expect("runTimeMs");
        assert!((2000..60_000).contains(&ms), "{event}");
        let after = format!("{}s", ms / 1000);
        let (_, next) = tool_call(&mut rpc, "next", "bash", &json!({"command": "true"}));
        assert!(
            body(&next).ends_with(&format!(
                "[job 1 (sleep 2; exit 3) exited with code 3 after {after}; job_output 1 shows its last output]"
            )),
            "{} {next}",
            far.name()
        );
        rpc.close(LIVENESS);
    });
}
