//! What a new user meets first, on the real binary: shell state never lost in silence, bash's
//! own error messages, aliases that persist, programs that need a terminal ending at once, and
//! a working directory that cannot be entered. Texts are the documented ones.

use std::os::unix::fs::PermissionsExt as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::jobs::Session;
use crate::util::{TestEnv, have};

/// The closing line of a result whose shell ended during the call.
const SHELL_ENDED: &str = "[The shell ended: the next command runs in a new shell, without the variables, functions, aliases and options set by earlier commands]";

/// The text of a tool result.
fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

fn bash(session: &mut Session, command: &str) -> Value {
    session.call("bash", json!({ "command": command }))
}

/// Rounds of `export FOO=<n>`, the command under test, `echo FOO=$FOO`, in one session: how
/// many of the middle calls replaced the shell, and how many echoes lost the variable.
/// `abort`: the middle call (`sleep 0.01`) is aborted at a moment drawn from `seed`.
fn rounds(command: &str, count: u32, abort: Option<u64>) -> (u32, u32, Vec<String>) {
    let env = TestEnv::new();
    let mut session = Session::start(&env);
    let mut seed = abort.unwrap_or(1);
    let (mut replaced, mut lost, mut seen) = (0, 0, Vec::new());
    for round in 0..count {
        let set = bash(&mut session, &format!("export FOO=v{round}"));
        assert_eq!(set["isError"], false, "{set}");
        let result = if abort.is_some() {
            let id = session.send("bash", json!({ "command": command }));
            // xorshift: a moment in the first 20 ms (the command's own end is around 10 ms).
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            std::thread::sleep(Duration::from_micros(seed % 20_000));
            session
                .rpc
                .send_json(&json!({"type": "abort", "toolCallId": id}));
            session.answer(&id)
        } else {
            bash(&mut session, command)
        };
        if result["details"]["sessionRestarted"] == true {
            replaced += 1;
            seen.push(result.to_string());
        }
        let echo = bash(&mut session, "echo FOO=$FOO");
        if text(&echo) != format!("FOO=v{round}") {
            lost += 1;
            seen.push(echo.to_string());
        }
    }
    (replaced, lost, seen)
}

/// A `head` limit reached as the command ends on its own, and aborts at random moments of a
/// short command, never cost the shell its state: 1,000 calls of each, four sessions side by
/// side.
#[test]
fn stops_at_the_commands_end_keep_the_shell() {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(7, |d| d.as_nanos() as u64 | 1);
    let cases: [(&str, Option<u64>); 4] = [
        ("ls -la / | head -n 5", None),
        ("seq 3 | head -n 5", None),
        ("yes | head -n 1", None),
        ("sleep 0.01", Some(seed)),
    ];
    let runs: Vec<_> = cases
        .into_iter()
        .map(|(command, abort)| std::thread::spawn(move || (command, rounds(command, 1000, abort))))
        .collect();
    for run in runs {
        let (command, (replaced, lost, seen)) = run.join().expect("rounds");
        assert_eq!(
            (replaced, lost),
            (0, 0),
            "{command} (abort seed {seed}): replaced shells and lost variables; {seen:#?}"
        );
    }
}

/// A command that ends its shell says so in its text and in `sessionRestarted`, and the next
/// call runs in a new shell.
#[test]
fn a_shell_that_ends_is_told() {
    let env = TestEnv::new();
    let mut session = Session::start(&env);
    for (command, code) in [("exit 5", 5), ("kill -9 $$", 137), ("exec true", 0)] {
        let set = bash(&mut session, "export FOO=kept");
        assert_eq!(set["isError"], false, "{set}");
        let result = bash(&mut session, command);
        assert_eq!(result["details"]["exitCode"], code, "{command}: {result}");
        assert_eq!(
            result["details"]["sessionRestarted"], true,
            "{command}: {result}"
        );
        assert_eq!(result["isError"], code != 0, "{command}: {result}");
        assert!(
            text(&result).ends_with(&format!("\n\n{SHELL_ENDED}")),
            "{command}: {result}"
        );
        if code != 0 {
            assert!(
                text(&result).contains(&format!("Command exited with code {code}\n\n")),
                "{command}: {result}"
            );
        }
        // The next call works, in a new shell: the variable is gone, and nothing says more.
        let next = bash(&mut session, "echo FOO=$FOO");
        assert_eq!(text(&next), "FOO=", "after {command}: {next}");
        assert_eq!(next["details"]["sessionRestarted"], false, "{next}");
    }
    // A user's command (RPC `bash`) is told the same way.
    session
        .rpc
        .send_json(&json!({"id": "bang", "type": "bash", "command": "exit 3"}));
    let bang = session.rpc.response("bang");
    assert_eq!(bang["data"]["exitCode"], 3, "{bang}");
    assert_eq!(bang["data"]["sessionRestarted"], true, "{bang}");
}

/// With a fresh `HOME` (no rc), an alias defined in one call expands in the next.
#[test]
fn aliases_persist_without_an_rc() {
    let env = TestEnv::new();
    let mut session = Session::start(&env);
    let define = bash(&mut session, "alias ll='ls -1 /'; alias greet='echo hello'");
    assert_eq!(define["isError"], false, "{define}");
    let used = bash(&mut session, "greet world");
    assert_eq!(text(&used), "hello world", "{used}");
    let listed = bash(&mut session, "ll | grep -x usr");
    assert_eq!(text(&listed), "usr", "{listed}");
}

/// `<shell> -c <command>`'s output (stdout and stderr as one stream) and status, in `dir`.
fn shell_c(shell: &str, command: &str, dir: &std::path::Path) -> (String, i32) {
    let output = Command::new("sh")
        .args(["-c", "exec \"$0\" -c \"$1\" 2>&1", shell, command])
        .current_dir(dir)
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .output()
        .expect("run the shell");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    (
        text.strip_suffix('\n').unwrap_or(&text).to_owned(),
        output.status.code().unwrap_or(-1),
    )
}

/// Differential: each command's result starts with exactly what `<shell> -c` prints for it,
/// and has its status.
fn check_messages_like(shell: &str, commands: &[&str]) {
    let env = TestEnv::with_config(&format!("[bash]\nshell = \"{shell}\"\n"));
    let mut session = Session::start(&env);
    for command in commands {
        let (want, status) = shell_c(shell, command, &env.work_dir());
        assert!(
            !want.is_empty() && status != 0,
            "{shell} -c {command:?} printed an error"
        );
        let result = bash(&mut session, command);
        let got = text(&result);
        assert_eq!(result["details"]["exitCode"], status, "{command}: {result}");
        assert!(
            got.starts_with(&format!("{want}\n\nCommand exited with code {status}")),
            "{shell}: {command:?}\nwant: {want:?}\ngot:  {got:?}"
        );
        assert!(!got.contains("/command"), "a private path: {got:?}");
    }
}

/// (Not compared: a function's message, which `bash -c` names `environment: line 1:`, a bash
/// quirk agentsh does not copy: it says `bash: line 1:`.)
#[test]
fn error_messages_read_as_bash_c_prints_them() {
    check_messages_like(
        "bash",
        &[
            "nosuchcmd",
            "echo (",
            "if",
            "echo ok; done",
            "cd /nonexistent-dir-x",
            "true\n\nnosuchcmd arg",
            "echo ${x",
            "set -u; echo $UNDEFINED_AGENTSH_VAR",
        ],
    );
}

#[test]
fn error_messages_read_as_zsh_c_prints_them() {
    if !have("zsh") {
        // scripts/install-test-deps installs zsh; a machine without it cannot run this.
        eprintln!("skipped: no zsh");
        return;
    }
    check_messages_like(
        "zsh",
        &[
            "nosuchcmd",
            "cd /nonexistent-dir-x",
            "echo ok; nosuchcmd arg",
        ],
    );
}

/// The hint a tool result ends with when `program` needed a terminal.
fn terminal_hint(program: &str) -> String {
    format!(
        "[{program} needs a terminal: run it with run_in_background: true and pty: true, then drive it with job_input]"
    )
}

/// Editors and other full-screen programs end at once on a run without a terminal, with the
/// hint; their batch uses run; `less` and `man` print as `cat` would.
#[test]
fn programs_that_need_a_terminal_end_at_once() {
    let env = TestEnv::new();
    std::fs::write(env.work_dir().join("calc.py"), "print(1)\n").expect("write file");
    let mut session = Session::start(&env);
    let mut programs = vec![("vim calc.py", "vim"), ("vi calc.py", "vi")];
    for (command, program) in [
        ("nano calc.py", "nano"),
        ("emacs -nw calc.py", "emacs"),
        ("htop", "htop"),
        ("watch date", "watch"),
    ] {
        if have(program) {
            programs.push((command, program));
        } else {
            eprintln!("not on this machine: {program}");
        }
    }
    for (command, program) in programs {
        let started = Instant::now();
        let result = session.call("bash", json!({"command": command, "timeout": 120}));
        let took = started.elapsed();
        // Liveness, not speed: the timeout is 120 s.
        assert!(took < Duration::from_secs(10), "{command} took {took:?}");
        assert_eq!(result["isError"], true, "{result}");
        assert_eq!(result["details"]["exitCode"], Value::Null, "{result}");
        assert_eq!(result["details"]["timedOut"], false, "{result}");
        assert!(
            text(&result).ends_with(&format!("\n\n{}", terminal_hint(program))),
            "{command}: {result}"
        );
    }
    // Nothing of the rest of the command runs, and the shell keeps its state.
    let set = bash(&mut session, "export KEPT=yes");
    assert_eq!(set["isError"], false, "{set}");
    let stopped = bash(&mut session, "vim calc.py; touch after-vim");
    assert!(text(&stopped).ends_with(&terminal_hint("vim")), "{stopped}");
    assert_eq!(stopped["details"]["sessionRestarted"], false, "{stopped}");
    assert!(!env.work_dir().join("after-vim").exists());
    let kept = bash(&mut session, "echo $KEPT; ls -A");
    assert_eq!(text(&kept), "yes\ncalc.py", "no swap file either: {kept}");
    // Batch uses run as they do.
    let batch = bash(&mut session, "vim -es -c '%p' -c 'q!' calc.py");
    assert_eq!(text(&batch), "print(1)", "{batch}");
    let version = bash(&mut session, "vim --version | head -n 1");
    assert!(text(&version).starts_with("VIM - Vi IMproved"), "{version}");
    // Pagers print as `cat` would.
    let less = bash(&mut session, "less calc.py");
    assert_eq!(text(&less), "print(1)", "{less}");
    if have("man") {
        let man = bash(&mut session, "man ls | head -n 3");
        assert_eq!(man["isError"], false, "{man}");
        assert!(text(&man).contains("LS(1)"), "{man}");
    }
    // A user's command gets the hint for a person.
    session
        .rpc
        .send_json(&json!({"id": "bang", "type": "bash", "command": "vim calc.py"}));
    let bang = session.rpc.response("bang");
    assert_eq!(bang["data"]["needsTerminal"], "vim", "{bang}");
    assert_eq!(bang["data"]["exitCode"], Value::Null, "{bang}");
}

/// A working directory the user cannot enter is the tool's working-directory error (exit 1
/// for `exec`), found before any file in it is read. Run as an unprivileged user (root may
/// enter any directory): as `nobody` through `setpriv` when the tests run as root.
#[test]
fn a_cwd_that_cannot_be_entered_is_the_tool_error() {
    let env = TestEnv::new();
    // SAFETY: getuid has no preconditions.
    let root = unsafe { libc::getuid() } == 0;
    if root && !have("setpriv") {
        eprintln!("skipped: running as root without setpriv to drop privileges");
        return;
    }
    // Everything the unprivileged run needs is its own.
    let locked = env.root().join("locked");
    std::fs::create_dir_all(locked.join(".agentsh")).expect("mkdir");
    std::fs::write(
        locked.join(".agentsh/policy.toml"),
        "[policy]\ndefault = \"deny\"\n",
    )
    .expect("write policy");
    let nobody = 65534;
    if root {
        for entry in walk(env.root()) {
            std::os::unix::fs::lchown(&entry, Some(nobody), Some(nobody)).expect("chown");
        }
    }
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    let config = env.config_path();
    let mut args = vec![
        "exec".to_owned(),
        "--json".to_owned(),
        "--config".to_owned(),
        config.display().to_string(),
        "--cwd".to_owned(),
        locked.display().to_string(),
        "--".to_owned(),
        "pwd".to_owned(),
    ];
    let mut command = if root {
        let mut all = vec![
            "--reuid=65534".to_owned(),
            "--regid=65534".to_owned(),
            "--clear-groups".to_owned(),
            crate::util::AGENTSH.to_owned(),
        ];
        all.append(&mut args);
        env.program(
            "setpriv",
            &all.iter().map(String::as_str).collect::<Vec<_>>(),
        )
    } else {
        env.command(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    // The private directories of an unprivileged run: its own, not root's.
    command
        .env("XDG_RUNTIME_DIR", env.root().join("state"))
        .env("TMPDIR", env.root().join("state"));
    let output = crate::util::finish(command.stdin(Stdio::null()));
    let _ = std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o700));
    assert_eq!(output.code(), 1, "{output:?}");
    let result = output.json();
    assert_eq!(
        text(&result),
        format!(
            "Working directory cannot be entered: {} (Permission denied)",
            locked.display()
        ),
        "{result}"
    );
    assert_eq!(result["isError"], true, "{result}");
}

/// Every path under `root`, `root` included.
fn walk(root: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut all = vec![root.to_path_buf()];
    let mut at = 0;
    while at < all.len() {
        if let Ok(entries) = std::fs::read_dir(&all[at]) {
            all.extend(entries.filter_map(Result::ok).map(|entry| entry.path()));
        }
        at += 1;
    }
    all
}
