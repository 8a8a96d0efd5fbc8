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
