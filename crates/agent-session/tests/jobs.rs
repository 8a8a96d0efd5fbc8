//! Background jobs through the library: what a crate user gets from `AgentSession`
//! without the binary, on real shells and processes.

use std::time::{Duration, Instant};

use agentsh_agent_session::{AgentSession, JobState, ToolContext, ToolResult};
use agentsh_test_support::alive_containing;
use serde_json::{Value, json};
use tempfile::TempDir;

struct World {
    dir: TempDir,
    session: AgentSession,
}

impl World {
    fn new(extra_toml: &str) -> Self {
        let (dir, session) = crate::world::temp_session(extra_toml);
        Self { dir, session }
    }

    async fn bash(&self, args: Value) -> ToolResult {
        self.session
            .execute_tool("call", &args, ToolContext::default(), |_| {})
            .await
            .into_result()
    }

    /// `result` (PTY job `id`'s) if it says the job exited, else the first `job_output` that
    /// does (within [`LIVENESS`]): the screen at the end.
    async fn screen_until_exited(&self, id: u64, result: ToolResult) -> ToolResult {
        let deadline = Instant::now() + LIVENESS;
        let mut result = result;
        while state(&result) != Some(JobState::Exited) {
            assert!(
                Instant::now() < deadline,
                "job {id} did not exit: {}",
                result.text()
            );
            result = self
                .tool("job_output", json!({"jobId": id, "wait": 1}))
                .await;
        }
        result
    }

    async fn tool(&self, name: &str, args: Value) -> ToolResult {
        self.session
            .execute_job_tool(name, &args)
            .await
            .expect("a job tool")
            .into_result()
    }
}

fn marker(base: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{base}-{}-{nanos}", std::process::id())
}

/// How long a test waits for something that must happen (a liveness bound, not a timing).
const LIVENESS: Duration = Duration::from_secs(20);

fn state(result: &ToolResult) -> Option<JobState> {
    result.details.job.as_ref().map(|job| job.state)
}

/// Polls until no process carries `marker` (a liveness bound, not a timing).
fn gone_within(marker: &str, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if alive_containing(marker).is_empty() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[tokio::test(flavor = "multi_thread")]
async fn a_background_job_is_read_waited_for_and_killed_with_what_it_left() {
    let world = World::new("");
    let mark = marker("bgjob");
    let command = format!(
        "echo started; (exec -a {mark}-child sleep 300) & setsid bash -c 'exec -a {mark}-setsid sleep 300' & sleep 0.3; echo Listening on 1234; exec -a {mark}-main sleep 300"
    );
    let started = world
        .bash(json!({"command": command, "run_in_background": true}))
        .await;
    let text = started.text();
    assert!(!started.is_error, "{text}");
    assert_eq!(started.details.exit_code, None);
    assert_eq!(state(&started), Some(JobState::Running));
    assert!(text.starts_with("started\n"), "{text}");
    assert!(
        text.ends_with(
            "\n\n[Running in the background as job 1. Read it with job_output, stop it with job_kill.]"
        ),
        "{text}"
    );
    // The line was in the starting result: `until` finds it at once.
    let begun = Instant::now();
    let found = world
        .tool(
            "job_output",
            json!({"jobId": "1", "until": "^Listening on"}),
        )
        .await;
    assert!(begun.elapsed() < Duration::from_secs(10), "until waited");
    assert!(
        found.text().ends_with("\n\n[job 1: running]"),
        "{}",
        found.text()
    );
    // Nothing matches any more: `until` waits for `wait`, then answers with the state.
    let none = world
        .tool(
            "job_output",
            json!({"jobId": 1, "until": "^Listening on", "wait": 0.3}),
        )
        .await;
    assert_eq!(none.text(), "(no new output)\n\n[job 1: running]");
    let killed = world.tool("job_kill", json!({"jobId": 1})).await;
    assert_eq!(state(&killed), Some(JobState::Killed));
    assert!(
        killed.text().ends_with("[job 1: killed]"),
        "{}",
        killed.text()
    );
    assert!(
        gone_within(&mark, Duration::from_secs(5)),
        "left: {:?}",
        alive_containing(&mark)
    );
    let list = world.tool("job_list", json!({})).await;
    assert!(
        list.text().starts_with("job 1 · killed · "),
        "{}",
        list.text()
    );
    assert!(
        list.text().ends_with(&format!("$ {command}")),
        "{}",
        list.text()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_yielded_call_goes_on_as_a_job_and_the_next_call_gets_a_new_shell() {
    let world = World::new("");
    let set = world.bash(json!({"command": "V=kept; echo set"})).await;
    assert_eq!(set.text(), "set");
    // The command cannot end before the test opens the gate, after the next call.
    let gate = world.dir.path().join("gate");
    let yielded = world
        .bash(json!({
            "command": format!(
                "echo first; until [ -e {} ]; do sleep 0.05; done; echo done",
                gate.display()
            ),
            "yield_after": 1
        }))
        .await;
    let text = yielded.text();
    assert!(!yielded.is_error, "{text}");
    assert_eq!(yielded.details.exit_code, None);
    assert_eq!(
        text,
        "first\n\n[Running in the background as job 1. Read it with job_output, stop it with job_kill.]\n[The next command runs in a new shell: variables and functions from earlier calls are gone.]"
    );
    // The job runs until the gate opens: a next call that waited for it would never answer.
    let next = tokio::time::timeout(LIVENESS, world.bash(json!({"command": "echo \"V=$V\""})))
        .await
        .expect("the next call waited for the job");
    assert_eq!(next.text(), "V=");
    std::fs::write(&gate, "").expect("open the gate");
    // `wait` returns on new output or the end: `done` comes first, the end may come with it.
    let mut seen = String::new();
    let mut done = world
        .tool("job_output", json!({"jobId": "1", "wait": 60}))
        .await;
    seen.push_str(&done.text());
    if state(&done) != Some(JobState::Exited) {
        done = world
            .tool("job_output", json!({"jobId": "1", "wait": 60}))
            .await;
        seen.push_str(&done.text());
    }
    assert!(seen.starts_with("done\n"), "{seen}");
    assert!(
        done.text().ends_with("[job 1: exited with code 0]"),
        "{seen}"
    );
    assert_eq!(
        done.details.job.as_ref().and_then(|job| job.exit_code),
        Some(0)
    );
    // A call that ends in time is an ordinary call, and makes no job.
    let quick = world
        .bash(json!({"command": "false", "yield_after": 5}))
        .await;
    assert!(quick.is_error);
    assert_eq!(quick.text(), "(no output)\n\nCommand exited with code 1");
    assert!(quick.details.job.is_none());
    let list = world.tool("job_list", json!({})).await;
    assert_eq!(list.text().lines().count(), 1, "{}", list.text());
}

#[tokio::test(flavor = "multi_thread")]
async fn bounds_and_unknown_ids_are_tool_errors() {
    let world = World::new("[jobs]\nmax_running = 2\n");
    let none = world.tool("job_list", json!({})).await;
    assert_eq!(none.text(), "(no jobs)");
    let unknown = world.tool("job_output", json!({"jobId": 9})).await;
    assert!(unknown.is_error);
    assert_eq!(unknown.text(), "No job 9. Jobs: none");
    for _ in 0..2 {
        let job = world
            .bash(json!({"command": "sleep 300", "run_in_background": true}))
            .await;
        assert_eq!(state(&job), Some(JobState::Running));
    }
    let third = world
        .bash(json!({"command": "sleep 300", "run_in_background": true}))
        .await;
    assert!(third.is_error);
    assert_eq!(
        third.text(),
        "Too many background jobs (2 running): stop one with job_kill first"
    );
    // Running jobs do not hold the session's shell.
    let foreground = world.bash(json!({"command": "echo ok"})).await;
    assert_eq!(foreground.text(), "ok");
    let unknown = world.tool("job_kill", json!({"jobId": "5"})).await;
    assert_eq!(unknown.text(), "No job 5. Jobs: 1, 2");
    let input = world
        .tool("job_input", json!({"jobId": 1, "text": "x"}))
        .await;
    assert!(input.is_error);
    assert_eq!(
        input.text(),
        "Job 1 has no terminal: start it with pty: true to send input"
    );
    let pty_alone = world.bash(json!({"command": "true", "pty": true})).await;
    assert!(pty_alone.is_error);
    assert!(
        pty_alone.text().starts_with("argument `pty` "),
        "{}",
        pty_alone.text()
    );
    let bad_until = world
        .tool("job_output", json!({"jobId": 1, "until": "("}))
        .await;
    assert!(
        bad_until
            .text()
            .starts_with("argument `until` is not a valid regex")
    );
    world.session.shutdown().await;
    let list = world.tool("job_list", json!({})).await;
    assert!(
        list.text()
            .lines()
            .all(|line| line.contains(" · killed · ")),
        "{}",
        list.text()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pty_job_waits_for_input_and_takes_it() {
    let world = World::new("");
    let started = world
        .bash(json!({"command": "read -p 'Name? ' n; echo \"hi $n\"", "run_in_background": true, "pty": true}))
        .await;
    // The screen's header; the prompt may come after the starting result on a loaded machine.
    assert!(
        started
            .text()
            .starts_with("[screen 120x40, cursor row 1 col "),
        "{}",
        started.text()
    );
    let mut waiting = None;
    let deadline = Instant::now() + LIVENESS;
    while Instant::now() < deadline {
        let out = world
            .tool("job_output", json!({"jobId": 1, "wait": 0.5}))
            .await;
        if state(&out) == Some(JobState::WaitingForInput) {
            waiting = Some(out);
            break;
        }
    }
    let waiting = waiting.expect("waiting for input within the bound");
    assert!(
        waiting
            .text()
            .starts_with("[screen 120x40, cursor row 1 col 7 (1-based); full log: artifact://"),
        "the cursor after the prompt: {}",
        waiting.text()
    );
    assert!(waiting.text().ends_with("[job 1: waiting for input]"));
    let unknown = world
        .tool("job_input", json!({"jobId": 1, "keys": ["Nope"]}))
        .await;
    assert!(unknown.is_error);
    assert!(unknown.text().contains("\"Nope\""), "{}", unknown.text());
    let answered = world
        .tool("job_input", json!({"jobId": 1, "text": "Bob\n", "wait": 5}))
        .await;
    // `job_input` answers once the output paused for 200 ms: the reply may come later.
    let ended = world.screen_until_exited(1, answered).await;
    assert!(ended.text().contains("hi Bob"), "{}", ended.text());
    assert!(
        ended.text().ends_with("[job 1: exited with code 0]"),
        "{}",
        ended.text()
    );
    let late = world
        .tool("job_input", json!({"jobId": 1, "text": "x"}))
        .await;
    assert_eq!(late.text(), "Job 1 has ended");
    // A PTY job answers prompts: none of the variables that suppress them.
    let env = world
        .bash(json!({"command": "echo \"CI=${CI-unset} TERM=$TERM\"", "run_in_background": true, "pty": true}))
        .await;
    let env = world.screen_until_exited(2, env).await;
    assert!(
        env.text().contains("CI=unset TERM=xterm-256color"),
        "{}",
        env.text()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn input_a_program_does_not_read_is_an_error_saying_how_much_went_in() {
    let world = World::new("");
    let started = world
        .bash(json!({"command": "stty -icanon; sleep 30", "run_in_background": true, "pty": true}))
        .await;
    assert_eq!(
        state(&started),
        Some(JobState::Running),
        "{}",
        started.text()
    );
    let text = "x".repeat(1 << 20);
    let begun = Instant::now();
    let stuck = world
        .tool("job_input", json!({"jobId": 1, "text": text}))
        .await;
    assert!(stuck.is_error, "{}", stuck.text());
    assert!(
        stuck.text().starts_with("Only ")
            && stuck
                .text()
                .contains(" of 1048576 bytes of input went in within 5 s"),
        "{}",
        stuck.text()
    );
    assert!(begun.elapsed() < Duration::from_secs(20), "job_input hung");
    let killed = world.tool("job_kill", json!({"jobId": 1})).await;
    assert!(
        killed.text().ends_with("[job 1: killed]"),
        "{}",
        killed.text()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn yield_capable_calls_update_live_and_head_limits_still_stop_them() {
    let world = World::new("[bash]\nyield_after = 5\n");
    let mut updates = Vec::new();
    let result = world
        .session
        .execute_tool(
            "call",
            &json!({"command": "echo a; sleep 0.3; echo b"}),
            ToolContext::default(),
            |update| updates.push(update.text),
        )
        .await
        .into_result();
    assert_eq!(result.text(), "a\nb");
    assert!(result.details.job.is_none());
    assert_eq!(
        updates.last().map(String::as_str),
        Some("a\nb\n"),
        "{updates:?}"
    );
    // `| head` stops the producer as in a foreground call: no yield, no job.
    let begun = Instant::now();
    let head = world.bash(json!({"command": "yes | head -n 3"})).await;
    assert_eq!(head.text(), "y\ny\ny");
    assert!(
        begun.elapsed() < Duration::from_secs(5),
        "the head limit did not stop it"
    );
    let list = world.tool("job_list", json!({})).await;
    assert_eq!(list.text(), "(no jobs)");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_session_lists_its_own_artifacts_newest_first_up_to_a_limit() {
    let world = World::new("");
    let mut ids = Vec::new();
    for _ in 0..3 {
        let result = world.bash(json!({"command": "seq 100000"})).await;
        let id = result
            .details
            .meta
            .as_ref()
            .and_then(|meta| meta.truncation.as_ref())
            .and_then(|truncation| truncation.artifact_id.clone())
            .expect("an artifact");
        ids.push(id);
    }
    // A call whose output fits reserves nothing, so lists nothing.
    let small = world.bash(json!({"command": "echo small"})).await;
    assert_eq!(small.text(), "small");
    ids.reverse();
    assert_eq!(world.session.artifact_ids(10), ids);
    assert_eq!(world.session.artifact_ids(2), ids[..2].to_vec());
    // A new session has written none (the MCP tests check a shared store).
    let other = World::new("");
    assert!(other.session.artifact_ids(10).is_empty());
}

/// Defect class: `job_kill` answered before the killed job's sink was flushed into its log, so
/// its answer (and the log file) lacked the last, unfinished line (18 runs in 20 before).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn job_kill_answers_with_the_last_unfinished_line() {
    let world = World::new("");
    // A unique duration: the `sleep` the shell becomes carries it in its argv.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mark = format!("300.{nanos:09}");
    for round in 0..5 {
        let command = format!("printf 'partial-{round}'; exec sleep {mark}");
        let started = world
            .bash(json!({"command": command, "run_in_background": true}))
            .await;
        let id = started
            .details
            .job
            .as_ref()
            .map(|job| job.id.clone())
            .expect("a job");
        // Once the shell is `sleep`, the line is in the job's output pipe.
        let deadline = Instant::now() + Duration::from_secs(10);
        while alive_containing(&mark).is_empty() {
            assert!(Instant::now() < deadline, "the job never started");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let killed = world.tool("job_kill", json!({"jobId": id})).await;
        assert!(
            killed.text().contains(&format!("partial-{round}")),
            "round {round}: {}",
            killed.text()
        );
    }
    assert!(gone_within(&mark, Duration::from_secs(5)));
}
