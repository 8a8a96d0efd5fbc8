//! Stopping a command (timeout, abort, head satisfied): why ([`StopReason`]), how
//! ([`StopMethod`]), and what [`stop_command`] decided ([`Verdict`]).
//!
//! The deadline, the cancellation token or the output's satisfied head fires in
//! `CommandRun::until_end` (`run.rs`), whose stop branches are polled before output (the
//! shell's report waits while a stop is being decided). [`stop_command`] freezes the shell
//! (SIGSTOP) and looks at it: one that has already left its command (no fd 2, not waiting for
//! a child: `ls -la` ended as its fifth line satisfied `head`) is let go untouched and reports
//! the command's own status, so a stop that comes as a command ends never costs the shell.
//! Otherwise, for bash, when `/proc` shows the stop signal (40, real-time) still caught and no
//! blanket real-time trap, it writes the command's marker to the private directory's `stop`
//! file and sends that signal, which arms the loop's unwind trap so nothing more of the
//! sourced command runs; then `process::end_command_with` ends the processes
//! `command_processes` attributes to this command: SIGSTOP, SIGTERM (SIGPIPE for a head stop)
//! and SIGCONT, SIGKILL after 500 ms, rescanning `/proc` until none is left. The output so far
//! is drained, the shell is let go on, and if it then reports within 1 s it is kept with its
//! state; if it burnt CPU in a builtin loop, is sh or zsh, or stays silent, it is frozen, its
//! tree ended and it is replaced (`sessionRestarted: true`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use agentsh_process::{
    CommandScope, TERM_GRACE, can_attribute, command_processes, cpu_ticks, end_command_with,
    fd_target, process_info, signal_dispositions, waits_for_a_child,
};
use rustix::process::{Pid, Signal};

use super::files::write_private;
use crate::bootstrap::{REPORT_FIFO, TRIGGER_FIFO, stop_signal};

/// A shell that is running (not waiting) with no process of its command alive may be busy in a
/// builtin: it is probed this far apart, at most [`BUSY_PROBES`] times, and judged stuck once
/// it used [`BUSY_TICKS`] clock ticks of CPU inside the command meanwhile.
const BUSY_PROBE: Duration = Duration::from_millis(20);
/// See [`BUSY_PROBE`].
const BUSY_PROBES: usize = 50;
/// See [`BUSY_PROBE`]: 20 ms of CPU at 100 Hz. A shell merely runnable on a loaded machine (on
/// its way back from a command that just ended) uses microseconds, not ticks.
const BUSY_TICKS: u64 = 2;
/// How long a `SIGSTOP`ped shell may take to show as stopped in `/proc` before it is looked at
/// anyway (it stops as soon as the kernel next schedules it; a process in uninterruptible
/// sleep stops when that ends).
const FREEZE_WAIT: Duration = Duration::from_millis(200);

/// Why a command was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopReason {
    Timeout,
    Abort,
    Head,
    /// A program that needs a terminal (`vim`) started: it would wait for keys until the
    /// timeout.
    NeedsTerminal,
    /// The command's processes passed a resource limit (`[limits]`).
    Limit,
}

/// What stopping a command decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    /// The command's processes are gone and the frozen shell was told to unwind: take the
    /// output so far, let the shell go on (`SIGCONT`) and expect its report.
    Resume,
    /// The shell cannot be kept: replace it.
    Replace,
    /// The command was already over when the stop came (its shell had left it, frozen to be
    /// sure): nothing was signalled, the shell goes on and reports the command's own status.
    /// A `head` limit reached as `ls` ends, or a timeout in the same instant as the command's
    /// end, must not cost the shell its state.
    Over,
}

/// How a command is stopped (see [`stop_command`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StopMethod {
    /// The shell unwinds the command and is kept (bash, where processes can be attributed).
    Unwind,
    /// The shell is frozen so nothing more of the command runs, and replaced.
    Freeze,
}

/// Sends `signal` to `pid`, best effort (the process may be gone already).
pub(super) fn send_signal(pid: u32, signal: Signal) {
    if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
        let _ = rustix::process::kill_process(pid, signal);
    }
}

fn is_running(pid: u32) -> bool {
    process_info(pid).is_some_and(|p| p.state == b'R')
}

/// Stops the command of `scope`. With [`StopMethod::Unwind`], the shell is frozen, asked to
/// unwind the command (stop file + its [`stop_signal`]) and kept once the command's processes are
/// gone — unless it is busy in a builtin with no process of the command alive (a builtin loop
/// cannot be kept safely), or its handling of the stop signal is not provably the loop's. With
/// [`StopMethod::Freeze`], the shell is frozen (SIGSTOP) so that nothing more of the command
/// runs, and replaced.
///
/// Unless `check_over` is false (the shell was found over once and did not report), a shell
/// that has already left its command ([`left_command`], looked at while it is frozen) is let go
/// untouched: [`Verdict::Over`].
pub(super) async fn stop_command(
    scope: CommandScope,
    method: StopMethod,
    stop_file: PathBuf,
    signal: Signal,
    check_over: bool,
) -> Verdict {
    if !can_attribute() {
        return Verdict::Replace;
    }
    let signal = signal.as_raw();
    let dir = stop_file.parent().unwrap_or(Path::new("/"));
    let over = || check_over && left_command(scope.shell, dir);
    if method == StopMethod::Unwind {
        // Running with no process of the command alive: either busy in a builtin, or on its
        // way back to the loop with the command over (runnable for long on a loaded machine).
        // Only CPU it burns inside the command tells the first.
        let stuck = || command_processes(&scope).is_empty() && is_running(scope.shell);
        if stuck() {
            let before = cpu_ticks(scope.shell).unwrap_or(0);
            for _ in 0..BUSY_PROBES {
                tokio::time::sleep(BUSY_PROBE).await;
                if over() || !stuck() {
                    break;
                }
                if cpu_ticks(scope.shell).unwrap_or(0) >= before + BUSY_TICKS {
                    return Verdict::Replace;
                }
            }
        }
    }
    // Frozen first: when the command's processes end, the shell must not go on to the rest of
    // the command before it has taken the stop (or been replaced).
    send_signal(scope.shell, Signal::STOP);
    wait_frozen(scope.shell).await;
    if over() {
        // Back in the loop (or on its way, descriptors undone): the command is over, and a
        // stop signal now would reach the loop itself.
        send_signal(scope.shell, Signal::CONT);
        return Verdict::Over;
    }
    let stop = stop_signal(&scope.tag);
    let unwind = method == StopMethod::Unwind
        && stop_signal_is_the_loops(scope.shell, stop)
        && write_private(&stop_file, scope.marker().as_bytes()).is_ok();
    if unwind {
        // Pending until the shell goes on; its trap then runs before its next command.
        send_raw_signal(scope.shell, stop);
    }
    end_command_with(&scope, signal, TERM_GRACE).await;
    if unwind {
        Verdict::Resume
    } else {
        Verdict::Replace
    }
}

/// Waits (at most [`FREEZE_WAIT`]) until `pid` shows as stopped (or is gone).
async fn wait_frozen(pid: u32) {
    let until = tokio::time::Instant::now() + FREEZE_WAIT;
    loop {
        match process_info(pid) {
            Some(info) if info.state != b'T' && info.state != b't' && !info.is_exited() => {}
            _ => return,
        }
        if tokio::time::Instant::now() >= until {
            return;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Whether the shell has left its command, as far as `/proc` can tell: it holds no fd 2 (the
/// loop never opens it; the command's `.` holds it while it runs), fd 1 is closed or the
/// report FIFO and fd 0 closed or the trigger FIFO (the loop's own, briefly), and it does not
/// wait for a child. A command that closed its own descriptors and waits for nothing looks the
/// same; such a look is followed by a wait for the report, and a real stop when none comes.
pub(super) fn left_command(shell: u32, dir: &Path) -> bool {
    let closed_or = |fd: u32, loops: &str| match fd_target(shell, fd) {
        Ok(None) => true,
        Ok(Some(target)) => target == dir.join(loops),
        Err(_) => false,
    };
    shell_lacks_fd(shell, 2)
        && closed_or(1, REPORT_FIFO)
        && closed_or(0, TRIGGER_FIFO)
        && !waits_for_a_child(shell)
}

/// Whether the shell has no descriptor `fd` open. Between commands the loop keeps 0, 1 and 2
/// closed (it opens 0 to read a trigger and 1 to write a report, never 2), and the command's
/// `.` sets all three: a shell without fd 2 has finished sourcing its command.
pub(super) fn shell_lacks_fd(shell: u32, fd: u32) -> bool {
    matches!(fd_target(shell, fd), Ok(None))
}

/// Whether the (frozen) shell still handles its stop signal `stop` with the loop's trap, as far
/// as the kernel can tell: the signal is caught and not ignored, and no other real-time signal
/// is caught (bash catches none of its own, so a command that trapped them all — and with them
/// the loop's — shows). Only a command that read this shell's signal from the loop and
/// re-trapped exactly it is not seen here; its shell then does not confirm the unwind and is
/// replaced after its report (what it ran meanwhile is the one case the timeout cannot stop).
fn stop_signal_is_the_loops(shell: u32, stop: i32) -> bool {
    /// Signals 34–64, the real-time range with glibc.
    const REAL_TIME: u64 = !0u64 << 33;
    let Some(dispositions) = signal_dispositions(shell) else {
        return false;
    };
    let ours = 1u64 << (stop - 1);
    dispositions.catches(stop) && dispositions.caught & REAL_TIME & !ours == 0
}

/// Sends the signal numbered `signal` to `pid`, best effort.
fn send_raw_signal(pid: u32, signal: i32) {
    // SAFETY: `signal` is a real-time signal number agentsh itself does not use; sending it to
    // another process has no effect on this one.
    send_signal(pid, unsafe { Signal::from_raw_unchecked(signal) });
}
