//! The mode as people use a shell: Tab (a file, a slash word, a job id, a command name in
//! command position), Ctrl+R, the history's suggestion, `/kill N`, a running call's time, an
//! approval wait, the person's commands apart from the model's, the first screen's hint. Each
//! in the default theme and in the ascii one.

use serde_json::json;
use std::os::unix::fs::PermissionsExt;

use super::approval::ASK_TOUCH;
use super::{Tui, find_rows, last_row};
use crate::util::{LIVENESS, TestEnv, marked_sleeper, processes_with, unique_marker};

/// A theme under test: its config and the glyphs the rows asserted use.
struct Theme {
    name: &'static str,
    config: &'static str,
    ellipsis: &'static str,
    separator: &'static str,
}

/// The default theme and the ascii one.
const THEMES: [Theme; 2] = [
    Theme {
        name: "unicode",
        config: "",
        ellipsis: "…",
        separator: "·",
    },
    Theme {
        name: "ascii",
        config: "[ui]\ntheme = \"ascii\"\n",
        ellipsis: "...",
        separator: "-",
    },
];

/// The mode in `theme` with more `config`, in an environment `prepare` has set up (files in
/// its work dir), with the environment variables `prepare` returns.
fn start(
    test: &str,
    theme: &Theme,
    config: &str,
    prepare: impl FnOnce(&TestEnv) -> Vec<(&'static str, String)>,
) -> Option<Tui> {
    let env = TestEnv::with_config(&format!("{}{config}", theme.config));
    let vars = prepare(&env);
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    Tui::start_with(&format!("{test}_{}", theme.name), env, &vars)
}

/// No files, no variables.
fn nothing(_: &TestEnv) -> Vec<(&'static str, String)> {
    Vec::new()
}

/// Whether a styled row (tmux's `capture-pane -e`) shows `text` right after the foreground
/// colour `colour` of the 16 named ones (8 dark grey, 5 magenta), however tmux spells it.
fn coloured(styled: &[String], colour: u8, text: &str) -> bool {
    let spellings = [
        format!("38;5;{colour}m{text}"),
        format!(
            "\x1b[{}m{text}",
            if colour < 8 { 30 + colour } else { 82 + colour }
        ),
    ];
    styled.iter().any(|row| {
        spellings
            .iter()
            .any(|spelling| row.contains(spelling.as_str()))
    })
}

/// The input line's row (`> …`, trailing blanks aside) is `line`.
fn wait_input(tui: &Tui, line: &str) -> Vec<String> {
    let want = format!("> {line}");
    tui.wait(&format!("the input line {want:?}"), LIVENESS, |screen| {
        screen.iter().any(|row| row.trim_end() == want)
    })
}

#[test]
fn interactive_tab_completes_a_file_and_lists_several() {
    for theme in &THEMES {
        let Some(tui) = start("interactive_tab_file", theme, "", |env| {
            let work = env.work_dir();
            for file in ["alpha-only.txt", "beta-1.txt", "beta-2.txt"] {
                std::fs::write(work.join(file), "").expect("write");
            }
            std::fs::create_dir(work.join("gamma-dir")).expect("mkdir");
            std::fs::write(work.join("gamma-dir/inner.rs"), "").expect("write");
            Vec::new()
        }) else {
            return;
        };
        // One match completes, with a blank after it.
        tui.pane.send_text("cat alp");
        tui.pane.send_keys(&["Tab"]);
        wait_input(&tui, "cat alpha-only.txt");
        // A directory stays open for more; its entries come next.
        tui.pane.send_text("gam");
        tui.pane.send_keys(&["Tab"]);
        wait_input(&tui, "cat alpha-only.txt gamma-dir/");
        tui.pane.send_keys(&["Tab"]);
        wait_input(&tui, "cat alpha-only.txt gamma-dir/inner.rs");
        // Several: the shared start, and a list under the input; Tab cycles; Esc closes.
        tui.pane.send_keys(&["C-u"]);
        tui.pane.send_text("ls bet");
        tui.pane.send_keys(&["Tab"]);
        let screen = wait_input(&tui, "ls beta-");
        let at = last_row(&screen, "> ls beta-").expect("the input row");
        let list = screen[at + 1].trim_end();
        assert!(
            list.contains("beta-1.txt") && list.contains("beta-2.txt"),
            "the list under the input ({}):\n{}",
            theme.name,
            screen.join("\n")
        );
        tui.wait_text("2 matches (Tab cycles, Esc closes)");
        tui.pane.send_keys(&["Tab"]);
        wait_input(&tui, "ls beta-1.txt");
        tui.pane.send_keys(&["Tab"]);
        wait_input(&tui, "ls beta-2.txt");
        tui.pane.send_keys(&["Escape"]);
        tui.wait_gone("(Tab cycles, Esc closes)");
        wait_input(&tui, "ls beta-2.txt");
    }
}

#[test]
fn interactive_tab_completes_a_slash_word() {
    for theme in &THEMES {
        let Some(tui) = start("interactive_tab_slash", theme, "", nothing) else {
            return;
        };
        tui.pane.send_text("/ki");
        tui.pane.send_keys(&["Tab"]);
        wait_input(&tui, "/kill");
        tui.pane.send_keys(&["C-u"]);
        tui.pane.send_text("/he");
        tui.pane.send_keys(&["Tab"]);
        wait_input(&tui, "/help");
        tui.pane.send_enter();
        tui.wait_text("/kill N         end job N and every process it started");
        tui.wait_text("Tab             complete: a / command, a job or artifact id");
    }
}

#[test]
fn interactive_tab_completes_a_command_name_where_the_lexer_puts_one() {
    for theme in &THEMES {
        let Some(tui) = start("interactive_tab_command", theme, "", |env| {
            // A program on PATH whose name no other has.
            let bin = env.root().join("bin");
            std::fs::create_dir(&bin).expect("mkdir");
            let tool = bin.join("zqtabtool-unique");
            std::fs::write(&tool, "#!/bin/sh\necho ran-zq\n").expect("write");
            std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).expect("chmod");
            // A function and an alias of the person's rc file (the session's snapshot has them).
            std::fs::write(
                env.root().join("home/.bashrc"),
                "zqfuncname() { echo from-func; }\nalias zqaliasname='echo from-alias'\n",
            )
            .expect("write .bashrc");
            let path = std::env::var("PATH").unwrap_or_default();
            vec![("PATH", format!("{}:{path}", bin.display()))]
        }) else {
            return;
        };
        tui.pane.send_text("zqtabt");
        tui.pane.send_keys(&["Tab"]);
        wait_input(&tui, "zqtabtool-unique");
        // After a pipe: command position again, by the lexer.
        tui.pane.send_text("| zqtab");
        tui.pane.send_keys(&["Tab"]);
        wait_input(&tui, "zqtabtool-unique | zqtabtool-unique");
        tui.pane.send_enter();
        tui.wait_rows(&["$ zqtabtool-unique | zqtabtool-unique", "ran-zq"]);
        // The rc file's function and alias, in command position after `&&`.
        tui.pane.send_text("zqfunc");
        tui.pane.send_keys(&["Tab"]);
        wait_input(&tui, "zqfuncname");
        tui.pane.send_text("&& zqali");
        tui.pane.send_keys(&["Tab"]);
        wait_input(&tui, "zqfuncname && zqaliasname");
        tui.pane.send_enter();
        tui.wait_rows(&["from-func", "from-alias"]);
        // An argument is a file, not a command: no such file.
        tui.pane.send_text("echo zqtab");
        tui.pane.send_keys(&["Tab"]);
        tui.wait_text("(no match)");
        wait_input(&tui, "echo zqtab");
    }
}

#[test]
fn interactive_ctrl_r_finds_an_entry_three_back_and_esc_restores_the_line() {
    for theme in &THEMES {
        let Some(tui) = start("interactive_ctrl_r", theme, "", nothing) else {
            return;
        };
        for word in ["alpha-one", "beta-two", "gamma-three"] {
            tui.submit(&format!("echo {word}"));
            tui.wait_rows(&[&format!("$ echo {word}"), word]);
        }
        tui.pane.send_text("draft");
        tui.pane.send_keys(&["C-r"]);
        tui.wait_text("history search:");
        tui.pane.send_text("alp1");
        tui.pane.send_keys(&["BSpace"]);
        let screen = tui.wait_rows(&["history search: alp", "> echo alpha-one"]);
        assert!(
            find_rows(&screen, &["  echo beta-two"]).is_none(),
            "only what matches:\n{}",
            screen.join("\n")
        );
        tui.pane.send_enter();
        tui.wait_gone("history search:");
        wait_input(&tui, "echo alpha-one");
        // Esc: the line as it was.
        tui.pane.send_keys(&["C-u"]);
        tui.pane.send_text("keep this");
        tui.pane.send_keys(&["C-r"]);
        tui.pane.send_text("gam");
        tui.wait_rows(&["history search: gam", "> echo gamma-three"]);
        tui.pane.send_keys(&["Escape"]);
        tui.wait_gone("history search:");
        wait_input(&tui, "keep this");
    }
}

#[test]
fn interactive_the_suggestion_is_dimmed_and_right_takes_it() {
    for theme in &THEMES {
        let Some(tui) = start("interactive_suggestion", theme, "", nothing) else {
            return;
        };
        tui.submit("echo suggested-entry-42");
        tui.wait_rows(&["$ echo suggested-entry-42", "suggested-entry-42"]);
        tui.pane.send_text("echo sugg");
        // Shown after the cursor, dimmed (dark grey), not typed.
        wait_input(&tui, "echo suggested-entry-42");
        let styled = tui.pane.capture_styled();
        assert!(
            coloured(&styled, 8, "ested-entry-42"),
            "the suggestion dimmed ({}):\n{}",
            theme.name,
            styled.join("\n")
        );
        tui.pane.send_keys(&["Right"]);
        tui.pane.send_text(" more");
        wait_input(&tui, "echo suggested-entry-42 more");
        // Without → the suggestion is not taken.
        tui.pane.send_keys(&["C-u"]);
        tui.pane.send_text("echo sugg");
        wait_input(&tui, "echo suggested-entry-42");
        tui.pane.send_text("X");
        wait_input(&tui, "echo suggX");
    }
}

#[test]
fn interactive_kill_n_ends_a_running_jobs_processes_and_tab_completes_its_id() {
    for theme in &THEMES {
        let Some(tui) = start("interactive_kill", theme, "", nothing) else {
            return;
        };
        let marker = unique_marker();
        let sleeper = marked_sleeper(&marker);
        let command = format!("{sleeper} & {sleeper}; wait");
        tui.submit(&json!({"command": command, "run_in_background": true}).to_string());
        tui.wait_text_for("[Running in the background as job 1.", LIVENESS);
        tui.wait("both of the job's processes", LIVENESS, |_| {
            processes_with(&marker).len() >= 2
        });
        // The job's id by Tab.
        tui.pane.send_text("/kill ");
        tui.pane.send_keys(&["Tab"]);
        wait_input(&tui, "/kill 1");
        tui.pane.send_enter();
        tui.wait_text("[job 1: killed]");
        tui.wait("no process of the job", LIVENESS, |_| {
            processes_with(&marker).is_empty()
        });
        tui.submit("/jobs");
        let sep = theme.separator;
        tui.wait(&format!("job 1 {sep} killed"), LIVENESS, |screen| {
            last_row(screen, "/jobs").is_some_and(|at| {
                screen
                    .get(at + 1)
                    .is_some_and(|row| row.starts_with(&format!("job 1 {sep} killed {sep} ")))
            })
        });
    }
}

/// The seconds a running row (`⠏ Running… 42s (esc to cancel)`) under the header `header`
/// shows, if one does.
fn seconds_shown(screen: &[String], header: &str, ellipsis: &str) -> Option<u64> {
    let at = screen.iter().rposition(|row| row.trim_end() == header)?;
    screen[at..].iter().find_map(|row| {
        let rest = row.split_once(&format!(" Running{ellipsis} "))?.1;
        let time = rest.split_whitespace().next()?.strip_suffix('s')?;
        time.parse().ok()
    })
}

#[test]
fn interactive_a_running_call_and_bang_show_their_time() {
    for theme in &THEMES {
        let Some(tui) = start("interactive_elapsed", theme, "", nothing) else {
            return;
        };
        tui.submit("sleep 60");
        let screen = tui.wait("the call's time at 3 s or more", LIVENESS, |screen| {
            seconds_shown(screen, "$ sleep 60", theme.ellipsis).is_some_and(|s| s >= 3)
        });
        let row = screen
            .iter()
            .find(|row| row.contains(&format!("Running{} ", theme.ellipsis)))
            .expect("the running row");
        assert!(
            row.trim_end().ends_with("s (esc to cancel)"),
            "the row's shape ({}): {row}",
            theme.name
        );
        tui.pane.send_keys(&["Escape"]);
        tui.wait_text_for("Command aborted", LIVENESS);
        tui.submit("!sleep 60");
        tui.wait("the bang's time at 3 s or more", LIVENESS, |screen| {
            seconds_shown(screen, "! sleep 60", theme.ellipsis).is_some_and(|s| s >= 3)
        });
        tui.pane.send_keys(&["Escape"]);
        tui.wait_text_for("(cancelled)", LIVENESS);
    }
}

#[test]
fn interactive_a_call_waiting_for_an_approval_says_so() {
    for theme in &THEMES {
        let Some(tui) = start("interactive_approval_wait", theme, ASK_TOUCH, nothing) else {
            return;
        };
        tui.submit("touch marker");
        let waiting = format!("Waiting for approval{}", theme.ellipsis);
        let screen = tui.wait_text(&waiting);
        let at = last_row(&screen, "$ touch marker").expect("the call's header");
        assert!(
            screen[at + 1].contains(&waiting) && !screen[at + 1].contains("Running"),
            "the call waits, not runs ({}):\n{}",
            theme.name,
            screen.join("\n")
        );
        tui.pane.send_keys(&["n"]);
        tui.wait_gone(&waiting);
        tui.wait_text("The user declined to run: touch marker");
        assert!(!tui.env.work_dir().join("marker").exists(), "nothing ran");
    }
}

#[test]
fn interactive_the_persons_commands_are_told_from_the_models() {
    for theme in &THEMES {
        let Some(tui) = start("interactive_whose", theme, "", nothing) else {
            return;
        };
        tui.submit("!echo same-text");
        tui.wait_rows(&["! echo same-text", "same-text"]);
        tui.submit("echo same-text");
        tui.wait_rows(&["$ echo same-text", "same-text"]);
        tui.submit("!!echo kept-out");
        let screen = tui.wait_rows(&["!! echo kept-out", "kept-out"]);
        assert!(
            find_rows(&screen, &["$ echo kept-out"]).is_none()
                && find_rows(&screen, &["$ echo same-text"]).is_some()
                && find_rows(&screen, &["! echo same-text"]).is_some(),
            "({}):\n{}",
            theme.name,
            screen.join("\n")
        );
        // The person's prompt in its own colour (magenta).
        let styled = tui.pane.capture_styled();
        assert!(
            coloured(&styled, 5, "! ") && coloured(&styled, 5, "!! "),
            "the ! in its colour ({}):\n{}",
            theme.name,
            styled.join("\n")
        );
    }
}

#[test]
fn interactive_the_first_screen_says_what_to_type() {
    for theme in &THEMES {
        let Some(tui) = start("interactive_first_hint", theme, "", nothing) else {
            return;
        };
        let hint = "Type a command to run it as the model's bash call, !cmd to run it yourself; /help lists the rest.";
        let screen = tui.wait_text(hint);
        let rows = screen.iter().filter(|row| !row.trim().is_empty()).count();
        // The hint, the prompt, the status line.
        assert_eq!(rows, 3, "({}):\n{}", theme.name, screen.join("\n"));
        let styled = tui.pane.capture_styled();
        assert!(
            coloured(&styled, 8, "Type a command"),
            "dim ({}):\n{}",
            theme.name,
            styled.join("\n")
        );
    }
}
