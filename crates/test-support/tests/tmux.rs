//! The tmux harness against real programs: bash, cat, stty, sh, sleep.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use agentsh_test_support::tmux::{TIMEOUT, TmuxPane, skip_without_tmux};
use agentsh_test_support::{alive_containing, alive_with_arg};

/// A `cat -v` on a raw, non-echoing terminal: every byte the program gets is shown at once,
/// control bytes as `^X`.
fn raw_cat() -> TmuxPane {
    let pane = TmuxPane::builder([
        "sh",
        "-c",
        r"stty raw -echo && printf 'ready\r\n' && exec cat -v",
    ])
    .start()
    .expect("tmux starts");
    pane.wait_for_text("ready", TIMEOUT).expect("stty ran");
    pane
}

/// Waits up to [`TIMEOUT`] for `ready` (a process to have exec'd, say); whether it came.
fn eventually(ready: impl Fn() -> bool) -> bool {
    let deadline = std::time::Instant::now() + TIMEOUT;
    while !ready() {
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

/// A marker no other test uses, for `sleep <marker>`.
fn marker(n: u32) -> String {
    format!("1000.{}{n}", std::process::id())
}

#[test]
fn typed_line_runs_in_an_interactive_bash() {
    if skip_without_tmux("typed_line_runs_in_an_interactive_bash") {
        return;
    }
    let pane = TmuxPane::builder(["bash", "--norc", "--noprofile", "-i"])
        .start()
        .expect("tmux starts");
    // The result differs from the typed line, so the echo of the line cannot match.
    pane.send_text("echo hi-$((6 * 7))");
    pane.send_enter();
    let screen = pane.wait_for_text("hi-42", TIMEOUT).expect("bash ran it");
    assert!(screen.iter().any(|row| row.ends_with("echo hi-$((6 * 7))")));
    assert_eq!(screen.len(), 30, "the default size's rows");
}

#[test]
fn escape_reaches_the_program_as_one_byte() {
    if skip_without_tmux("escape_reaches_the_program_as_one_byte") {
        return;
    }
    let pane = raw_cat();
    pane.send_keys(&["Escape"]);
    pane.wait_for_text("^[", TIMEOUT).expect("cat got the Esc");
    // Nothing was held back or added: the next key lands right after it.
    pane.send_text("x");
    pane.wait_for(|screen| screen[1] == "^[x", TIMEOUT)
        .expect("Esc then x, nothing between");
    pane.send_keys(&["Up", "C-a"]);
    pane.wait_for(|screen| screen[1] == "^[x^[[A^A", TIMEOUT)
        .expect("key names as the terminal sends them");
}

#[test]
fn text_is_sent_literally_semicolons_and_key_names_included() {
    if skip_without_tmux("text_is_sent_literally_semicolons_and_key_names_included") {
        return;
    }
    let pane = raw_cat();
    // tmux's command line ends a command at an argument ending in `;`: each of these would
    // lose its `;` (or be a separator) if the harness passed it through unescaped.
    for piece in ["a;", ";", "b\\;", " Enter C-c -l -- {x} ", "end;"] {
        pane.send_text(piece);
    }
    pane.wait_for(
        |screen| screen[1] == "a;;b\\; Enter C-c -l -- {x} end;",
        TIMEOUT,
    )
    .expect("the text as typed");
    let long = "0123456789".repeat(1000);
    pane.send_enter();
    pane.send_text(&long);
    pane.wait_for(
        |screen| screen.concat().contains(&long[long.len() - 300..]),
        TIMEOUT,
    )
    .expect("a text longer than one send-keys");
}

#[test]
fn resize_reaches_the_program_with_sigwinch() {
    if skip_without_tmux("resize_reaches_the_program_with_sigwinch") {
        return;
    }
    let script = r#"trap 'echo "winch $(stty size)"' WINCH; echo "start $(stty size)"
        while :; do sleep 0.05; done"#;
    let pane = TmuxPane::builder(["bash", "--norc", "-c", script])
        .size(90, 25)
        .start()
        .expect("tmux starts");
    pane.wait_for_text("start 25 90", TIMEOUT)
        .expect("the size given");
    pane.resize(60, 20);
    assert_eq!(pane.size(), (60, 20));
    pane.wait_for_text("winch 20 60", TIMEOUT)
        .expect("SIGWINCH, new size");
    pane.resize(120, 40);
    let screen = pane
        .wait_for_text("winch 40 120", TIMEOUT)
        .expect("again, larger");
    assert_eq!(screen.len(), 40);
}

#[test]
fn wait_exit_returns_the_exit_code_or_signal() {
    if skip_without_tmux("wait_exit_returns_the_exit_code_or_signal") {
        return;
    }
    let pane = TmuxPane::builder(["sh", "-c", "read line; exit 3"])
        .start()
        .expect("tmux starts");
    assert!(pane.is_alive());
    assert_eq!(
        pane.wait_exit(Duration::from_millis(200)),
        None,
        "still reading"
    );
    pane.send_enter();
    let status = pane.wait_exit(TIMEOUT).expect("sh exits");
    assert_eq!(status.code(), Some(3));
    assert!(!pane.is_alive());
    assert_eq!(pane.exit_status(), Ok(Some(status)));

    let pane = TmuxPane::builder(["sh", "-c", "kill -TERM $$"])
        .start()
        .expect("tmux starts");
    let status = pane.wait_exit(TIMEOUT).expect("sh is killed");
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(15)
    );
}

#[test]
fn wait_exit_gets_the_status_of_quick_exits_from_many_servers_at_once() {
    if skip_without_tmux("wait_exit_gets_the_status_of_quick_exits_from_many_servers_at_once") {
        return;
    }
    // tmux 3.3a loses a quick program's SIGCHLD now and then when many servers start at once
    // (a few in 40): the pane is dead and its status never comes.
    let statuses: Vec<Option<i32>> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..24)
            .map(|_| {
                scope.spawn(|| {
                    let pane = TmuxPane::builder(["sh", "-c", "exit 7"])
                        .start()
                        .expect("tmux starts");
                    pane.wait_exit(TIMEOUT).and_then(|status| status.code())
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().expect("no panic"))
            .collect()
    });
    assert_eq!(statuses, [Some(7); 24]);
}

#[test]
fn drop_leaves_no_process_behind_a_hangup_ignored_included() {
    if skip_without_tmux("drop_leaves_no_process_behind_a_hangup_ignored_included") {
        return;
    }
    let marker = marker(1);
    // The sleep ignores SIGHUP: closing the terminal does not end it, the drop must.
    let script = format!("trap '' HUP; sleep {marker} & echo started; wait");
    let mut pane = TmuxPane::builder(["sh", "-c", &script])
        .start()
        .expect("tmux starts");
    pane.wait_for_text("started", TIMEOUT)
        .expect("sleep started");
    assert!(
        eventually(|| !alive_with_arg(&marker).is_empty()),
        "sleep exec'd"
    );
    let socket = pane.socket().to_owned();
    let dir = socket.parent().expect("the private directory").to_owned();
    assert_eq!(
        std::fs::metadata(&dir)
            .expect("the directory")
            .permissions()
            .mode()
            & 0o777,
        0o700
    );
    let socket_text = socket.to_str().expect("a UTF-8 temp path");
    assert_eq!(alive_containing(socket_text).len(), 1, "one tmux server");
    assert_eq!(alive_with_arg(&marker).len(), 1);

    pane.kill_server();
    assert!(
        alive_containing(socket_text).is_empty(),
        "the server is gone"
    );
    assert_eq!(
        alive_with_arg(&marker).len(),
        1,
        "closing the terminal only hangs up: the sleep ignores that"
    );
    assert!(!pane.is_alive());

    drop(pane);
    assert!(alive_with_arg(&marker).is_empty(), "drop killed the sleep");
    assert!(alive_containing(socket_text).is_empty());
    assert!(!dir.exists(), "the private directory is removed");
}

#[test]
fn drop_ends_a_running_program_and_its_server() {
    if skip_without_tmux("drop_ends_a_running_program_and_its_server") {
        return;
    }
    let marker = marker(2);
    let pane = TmuxPane::builder(["sleep", &marker])
        .start()
        .expect("tmux starts");
    let socket = pane
        .socket()
        .to_str()
        .expect("a UTF-8 temp path")
        .to_owned();
    let server = pane.server_pid().expect("the server's pid");
    // The pane's process shows the program's argv once it has exec'd it.
    assert!(eventually(|| !alive_with_arg(&marker).is_empty()));
    assert_eq!(
        alive_with_arg(&marker),
        [pane.pane_pid()],
        "the pane's pid is the program's"
    );
    assert!(alive_containing(&socket).contains(&server));
    drop(pane);
    assert!(alive_with_arg(&marker).is_empty());
    assert!(alive_containing(&socket).is_empty());
}

#[test]
fn environment_and_directory_reach_the_program_and_nothing_else() {
    if skip_without_tmux("environment_and_directory_reach_the_program_and_nothing_else") {
        return;
    }
    let dir = tempfile::tempdir().expect("a temp dir");
    let out = dir.path().join("env");
    let script = format!("env > '{}' && pwd >> '{}'", out.display(), out.display());
    let pane = TmuxPane::builder(["sh", "-c", &script])
        .env("AGENTSH_ODD", "a b;c \"d\" 'e' $f\nnext")
        .env("HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env("EMPTY", "")
        .env("DISPLAY", ":42")
        .cwd(dir.path())
        .start()
        .expect("tmux starts");
    assert_eq!(pane.wait_exit(TIMEOUT).and_then(|s| s.code()), Some(0));
    let env = std::fs::read_to_string(&out).expect("the env the program saw");
    let home = dir.path().display();
    for line in [
        "AGENTSH_ODD=a b;c \"d\" 'e' $f\nnext\n".to_owned(),
        format!("HOME={home}\n"),
        format!("XDG_CONFIG_HOME={home}/config\n"),
        "EMPTY=\n".to_owned(),
        "DISPLAY=:42\n".to_owned(),
        "TERM=xterm-256color\n".to_owned(),
        "SHELL=/bin/sh\n".to_owned(),
        "LANG=C.UTF-8\n".to_owned(),
        format!("PATH={}\n", std::env::var("PATH").expect("PATH")),
        format!(
            "{}\n",
            std::fs::canonicalize(dir.path()).expect("dir").display()
        ),
    ] {
        assert!(env.contains(&line), "{line:?} not in:\n{env}");
    }
    // cargo runs the test with CARGO_* variables: none leaks into the pane.
    assert!(
        !env.contains("CARGO"),
        "the test's environment leaked:\n{env}"
    );

    let pane = TmuxPane::builder(["sh", "-c", &script])
        .inherit_env()
        .env("TERM", "tmux-256color")
        .env("SHELL", "/bin/bash")
        .env_remove("LANG")
        .start()
        .expect("tmux starts");
    assert_eq!(pane.wait_exit(TIMEOUT).and_then(|s| s.code()), Some(0));
    let env = std::fs::read_to_string(&out).expect("the env the program saw");
    assert!(env.contains("\nTERM=tmux-256color\n"), "{env}");
    assert!(env.contains("\nSHELL=/bin/bash\n"), "{env}");
    assert!(!env.contains("\nLANG="), "{env}");
    if let Ok(manifest) = std::env::var("CARGO_MANIFEST_DIR") {
        assert!(
            env.contains(&format!("\nCARGO_MANIFEST_DIR={manifest}\n")),
            "{env}"
        );
    }
}

#[test]
fn one_word_argv_is_executed_not_parsed_by_a_shell() {
    if skip_without_tmux("one_word_argv_is_executed_not_parsed_by_a_shell") {
        return;
    }
    let dir = tempfile::tempdir().expect("a temp dir");
    let program = dir.path().join("a program; with $pace");
    std::fs::write(&program, "#!/bin/sh\necho \"ran as $0\"\nexec sleep 100\n").expect("write");
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let pane = TmuxPane::builder([&program]).start().expect("tmux starts");
    pane.wait_for_text("ran as ", TIMEOUT)
        .expect("the program ran");
    // The script exec's sleep right after its echo: the pane's pid shows that soon.
    let cmdline =
        || std::fs::read(format!("/proc/{}/cmdline", pane.pane_pid())).unwrap_or_default();
    assert!(
        eventually(|| cmdline().starts_with(b"sleep\0")),
        "the pane's pid is the program's, exec'd: {:?}",
        String::from_utf8_lossy(&cmdline())
    );
}

#[test]
fn timeout_error_shows_the_last_screen() {
    if skip_without_tmux("timeout_error_shows_the_last_screen") {
        return;
    }
    let pane = TmuxPane::builder(["sh", "-c", "echo on-screen-marker; exec sleep 100"])
        .start()
        .expect("tmux starts");
    pane.wait_for_text("on-screen-marker", TIMEOUT)
        .expect("the echo");
    let err = pane
        .wait_for_text("never-shown", Duration::from_millis(300))
        .expect_err("nothing shows it");
    let message = format!("{err:?}");
    assert_eq!(message, err.to_string(), "Debug is the readable Display");
    for part in [
        "\"never-shown\"",
        "running",
        "  0 |on-screen-marker\n",
        "(rows 1..29 empty)",
    ] {
        assert!(message.contains(part), "{part:?} not in:\n{message}");
    }
    assert!(err.waited >= Duration::from_millis(300));
    pane.wait_gone("never-shown", TIMEOUT).expect("not there");
    let gone = pane.wait_gone("on-screen-marker", Duration::from_millis(200));
    assert!(gone.is_err_and(|err| err.screen[0] == "on-screen-marker"));
}

#[test]
fn styled_capture_keeps_colours_plain_capture_drops_them() {
    if skip_without_tmux("styled_capture_keeps_colours_plain_capture_drops_them") {
        return;
    }
    let pane = TmuxPane::builder([
        "sh",
        "-c",
        r"printf '\033[31mred\033[0m plain'; exec sleep 100",
    ])
    .start()
    .expect("tmux starts");
    let screen = pane.wait_for_text("red plain", TIMEOUT).expect("the text");
    assert_eq!(screen[0], "red plain");
    assert_eq!(pane.cursor(), (9, 0));
    let styled = pane.capture_styled();
    assert!(styled[0].contains("\u{1b}[31mred"), "{:?}", styled[0]);
}
