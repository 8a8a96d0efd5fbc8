//! What an interactive UI gets from a session (SPEC §15): a bang command's output live, a PTY
//! at the host's size, and a look at a job that moves no read position. Real shells, real
//! terminals.

use std::sync::mpsc;
use std::time::Duration;

use agentsh_agent_session::BangOptions;

/// How long a test waits for something that must happen (a liveness bound, not a timing).
const LIVENESS: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread")]
async fn a_bang_command_delivers_its_output_while_it_runs() {
    let (dir, session) = crate::world::temp_session("");
    let go = dir.path().join("go");
    // The command cannot end before the test lets it: the first line must arrive before.
    let command = format!(
        "echo first; while [ ! -e '{}' ]; do sleep 0.05; done; echo second",
        go.display()
    );
    let (tx, rx) = mpsc::channel::<String>();
    let running = {
        let session = session.clone();
        tokio::spawn(async move {
            session
                .execute_bash_with(&command, BangOptions::default(), move |text| {
                    let _ = tx.send(text.to_owned());
                })
                .await
        })
    };
    let first = tokio::task::spawn_blocking(move || {
        let first = rx.recv_timeout(LIVENESS);
        (first, rx)
    })
    .await
    .expect("joined");
    let (first, rx) = first;
    assert_eq!(first.as_deref(), Ok("first\n"));
    assert!(session.is_bash_running(), "the command was still running");
    std::fs::write(&go, "").expect("go");
    let result = tokio::time::timeout(LIVENESS, running)
        .await
        .expect("liveness")
        .expect("joined")
        .expect("runs");
    let rest: String = rx.try_iter().collect();
    assert_eq!(rest, "second\n");
    assert_eq!(result.summary.output, "first\nsecond\n");
    // Recorded as `execute_bash` records it.
    assert_eq!(session.context_messages().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bang_commands_chunks_are_its_sanitised_output() {
    let (_dir, session) = crate::world::temp_session("");
    let mut chunks = Vec::new();
    // Escapes are stripped once, by the sink; the unfinished last line comes at the end.
    let result = session
        .execute_bash_with(
            "printf 'a\\nb\\n'; printf '\\033[31mred\\033[0m\\n'; sleep 0.2; printf 'x\\r\\ny'; printf 'tail'",
            BangOptions::default(),
            |text| chunks.push(text.to_owned()),
        )
        .await
        .expect("runs");
    assert_eq!(chunks.concat(), result.summary.output);
    assert_eq!(result.summary.output, "a\nb\nred\nx\nytail");
    assert!(chunks.len() >= 2, "{chunks:?}");
}

/// A UI stand-in that shows a PTY at a fixed size and just watches.
struct SizedHost(Option<(u16, u16)>);

impl agentsh_agent_session::PtyHost for SizedHost {
    fn attach(&self, _call_id: &str, _controller: agentsh_agent_session::PtyController) {}

    fn size(&self) -> Option<(u16, u16)> {
        self.0
    }
}

/// What `tput cols; tput lines` prints as the first thing on a PTY shown by a host of `size`.
async fn first_size_seen(size: Option<(u16, u16)>) -> String {
    let (_dir, session) = crate::world::temp_session("[bash]\nvirtual_terminal = \"on\"\n");
    let host: std::sync::Arc<dyn agentsh_agent_session::PtyHost> =
        std::sync::Arc::new(SizedHost(size));
    let result = tokio::time::timeout(
        LIVENESS,
        session.execute_tool(
            "call",
            &serde_json::json!({"command": "tput cols; tput lines"}),
            agentsh_agent_session::ToolContext {
                pty_host: Some(host),
                ..agentsh_agent_session::ToolContext::default()
            },
            |_| {},
        ),
    )
    .await
    .expect("liveness")
    .into_result();
    assert!(!result.is_error, "{}", result.text());
    result.text()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pty_starts_at_the_hosts_size() {
    assert_eq!(first_size_seen(Some((97, 23))).await, "97\n23");
    // A host that does not say: the default 120×40.
    assert_eq!(first_size_seen(None).await, "120\n40");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hosts_size_out_of_range_is_clamped() {
    assert_eq!(first_size_seen(Some((5, 1000))).await, "20\n200");
    assert_eq!(first_size_seen(Some((1000, 0))).await, "400\n5");
}
