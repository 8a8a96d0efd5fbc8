//! Stopping a command (timeout, abort, head satisfied): why ([`StopReason`]), how
//! ([`StopMethod`]), and what [`stop_command`] decided ([`Verdict`]).

use std::path::PathBuf;
use std::time::Duration;

use agentsh_process::{
    CommandScope, TERM_GRACE, can_attribute, command_processes, end_command_with, process_info,
    signal_dispositions,
};
use rustix::process::{Pid, Signal};

use super::files::write_private;
use crate::bootstrap::stop_signal;

/// A shell that is running (not waiting) with no process of its command alive is busy in a
/// builtin; it is probed twice this far apart before it is judged stuck.
const BUSY_PROBE: Duration = Duration::from_millis(20);

/// Why a command was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopReason {
    Timeout,
    Abort,
    Head,
}

/// What stopping a command decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    /// The command's processes are gone and the frozen shell was told to unwind: take the
    /// output so far, let the shell go on (`SIGCONT`) and expect its report.
    Resume,
    /// The shell cannot be kept: replace it.
    Replace,
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
pub(super) async fn stop_command(
    scope: CommandScope,
    method: StopMethod,
    stop_file: PathBuf,
    signal: Signal,
) -> Verdict {
    if !can_attribute() {
        return Verdict::Replace;
    }
    let signal = signal.as_raw();
    if method == StopMethod::Unwind {
        let stuck = || command_processes(&scope).is_empty() && is_running(scope.shell);
        if stuck() {
            tokio::time::sleep(BUSY_PROBE).await;
            if stuck() {
                return Verdict::Replace;
            }
        }
    }
    // Frozen first: when the command's processes end, the shell must not go on to the rest of
    // the command before it has taken the stop (or been replaced).
    send_signal(scope.shell, Signal::STOP);
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
