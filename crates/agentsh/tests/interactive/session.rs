//! The input line's history across runs, and the slash commands: `/help`, `/jobs`,
//! `/job N`; a path such as `/usr/bin/true` is a command, not a slash word.

use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use super::{Tui, find_rows, history_file, last_row, numbers_in};
use crate::util::{LIVENESS, TestEnv};

#[test]
fn interactive_history_survives_a_restart_and_is_private() {
    let Some(tui) = Tui::start("interactive_history", "") else {
        return;
    };
    tui.submit("echo first-entry");
    tui.wait_rows(&["$ echo first-entry", "first-entry"]);
    tui.submit("echo second-entry");
    tui.wait_rows(&["$ echo second-entry", "second-entry"]);
    // Ctrl+D leaves without adding a line (a `/quit` would be the newest entry).
    tui.pane.send_keys(&["C-d"]);
    let status = tui.wait_exit();
    assert!(status.success(), "Ctrl+D exits 0: {status}");
    let Tui { pane, env } = tui;
    drop(pane);

    let file = history_file(&env);
    let mode = |path: &std::path::Path| {
        std::fs::metadata(path)
            .unwrap_or_else(|err| panic!("{}: {err}", path.display()))
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode(&file), 0o600, "the history file is private");
    assert_eq!(
        mode(file.parent().expect("its dir")),
        0o700,
        "its directory is private"
    );

    let Some(tui) = Tui::start_with("interactive_history", env, &[]) else {
        return;
    };
    tui.pane.send_keys(&["Up"]);
    tui.wait_rows(&["> echo second-entry"]);
    tui.pane.send_keys(&["Up"]);
    tui.wait_rows(&["> echo first-entry"]);
}

#[test]
fn interactive_help_and_a_path_that_is_not_a_slash_word() {
    let Some(tui) = Tui::start("interactive_help", "") else {
        return;
    };
    tui.submit("/help");
    let screen = tui.wait_text("/quit           leave (asks once while jobs run)");
    for row in [
        "  !cmd            run cmd in your shell; its output goes into the model's context",
        "  !!cmd           the same, kept out of the context",
        "  /job N          follow job N's output or screen",
        "  y / a / n       answer the oldest waiting approval: allow, allow for the session, deny",
        "  Esc             cancel the newest running call (in a program's screen: see its footer)",
    ] {
        assert!(
            find_rows(&screen, &[row]).is_some(),
            "/help shows {row:?}:\n{}",
            screen.join("\n")
        );
    }
    tui.submit("/usr/bin/true");
    // A tool call (its call line; `(no output)`), not an unknown slash word.
    tui.wait_rows(&["$ /usr/bin/true", "(no output)"]);
}

/// The command of a job that prints `lineN` every 0.2 s, for 10 minutes: it still runs however
/// long the steps of the test take.
const TICKER: &str = "for i in $(seq 3000); do echo line$i; sleep 0.2; done";

/// The highest `lineN` on the screen.
fn last_line_number(screen: &[String]) -> u64 {
    screen
        .iter()
        .filter_map(|row| row.trim_end().strip_prefix("line"))
        .filter_map(|n| n.parse().ok())
        .max()
        .unwrap_or(0)
}

#[test]
fn interactive_jobs_and_job_n_follow_a_running_job() {
    let Some(tui) = Tui::start("interactive_jobs", "") else {
        return;
    };
    tui.submit("/jobs");
    tui.wait_rows(&["/jobs", "no jobs"]);
    tui.submit(&json!({"command": TICKER, "run_in_background": true}).to_string());
    tui.wait_text_for(
        "[Running in the background as job 1. Read it with job_output, stop it with job_kill.]",
        LIVENESS,
    );
    tui.submit("/jobs");
    // The job line: `job N · running · <runtime> · $ <command>`.
    let screen = tui.wait("the job line", LIVENESS, |screen| {
        last_row(screen, "/jobs").is_some_and(|at| {
            screen
                .get(at + 1)
                .is_some_and(|row| row.starts_with("job 1 · running · "))
        })
    });
    let at = last_row(&screen, "/jobs").expect("the /jobs entry");
    let line = screen[at + 1].trim_end();
    let rest = line
        .strip_prefix("job 1 · running · ")
        .expect("the line's start");
    let (run_time, command) = rest.split_once(" · ").expect("run time · command");
    assert!(
        run_time.ends_with('s') && !numbers_in(run_time).is_empty(),
        "a run time: {line}"
    );
    assert_eq!(command, format!("$ {TICKER}"), "{line}");

    tui.submit("/job 1");
    let screen = tui.wait("the followed job", LIVENESS, |screen| {
        screen
            .iter()
            .rposition(|row| row.starts_with("job 1 · running · "))
            .is_some_and(|at| {
                at > last_row(screen, "/jobs").unwrap_or(0) + 1
                    && screen
                        .get(at + 1)
                        .is_some_and(|row| row.starts_with("line"))
            })
    });
    // Live: newer lines come without typing anything.
    let seen = last_line_number(&screen);
    tui.wait("the followed job's newer lines", LIVENESS, |screen| {
        last_line_number(screen) >= seen + 3
    });
}

#[test]
fn interactive_history_in_an_unwritable_place_is_a_note_not_a_failure() {
    // XDG_STATE_HOME is a file: the history cannot be kept; the mode still runs.
    let env = TestEnv::new();
    let state = env.root().join("state-file");
    std::fs::write(&state, "not a directory").expect("write");
    let Some(tui) = Tui::start_with(
        "interactive_history_unwritable",
        env,
        &[("XDG_STATE_HOME", state.to_str().expect("utf-8 path"))],
    ) else {
        return;
    };
    tui.submit("echo still-runs");
    tui.wait_rows(&["$ echo still-runs", "still-runs"]);
}
