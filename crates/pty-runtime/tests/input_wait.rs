//! `PtyController::input_wait` on real programs on a real PTY: prompts, REPLs and programs
//! that wait in `read`, `poll`, `select` or `epoll` on the terminal wait for input; programs
//! that sleep, compute or wait on something else do not.

use std::time::Duration;

use agentsh_pty_runtime::{InputWait, PtyRun};

use crate::util::{PATIENCE, command, run, sink, wait_until};

/// Starts `script` in bash and waits until its screen contains `ready`.
async fn start(script: &str, ready: &str) -> PtyRun {
    let session = PtyRun::start(command(script), sink());
    let terminal = session.terminal().clone();
    wait_until(&format!("{ready:?} on the screen"), || {
        terminal.contents().contains(ready)
    })
    .await;
    session
}

/// Waits until the session's terminal waits for input (liveness bound [`PATIENCE`]).
async fn until_waiting(session: &PtyRun) {
    let mut last = InputWait::Unknown;
    let start = std::time::Instant::now();
    while last != InputWait::Waiting {
        assert!(
            start.elapsed() < PATIENCE,
            "never waiting for input (last {last:?}); screen {:?}",
            session.terminal().contents()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
        last = session.input_wait();
    }
}

/// The threads of the shell and of every process below it, with their state letters.
fn tree_threads(session: &PtyRun) -> Vec<(u32, u8)> {
    let shell = session.controller().shell_pid().expect("the shell started");
    let mut pids = vec![shell];
    pids.extend(agentsh_process::descendants(shell).iter().map(|p| p.pid));
    let mut threads = Vec::new();
    for pid in pids {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")) else {
                continue;
            };
            let state = stat
                .rsplit_once(") ")
                .and_then(|(_, rest)| rest.bytes().next())
                .unwrap_or(b'?');
            threads.push((tid, state));
        }
    }
    threads
}

/// Asserts that the terminal does not wait for input once every process of the tree sleeps
/// (blocked where the program means to stay), at several looks in a row.
async fn assert_not_waiting_once_asleep(session: &PtyRun, what: &str) {
    wait_until(&format!("{what}: every thread asleep"), || {
        let threads = tree_threads(session);
        !threads.is_empty() && threads.iter().all(|&(_, state)| state == b'S')
    })
    .await;
    for _ in 0..10 {
        assert_eq!(
            session.input_wait(),
            InputWait::NotWaiting,
            "{what}: threads {:?}",
            tree_threads(session)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[test]
fn a_read_prompt_waits_until_answered() {
    run(async {
        let session = start(r#"read -p 'Name? ' n; echo "hi $n"; sleep 30"#, "Name? ").await;
        until_waiting(&session).await;
        assert!(session.write_input(b"bob\r"));
        wait_until("the answer", || {
            session.terminal().contents().contains("hi bob")
        })
        .await;
        assert_not_waiting_once_asleep(&session, "sleep after the prompt").await;
        session.kill();
        let controller = session.controller();
        let _ = session.wait().await;
        assert_eq!(
            controller.input_wait(),
            InputWait::NotWaiting,
            "after the end"
        );
    });
}

#[test]
fn a_stopped_reader_is_not_waiting() {
    run(async {
        let session = start("read -p 'Name? ' n", "Name? ").await;
        until_waiting(&session).await;
        let shell = session.controller().shell_pid().expect("the shell started");
        let pid =
            rustix::process::Pid::from_raw(i32::try_from(shell).expect("pid fits")).expect("a pid");
        rustix::process::kill_process(pid, rustix::process::Signal::STOP).expect("stopped");
        wait_until("the shell stopped", || {
            tree_threads(&session)
                .iter()
                .all(|&(_, state)| state == b'T')
        })
        .await;
        for _ in 0..10 {
            assert_eq!(session.input_wait(), InputWait::NotWaiting);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        rustix::process::kill_process(pid, rustix::process::Signal::CONT).expect("continued");
        until_waiting(&session).await;
    });
}

#[test]
fn a_python_repl_waits_in_select() {
    run(async {
        let session = start("python3 -q", ">>> ").await;
        until_waiting(&session).await;
        assert!(session.write_input(b"exit()\r"));
        assert_eq!(session.wait().await.exit_code, Some(0));
    });
}

#[test]
fn a_child_reading_the_terminal_waits_while_the_shell_waits_for_it() {
    run(async {
        let session = start("echo ready; bash -c 'cat'", "ready").await;
        until_waiting(&session).await;
        assert!(session.write_input(b"\x04"));
        assert_eq!(session.wait().await.exit_code, Some(0));
    });
}

#[test]
fn a_read_from_dev_tty_waits() {
    run(async {
        let session = start("echo ready; read n </dev/tty; echo got $n", "ready").await;
        until_waiting(&session).await;
        assert!(session.write_input(b"x\r"));
        assert_eq!(session.wait().await.exit_code, Some(0));
    });
}

#[test]
fn a_thread_reading_the_terminal_waits() {
    let script = r#"python3 -c 'import sys, threading
t = threading.Thread(target=sys.stdin.readline)
t.start()
print("ready", flush=True)
t.join()'"#;
    run(async {
        let session = start(script, "ready").await;
        until_waiting(&session).await;
        assert!(session.write_input(b"\r"));
        assert_eq!(session.wait().await.exit_code, Some(0));
    });
}

#[test]
fn epoll_and_poll_on_the_terminal_wait() {
    let epoll = r#"python3 -c 'import selectors, sys
s = selectors.EpollSelector()
s.register(sys.stdin, selectors.EVENT_READ)
print("ready", flush=True)
s.select()'"#;
    let poll = r#"python3 -c 'import select
p = select.poll()
p.register(0, select.POLLIN)
print("ready", flush=True)
p.poll()'"#;
    run(async {
        for script in [epoll, poll] {
            let session = start(script, "ready").await;
            until_waiting(&session).await;
            assert!(session.write_input(b"\r"), "{script}");
            assert_eq!(session.wait().await.exit_code, Some(0), "{script}");
        }
    });
}

#[test]
fn a_server_in_epoll_on_a_socket_is_not_waiting() {
    let script = r#"python3 -c 'import selectors, socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
sel = selectors.DefaultSelector()
sel.register(s, selectors.EVENT_READ)
print("ready", flush=True)
sel.select()'"#;
    run(async {
        let session = start(script, "ready").await;
        assert_not_waiting_once_asleep(&session, "epoll on a socket").await;
    });
}

#[test]
fn poll_and_select_without_the_terminal_in_the_read_set_are_not_waiting() {
    // The terminal is there, but only for exceptional conditions (POLLPRI, the except set).
    let poll = r#"python3 -c 'import select, socket
a, b = socket.socketpair()
p = select.poll()
p.register(a, select.POLLIN)
p.register(0, select.POLLPRI)
print("ready", flush=True)
p.poll()'"#;
    let select = r#"python3 -c 'import os, select
r, w = os.pipe()
print("ready", flush=True)
select.select([r], [], [0])'"#;
    run(async {
        for script in [poll, select] {
            let session = start(script, "ready").await;
            assert_not_waiting_once_asleep(&session, script).await;
        }
    });
}

#[test]
fn a_read_from_a_pipe_is_not_waiting() {
    run(async {
        let session = start("sleep 30 | { echo ready; read x; }", "ready").await;
        assert_not_waiting_once_asleep(&session, "read from a pipe").await;
    });
}

#[test]
fn sleep_is_not_waiting() {
    run(async {
        let session = start("echo ready; sleep 30", "ready").await;
        assert_not_waiting_once_asleep(&session, "sleep").await;
    });
}

#[test]
fn a_busy_loop_is_not_waiting() {
    run(async {
        let session = start("echo ready; while :; do :; done", "ready").await;
        for _ in 0..10 {
            assert_eq!(session.input_wait(), InputWait::NotWaiting);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
}
