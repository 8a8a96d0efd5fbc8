//! The interactive mode (issue 15) end to end: the real `agentsh` binary on a real
//! terminal (a tmux pane of its own), typed at and read back from the screen the way a person
//! uses it. Texts asserted are the documented ones (the views, the keys and questions).
//!
//! This file holds the harness ([`Tui`]) and the checks without a terminal;
//! `interactive/input.rs` the kinds of input and the views of their results,
//! `interactive/pty.rs` programs on a terminal (`bash.virtual_terminal = "on"`),
//! `interactive/session.rs` history and the slash commands, `interactive/lifetime.rs`
//! leaving (jobs, the terminal restored, a panic) and resizing, `interactive/listen.rs`
//! an agent's calls over `--listen`, and `interactive/approval.rs` the person answering the
//! approval policy's questions about them.

mod approval;
mod input;
mod lifetime;
pub(crate) mod listen;
mod pty;
mod secrets;
mod session;
mod shell_keys;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use agentsh_test_support::tmux::{PaneBuilder, TIMEOUT, TmuxPane, skip_without_tmux};

use crate::util::{AGENTSH, LIVENESS, TestEnv, finish};

/// How long a program in a PTY (python, vim) may take to show its first screen on a loaded
/// 2-core machine.
pub const PROGRAM_START: Duration = Duration::from_secs(30);

/// What the status line always shows (the sandbox field), so a screen with it is a
/// screen of the mode, not of a program's overlay.
pub const STATUS_MARK: &str = "sandbox off";

/// The config that turns the PTY runtime on for tool calls.
pub const VIRTUAL_TERMINAL_ON: &str = "[bash]\nvirtual_terminal = \"on\"\n";

/// agentsh's interactive mode in a tmux pane, with a private environment ([`TestEnv`]: HOME,
/// XDG directories, artifact store and config file all in one temp dir).
pub struct Tui {
    // The pane first: dropping it ends agentsh before the temp dir goes.
    pub pane: TmuxPane,
    pub env: TestEnv,
}

impl Tui {
    /// `agentsh` (no subcommand) in a 100x30 pane with a config holding `extra_config`; waits
    /// for its first screen. `None` (the test skips) without tmux.
    pub fn start(test: &str, extra_config: &str) -> Option<Self> {
        Self::start_with(test, TestEnv::with_config(extra_config), &[])
    }

    /// `agentsh` in `env` with more environment `vars`; waits for its first screen.
    pub fn start_with(test: &str, env: TestEnv, vars: &[(&str, &str)]) -> Option<Self> {
        if skip_without_tmux(test) {
            return None;
        }
        let pane = pane_builder(&env, [AGENTSH])
            .envs(vars.iter().copied())
            .start()
            .expect("tmux starts");
        let tui = Self { pane, env };
        tui.wait_text(STATUS_MARK);
        Some(tui)
    }

    /// Types `line` and presses Enter.
    pub fn submit(&self, line: &str) {
        self.pane.send_text(line);
        self.pane.send_enter();
    }

    /// Waits (for [`TIMEOUT`]) until a row contains `text`; the screen. Panics with the last
    /// screen otherwise.
    pub fn wait_text(&self, text: &str) -> Vec<String> {
        self.wait_text_for(text, TIMEOUT)
    }

    /// [`Tui::wait_text`] with a timeout of its own.
    pub fn wait_text_for(&self, text: &str, timeout: Duration) -> Vec<String> {
        self.pane
            .wait_for_text(text, timeout)
            .unwrap_or_else(|err| panic!("{err}"))
    }

    /// Waits until no row contains `text`; the screen.
    pub fn wait_gone(&self, text: &str) -> Vec<String> {
        self.pane
            .wait_gone(text, TIMEOUT)
            .unwrap_or_else(|err| panic!("{err}"))
    }

    /// Waits (for `timeout`) until `ready(screen)` holds; `what` names it in the failure.
    pub fn wait(
        &self,
        what: &str,
        timeout: Duration,
        ready: impl Fn(&[String]) -> bool,
    ) -> Vec<String> {
        self.pane
            .wait_for(ready, timeout)
            .unwrap_or_else(|err| panic!("waiting for {what}: {err}"))
    }

    /// Waits until rows `lines` follow each other on the screen (each row equal to one of
    /// them, trailing spaces aside); the screen.
    pub fn wait_rows(&self, lines: &[&str]) -> Vec<String> {
        self.wait_rows_for(lines, TIMEOUT)
    }

    /// [`Tui::wait_rows`] with a timeout of its own.
    pub fn wait_rows_for(&self, lines: &[&str], timeout: Duration) -> Vec<String> {
        self.wait(&format!("the rows {lines:?}"), timeout, |screen| {
            find_rows(screen, lines).is_some()
        })
    }

    /// Waits (for [`LIVENESS`]) until agentsh has exited; its status.
    pub fn wait_exit(&self) -> std::process::ExitStatus {
        self.pane
            .wait_exit(LIVENESS)
            .unwrap_or_else(|| panic!("agentsh did not exit; screen:\n{}", self.screen()))
    }

    /// The screen as one text, for failure messages.
    pub fn screen(&self) -> String {
        self.pane.capture().join("\n")
    }
}

/// A pane running `argv` in `env`: HOME, XDG state and config inside it, `AGENTSH_CONFIG` its
/// config file, `SHELL=/bin/bash`, the work dir as cwd, 100x30.
pub fn pane_builder<S: AsRef<std::ffi::OsStr>>(
    env: &TestEnv,
    argv: impl IntoIterator<Item = S>,
) -> PaneBuilder {
    TmuxPane::builder(argv)
        .size(100, 30)
        .cwd(env.work_dir())
        .env("HOME", env.root().join("home"))
        .env("XDG_STATE_HOME", env.root().join("state"))
        .env("XDG_CONFIG_HOME", env.root().join("config"))
        .env("XDG_CACHE_HOME", env.root().join("cache"))
        .env("AGENTSH_CONFIG", env.config_path())
        .env("SHELL", "/bin/bash")
}

/// The index of the first row of `lines` where they follow each other on `screen`.
pub fn find_rows(screen: &[String], lines: &[&str]) -> Option<usize> {
    if lines.is_empty() || screen.len() < lines.len() {
        return None;
    }
    (0..=screen.len() - lines.len()).find(|&at| {
        lines
            .iter()
            .enumerate()
            .all(|(i, line)| screen[at + i].trim_end() == *line)
    })
}

/// The index of the last row equal to `line` (trailing spaces aside).
pub fn last_row(screen: &[String], line: &str) -> Option<usize> {
    screen.iter().rposition(|row| row.trim_end() == line)
}

/// The unsigned numbers in `text`, in order (`"… (12 earlier lines, showing 10 of 20)"` →
/// `[12, 10, 20]`).
pub fn numbers_in(text: &str) -> Vec<u64> {
    text.split(|c: char| !c.is_ascii_digit())
        .filter(|part| !part.is_empty())
        .filter_map(|part| part.parse().ok())
        .collect()
}

/// The state directory's history file of `env`.
pub fn history_file(env: &TestEnv) -> PathBuf {
    env.root().join("state").join("agentsh").join("history")
}

#[test]
fn interactive_without_a_terminal_prints_the_help_and_exits_2() {
    let env = TestEnv::new();
    let out = finish(env.command(&[]).stdin(Stdio::null()));
    assert_eq!(out.code(), 2, "{out:?}");
    assert!(out.stderr.contains("Usage:"), "the help text: {out:?}");
    assert!(out.stdout.is_empty(), "nothing on stdout: {out:?}");
}

#[test]
fn interactive_with_stdout_not_a_terminal_prints_the_help_and_exits_2() {
    // stdin is the pane's terminal, stdout a file: not a terminal on both, so the help.
    if skip_without_tmux("interactive_stdout_not_a_terminal") {
        return;
    }
    let env = TestEnv::new();
    let out = env.root().join("out.txt");
    let script = format!(
        "{AGENTSH} > {out} 2> {out}.err; echo \"status=$?\" >> {out}",
        out = out.display()
    );
    let pane = pane_builder(&env, ["bash", "--norc", "--noprofile", "-c", &script])
        .start()
        .expect("tmux starts");
    assert!(pane.wait_exit(LIVENESS).is_some(), "bash ended");
    let text = std::fs::read_to_string(&out).expect("the output file");
    assert_eq!(text.trim(), "status=2", "exit 2, nothing on stdout");
    let err = std::fs::read_to_string(out.with_extension("txt.err")).expect("stderr file");
    assert!(err.contains("Usage:"), "the help on stderr: {err:?}");
}
