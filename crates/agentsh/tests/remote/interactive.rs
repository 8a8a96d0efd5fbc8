//! The interactive mode with `--remote`: a person at a real terminal (a tmux
//! pane) whose commands, bang commands, jobs and artifacts all live on the far side.

use std::time::Duration;

use agentsh_test_support::tmux::skip_without_tmux;

use super::faults::child_named;
use super::on_every_far_side;
use super::setup::Far;
use crate::interactive::{STATUS_MARK, Tui, pane_builder};
use crate::util::{AGENTSH, LIVENESS, TestEnv, marked_sleeper, unique_marker, wait_for_process};

/// How long a far side may take to answer on a loaded machine (ssh's handshake included).
const FAR: Duration = Duration::from_secs(30);

impl Far {
    /// `agentsh --cwd <work> <far side flags>` in a pane, its first screen drawn; `None`
    /// (skipped) without tmux.
    fn tui(&self, test: &str, env: TestEnv) -> Option<Tui> {
        if skip_without_tmux(test) {
            return None;
        }
        let work = env.work_dir();
        let mut argv = vec![
            AGENTSH.to_owned(),
            "--cwd".to_owned(),
            work.to_str().expect("utf-8 path").to_owned(),
        ];
        argv.extend(self.flags());
        let pane = pane_builder(&env, &argv).start().expect("tmux starts");
        let tui = Tui { pane, env };
        tui.wait_text_for(STATUS_MARK, FAR);
        Some(tui)
    }

    /// What the status line names the far side by.
    fn status_target(&self) -> String {
        match self {
            Self::Ssh(sshd) => format!("on {}", sshd.target()),
            Self::Unshare => "on unshare --mount".to_owned(),
        }
    }

    /// A command whose output says it ran on this far side: `$SSH_CONNECTION` through sshd;
    /// under `unshare`, PID 1 of the new namespace is the far side's `agentsh rpc`.
    fn proof(&self) -> (&'static str, &'static str) {
        match self {
            Self::Ssh(_) => ("echo \"conn=$SSH_CONNECTION\"", "conn=127.0.0.1 "),
            Self::Unshare => (
                "echo \"init=$(tr '\\0' ' ' < /proc/1/cmdline)\"",
                "rpc --cwd ",
            ),
        }
    }
}

#[test]
fn the_interactive_mode_runs_everything_on_the_far_side() {
    on_every_far_side("interactive_remote_runs_on_the_far_side", |far| {
        let Some(tui) = far.tui("interactive_remote_runs_on_the_far_side", far.env("")) else {
            return;
        };
        let name = far.name();
        // The status line names the far side, and its directory is the one asked for.
        let screen = tui.wait_text(&far.status_target());
        let work = tui.env.work_dir().display().to_string();
        assert!(
            screen.iter().any(|row| row.contains(&work)),
            "{name}: the far side's cwd on the status line:\n{}",
            tui.screen()
        );
        // Tab completes a file of the far side's directory, read there through the session.
        std::fs::write(tui.env.work_dir().join("far-listed-file.txt"), "").expect("write");
        tui.pane.send_text("cat far-list");
        tui.pane.send_keys(&["Tab"]);
        tui.wait_text_for("> cat far-listed-file.txt", FAR);
        tui.pane.send_keys(&["C-u"]);
        // A tool call runs there.
        let (command, proof) = far.proof();
        tui.submit(command);
        tui.wait_text_for(proof, FAR);
        // A bang command runs there too, and its context text is kept for /context.
        tui.submit("!echo bang-$((6*7))");
        tui.wait_text_for("bang-42", FAR);
        tui.submit("/context");
        tui.wait_text("Ran `echo bang-$((6*7))`");
        // A bang's output shows while it runs there; Esc ends it, whole.
        let bang = unique_marker();
        tui.submit(&format!("!echo live-$((1+1)); {}", marked_sleeper(&bang)));
        wait_for_process(&bang);
        tui.wait("the running bang's live output", FAR, |screen| {
            screen.iter().any(|row| row.trim_end() == "live-2")
                && screen.iter().any(|row| row.contains("Running…"))
        });
        tui.pane.send_keys(&["Escape"]);
        tui.wait_text_for("[Command cancelled]", FAR);
        agentsh_test_support::assert_no_survivor(&bang, Duration::from_secs(3));
        // A background job: listed, counted on the status line, followed live.
        let marker = unique_marker();
        tui.submit(&format!(
            "{{\"command\": \"echo job-says-hi; {}\", \"run_in_background\": true}}",
            marked_sleeper(&marker)
        ));
        tui.wait_text_for("[Running in the background as job 1.", FAR);
        wait_for_process(&marker);
        tui.wait_text("1 job running");
        tui.submit("/jobs");
        tui.wait_text("job 1 · running");
        tui.submit("/job 1");
        tui.wait("the followed job's output", FAR, |screen| {
            screen
                .iter()
                .filter(|row| row.contains("job-says-hi"))
                .count()
                >= 2
        });
        // A long output: its artifact is the far side's, read back for the expanded view.
        tui.submit("seq 20000");
        tui.wait_text_for("Full: artifact://", FAR);
        tui.pane.send_keys(&["C-o"]);
        tui.wait_text("of 20000, ctrl+o to collapse");
        tui.pane.send_keys(&["Home"]);
        tui.wait_rows(&["1", "2", "3"]);
        tui.pane.send_keys(&["C-o"]);
        // Esc aborts a call that runs there.
        let sleeper = unique_marker();
        tui.submit(&marked_sleeper(&sleeper));
        wait_for_process(&sleeper);
        tui.pane.send_keys(&["Escape"]);
        tui.wait_text_for("Command aborted", FAR);
        agentsh_test_support::assert_no_survivor(&sleeper, Duration::from_secs(3));
        // Leaving ends the far side's job, whole.
        tui.pane.send_keys(&["C-d"]);
        tui.wait_text("1 job running: Ctrl+D again ends them");
        tui.pane.send_keys(&["C-d"]);
        let status = tui.wait_exit();
        assert_eq!(status.code(), Some(0), "{name}");
        agentsh_test_support::assert_no_survivor(&marker, Duration::from_secs(3));
    });
}

#[test]
fn the_interactive_mode_says_when_the_far_side_is_lost_and_reconnects() {
    on_every_far_side("interactive_remote_reconnects", |far| {
        let Some(tui) = far.tui("interactive_remote_reconnects", far.env("")) else {
            return;
        };
        let name = far.name();
        // A job, followed, and a call running when the link goes.
        let job = unique_marker();
        tui.submit(&format!(
            "{{\"command\": \"{}\", \"run_in_background\": true}}",
            marked_sleeper(&job)
        ));
        wait_for_process(&job);
        tui.submit("/job 1");
        tui.wait_text("job 1 · running");
        tui.wait_text("1 job running");
        let marker = unique_marker();
        tui.submit(&marked_sleeper(&marker));
        wait_for_process(&marker);
        let transport = child_named(tui.pane.pane_pid(), far.transport_comm())
            .unwrap_or_else(|| panic!("{name}: no transport child of agentsh"));
        assert!(agentsh_test_support::send_signal(transport, libc::SIGKILL));
        // The running call ends with the lost connection, and nothing is left there.
        tui.wait_text_for("Remote connection lost: ", FAR);
        agentsh_test_support::assert_no_survivor(&marker, Duration::from_secs(3));
        agentsh_test_support::assert_no_survivor(&job, Duration::from_secs(3));
        tui.wait_text("0 jobs running · sandbox off · connection to ");
        // The old session's job is shown as it ended: killed, and no longer counted.
        tui.wait_text("job 1 · killed");
        // The next call opens a new far-side session, and the transcript says so.
        tui.submit("echo back-$((40+2))");
        tui.wait_text_for("back-42", FAR);
        tui.wait("the note of the new session", FAR, |screen| {
            screen
                .iter()
                .any(|row| row.starts_with("Reconnected to ") && row.contains(": a new session"))
        });
        tui.wait_gone(" lost (");
        tui.pane.send_keys(&["C-d"]);
        assert_eq!(tui.wait_exit().code(), Some(0), "{name}");
    });
}

/// Runs `agentsh <args>` in a pane of `env` and returns its exit status and stderr, once it
/// has exited.
fn run_to_exit(env: &TestEnv, args: &[String]) -> (String, String) {
    let err = env.root().join("stderr.txt");
    let status = env.root().join("status.txt");
    let words: Vec<String> = args.iter().map(|arg| shell_quote(arg)).collect();
    let script = format!(
        "{AGENTSH} {} 2> {err}; echo $? > {status}",
        words.join(" "),
        err = err.display(),
        status = status.display()
    );
    let pane = pane_builder(env, ["bash", "--norc", "--noprofile", "-c", &script])
        .start()
        .expect("tmux starts");
    assert!(pane.wait_exit(LIVENESS).is_some(), "agentsh ended");
    drop(pane);
    (
        std::fs::read_to_string(&status)
            .expect("the status file")
            .trim()
            .to_owned(),
        std::fs::read_to_string(&err).expect("the stderr file"),
    )
}

fn shell_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

#[test]
fn the_interactive_mode_refuses_a_far_side_it_cannot_use() {
    let test = "interactive_remote_refusals";
    if skip_without_tmux(test) {
        return;
    }
    let Some(Far::Ssh(sshd)) = Far::ssh(test) else {
        return;
    };
    let target = sshd.target();
    // An unknown host key: a clear error, exit 2, and the terminal never taken.
    let unknown = TestEnv::with_config(&format!(
        "[remote]\nssh_command = {}\n",
        serde_json::to_string(&sshd.unknown_host_ssh_command()).expect("json")
    ));
    let (code, stderr) = run_to_exit(&unknown, &["--remote".to_owned(), target.clone()]);
    assert_eq!(code, "2", "{stderr}");
    assert!(
        stderr.starts_with("agentsh: ")
            && stderr.contains("host key of")
            && stderr.contains("is not known"),
        "{stderr}"
    );
    assert!(
        !unknown.root().join("state/agentsh").exists(),
        "no history written"
    );
    // --listen with --remote: the connections' calls would run here.
    let env = TestEnv::new();
    let socket = env.root().join("s.sock").display().to_string();
    let (code, stderr) = run_to_exit(
        &env,
        &["--listen".to_owned(), socket, "--remote".to_owned(), target],
    );
    assert_eq!(code, "2", "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        "agentsh: --listen cannot be combined with --remote: the calls of --listen run here"
    );
}

#[test]
fn sigkill_of_the_interactive_agentsh_ends_everything_on_the_far_side() {
    on_every_far_side("interactive_remote_sigkill", |far| {
        let Some(tui) = far.tui("interactive_remote_sigkill", far.env("")) else {
            return;
        };
        let (job, foreground) = (unique_marker(), unique_marker());
        tui.submit(&format!(
            "{{\"command\": \"setsid {} & echo started\", \"run_in_background\": true}}",
            marked_sleeper(&job)
        ));
        wait_for_process(&job);
        tui.submit(&marked_sleeper(&foreground));
        wait_for_process(&foreground);
        assert!(agentsh_test_support::send_signal(
            tui.pane.pane_pid(),
            libc::SIGKILL
        ));
        agentsh_test_support::assert_no_survivor(&job, Duration::from_secs(3));
        agentsh_test_support::assert_no_survivor(&foreground, Duration::from_secs(3));
    });
}
