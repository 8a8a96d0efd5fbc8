//! `BashTool` end to end on real shells: every branch of the tool result.
//!
//! A stopped `sleep` is reported by bash itself as `Terminated` (its foreground job died of
//! SIGTERM); that line is part of the command's output, as in a terminal.

use std::path::Path;
use std::time::{Duration, Instant};

use agentsh_agent_session::{
    AgentSession, BangOptions, CancellationToken, SessionError, ToolContext, ToolOutcome,
    ToolResult,
};
use serde_json::{Value, json};
use tempfile::TempDir;

/// A session in a private temp world: its own home, artifact store and working directory.
struct World {
    dir: TempDir,
    session: AgentSession,
}

impl World {
    fn new() -> Self {
        Self::with_config("")
    }

    fn with_config(extra_toml: &str) -> Self {
        let (dir, session) = crate::world::temp_session(extra_toml);
        Self { dir, session }
    }

    fn work(&self) -> std::path::PathBuf {
        self.dir.path().join("work")
    }

    async fn call(&self, args: Value) -> ToolOutcome {
        self.call_with(args, ToolContext::default()).await
    }

    async fn call_with(&self, args: Value, ctx: ToolContext) -> ToolOutcome {
        self.session
            .execute_tool("call-1", &args, ctx, |_| {})
            .await
    }

    /// A call of `command`, with the text of every live update it sent.
    async fn call_with_updates(
        &self,
        command: &str,
        ctx: ToolContext,
    ) -> (ToolOutcome, Vec<String>) {
        let mut updates = Vec::new();
        let outcome = self
            .session
            .execute_tool("call-1", &json!({ "command": command }), ctx, |update| {
                updates.push(update.text);
            })
            .await;
        (outcome, updates)
    }

    async fn run(&self, command: &str) -> ToolResult {
        self.call(json!({ "command": command })).await.into_result()
    }
}

fn details(result: &ToolResult) -> Value {
    serde_json::to_value(result).expect("serialisable")["details"].clone()
}

fn seq(from: u64, to: u64) -> String {
    use std::fmt::Write;
    (from..=to).fold(String::new(), |mut out, n| {
        let _ = writeln!(out, "{n}");
        out
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn success_shows_the_output() {
    let world = World::new();
    let result = world.run("echo hello; echo world >&2").await;
    assert_eq!(result.text(), "hello\nworld");
    assert!(!result.is_error);
    let details = details(&result);
    assert_eq!(details["exitCode"], 0);
    assert_eq!(details["cancelled"], false);
    assert_eq!(details["timedOut"], false);
    assert_eq!(details["sessionRestarted"], false);
    assert_eq!(details["timeout"], 300);
    assert_eq!(details["cwd"], world.work().display().to_string());
    assert!(details.get("meta").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn no_output_placeholder() {
    let world = World::new();
    let result = world.run("true").await;
    assert_eq!(result.text(), "(no output)");
    assert!(!result.is_error);
}

#[tokio::test(flavor = "multi_thread")]
async fn non_zero_exit_is_an_error_with_its_code() {
    let world = World::new();
    let result = world.run("echo out; (exit 3)").await;
    assert_eq!(result.text(), "out\n\nCommand exited with code 3");
    assert!(result.is_error);
    assert_eq!(details(&result)["exitCode"], 3);
    // `| tail` no longer hides the producer's failure.
    let hidden = world.run("false | tail -n 1").await;
    assert!(hidden.is_error);
    assert_eq!(details(&hidden)["exitCode"], 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn timeout_keeps_the_annotation_and_no_outcome_line() {
    let world = World::new();
    let started = Instant::now();
    let result = world
        .call(json!({"command": "echo started; sleep 30", "timeout": 1}))
        .await
        .into_result();
    assert!(started.elapsed() < Duration::from_secs(10), "liveness");
    // bash's own report of the `sleep` agentsh killed (`Terminated`) is not the command's
    // output.
    assert_eq!(
        result.text(),
        "[Command timed out after 1 seconds]\nstarted"
    );
    assert!(result.is_error);
    let details = details(&result);
    assert_eq!(details["timedOut"], true);
    assert_eq!(details["cancelled"], true);
    assert_eq!(details["timeout"], 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn abort_is_an_abort_outcome() {
    let world = World::new();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    // Cancelled once the command has printed `begun` (and made this file), however long the
    // shell took to start.
    let begun = world.dir.path().join("begun");
    let seen = begun.clone();
    tokio::spawn(async move {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !seen.exists() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        trigger.cancel();
    });
    let started = Instant::now();
    let outcome = world
        .call_with(
            json!({"command": format!("echo begun; : > {}; sleep 100", begun.display())}),
            ToolContext {
                cancel,
                ..ToolContext::default()
            },
        )
        .await;
    assert!(started.elapsed() < Duration::from_secs(25), "liveness");
    assert!(outcome.is_aborted());
    let result = outcome.into_result();
    assert_eq!(
        result.text(),
        "[Command cancelled]\nbegun\n\nCommand aborted"
    );
    assert!(result.is_error);
    assert_eq!(details(&result)["cancelled"], true);
    assert_eq!(details(&result)["timedOut"], false);
}

/// `seq 1 100000` is 588,895 bytes; the last 51,200 start with the `\n` ending line 91467, so
/// lines 91468-100000 (8,533 lines) are shown.
const SEQ_NOTICE_RANGE: &str =
    "[Showing lines 91468-100000 of 100000 (50.0KB limit). Full: artifact://";

fn artifact_of(result: &ToolResult) -> String {
    details(result)["meta"]["truncation"]["artifactId"]
        .as_str()
        .expect("artifact id")
        .to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn truncated_success_has_the_notice_and_a_full_artifact() {
    let world = World::new();
    let result = world.run("seq 1 100000").await;
    let text = result.text();
    let id = artifact_of(&result);
    assert!(text.starts_with("91468\n91469\n"), "{}", &text[..20]);
    assert!(
        text.ends_with(&format!("99999\n100000\n\n{SEQ_NOTICE_RANGE}{id}]")),
        "{}",
        &text[text.len() - 120..]
    );
    assert!(!result.is_error);
    let truncation = &details(&result)["meta"]["truncation"];
    assert_eq!(truncation["direction"], "tail");
    assert_eq!(truncation["truncatedBy"], "bytes");
    assert_eq!(truncation["totalLines"], 100_000);
    assert_eq!(truncation["totalBytes"], 588_895);
    assert_eq!(truncation["outputLines"], 8_533);
    assert_eq!(
        truncation["shownRange"],
        json!({"start": 91_468, "end": 100_000})
    );
    // The artifact holds the entire output.
    let artifact = world
        .session
        .read_artifact(&format!("artifact://{id}"), None, None)
        .expect("artifact readable");
    assert_eq!(artifact.total_lines, 100_000);
    assert_eq!(artifact.text, seq(1, 100_000));
    let window = world
        .session
        .read_artifact(&id, Some(50_000), Some(2))
        .expect("range");
    assert_eq!(window.text, "50000\n50001\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn truncated_failure_keeps_the_notice() {
    let world = World::new();
    let result = world.run("seq 1 100000; (exit 2)").await;
    let id = artifact_of(&result);
    assert!(result.is_error);
    assert!(
        result.text().ends_with(&format!(
            "100000\n\nCommand exited with code 2\n\n{SEQ_NOTICE_RANGE}{id}]"
        )),
        "{}",
        result.text()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn truncated_timeout_keeps_the_notice() {
    let world = World::new();
    let result = world
        .call(json!({"command": "seq 1 100000; { sleep 30; } 2>/dev/null", "timeout": 1.5}))
        .await
        .into_result();
    let text = result.text();
    let id = artifact_of(&result);
    assert!(text.starts_with("[Command timed out after 1.5 seconds]\n91468\n"));
    assert!(
        text.ends_with(&format!("100000\n\n{SEQ_NOTICE_RANGE}{id}]")),
        "{text}"
    );
    assert_eq!(details(&result)["timeout"], 1.5);
}

/// The names in an artifact store, sorted, but for the store's own files.
fn listing(dir: &Path) -> Vec<String> {
    agentsh_test_support::artifact_store_names(dir)
}

/// Regression (issue 11): every call reserved an artifact before it ran, creating and
/// unlinking a file (and using up an id) even when its output fitted. Now a call gets an
/// id when its output first needs one; a call whose output fits creates no file at all.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_whose_output_fits_reserves_no_artifact() {
    let world = World::new();
    let store = world.dir.path().join("artifacts");
    assert_eq!(listing(&store), Vec::<String>::new());
    for _ in 0..5 {
        let result = world.run("seq 1 10").await;
        assert_eq!(details(&result)["meta"].get("truncation"), None);
    }
    let bang = world
        .session
        .execute_bash("seq 1 10", BangOptions::default())
        .await
        .expect("bang runs");
    assert_eq!(bang.summary.artifact_id, None);
    assert_eq!(listing(&store), Vec::<String>::new());
    // No id was used up: the first call that needs an artifact gets the store's first id.
    let result = world.run("seq 1 100000").await;
    assert_eq!(artifact_of(&result), "1");
    assert_eq!(listing(&store), ["1.bash.log"]);
    assert!(world.session.take_warnings().is_empty());
}

/// An artifact that cannot be allocated when the output first overflows costs a
/// warning, not the call: the output is still truncated, with neither `artifactId` nor
/// `artifactError` (nothing was written, so nothing was lost). The store breaks only after the
/// call started (the command replaces its directory with a file), so a reservation made before
/// the call would have "saved" the output into an unlinked file instead.
#[tokio::test(flavor = "multi_thread")]
async fn an_artifact_that_cannot_be_allocated_at_overflow_is_a_warning() {
    let world = World::new();
    assert!(world.session.take_warnings().is_empty());
    let store = world.dir.path().join("artifacts");
    let command = format!("rm -r '{0}' && : > '{0}' && seq 1 100000", store.display());
    let result = world.run(&command).await;
    assert!(!result.is_error, "{}", result.text());
    let truncation = &details(&result)["meta"]["truncation"];
    assert_eq!(truncation["truncatedBy"], "bytes", "{truncation}");
    assert_eq!(truncation["totalLines"], 100_000);
    assert_eq!(truncation.get("artifactId"), None, "{truncation}");
    assert_eq!(truncation.get("artifactError"), None, "{truncation}");
    assert!(
        result
            .text()
            .ends_with("100000\n\n[Showing lines 91468-100000 of 100000 (50.0KB limit)]"),
        "{}",
        &result.text()[result.text().len().saturating_sub(200)..]
    );
    let artifact = format!("{}/1.bash.log", store.display());
    assert_eq!(
        world.session.take_warnings(),
        [format!(
            "cannot allocate an artifact: cannot create artifact {artifact}: Not a directory \
             (os error 20)"
        )]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn head_from_the_command_sees_the_true_start_and_stops_early() {
    let world = World::new();
    let started = Instant::now();
    let result = world.run("seq 1 100000000 | head -n 3").await;
    assert!(started.elapsed() < Duration::from_secs(20), "liveness");
    assert_eq!(result.text(), "1\n2\n3");
    assert!(!result.is_error, "a satisfied head is a success");
    let details = details(&result);
    assert_eq!(details["exitCode"], 0);
    assert_eq!(details["meta"]["truncation"]["direction"], "head");
    assert_eq!(details["meta"]["truncation"]["truncatedBy"], "lines");
    assert_eq!(
        details["meta"]["truncation"]["shownRange"],
        json!({"start": 1, "end": 3})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn tail_from_the_command_and_limits_from_arguments() {
    let world = World::new();
    let tail = world.run("seq 1 200000 | tail -n 2").await;
    assert_eq!(tail.text(), "199999\n200000");
    assert!(!tail.is_error);

    let head = world
        .call(json!({"command": "seq 1 200000", "head": 2}))
        .await
        .into_result();
    assert_eq!(head.text(), "1\n2");

    let args_tail = world
        .call(json!({"command": "seq 1 200000", "tail": 3}))
        .await
        .into_result();
    assert_eq!(args_tail.text(), "199998\n199999\n200000");

    // Explicit arguments override the extracted limit.
    let both = world
        .call(json!({"command": "seq 1 100 | head -n 50", "head": 4}))
        .await
        .into_result();
    assert_eq!(both.text(), "1\n2\n3\n4");
}

#[tokio::test(flavor = "multi_thread")]
async fn interception_on_and_off() {
    let on = World::with_config("[bash_interceptor]\nenabled = true\n");
    let ctx = || ToolContext {
        tool_names: vec!["read".into(), "grep".into()],
        ..ToolContext::default()
    };
    let blocked = on
        .call_with(json!({"command": "cat file.txt | head -5"}), ctx())
        .await
        .into_result();
    assert!(blocked.is_error);
    assert!(blocked.text().starts_with("Blocked: Use the `read` tool"));
    assert!(
        blocked
            .text()
            .ends_with("\n\nOriginal command: cat file.txt | head -5")
    );
    assert_eq!(details(&blocked)["interception"]["suggestedTool"], "read");
    assert_eq!(details(&blocked)["interception"]["rule"], 0);

    let off = World::new();
    let ran = off
        .call_with(json!({"command": "cat file.txt"}), ctx())
        .await
        .into_result();
    assert_eq!(ran.text(), "x");
}

#[tokio::test(flavor = "multi_thread")]
async fn cwd_is_resolved_per_call_and_checked() {
    let world = World::new();
    let sub = world
        .call(json!({"command": "pwd; cd /", "cwd": "@sub"}))
        .await
        .into_result();
    assert_eq!(sub.text(), world.work().join("sub").display().to_string());
    // The `cd /` of the last call does not move the next one.
    assert_eq!(
        world.run("pwd").await.text(),
        world.work().display().to_string()
    );

    let missing = world
        .call(json!({"command": "true", "cwd": "nope"}))
        .await
        .into_result();
    let missing_path = world.work().join("nope");
    assert_eq!(
        missing.text(),
        format!(
            "Working directory does not exist: {}",
            missing_path.display()
        )
    );
    assert!(missing.is_error);

    let file = world
        .call(json!({"command": "true", "cwd": "file.txt"}))
        .await
        .into_result();
    assert_eq!(
        file.text(),
        format!(
            "Working directory is not a directory: {}",
            world.work().join("file.txt").display()
        )
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn timeouts_are_clamped_and_strings_rejected() {
    let world = World::new();
    for (given, clamped) in [
        (json!(0), json!(1)),
        (json!(-5), json!(1)),
        (json!(1e9), json!(3600)),
    ] {
        let result = world
            .call(json!({"command": "true", "timeout": given}))
            .await
            .into_result();
        assert!(!result.is_error, "{given}");
        assert_eq!(details(&result)["timeout"], clamped, "{given}");
    }
    let bad = world
        .call(json!({"command": "true", "timeout": "10"}))
        .await
        .into_result();
    assert!(bad.is_error);
    assert_eq!(
        bad.text(),
        "argument `timeout` must be a number of seconds, got a string"
    );
    let missing = world.call(json!({"timeout": 3})).await.into_result();
    assert!(missing.is_error);
    assert!(missing.text().contains("`command`"), "{}", missing.text());
}

#[tokio::test(flavor = "multi_thread")]
async fn live_updates_arrive_and_end_with_the_last_state() {
    let world = World::new();
    let (outcome, updates) = world
        .call_with_updates(
            "for i in 1 2 3; do echo line$i; sleep 0.2; done",
            ToolContext::default(),
        )
        .await;
    assert_eq!(outcome.result().text(), "line1\nline2\nline3");
    assert!(!updates.is_empty());
    assert_eq!(
        updates.last().map(String::as_str),
        Some("line1\nline2\nline3\n")
    );
    // Throttled: far fewer updates than a flood, and never more than one per chunk.
    assert!(updates.len() <= 4, "{updates:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_last_live_update_has_the_unfinished_line_and_the_tail_of_a_flood() {
    let world = World::new();
    let (_, updates) = world
        .call_with_updates(
            "printf 'a\\nprogress 10%%\\rprogress 100%%'",
            ToolContext::default(),
        )
        .await;
    // The progress bar collapses to its last state, and the line without a newline counts.
    assert_eq!(updates.last().map(String::as_str), Some("a\nprogress 100%"));

    let started = std::time::Instant::now();
    let (_, updates) = world
        .call_with_updates("seq 1 300000", ToolContext::default())
        .await;
    let elapsed = started.elapsed();
    let last = updates.last().expect("updates");
    assert!(
        last.ends_with("299999\n300000\n"),
        "{:?}",
        &last[last.len() - 40..]
    );
    assert!(last.len() <= 51_200, "{}", last.len());
    // Throttled to one per 50 ms, plus the last one.
    let allowed = elapsed.as_millis() / 50 + 2;
    assert!(
        updates.len() as u128 <= allowed,
        "{} updates in {elapsed:?}",
        updates.len()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_context_that_skips_live_updates_gets_none_and_the_same_result() {
    let world = World::new();
    let (outcome, updates) = world
        .call_with_updates(
            "seq 1 100000; printf end",
            ToolContext {
                skip_live_updates: true,
                no_jobs: false,
                ..ToolContext::default()
            },
        )
        .await;
    assert_eq!(updates.len(), 0);
    let text = outcome.result().text();
    assert!(
        text.contains("99999\n100000\nend"),
        "{}",
        &text[text.len() - 60..]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bang_commands_run_on_their_own_shell_and_are_recorded() {
    let world = World::new();
    world.run("export WHERE=tool").await;
    let result = world
        .session
        .execute_bash("echo ${WHERE:-user}; (exit 4)", BangOptions::default())
        .await
        .expect("runs");
    assert_eq!(result.summary.output, "user\n");
    assert_eq!(result.exit_code, Some(4));
    world
        .session
        .execute_bash(
            "echo secret",
            BangOptions {
                exclude_from_context: true,
                ..BangOptions::default()
            },
        )
        .await
        .expect("runs");
    let context = world.session.context_messages();
    assert_eq!(
        context,
        ["Ran `echo ${WHERE:-user}; (exit 4)`\n```\nuser\n```\n\nCommand exited with code 4"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_bang_command_is_refused_and_abort_bash_stops_the_first() {
    let world = World::new();
    let session = world.session.clone();
    let running = tokio::spawn(async move {
        session
            .execute_bash("sleep 100", BangOptions::default())
            .await
    });
    let deadline = Instant::now() + Duration::from_secs(5);
    while !world.session.is_bash_running() {
        assert!(Instant::now() < deadline, "bang command never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let second = world
        .session
        .execute_bash("true", BangOptions::default())
        .await;
    assert!(matches!(second, Err(SessionError::AlreadyRunning)));
    assert_eq!(
        second.err().map(|e| e.to_string()).as_deref(),
        Some("A bash command is already running")
    );
    let started = Instant::now();
    world.session.abort_bash();
    let result = running.await.expect("joined").expect("a result");
    assert!(started.elapsed() < Duration::from_secs(5), "liveness");
    assert!(result.cancelled);
    assert!(!result.timed_out);
    // Aborted before `sleep` started, the command never ran; after, bash reports the kill.
    assert!(
        ["[Command cancelled]\n", "[Command cancelled]\nTerminated\n"]
            .contains(&result.annotated_output().as_ref()),
        "{:?}",
        result.annotated_output()
    );
    assert!(!world.session.is_bash_running());
}

#[test]
fn settings_paths_are_private_to_the_test() {
    // Guard against a test touching the real user's directories.
    let world = World::new();
    assert!(
        world
            .session
            .artifacts()
            .expect("store")
            .dir()
            .starts_with(world.dir.path())
    );
    assert!(Path::new(world.dir.path()).exists());
}

/// A UI stand-in that answers a prompt on the PTY screen, as a user at the keyboard would.
struct Typist {
    prompt: &'static str,
    keys: &'static [u8],
}

impl agentsh_agent_session::PtyHost for Typist {
    fn attach(&self, _call_id: &str, program: agentsh_agent_session::PtyAttachment) {
        let Ok(controller) = program.take::<agentsh_agent_session::PtyController>() else {
            panic!("a session here hands over its PTY run's controller");
        };
        let (prompt, keys) = (self.prompt, self.keys);
        tokio::spawn(async move {
            let mut updates = controller.updates();
            while !controller.terminal().contents().contains(prompt) {
                if updates.changed().await.is_err() {
                    return;
                }
            }
            controller.send_keys(keys);
        });
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn virtual_terminal_runs_on_a_pty_only_with_a_ui() {
    let world = World::with_config("[bash]\nvirtual_terminal = \"on\"\n");
    let host: std::sync::Arc<dyn agentsh_agent_session::PtyHost> = std::sync::Arc::new(Typist {
        prompt: "name? ",
        keys: b"bob\r",
    });
    let started = Instant::now();
    let on_pty = world
        .call_with(
            json!({"command": "tty | sed 's/[0-9]*$/N/'; read -p 'name? ' n; echo \"hi $n\""}),
            ToolContext {
                pty_host: Some(host),
                ..ToolContext::default()
            },
        )
        .await
        .into_result();
    assert!(started.elapsed() < Duration::from_secs(10), "liveness");
    assert_eq!(on_pty.text(), "/dev/pts/N\nname? bob\nhi bob");
    assert!(!on_pty.is_error);

    // Without a UI (print, RPC, MCP) the same setting runs without a terminal.
    let piped = world.run("tty").await;
    assert_eq!(piped.text(), "not a tty\n\nCommand exited with code 1");
}

#[tokio::test(flavor = "multi_thread")]
async fn esc_on_a_pty_kills_the_command_as_an_abort() {
    let world = World::with_config("[bash]\nvirtual_terminal = \"on\"\n");
    let host: std::sync::Arc<dyn agentsh_agent_session::PtyHost> = std::sync::Arc::new(Typist {
        prompt: "waiting",
        keys: b"\x1b",
    });
    let outcome = world
        .call_with(
            json!({"command": "echo waiting; sleep 100"}),
            ToolContext {
                pty_host: Some(host),
                ..ToolContext::default()
            },
        )
        .await;
    assert!(outcome.is_aborted());
    let text = outcome.result().text();
    assert!(text.starts_with("[Command cancelled]\nwaiting"), "{text:?}");
    assert!(text.ends_with("\n\nCommand aborted"), "{text:?}");
}
