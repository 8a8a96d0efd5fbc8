//! Programs on a terminal: with `bash.virtual_terminal = "on"` a tool call runs
//! on a PTY drawn as the overlay (header `$ <command>`, footer `esc to kill` or, in the
//! alternate screen, `ctrl+] to kill`), every key going to the program.

use std::path::Path;
use std::time::Duration;

use super::{PROGRAM_START, STATUS_MARK, Tui, VIRTUAL_TERMINAL_ON, find_rows, last_row};
use crate::util::{LIVENESS, processes_with, unique_marker};

/// The overlay's footers.
const ESC_TO_KILL: &str = "esc to kill";
const CTRL_BRACKET_TO_KILL: &str = "ctrl+] to kill";

/// The python the tests run: the system's, whatever `PATH` holds (a pyenv shim needs a HOME
/// the tests do not give it).
fn python() -> &'static str {
    if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}

/// Waits until the overlay is gone and the mode's own screen (its status line) is back.
fn wait_overlay_closed(tui: &Tui) -> Vec<String> {
    tui.wait("the overlay to close", LIVENESS, |screen| {
        !screen
            .iter()
            .any(|row| row.trim_end() == ESC_TO_KILL || row.trim_end() == CTRL_BRACKET_TO_KILL)
            && screen.iter().any(|row| row.contains(STATUS_MARK))
    })
}

/// A file of `n` lines `row 1` … `row n` in the work dir.
fn numbered_file(tui: &Tui, name: &str, n: usize) {
    let text = (1..=n).fold(String::new(), |mut text, i| {
        text.push_str("row ");
        text.push_str(&i.to_string());
        text.push('\n');
        text
    });
    std::fs::write(tui.env.work_dir().join(name), text).expect("write the file");
}

#[test]
fn interactive_pty_python_repl_in_the_overlay() {
    let Some(tui) = Tui::start("interactive_pty_python", VIRTUAL_TERMINAL_ON) else {
        return;
    };
    let command = format!("{} -q", python());
    tui.submit(&command);
    let screen = tui.wait("python's prompt in the overlay", PROGRAM_START, |screen| {
        screen.iter().any(|row| row.starts_with(">>>"))
            && screen.iter().any(|row| row.trim_end() == ESC_TO_KILL)
    });
    assert_eq!(
        screen[0].trim_end(),
        format!("$ {command}"),
        "the overlay's header:\n{}",
        screen.join("\n")
    );
    tui.pane.send_text("1+1");
    tui.pane.send_enter();
    tui.wait_rows(&[">>> 1+1", "2"]);
    tui.pane.send_keys(&["C-d"]);
    let screen = wait_overlay_closed(&tui);
    let at = last_row(&screen, &format!("$ {command}"))
        .unwrap_or_else(|| panic!("the tool call's view:\n{}", screen.join("\n")));
    assert!(
        screen[at..].iter().any(|row| row.trim_end() == "2"),
        "the result holds the session:\n{}",
        screen.join("\n")
    );
}

#[test]
fn interactive_pty_esc_kills_a_program_outside_the_alternate_screen() {
    let Some(tui) = Tui::start("interactive_pty_esc", VIRTUAL_TERMINAL_ON) else {
        return;
    };
    let command = format!("{} -q", python());
    tui.submit(&command);
    tui.wait("python's prompt in the overlay", PROGRAM_START, |screen| {
        screen.iter().any(|row| row.starts_with(">>>"))
            && screen.iter().any(|row| row.trim_end() == ESC_TO_KILL)
    });
    tui.pane.send_keys(&["Escape"]);
    wait_overlay_closed(&tui);
    // Esc kills the command; an aborted call's outcome line follows.
    let screen = tui.wait_text_for("Command aborted", LIVENESS);
    assert!(
        last_row(&screen, &format!("$ {command}")).is_some(),
        "the call's view:\n{}",
        screen.join("\n")
    );
}

#[test]
fn interactive_pty_vim_gets_esc_and_quits_with_colon_q() {
    let Some(tui) = Tui::start("interactive_pty_vim", VIRTUAL_TERMINAL_ON) else {
        return;
    };
    let file = tui.env.work_dir().join("notes.txt");
    std::fs::write(&file, "first line\n").expect("write the file");
    tui.submit("vim -u NONE -N -n notes.txt");
    tui.wait("vim's screen in the overlay", PROGRAM_START, |screen| {
        screen.iter().any(|row| row.trim_end() == "first line")
            && screen
                .iter()
                .any(|row| row.trim_end() == CTRL_BRACKET_TO_KILL)
    });
    tui.pane.send_keys(&["i"]);
    tui.wait_text("-- INSERT --");
    tui.pane.send_text("typed ");
    tui.wait_text("typed first line");
    // Esc goes to vim (it uses the alternate screen): insert mode ends, vim stays open.
    tui.pane.send_keys(&["Escape"]);
    let screen = tui.wait_gone("-- INSERT --");
    assert!(
        screen
            .iter()
            .any(|row| row.trim_end() == CTRL_BRACKET_TO_KILL),
        "vim is still open after Esc:\n{}",
        screen.join("\n")
    );
    tui.pane.send_text(":wq");
    tui.pane.send_enter();
    let screen = wait_overlay_closed(&tui);
    assert!(
        find_rows(&screen, &["$ vim -u NONE -N -n notes.txt"]).is_some(),
        "the tool call's view:\n{}",
        screen.join("\n")
    );
    assert_eq!(
        std::fs::read_to_string(&file).expect("read the file"),
        "typed first line\n",
        "vim got the keys (Esc left insert mode, :wq wrote)"
    );
}

#[test]
fn interactive_pty_less_leaves_with_q() {
    let Some(tui) = Tui::start("interactive_pty_less", VIRTUAL_TERMINAL_ON) else {
        return;
    };
    numbered_file(&tui, "big.txt", 300);
    tui.submit("less big.txt");
    // `LESS=FRX` (the hardened environment) keeps less off the alternate screen: the footer is Esc's.
    let screen = tui.wait("less's first page", PROGRAM_START, |screen| {
        find_rows(screen, &["row 1", "row 2"]).is_some()
            && screen.iter().any(|row| row.trim_end() == ESC_TO_KILL)
    });
    assert_eq!(
        screen[0].trim_end(),
        "$ less big.txt",
        "{}",
        screen.join("\n")
    );
    tui.pane.send_keys(&["q"]);
    let screen = wait_overlay_closed(&tui);
    let at = last_row(&screen, "$ less big.txt")
        .unwrap_or_else(|| panic!("the tool call's view:\n{}", screen.join("\n")));
    assert!(
        !screen[at..].iter().any(|row| row.contains("Command ")),
        "less ended by itself, no outcome line:\n{}",
        screen.join("\n")
    );
}

#[test]
fn interactive_pty_ctrl_bracket_kills_a_program_in_the_alternate_screen() {
    let Some(tui) = Tui::start("interactive_pty_kill", VIRTUAL_TERMINAL_ON) else {
        return;
    };
    // The file's name is in vim's argv: its process is found by it.
    let name = format!("{}.txt", unique_marker());
    numbered_file(&tui, &name, 300);
    let command = format!("vim -u NONE -N -n {name}");
    tui.submit(&command);
    tui.wait("vim's first page", PROGRAM_START, |screen| {
        find_rows(screen, &["row 1", "row 2"]).is_some()
            && screen
                .iter()
                .any(|row| row.trim_end() == CTRL_BRACKET_TO_KILL)
    });
    assert!(!processes_with(&name).is_empty(), "vim runs");
    tui.pane.send_keys(&["C-]"]);
    let screen = wait_overlay_closed(&tui);
    assert!(
        find_rows(&screen, &[&format!("$ {command}")]).is_some(),
        "the call ended, its view shown:\n{}",
        screen.join("\n")
    );
    let deadline = std::time::Instant::now() + LIVENESS;
    while !processes_with(&name).is_empty() {
        assert!(std::time::Instant::now() < deadline, "vim survived ctrl+]");
        std::thread::sleep(Duration::from_millis(20));
    }
    tui.wait_gone("Running…");
}

#[test]
fn interactive_pty_gets_the_full_width_and_follows_resizes() {
    let Some(tui) = Tui::start("interactive_pty_width", VIRTUAL_TERMINAL_ON) else {
        return;
    };
    tui.submit("tput cols");
    tui.wait_rows_for(&["$ tput cols", "100"], PROGRAM_START);
    tui.pane.resize(90, 30);
    // The resize reaches agentsh before the keys typed after it (one input stream).
    tui.submit("tput cols");
    tui.wait("the second call's output", PROGRAM_START, |screen| {
        screen
            .iter()
            .filter(|row| row.trim_end() == "$ tput cols")
            .count()
            == 2
            && last_row(screen, "$ tput cols")
                .is_some_and(|at| screen.get(at + 1).is_some_and(|row| row.trim_end() == "90"))
    });
    tui.submit("stty size");
    tui.wait_rows_for(&["$ stty size", "28 90"], PROGRAM_START);
}
