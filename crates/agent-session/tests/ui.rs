//! What an interactive UI gets from a session: a bang command's output live, a PTY
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
    fn attach(&self, _call_id: &str, _program: agentsh_agent_session::PtyAttachment) {}

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

/// Looks at job `id` until `done` holds for what is seen (within [`LIVENESS`]).
async fn view_until(
    session: &agentsh_agent_session::AgentSession,
    id: u64,
    done: impl Fn(&agentsh_agent_session::JobView) -> bool,
) -> agentsh_agent_session::JobView {
    let deadline = std::time::Instant::now() + LIVENESS;
    loop {
        let view = session.job_view(id, 64 * 1024).expect("the job exists");
        if done(&view) {
            return view;
        }
        assert!(std::time::Instant::now() < deadline, "never seen: {view:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn job_tool(
    session: &agentsh_agent_session::AgentSession,
    name: &str,
    args: serde_json::Value,
) -> String {
    tokio::time::timeout(LIVENESS, session.execute_job_tool(name, &args))
        .await
        .expect("liveness")
        .expect("a job tool")
        .into_result()
        .text()
}

#[tokio::test(flavor = "multi_thread")]
async fn looking_at_a_job_moves_no_read_position() {
    let (dir, session) = crate::world::temp_session("");
    let wait_for = |name: &str| {
        format!(
            "while [ ! -e '{}' ]; do sleep 0.05; done",
            dir.path().join(name).display()
        )
    };
    let command = format!(
        "echo a1; echo a2; {}; echo b1; echo b2; {}; echo c1; exec sleep 300",
        wait_for("go1"),
        wait_for("go2")
    );
    let started = session
        .execute_tool(
            "call",
            &serde_json::json!({"command": command, "run_in_background": true}),
            agentsh_agent_session::ToolContext::default(),
            |_| {},
        )
        .await
        .into_result();
    assert!(started.text().starts_with("a1\na2\n"), "{}", started.text());
    assert_eq!(
        job_tool(&session, "job_output", serde_json::json!({"jobId": 1})).await,
        "(no new output)\n\n[job 1: running]"
    );

    std::fs::write(dir.path().join("go1"), "").expect("go1");
    let view = view_until(&session, 1, |view| view.output.ends_with("b2\n")).await;
    assert_eq!(view.output, "a1\na2\nb1\nb2\n");
    assert_eq!(view.total_lines, 4);
    assert!(view.screen.is_none(), "a piped job has no screen");
    let listed = session.jobs_summary().remove(0);
    assert_eq!(
        (&view.summary.id, view.summary.state, &view.summary.command),
        (&listed.id, listed.state, &listed.command)
    );
    assert_eq!(view.summary.output_bytes, 12);
    // Whole lines within the bound.
    assert_eq!(session.job_view(1, 6).expect("job").output, "b1\nb2\n");
    assert_eq!(session.job_view(1, 5).expect("job").output, "b2\n");
    assert!(session.job_view(2, 100).is_none());
    // The model still gets everything new since its last `job_output`.
    let read = job_tool(&session, "job_output", serde_json::json!({"jobId": 1})).await;
    assert_eq!(read, "b1\nb2\n\n[job 1: running]");

    std::fs::write(dir.path().join("go2"), "").expect("go2");
    view_until(&session, 1, |view| view.output.ends_with("c1\n")).await;
    for _ in 0..3 {
        session.job_view(1, 1).expect("job");
    }
    // `until` still finds the line the UI looked at: at once, not after its `wait`.
    let found = job_tool(
        &session,
        "job_output",
        serde_json::json!({"jobId": 1, "until": "^c1$", "wait": 60}),
    )
    .await;
    assert_eq!(found, "c1\n\n[job 1: running]");

    let artifact = view.artifact_id.expect("a background job has a log");
    job_tool(&session, "job_kill", serde_json::json!({"jobId": 1})).await;
    // The log file gets the sink's last batch once the job's end is processed, which
    // `job_kill` does not wait for: look until it is there.
    let deadline = std::time::Instant::now() + LIVENESS;
    let log = loop {
        let log = session.read_artifact(&artifact, None, None).expect("log");
        if !log.text.is_empty() || std::time::Instant::now() >= deadline {
            break log;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(
        log.text.starts_with("a1\na2\nb1\nb2\nc1\n"),
        "{:?}",
        log.text
    );
    session.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn looking_at_a_pty_job_shows_its_screen() {
    let (_dir, session) = crate::world::temp_session("");
    session
        .execute_tool(
            "call",
            &serde_json::json!({
                "command": "printf 'hello \\033[1mpty\\033[0m\\n'; exec sleep 300",
                "run_in_background": true,
                "pty": true
            }),
            agentsh_agent_session::ToolContext::default(),
            |_| {},
        )
        .await;
    let view = view_until(&session, 1, |view| {
        view.screen
            .as_ref()
            .is_some_and(|screen| screen.row_text(0).contains("hello pty"))
    })
    .await;
    let screen = view.screen.expect("a screen");
    assert_eq!((screen.cols, screen.rows), (120, 40));
    assert!(screen.cell(0, 6).expect("a cell").attrs.bold, "{screen:?}");
    assert!(view.summary.pty);
    assert!(view.output.contains("hello pty"), "{:?}", view.output);
    session.shutdown().await;
}
