//! The interactive mode drawn by the compact renderer (a second `Renderer` proves
//! the swap end to end): the real `agentsh-compact-tui` binary on a real terminal (tmux).

use std::path::Path;

use agentsh_test_support::tmux::{TIMEOUT, TmuxPane, skip_without_tmux};

/// Waits until rows `lines` follow each other on the pane's screen; panics with the screen.
fn wait_rows(pane: &TmuxPane, lines: &[&str]) -> Vec<String> {
    pane.wait_for(
        |screen| {
            screen.windows(lines.len()).any(|window| {
                window
                    .iter()
                    .zip(lines)
                    .all(|(row, line)| row.trim_end() == *line)
            })
        },
        TIMEOUT,
    )
    .unwrap_or_else(|err| panic!("waiting for the rows {lines:?}: {err}"))
}

fn private_dirs(root: &Path) {
    for dir in ["home", "state", "config", "work"] {
        std::fs::create_dir_all(root.join(dir)).expect("create a dir");
    }
}

#[test]
fn compact_tui_draws_tool_calls_and_bangs_in_the_compact_style() {
    if skip_without_tmux("compact_tui") {
        return;
    }
    let root = tempfile::tempdir().expect("temp dir");
    let root = root.path();
    private_dirs(root);
    let config = root.join("agentsh.toml");
    std::fs::write(
        &config,
        format!(
            "[artifacts]\ndir = \"{}\"\n",
            root.join("artifacts").display()
        ),
    )
    .expect("write the config");
    let pane = TmuxPane::builder([env!("CARGO_BIN_EXE_agentsh-compact-tui")])
        .size(100, 30)
        .cwd(root.join("work"))
        .env("HOME", root.join("home"))
        .env("XDG_STATE_HOME", root.join("state"))
        .env("XDG_CONFIG_HOME", root.join("config"))
        .env("AGENTSH_CONFIG", &config)
        .env("SHELL", "/bin/bash")
        .start()
        .expect("tmux starts");
    pane.wait_for_text("sandbox off", TIMEOUT)
        .unwrap_or_else(|err| panic!("the mode's first screen: {err}"));

    // A tool call: `✓ <command>`, then its output indented by two spaces.
    pane.send_text("echo hi");
    pane.send_enter();
    let screen = wait_rows(&pane, &["✓ echo hi", "  hi"]);
    assert!(
        !screen.iter().any(|row| row.starts_with("$ ")),
        "no default-renderer call line:\n{}",
        screen.join("\n")
    );

    // A bang command: `! ✓ <command>`.
    pane.send_text("!echo x");
    pane.send_enter();
    wait_rows(&pane, &["! ✓ echo x", "  x"]);

    // A failed call: `✗ <command> (exit N)`.
    pane.send_text("exit 3");
    pane.send_enter();
    wait_rows(&pane, &["✗ exit 3 (exit 3)"]);

    pane.send_keys(&["C-d"]);
    let status = pane
        .wait_exit(TIMEOUT)
        .unwrap_or_else(|| panic!("Ctrl+D leaves:\n{}", pane.capture().join("\n")));
    assert!(status.success(), "exit 0: {status}");
}
