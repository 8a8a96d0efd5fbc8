//! A sandboxed command on a PTY: it runs on a terminal made inside its sandbox (whose private
//! `/dev/pts` hides every other terminal), and that terminal behaves like any other: it has a
//! name, takes input, waits for it visibly, follows resizes, and PTYs of its own work.

use agentsh_process::sandbox::{self, SandboxMode, SandboxNetwork, SandboxSpec};
use agentsh_pty_runtime::PtyRun;

use crate::util::{command, run, sink, wait_until};

/// A read-only sandbox with `tmp` writable; `None` (and why, on stderr) when the kernel
/// cannot have one.
fn sandboxed(tmp: &std::path::Path) -> Option<SandboxSpec> {
    let policy = SandboxSpec {
        mode: SandboxMode::ReadOnly,
        writable: vec![tmp.to_path_buf()],
        read_only: Vec::new(),
        network: SandboxNetwork::Off,
        temp_dir: None,
        temp_fs: None,
    };
    match sandbox::check(&policy) {
        Ok(()) => Some(policy),
        Err(err) => {
            eprintln!("skipped: {err}");
            None
        }
    }
}

#[test]
fn a_sandboxed_terminal_is_named_answers_prompts_and_follows_resizes() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let Some(policy) = sandboxed(tmp.path()) else {
        return;
    };
    let have_script = agentsh_test_support::which("script").is_some();
    if !have_script {
        eprintln!("skipped the script part: script (util-linux) is not installed");
    }
    run(async {
        let mut cmd = command(&format!(
            r#"echo "name=$(tty)"; read -p 'Secret? ' -s s; echo; echo "got=$s"; read -p 'Resized? ' r; echo "size=$(stty size)"; {script}"#,
            script = if have_script {
                "script -qc true /dev/null && echo script-ok"
            } else {
                "echo script-ok"
            }
        ));
        cmd.sandbox = Some(policy);
        let session = PtyRun::start(cmd, sink());
        let terminal = session.terminal().clone();
        wait_until("the prompt", || terminal.contents().contains("Secret? ")).await;
        wait_until("waiting for input", || {
            session.input_wait() == agentsh_pty_runtime::InputWait::Waiting
        })
        .await;
        assert!(session.write_input(b"hunter2\r"));
        wait_until("the second prompt", || {
            terminal.contents().contains("Resized? ")
        })
        .await;
        session.resize(100, 30);
        assert!(session.write_input(b"\r"));
        let result = session.wait().await;
        let out = result.summary.output.clone();
        assert_eq!(result.exit_code, Some(0), "{out}");
        assert!(
            out.lines()
                .any(|line| line.starts_with("name=/dev/pts/") && line.len() > 14),
            "{out}"
        );
        assert!(out.contains("got=hunter2"), "{out}");
        assert!(!out.contains("Secret? hunter2"), "echoed: {out}");
        assert!(out.contains("size=30 100"), "{out}");
        assert!(out.contains("script-ok"), "{out}");
    });
}
