//! What a typed line does and how its result is drawn: bang
//! commands and the context, tool calls collapsed, expanded and scrolled, Esc.

use std::time::Duration;

use super::{Tui, find_rows, last_row, numbers_in};
use crate::util::{LIVENESS, marked_sleep, processes_with, unique_marker, wait_for_process};

#[test]
fn interactive_bang_commands_and_what_the_context_keeps() {
    let Some(tui) = Tui::start("interactive_bang", "") else {
        return;
    };
    tui.submit("!echo hi");
    tui.wait_rows(&["! echo hi", "hi"]);
    tui.submit("!!echo x");
    tui.wait_rows(&["!! echo x", "x"]);
    tui.submit("/context");
    let screen = tui.wait(
        "the /context note after the bangs",
        super::TIMEOUT,
        |screen| {
            last_row(screen, "/context")
                .is_some_and(|at| screen[at..].iter().any(|row| row.contains("Ran `echo hi`")))
        },
    );
    let at = last_row(&screen, "/context").expect("the note's first row");
    let context = &screen[at..];
    // ``Ran `cmd` `` then the output in a fenced block.
    let ran = context
        .iter()
        .position(|row| row.trim_end() == "Ran `echo hi`")
        .unwrap_or_else(|| panic!("no row `Ran \\`echo hi\\``:\n{}", context.join("\n")));
    assert_eq!(
        context[ran + 1..ran + 4]
            .iter()
            .map(|row| row.trim_end())
            .collect::<Vec<_>>(),
        ["```", "hi", "```"],
        "the output in a fenced block:\n{}",
        context.join("\n")
    );
    assert!(
        !context.iter().any(|row| row.contains("echo x")),
        "`!!echo x` is kept out of the context:\n{}",
        context.join("\n")
    );
}

#[test]
fn interactive_tool_call_with_a_short_output_shows_it_whole() {
    let Some(tui) = Tui::start("interactive_short_output", "") else {
        return;
    };
    tui.submit("seq 100000 | tail -n 3");
    let screen = tui.wait_rows(&["$ seq 100000 | tail -n 3", "99998", "99999", "100000"]);
    let at = find_rows(&screen, &["$ seq 100000 | tail -n 3"]).expect("the call line");
    assert!(
        !screen.iter().any(|row| row.contains("[Showing lines")),
        "a cut the command made itself has no notice:\n{}",
        screen.join("\n")
    );
    assert!(
        !screen.iter().any(|row| row.contains("earlier lines")),
        "three lines are not collapsed:\n{}",
        screen.join("\n")
    );
    // The `| tail -n 3` became the call's `tail`: the cut is the caller's, so no
    // truncation notice, but the view says what was left out (by lines).
    let warning = screen[at + 4].trim_end();
    let id = warning
        .strip_prefix("⟦Full output: artifact://")
        .and_then(|rest| rest.strip_suffix(". Truncated: showing 3 of 100000 lines⟧"))
        .unwrap_or_else(|| {
            panic!(
                "the by-lines warning after the output:\n{}",
                screen.join("\n")
            )
        });
    assert!(
        !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric()),
        "an artifact id: {warning}"
    );
    assert_eq!(
        screen[at + 5].trim_end(),
        "",
        "nothing more after the warning:\n{}",
        screen.join("\n")
    );
}

/// The collapsed header of a tool call:
/// `… (N earlier lines, showing M of T) (ctrl+o to expand)`; its numbers.
fn collapsed_header(screen: &[String]) -> Option<(u64, u64, u64)> {
    let row = screen
        .iter()
        .find(|row| row.starts_with("… (") && row.trim_end().ends_with(") (ctrl+o to expand)"))?;
    let rest = row.strip_prefix("… (")?;
    let (hidden, rest) = rest.split_once(" earlier lines, showing ")?;
    let (shown, rest) = rest.split_once(" of ")?;
    let (total, rest) = rest.split_once(") (ctrl+o to expand)")?;
    if !rest.trim().is_empty() {
        return None;
    }
    Some((
        hidden.parse().ok()?,
        shown.parse().ok()?,
        total.parse().ok()?,
    ))
}

/// The expanded view's position row (the views via the renderer's window):
/// `(lines A-B of T, ctrl+o to collapse)`; its row index and numbers.
fn expanded_position(screen: &[String]) -> Option<(usize, u64, u64, u64)> {
    let at = screen.iter().position(|row| {
        row.starts_with("(lines ") && row.trim_end().ends_with(", ctrl+o to collapse)")
    })?;
    match numbers_in(&screen[at])[..] {
        [a, b, t] => Some((at, a, b, t)),
        _ => None,
    }
}

#[test]
fn interactive_long_output_is_collapsed_with_the_truncation_warning() {
    let Some(tui) = Tui::start("interactive_long_output", "") else {
        return;
    };
    tui.submit("seq 200000");
    let screen = tui.wait("the collapsed view", LIVENESS, |screen| {
        collapsed_header(screen).is_some()
            && screen.iter().any(|row| row.starts_with("⟦Full output: "))
    });
    let (hidden, shown, total) = collapsed_header(&screen).expect("the header");
    assert_eq!((shown, total), (10, 200_000), "{}", screen.join("\n"));
    // The warning: `⟦Full output: artifact://ID. Truncated: X lines shown (50.0KB limit)⟧`.
    let warning = screen
        .iter()
        .find(|row| row.starts_with("⟦Full output: artifact://"))
        .expect("the warning")
        .trim_end();
    let rest = warning
        .strip_prefix("⟦Full output: artifact://")
        .expect("the warning's start");
    let (id, rest) = rest.split_once(". Truncated: ").expect("`. Truncated: `");
    assert!(
        !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric()),
        "an artifact id: {warning}"
    );
    let lines_shown: u64 = rest
        .strip_suffix(" lines shown (50.0KB limit)⟧")
        .unwrap_or_else(|| panic!("cut by the byte limit: {warning}"))
        .parse()
        .unwrap_or_else(|_| panic!("a line count: {warning}"));
    // The result text is the X lines kept, a blank line and the truncation notice: 10 rows shown, the
    // rest hidden (each a row at 100 columns).
    assert_eq!(
        hidden + shown,
        lines_shown + 2,
        "N + M are the result text's rows:\n{}",
        screen.join("\n")
    );
    let notice = format!(
        "[Showing lines {}-200000 of 200000 (50.0KB limit). Full: artifact://{id}]",
        200_000 - lines_shown + 1
    );
    assert!(
        find_rows(&screen, &["199999", "200000", "", &notice]).is_some(),
        "the last lines, then the notice {notice:?}:\n{}",
        screen.join("\n")
    );
}

/// Whether the status line says an expanded view waits for a read of the artifact.
fn reading(screen: &[String]) -> bool {
    screen.last().is_some_and(|row| row.contains("reading…"))
}

/// With the last result collapsed on screen (its header `… (N earlier lines, showing M of
/// total)`, its output the numbers 1..=total): ctrl+o expands it at its end, PgUp shows the
/// page before, Home the first lines, ctrl+o collapses it again.
fn expand_scroll_collapse(tui: &Tui, total: u64) {
    let header = collapsed_header(&tui.pane.capture()).expect("the collapsed header");
    let last_line = total.to_string();

    // ctrl+o: the whole output at its end, and there it stays (no read pending).
    tui.pane.send_keys(&["C-o"]);
    let screen = tui.wait(
        "the expanded view at the end, settled",
        LIVENESS,
        |screen| {
            !reading(screen)
                && expanded_position(screen)
                    .is_some_and(|(_, _, last, t)| (last, t) == (total, total))
        },
    );
    let (at, first, last, _) = expanded_position(&screen).expect("the position row");
    assert_eq!(
        screen[at - 1].trim_end(),
        last_line,
        "{}",
        screen.join("\n")
    );
    let page = last - first + 1;
    assert_eq!(
        screen[at - usize::try_from(page).expect("a page")].trim_end(),
        first.to_string(),
        "the window's first line is A:\n{}",
        screen.join("\n")
    );
    assert!(
        !screen.iter().any(|row| row.contains("ctrl+o to expand")),
        "no collapsed header while expanded:\n{}",
        screen.join("\n")
    );
    // Still there a moment later: the view does not move by itself.
    std::thread::sleep(Duration::from_millis(300));
    let again = tui.pane.capture();
    assert_eq!(
        expanded_position(&again).map(|(_, a, b, _)| (a, b)),
        Some((first, last)),
        "the expanded view moved by itself:\n{}",
        again.join("\n")
    );

    // PgUp: the page before.
    tui.pane.send_keys(&["PageUp"]);
    let screen = tui.wait("a page up", LIVENESS, |screen| {
        !reading(screen) && expanded_position(screen).is_some_and(|(_, a, _, _)| a < first)
    });
    let (at, a, b, t) = expanded_position(&screen).expect("the position row");
    assert_eq!(
        (a, b, t),
        (first - page, first - 1, total),
        "{}",
        screen.join("\n")
    );
    assert_eq!(
        screen[at - 1].trim_end(),
        b.to_string(),
        "{}",
        screen.join("\n")
    );

    // Home (the input line is empty): the first lines.
    tui.pane.send_keys(&["Home"]);
    let screen = tui.wait("the first page", LIVENESS, |screen| {
        !reading(screen) && expanded_position(screen).is_some_and(|(_, a, _, _)| a == 1)
    });
    let (at, _, b, _) = expanded_position(&screen).expect("the position row");
    let start = find_rows(&screen, &["1", "2", "3"])
        .unwrap_or_else(|| panic!("the lines 1, 2, 3:\n{}", screen.join("\n")));
    assert_eq!(
        at - start,
        usize::try_from(b).expect("a page"),
        "lines 1-B fill the rows up to the position row:\n{}",
        screen.join("\n")
    );

    // ctrl+o again: collapsed as before.
    tui.pane.send_keys(&["C-o"]);
    let screen = tui.wait("collapsed again", LIVENESS, |screen| {
        collapsed_header(screen).is_some() && expanded_position(screen).is_none()
    });
    assert_eq!(
        collapsed_header(&screen),
        Some(header),
        "{}",
        screen.join("\n")
    );
}

#[test]
fn interactive_expanded_output_scrolls_by_pages_and_home() {
    let Some(tui) = Tui::start("interactive_expand_text", "") else {
        return;
    };
    // Under the byte limit: the result's own text is what the expanded view shows.
    tui.submit("seq 300");
    tui.wait_text_for(
        "… (290 earlier lines, showing 10 of 300) (ctrl+o to expand)",
        LIVENESS,
    );
    expand_scroll_collapse(&tui, 300);
}

#[test]
fn interactive_expanded_artifact_settles_and_scrolls_to_its_first_line() {
    let Some(tui) = Tui::start("interactive_expand_artifact", "") else {
        return;
    };
    // Over the byte limit: the expanded view reads the artifact, window by window.
    tui.submit("seq 200000");
    tui.wait("the collapsed view", LIVENESS, |screen| {
        collapsed_header(screen).is_some()
            && screen.iter().any(|row| row.starts_with("⟦Full output: "))
    });
    expand_scroll_collapse(&tui, 200_000);
}

#[test]
fn interactive_esc_cancels_the_running_tool_call_and_its_whole_tree() {
    let Some(tui) = Tui::start("interactive_esc", "") else {
        return;
    };
    let marker = unique_marker();
    let command = format!("{}; echo no", marked_sleep(&marker));
    tui.submit(&command);
    wait_for_process(&marker);
    tui.wait_text("Running…");
    tui.pane.send_keys(&["Escape"]);
    // An aborted call's outcome line.
    let screen = tui.wait_text_for("Command aborted", LIVENESS);
    assert!(
        find_rows(&screen, &[&format!("$ {command}")]).is_some(),
        "the call line:\n{}",
        screen.join("\n")
    );
    let deadline = std::time::Instant::now() + LIVENESS;
    while !processes_with(&marker).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the cancelled command's processes survived: {:?}",
            processes_with(&marker)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    tui.wait_gone("Running…");
    // What must NOT happen (the rest of the command running after the cancel) can only be
    // checked by looking again a little later.
    std::thread::sleep(Duration::from_millis(700));
    let screen = tui.pane.capture();
    assert!(
        !screen.iter().any(|row| row.trim_end() == "no"),
        "`echo no` ran after the cancel:\n{}",
        screen.join("\n")
    );
}

#[test]
fn interactive_a_shaped_result_is_marked_and_ctrl_o_shows_the_raw_output() {
    let Some(tui) = Tui::start("interactive_shaped", "") else {
        return;
    };
    // A repository whose `git log` is shaped: 30 commits, their Author lines left out.
    crate::shaping::repository(&tui.env.work_dir());
    tui.submit("git log");
    let screen = tui.wait("the shaped result and its marker", LIVENESS, |screen| {
        screen.iter().any(|row| row.starts_with("⟦Shaped: "))
    });
    let marker = screen
        .iter()
        .find(|row| row.starts_with("⟦Shaped: "))
        .expect("the marker");
    assert!(
        marker
            .trim_end()
            .ends_with("lines of git log left out (ctrl+o: the raw output)⟧"),
        "{marker}"
    );
    assert!(
        !screen.iter().any(|row| row.starts_with("Author: ")),
        "{}",
        screen.join("\n")
    );
    // ctrl+o: the raw output, which has the Author lines, to its last line.
    tui.pane.send_keys(&["C-o"]);
    // Each commit is 9 lines (commit, Author, Date, blank, subject, blank, two body lines, blank).
    let screen = tui.wait("the raw output expanded at its end", LIVENESS, |screen| {
        !reading(screen)
            && expanded_position(screen)
                .is_some_and(|(_, _, last, total)| last == total && total == 30 * 9 - 1)
    });
    assert!(
        screen
            .iter()
            .any(|row| row.trim_end() == "Author: Test Person <test@example.com>"),
        "{}",
        screen.join("\n")
    );
}
