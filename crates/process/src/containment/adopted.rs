//! The subreaper fallback: ending and reaping what agentsh adopted.
//!
//! Without cgroups agentsh is a child subreaper, so when a supervisor dies, its children — the
//! shell and every orphan the supervisor had adopted, with whatever runs below them — are
//! reparented to agentsh. They are told apart from agentsh's own children by their session:
//! every supervisor calls `setsid`, and no descendant of it can ever join agentsh's session
//! (a process can only leave its session for a new one of its own), while a child agentsh
//! starts itself stays in agentsh's session unless it calls `setsid`. agentsh's own children
//! that do are its supervisors, which the caller names.

use std::time::Duration;

use rustix::process::{Pid, Signal, WaitOptions};

use crate::kill::signal;
use crate::procfs;
use crate::tree::{ProcessInfo, descendants_in, process_table};

/// Upper bound of rounds (each a `/proc` scan, then a 1 ms pause).
const MAX_ROUNDS: u32 = 2000;

/// Ends every process agentsh adopted and everything below them — SIGSTOP, then SIGKILL —
/// and reaps the adopted ones, round after round until none is left. `supervisors` are the
/// supervisors agentsh started (live or not yet reaped): never targets.
pub(crate) fn end_adopted(supervisors: &[u32]) {
    let me = std::process::id();
    let Some(own_session) = session_of(me) else {
        return;
    };
    for round in 0..MAX_ROUNDS {
        let Ok(table) = process_table() else {
            return;
        };
        let adopted: Vec<ProcessInfo> = table
            .iter()
            .filter(|p| {
                p.ppid == me
                    && !supervisors.contains(&p.pid)
                    && session_of(p.pid).is_some_and(|session| session != own_session)
            })
            .copied()
            .collect();
        if adopted.is_empty() {
            return;
        }
        let roots: Vec<u32> = adopted.iter().map(|p| p.pid).collect();
        let live: Vec<ProcessInfo> = adopted
            .iter()
            .copied()
            .chain(descendants_in(&table, &roots))
            .filter(|p| !p.is_exited())
            .collect();
        for process in &live {
            signal(process, Some(Signal::STOP));
        }
        for process in &live {
            signal(process, Some(Signal::KILL));
        }
        for process in &adopted {
            if let Some(pid) = i32::try_from(process.pid).ok().and_then(Pid::from_raw) {
                // Only this child's status: no other waiter of agentsh loses one.
                let _ = rustix::process::waitpid(Some(pid), WaitOptions::NOHANG);
            }
        }
        if round > 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

fn session_of(pid: u32) -> Option<u64> {
    let mut buf = [0u8; procfs::STAT_BUFFER];
    procfs::read_stat(u64::from(pid), &mut buf)?.session()
}
