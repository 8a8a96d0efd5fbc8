//! Finding and ending the processes of one command inside a supervised shell (Linux: `/proc`).
//!
//! Every process a command starts is a descendant of the shell's [`Supervisor`]: the
//! supervisor is a child subreaper, so even processes that called `setsid`, double-forked or
//! cleared their environment stay below it. Which of those descendants belong to the *current*
//! command is decided per process ([`command_processes`]):
//!
//! 1. the shell itself and the supervisor never do;
//! 2. a process whose environment carries this shell's command marker ([`MARKER_VAR`] =
//!    `<shell tag>.<seq>`) belongs to command `seq`: the current one, or an earlier one (a
//!    background job, kept);
//! 3. a process without (or with a foreign) marker — `env -i`, or a fork of the shell that
//!    never exec'd — inherits the owner of its parent when the parent was classified;
//! 4. otherwise (its parent is the shell, or it was orphaned and reparented to the
//!    supervisor) its start time decides: started at or after the command's [`StartMark`] →
//!    the current command's.
//!
//! [`end_command`](crate::end_command) then ends that set with the crate's one tree-kill loop:
//! SIGSTOP (freezes fork loops), SIGTERM + SIGCONT, up to [`TERM_GRACE`](crate::TERM_GRACE)
//! for them to exit, then SIGKILL for what is left, re-scanning until nothing of the command is
//! alive.
//!
//! [`Supervisor`]: crate::Supervisor

use std::collections::{HashMap, HashSet};
use std::io;

use crate::procfs::{self, Stat};

/// The environment variable that carries the command marker. The shell exports it before each
/// command; every program a command executes inherits it.
pub const MARKER_VAR: &str = "AGENTSH_CMD";

/// One process, as read from `/proc/<pid>/stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessInfo {
    /// Process id.
    pub pid: u32,
    /// Parent process id.
    pub ppid: u32,
    /// State letter (`R`, `S`, `D`, `T`, `Z`, …).
    pub state: u8,
    /// Start time in clock ticks since boot.
    pub start_ticks: u64,
}

impl ProcessInfo {
    /// Whether the process has exited (a zombie waiting to be reaped, or dead).
    pub fn is_exited(&self) -> bool {
        procfs::is_exited_state(self.state)
    }

    /// The fields of a parsed `/proc/<pid>/stat` line.
    pub(crate) fn from_stat(pid: u64, stat: &Stat<'_>) -> Option<Self> {
        Some(Self {
            pid: u32::try_from(pid).ok()?,
            state: stat.state()?,
            ppid: u32::try_from(stat.ppid()?).ok()?,
            start_ticks: stat.start_ticks()?,
        })
    }
}

/// A point in time on the clock of process start times, taken just before a command starts:
/// processes that started at or after it can belong to the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartMark {
    ticks: u64,
    last_pid: Option<u32>,
}

impl StartMark {
    /// Now. Call it before the command can start any process.
    pub fn now() -> Self {
        Self {
            ticks: boot_ticks(),
            last_pid: last_pid(),
        }
    }

    /// Whether `process` started at or after this mark. Start times have clock-tick resolution
    /// (10 ms): within the mark's own tick, a pid above the last pid allocated before the mark
    /// decides (pids are allocated in increasing order until they wrap).
    pub fn precedes(&self, process: &ProcessInfo) -> bool {
        match process.start_ticks.cmp(&self.ticks) {
            std::cmp::Ordering::Greater => true,
            std::cmp::Ordering::Less => false,
            std::cmp::Ordering::Equal => self.last_pid.is_none_or(|last| process.pid > last),
        }
    }
}

/// Identifies one command of one shell for [`command_processes`] and
/// [`end_command`](crate::end_command).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandScope {
    /// The shell's supervisor (root of the search; never a target).
    pub supervisor: u32,
    /// The shell (never a target).
    pub shell: u32,
    /// The shell's marker tag: marker values of this shell are `<tag>.<seq>`.
    pub tag: String,
    /// The command's sequence number.
    pub seq: u64,
    /// Taken just before the command started.
    pub started: StartMark,
}

impl CommandScope {
    /// The marker value of this command: `<tag>.<seq>`.
    pub fn marker(&self) -> String {
        format!("{}.{}", self.tag, self.seq)
    }
}

/// Whether this platform can attribute processes to commands (Linux with `/proc`). Where it
/// cannot, a stopped command's shell has to be replaced as a whole.
pub fn can_attribute() -> bool {
    // Asked before every command; `/proc` does not come and go while agentsh runs.
    static CAN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *CAN.get_or_init(|| {
        cfg!(target_os = "linux") && std::path::Path::new("/proc/self/stat").exists()
    })
}

/// Clock ticks since boot (`CLOCK_BOOTTIME`), the clock of `/proc/<pid>/stat` start times.
fn boot_ticks() -> u64 {
    #[cfg(target_os = "linux")]
    {
        let now = rustix::time::clock_gettime(rustix::time::ClockId::Boottime);
        let hz = u128::from(rustix::param::clock_ticks_per_second().max(1));
        let nanos = u128::try_from(now.tv_sec).unwrap_or(0) * 1_000_000_000
            + u128::try_from(now.tv_nsec).unwrap_or(0);
        u64::try_from(nanos * hz / 1_000_000_000).unwrap_or(u64::MAX)
    }
    #[cfg(not(target_os = "linux"))]
    {
        0
    }
}

fn last_pid() -> Option<u32> {
    let mut buf = [0u8; 16];
    let text = procfs::read_file(c"/proc/sys/kernel/ns_last_pid", &mut buf)?;
    std::str::from_utf8(text).ok()?.trim().parse().ok()
}

/// Reads `/proc/<pid>/stat`.
pub fn process_info(pid: u32) -> Option<ProcessInfo> {
    let mut buf = [0u8; procfs::STAT_BUFFER];
    let stat = procfs::read_stat(u64::from(pid), &mut buf)?;
    ProcessInfo::from_stat(u64::from(pid), &stat)
}

/// What a process does with each signal, from `/proc/<pid>/status`: bit `n - 1` stands for
/// signal `n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignalDispositions {
    /// Signals with a handler (`SigCgt`).
    pub caught: u64,
    /// Ignored signals (`SigIgn`).
    pub ignored: u64,
}

impl SignalDispositions {
    /// Whether `signal` (1–64) has a handler and is not ignored.
    pub fn catches(&self, signal: i32) -> bool {
        let bit = Self::bit(signal);
        self.caught & bit != 0 && self.ignored & bit == 0
    }

    fn bit(signal: i32) -> u64 {
        u32::try_from(signal - 1)
            .ok()
            .and_then(|shift| 1u64.checked_shl(shift))
            .unwrap_or(0)
    }

    /// Parses the `SigIgn` and `SigCgt` lines of a `status` file.
    fn parse(status: &[u8]) -> Option<Self> {
        let mask = |name: &[u8]| {
            status
                .split(|&b| b == b'\n')
                .find_map(|line| line.strip_prefix(name))
                .and_then(|hex| std::str::from_utf8(hex).ok())
                .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        };
        Some(Self {
            caught: mask(b"SigCgt:")?,
            ignored: mask(b"SigIgn:")?,
        })
    }
}

/// The signal dispositions of `pid`, or `None` when `/proc` cannot tell.
pub fn signal_dispositions(pid: u32) -> Option<SignalDispositions> {
    let path = std::ffi::CString::new(format!("/proc/{pid}/status")).ok()?;
    let mut buf = [0u8; 4096];
    SignalDispositions::parse(procfs::read_file(&path, &mut buf)?)
}

#[cfg(test)]
fn parse_stat(pid: u32, stat: &[u8]) -> Option<ProcessInfo> {
    ProcessInfo::from_stat(u64::from(pid), &Stat::parse(stat)?)
}

/// Every process in `/proc`.
pub(crate) fn process_table() -> io::Result<Vec<ProcessInfo>> {
    let mut pids = Vec::new();
    if !procfs::for_each_pid(|pid| pids.push(pid)) {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            "/proc cannot be read",
        ));
    }
    Ok(pids
        .into_iter()
        .filter_map(|pid| u32::try_from(pid).ok().and_then(process_info))
        .collect())
}

/// The descendants of `root` (not `root` itself), parents before their children, exited ones
/// (zombies) included. Empty when `/proc` cannot be read.
pub fn descendants(root: u32) -> Vec<ProcessInfo> {
    let Ok(table) = process_table() else {
        return Vec::new();
    };
    descendants_in(&table, &[root])
}

/// The descendants in `table` of any of `roots` (not the roots themselves), parents before
/// their children.
pub(crate) fn descendants_in(table: &[ProcessInfo], roots: &[u32]) -> Vec<ProcessInfo> {
    let mut children: HashMap<u32, Vec<&ProcessInfo>> = HashMap::new();
    for info in table {
        children.entry(info.ppid).or_default().push(info);
    }
    let mut out = Vec::new();
    let mut queue: std::collections::VecDeque<u32> = roots.iter().copied().collect();
    let mut seen: HashSet<u32> = roots.iter().copied().collect();
    while let Some(pid) = queue.pop_front() {
        for child in children.get(&pid).into_iter().flatten() {
            if seen.insert(child.pid) {
                out.push(**child);
                queue.push_back(child.pid);
            }
        }
    }
    out
}

/// The value of [`MARKER_VAR`] in the environment a process was started with.
fn read_marker(pid: u32) -> Option<Vec<u8>> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{MARKER_VAR}=");
    environ
        .split(|&b| b == 0)
        .find_map(|entry| entry.strip_prefix(prefix.as_bytes()))
        .map(<[u8]>::to_vec)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    Current,
    Other,
}

fn classify(
    scope: &CommandScope,
    table: &[ProcessInfo],
    marker_of: &dyn Fn(u32) -> Option<Vec<u8>>,
) -> Vec<ProcessInfo> {
    let tag = format!("{}.", scope.tag);
    let mut owners: HashMap<u32, Owner> = HashMap::new();
    let mut mine = Vec::new();
    for process in descendants_in(table, &[scope.supervisor]) {
        if process.pid == scope.shell {
            owners.insert(process.pid, Owner::Other);
            continue;
        }
        let from_marker = marker_of(process.pid).and_then(|value| {
            let seq = value.strip_prefix(tag.as_bytes())?;
            let seq = std::str::from_utf8(seq).ok()?.parse::<u64>().ok()?;
            Some(if seq == scope.seq {
                Owner::Current
            } else {
                Owner::Other
            })
        });
        let owner = from_marker.unwrap_or_else(|| {
            let parent_owner = (process.ppid != scope.shell && process.ppid != scope.supervisor)
                .then(|| owners.get(&process.ppid).copied())
                .flatten();
            parent_owner.unwrap_or(if scope.started.precedes(&process) {
                Owner::Current
            } else {
                Owner::Other
            })
        });
        owners.insert(process.pid, owner);
        if owner == Owner::Current && !process.is_exited() {
            mine.push(process);
        }
    }
    mine
}

/// The live processes of the command `scope` (see the module docs for the rules).
pub fn command_processes(scope: &CommandScope) -> Vec<ProcessInfo> {
    let Ok(table) = process_table() else {
        return Vec::new();
    };
    classify(scope, &table, &read_marker)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pid: u32, ppid: u32, start_ticks: u64) -> ProcessInfo {
        ProcessInfo {
            pid,
            ppid,
            state: b'S',
            start_ticks,
        }
    }

    fn scope() -> CommandScope {
        CommandScope {
            supervisor: 10,
            shell: 11,
            tag: "7".into(),
            seq: 3,
            started: StartMark {
                ticks: 1000,
                last_pid: Some(500),
            },
        }
    }

    fn pids(found: &[ProcessInfo]) -> Vec<u32> {
        let mut pids: Vec<u32> = found.iter().map(|p| p.pid).collect();
        pids.sort_unstable();
        pids
    }

    #[test]
    fn stat_fields_are_found_after_the_command_name() {
        let stat = b"1234 (a (weird) name) S 1 1234 1234 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 98765 1000 10";
        let info = parse_stat(1234, stat).expect("parses");
        assert_eq!(info.state, b'S');
        assert_eq!(info.ppid, 1);
        assert_eq!(info.start_ticks, 98765);
    }

    #[test]
    fn start_mark_uses_pids_within_its_own_tick() {
        let mark = StartMark {
            ticks: 1000,
            last_pid: Some(500),
        };
        assert!(mark.precedes(&p(400, 1, 1001)));
        assert!(!mark.precedes(&p(600, 1, 999)));
        assert!(mark.precedes(&p(501, 1, 1000)));
        assert!(!mark.precedes(&p(500, 1, 1000)));
    }

    #[test]
    fn attribution_follows_markers_parents_and_start_times() {
        let table = vec![
            p(10, 1, 1),      // supervisor
            p(11, 10, 2),     // shell
            p(20, 11, 1005),  // sleep of the current command (marker 7.3)
            p(21, 11, 900),   // earlier background subshell (no marker, older)
            p(22, 21, 950),   // its sleep (marker 7.2)
            p(23, 10, 1003),  // orphan: env -i setsid sh (no marker, started during the command)
            p(24, 23, 1004),  // its child (no marker): inherits from 23
            p(25, 10, 990),   // old orphan without marker
            p(26, 22, 1006),  // child of an old job, started during the command: stays old
            p(527, 11, 1000), // bash fork in the command's own tick, pid above last_pid
            p(28, 11, 1000),  // bash fork in that tick with a pid below last_pid: earlier
            p(30, 99, 1005),  // not under the supervisor at all
            p(31, 20, 1007),  // foreign marker under the current command: inherits current
        ];
        let markers: HashMap<u32, &[u8]> = HashMap::from([
            (20, b"7.3".as_slice()),
            (22, b"7.2".as_slice()),
            (26, b"7.2".as_slice()),
            (30, b"7.3".as_slice()),
            (31, b"99.1".as_slice()),
        ]);
        let marker_of = |pid: u32| markers.get(&pid).map(|m| m.to_vec());
        let found = classify(&scope(), &table, &marker_of);
        assert_eq!(pids(&found), vec![20, 23, 24, 31, 527]);
    }

    #[test]
    fn exited_processes_are_not_targets() {
        let mut zombie = p(20, 11, 1005);
        zombie.state = b'Z';
        let table = vec![p(10, 1, 1), p(11, 10, 2), zombie];
        let found = classify(&scope(), &table, &|_| None);
        assert!(found.is_empty());
    }

    #[test]
    fn signal_masks_come_from_the_status_file() {
        let status = b"Name:\tbash\nSigBlk:\t0000000000000000\nSigIgn:\t0000000000000004\nSigCgt:\t0000008000010202\n";
        let dispositions = SignalDispositions::parse(status).expect("parses");
        assert!(dispositions.catches(2) && dispositions.catches(10) && dispositions.catches(40));
        assert!(!dispositions.catches(3) && !dispositions.catches(15));
        assert!(!dispositions.catches(0) && !dispositions.catches(65));
        let own = signal_dispositions(std::process::id()).expect("own status");
        assert_eq!(own.ignored & own.caught, 0, "{own:?}");
    }
}
