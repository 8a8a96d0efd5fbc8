//! Leaving the mode: Ctrl+D asks once while jobs run and then ends them; the
//! terminal comes back as it was after `/quit` and after a panic; resizing redraws.

use serde_json::json;

use super::{STATUS_MARK, Tui, pane_builder};
use crate::util::{AGENTSH, LIVENESS, TestEnv, marked_sleeper, unique_marker, wait_for_process};

/// Waits (for [`LIVENESS`]) until no process with `marker` is left.
fn wait_no_survivor(marker: &str) {
    let deadline = std::time::Instant::now() + LIVENESS;
    loop {
        let left = crate::util::processes_with(marker);
        if left.is_empty() {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "processes survived: {left:?} ({marker})"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Starts `marked_sleeper(marker)` as a background job through a JSON arguments line and
/// waits for the result and the process.
fn start_marked_job(tui: &Tui, marker: &str) {
    let line = json!({"command": marked_sleeper(marker), "run_in_background": true});
    tui.submit(&line.to_string());
    tui.wait_text_for(
        "[Running in the background as job 1. Read it with job_output, stop it with job_kill.]",
        LIVENESS,
    );
    wait_for_process(marker);
}

#[test]
fn interactive_ctrl_d_asks_once_while_a_job_runs_then_ends_it() {
    let Some(tui) = Tui::start("interactive_quit_with_job", "") else {
        return;
    };
    let marker = unique_marker();
    start_marked_job(&tui, &marker);
    tui.wait_text("1 job running");
    tui.pane.send_keys(&["C-d"]);
    tui.wait_text("1 job running: Ctrl+D again ends them");
    assert!(tui.pane.is_alive(), "the first Ctrl+D only asks");
    tui.pane.send_keys(&["C-d"]);
    let status = tui.wait_exit();
    assert_eq!(status.code(), Some(0), "the second Ctrl+D leaves with 0");
    wait_no_survivor(&marker);
}

/// Defect class: leaving while a call still ran spun forever (the loop "cancelled the newest
/// running call" until none ran, but a cancelled call runs until its result arrives).
#[test]
fn interactive_quitting_while_calls_run_ends_them_and_exits() {
    let Some(tui) = Tui::start("interactive_quit_with_calls", "") else {
        return;
    };
    let (tool, bang) = (unique_marker(), unique_marker());
    tui.submit(&marked_sleeper(&tool));
    tui.submit(&format!("!{}", marked_sleeper(&bang)));
    wait_for_process(&tool);
    wait_for_process(&bang);
    // No job runs: one Ctrl+D on the empty line leaves.
    tui.pane.send_keys(&["C-d"]);
    let status = tui.wait_exit();
    assert_eq!(status.code(), Some(0));
    wait_no_survivor(&tool);
    wait_no_survivor(&bang);
}

/// Esc goes to the newest call still running: a second Esc cancels the one before it, not the
/// newest again.
#[test]
fn interactive_each_esc_cancels_one_more_running_call() {
    let Some(tui) = Tui::start("interactive_esc_twice", "") else {
        return;
    };
    let (older, newer) = (unique_marker(), unique_marker());
    tui.submit(&format!("!{}", marked_sleeper(&older)));
    tui.submit(&marked_sleeper(&newer));
    wait_for_process(&older);
    wait_for_process(&newer);
    tui.pane.send_keys(&["Escape"]);
    wait_no_survivor(&newer);
    assert!(
        !crate::util::processes_with(&older).is_empty(),
        "the first Esc is the newest call's only"
    );
    tui.pane.send_keys(&["Escape"]);
    wait_no_survivor(&older);
    tui.wait_text("(cancelled)");
}

#[test]
fn interactive_closing_the_terminal_ends_the_jobs() {
    let Some(mut tui) = Tui::start("interactive_hangup", "") else {
        return;
    };
    let marker = unique_marker();
    start_marked_job(&tui, &marker);
    // The terminal goes away (SIGHUP, its input closed): every command tree ends.
    tui.pane.kill_server();
    wait_no_survivor(&marker);
}

/// The prompt of the bash the agentsh of the restore tests runs in.
const PROMPT: &str = "itest$";

/// Waits until bash's last non-blank row is its empty prompt.
fn wait_bash_prompt(tui: &Tui) -> Vec<String> {
    tui.wait("bash's prompt", LIVENESS, |screen| {
        screen
            .iter()
            .rev()
            .find(|row| !row.trim().is_empty())
            .is_some_and(|row| row.trim_end() == PROMPT)
    })
}

/// Runs `stty -a` at bash's prompt; asserts the terminal echoes and is canonical again.
fn assert_terminal_restored(tui: &Tui, after: &str) {
    tui.submit("stty -a");
    let screen = tui.wait("stty's output", LIVENESS, |screen| {
        screen.iter().any(|row| row.contains("icanon"))
            && screen
                .iter()
                .rev()
                .find(|row| !row.trim().is_empty())
                .is_some_and(|row| row.trim_end() == PROMPT)
    });
    let at = screen
        .iter()
        .rposition(|row| row.trim_end() == format!("{PROMPT} stty -a"))
        .unwrap_or_else(|| panic!("the stty line:\n{}", screen.join("\n")));
    let flags: Vec<&str> = screen[at + 1..]
        .iter()
        .flat_map(|row| row.split(|c: char| c.is_whitespace() || c == ';'))
        .collect();
    for flag in ["echo", "icanon", "icrnl", "opost"] {
        assert!(
            flags.contains(&flag) && !flags.contains(&format!("-{flag}").as_str()),
            "{flag} is on after {after}:\n{}",
            screen.join("\n")
        );
    }
}

/// bash in a pane of `env` (prompt [`PROMPT`]), agentsh started from it; waits for its
/// first screen. `None` without tmux.
fn agentsh_in_bash(test: &str, env: TestEnv, vars: &[(&str, &str)]) -> Option<Tui> {
    if agentsh_test_support::tmux::skip_without_tmux(test) {
        return None;
    }
    let pane = pane_builder(&env, ["bash", "--norc", "--noprofile", "-i"])
        .env("PS1", format!("{PROMPT} "))
        .envs(vars.iter().copied())
        .start()
        .expect("tmux starts");
    let tui = Tui { pane, env };
    wait_bash_prompt(&tui);
    tui.submit(AGENTSH);
    tui.wait_text_for(STATUS_MARK, LIVENESS);
    Some(tui)
}

#[test]
fn interactive_quit_gives_the_terminal_back() {
    let Some(tui) = agentsh_in_bash("interactive_restore_quit", TestEnv::new(), &[]) else {
        return;
    };
    tui.submit("echo inside");
    tui.wait_rows(&["$ echo inside", "inside"]);
    tui.submit("/quit");
    let screen = wait_bash_prompt(&tui);
    assert!(
        !screen.iter().any(|row| row.contains(STATUS_MARK)),
        "the alternate screen is left:\n{}",
        screen.join("\n")
    );
    assert_terminal_restored(&tui, "/quit");
}

#[test]
fn interactive_panic_gives_the_terminal_back_and_ends_the_jobs() {
    let panic_line = "panic-please-7f3c";
    let Some(tui) = agentsh_in_bash(
        "interactive_restore_panic",
        TestEnv::new(),
        &[("AGENTSH_TUI_PANIC_LINE", panic_line)],
    ) else {
        return;
    };
    let marker = unique_marker();
    start_marked_job(&tui, &marker);
    tui.submit(panic_line);
    let screen = wait_bash_prompt(&tui);
    assert!(
        screen.iter().any(|row| row.contains("panicked")),
        "the panic message is printed on the main screen:\n{}",
        screen.join("\n")
    );
    assert_terminal_restored(&tui, "a panic");
    wait_no_survivor(&marker);
}

#[test]
fn interactive_resize_redraws_a_long_output_at_the_new_width() {
    let Some(tui) = Tui::start("interactive_resize", "") else {
        return;
    };
    // Lines longer than every width used: they wrap differently at each.
    tui.submit("for i in $(seq 300); do printf 'row%03d-%0150d\\n' $i 0; done");
    tui.wait_text_for("(ctrl+o to expand)", LIVENESS);
    for expanded in [false, true] {
        if expanded {
            tui.pane.send_keys(&["C-o"]);
            tui.wait_text("ctrl+o to collapse)");
        }
        for (cols, rows) in [(60, 20), (140, 45), (35, 12), (100, 30)] {
            tui.pane.resize(cols, rows);
            let screen = tui.wait(
                &format!("the redraw at {cols}x{rows}"),
                LIVENESS,
                |screen| redrawn(screen, cols, rows),
            );
            for row in &screen {
                assert!(
                    row.chars().count() <= usize::from(cols),
                    "a row wider than {cols} columns: {row:?}"
                );
            }
        }
    }
    tui.pane.send_keys(&["C-o"]);
    tui.wait_text("(ctrl+o to expand)");
    assert!(tui.pane.is_alive(), "no panic on resizes");
}

/// Whether `screen` is the mode's screen drawn at `cols` x `rows`: the status line on the last
/// row (it starts with the session's directory, an absolute path here), the input line above
/// it, and a row of the long output wrapped at exactly the width.
fn redrawn(screen: &[String], cols: u16, rows: u16) -> bool {
    let n = screen.len();
    n == usize::from(rows)
        && screen[n - 1].starts_with('/')
        && (cols < 60 || screen[n - 1].contains(" · bash · "))
        && screen[n - 2].trim_end() == ">"
        && screen.iter().any(|row| {
            row.chars().count() == usize::from(cols)
                && (row.starts_with("row") || row.chars().all(|c| c == '0'))
        })
}
