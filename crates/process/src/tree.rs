//! Finding and ending the processes of one command inside a supervised shell (Linux: `/proc`).
//!
//! Every process a command starts is a descendant of the shell's [`Supervisor`]: the
//! supervisor is a child subreaper, so even processes that called `setsid`, double-forked or
//! cleared their environment stay below it. Which of those descendants belong to the *current*
//! command is decided per process ([`command_processes`]: the parent chain
//! decides first; a marker can move a process into the current command, never out of it; start
//! time decides only for orphans):
//!
//! 1. the supervisor and the shell never do;
//! 2. a child of the shell (an `&` child, a subshell, a program the command runs) or of the
//!    supervisor (an orphan, reparented after `setsid` and a double fork) is the current
//!    command's when it started at or after the command's [`StartMark`], else an earlier
//!    command's (a background job, a dev server: kept);
//! 3. any other process has the owner of its parent — whatever marker it carries or lacks
//!    (`env -i`), so a worker an earlier server forks during this command stays the server's,
//!    and `AGENTSH_CMD=<older marker> sleep 9 &` is still this command's;
//! 4. a process that 2 or 3 gives to an earlier command is the current command's after all when
//!    the environment it was started with carries the current command's marker ([`MARKER_VAR`]
//!    = `<shell tag>.<seq>`), and so are its descendants (rule 3).
//!
//! One scan reads every `/proc/<pid>/stat` once, sorts the table by pid and resolves each parent
//! chain once (memoized), so a scan costs one pass plus a binary search per link. Environments
//! are read only for processes of earlier commands (rule 4), streamed through a stack buffer. A
//! parent link whose parent started after its child is stale — the parent died and its pid was
//! reused while the table was read — so that subtree is nobody's in this scan; the tree-kill
//! loop rescans anyway, and by then the child has been reparented to its subreaper.
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
use crate::syscall::{Call, Syscall, parse_syscall};

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

/// The last pid allocated in the caller's pid namespace. The file stays open: one `pread` per
/// command instead of open, read and close (the value read is always the reader's namespace's).
fn last_pid() -> Option<u32> {
    static FILE: std::sync::OnceLock<Option<std::os::fd::OwnedFd>> = std::sync::OnceLock::new();
    let file = FILE.get_or_init(|| {
        rustix::fs::open(
            "/proc/sys/kernel/ns_last_pid",
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .ok()
    });
    let mut buf = [0u8; 16];
    let text = match file {
        Some(fd) => {
            let n = rustix::io::retry_on_intr(|| rustix::io::pread(fd, &mut buf, 0)).ok()?;
            buf.get(..n)?
        }
        None => procfs::read_file(c"/proc/sys/kernel/ns_last_pid", &mut buf)?,
    };
    std::str::from_utf8(text).ok()?.trim().parse().ok()
}

/// Reads `/proc/<pid>/stat`.
pub fn process_info(pid: u32) -> Option<ProcessInfo> {
    let mut buf = [0u8; procfs::STAT_BUFFER];
    let stat = procfs::read_stat(u64::from(pid), &mut buf)?;
    ProcessInfo::from_stat(u64::from(pid), &stat)
}

/// The CPU time `pid` has used (user + system, in clock ticks), from `/proc/<pid>/stat`.
pub fn cpu_ticks(pid: u32) -> Option<u64> {
    let mut buf = [0u8; procfs::STAT_BUFFER];
    procfs::read_stat(u64::from(pid), &mut buf)?.cpu_ticks()
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

/// What descriptor `fd` of `pid` refers to (`/proc/<pid>/fd/<fd>`): `Ok(None)` when the process
/// has no such descriptor open.
pub fn fd_target(pid: u32, fd: u32) -> io::Result<Option<std::path::PathBuf>> {
    match std::fs::read_link(format!("/proc/{pid}/fd/{fd}")) {
        Ok(target) => Ok(Some(target)),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err),
    }
}

/// Whether `pid` is blocked in `wait4` (a shell running a foreground program), from
/// `/proc/<pid>/syscall`; false where that cannot be told.
pub fn waits_for_a_child(pid: u32) -> bool {
    let mut path = [0u8; 48];
    let mut buf = [0u8; procfs::STAT_BUFFER];
    procfs::proc_path(u64::from(pid), b"/syscall", &mut path)
        .and_then(|path| procfs::read_file(path, &mut buf))
        .and_then(parse_syscall)
        .is_some_and(
            |call| matches!(call, Syscall::Blocked { nr, .. } if Call::of(nr) == Call::Wait4),
        )
}

#[cfg(test)]
fn parse_stat(pid: u32, stat: &[u8]) -> Option<ProcessInfo> {
    ProcessInfo::from_stat(u64::from(pid), &Stat::parse(stat)?)
}

/// Every process in `/proc`, in one pass (each `stat` is read as its pid is listed).
pub(crate) fn process_table() -> io::Result<Vec<ProcessInfo>> {
    let mut table = Vec::new();
    let mut buf = [0u8; procfs::STAT_BUFFER];
    let listed = procfs::for_each_pid(|pid| {
        if let Some(info) =
            procfs::read_stat(pid, &mut buf).and_then(|stat| ProcessInfo::from_stat(pid, &stat))
        {
            table.push(info);
        }
    });
    if !listed {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            "/proc cannot be read",
        ));
    }
    Ok(table)
}

/// The children of single-threaded process `pid` (`/proc/<pid>/task/<pid>/children`: one small
/// read, no pass over `/proc`); `None` when the kernel does not tell.
pub fn children(pid: u32) -> Option<Vec<u32>> {
    // One open and read: an empty file (no children) is told from a missing one by the open.
    let text = std::fs::read(format!("/proc/{pid}/task/{pid}/children")).ok()?;
    Some(
        text.split(u8::is_ascii_whitespace)
            .filter_map(procfs::parse_decimal)
            .filter_map(|pid| u32::try_from(pid).ok())
            .collect(),
    )
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

/// Who a process belongs to, as far as one scan can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    /// Not resolved yet.
    Unknown,
    /// On the parent chain being resolved (a cycle in a torn read ends there).
    Visiting,
    /// The supervisor or the shell: never a target; its children are decided by start time.
    Anchor,
    /// The current command.
    Current,
    /// An earlier command (or the shell's own start-up).
    Earlier,
    /// Not below the supervisor, or below a stale parent link in this scan.
    Outside,
}

/// The live processes of `table` that belong to the command `scope` (the rules are in the
/// module docs). `carries_marker(pid)` says whether a process's environment carries the
/// current command's marker; it is asked only about processes of earlier commands.
fn classify(
    scope: &CommandScope,
    mut table: Vec<ProcessInfo>,
    carries_marker: &mut dyn FnMut(u32) -> bool,
) -> Vec<ProcessInfo> {
    if !table.is_sorted_by_key(|p| p.pid) {
        table.sort_unstable_by_key(|p| p.pid);
    }
    let index = |pid: u32| table.binary_search_by_key(&pid, |p| p.pid).ok();
    let mut owners = vec![Owner::Unknown; table.len()];
    for anchor in [scope.supervisor, scope.shell] {
        if let Some(at) = index(anchor) {
            owners[at] = Owner::Anchor;
        }
    }
    let mut chain: Vec<usize> = Vec::new();
    for first in 0..table.len() {
        // Up the parent chain to the first process already resolved.
        let mut at = first;
        let mut above = loop {
            match owners[at] {
                Owner::Unknown => {}
                Owner::Visiting => break Owner::Outside,
                resolved => break resolved,
            }
            owners[at] = Owner::Visiting;
            chain.push(at);
            let child = table[at];
            match index(child.ppid) {
                // A parent always starts before its child; a later one holds a reused pid.
                Some(parent) if table[parent].start_ticks <= child.start_ticks => at = parent,
                _ => break Owner::Outside,
            }
        };
        // Down again, each process from its parent.
        while let Some(at) = chain.pop() {
            let process = &table[at];
            let mut owner = match above {
                Owner::Anchor if scope.started.precedes(process) => Owner::Current,
                Owner::Anchor => Owner::Earlier,
                inherited => inherited,
            };
            if owner == Owner::Earlier && carries_marker(process.pid) {
                owner = Owner::Current;
            }
            owners[at] = owner;
            above = owner;
        }
    }
    table
        .into_iter()
        .zip(owners)
        .filter(|(process, owner)| *owner == Owner::Current && !process.is_exited())
        .map(|(process, _)| process)
        .collect()
}

/// The live processes of the command `scope` (see the module docs for the rules), from one
/// pass over `/proc`. Empty when `/proc` cannot be read.
pub fn command_processes(scope: &CommandScope) -> Vec<ProcessInfo> {
    let Ok(table) = process_table() else {
        return Vec::new();
    };
    let marker = scope.marker();
    classify(scope, table, &mut |pid| {
        procfs::environ_value_is(u64::from(pid), MARKER_VAR.as_bytes(), marker.as_bytes())
    })
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
    fn children_are_read_from_the_task_file() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("spawn sleep");
        let me = std::process::id();
        // The test harness runs tests on threads: this thread's children are in its own task
        // file, so the child is looked for where it is, its parent's (this process's) list.
        assert_eq!(children(child.id()), Some(Vec::new()));
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(children(u32::MAX), None);
        assert!(children(me).is_some());
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
    fn last_pid_read_again_from_the_open_file_sees_new_processes() {
        let before = last_pid().expect("ns_last_pid is readable");
        let child = std::process::Command::new("true")
            .spawn()
            .expect("spawn true");
        let pid = child.id();
        let after = last_pid().expect("ns_last_pid is readable");
        let _ = child.wait_with_output();
        // Pids grow until they wrap; a wrap in between is the only way this can be false.
        assert!(
            after >= pid && (pid > before || before > after),
            "before {before}, child {pid}, after {after}"
        );
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

    /// Classifies `table` with the markers `(pid, marker)`; returns the sorted pids found and
    /// the pids whose marker was asked for.
    fn run(table: Vec<ProcessInfo>, markers: &[(u32, &str)]) -> (Vec<u32>, Vec<u32>) {
        let markers: HashMap<u32, &str> = markers.iter().copied().collect();
        let current = scope().marker();
        let mut asked = Vec::new();
        let found = classify(&scope(), table, &mut |pid| {
            asked.push(pid);
            markers.get(&pid) == Some(&current.as_str())
        });
        asked.sort_unstable();
        (pids(&found), asked)
    }

    #[test]
    fn the_parent_chain_decides_before_markers() {
        let table = vec![
            p(10, 1, 1),     // supervisor
            p(11, 10, 2),    // shell
            p(20, 11, 1005), // sleep of the current command (marker 7.3)
            p(31, 20, 1007), // foreign marker under the current command: current
            p(32, 11, 1008), // `AGENTSH_CMD=<7.2> sleep &` of the current command: current
            p(21, 11, 900),  // earlier background subshell (no marker, older)
            p(22, 21, 950),  // its sleep (marker 7.2)
            p(26, 22, 1006), // forked by the old job during the command (7.2): stays old
            p(36, 21, 1011), // forked by the old job with `env -i` (no marker): stays old
            p(34, 21, 1010), // forked by the old job, carrying the current marker: moved in
            p(35, 34, 1012), // its child (no marker): current through its parent
            p(30, 99, 1005), // not under the supervisor at all, even with the current marker
            p(99, 1, 3),
        ];
        let markers = [
            (20, "7.3"),
            (22, "7.2"),
            (26, "7.2"),
            (30, "7.3"),
            (31, "99.1"),
            (32, "7.2"),
            (34, "7.3"),
        ];
        let (found, asked) = run(table, &markers);
        assert_eq!(found, vec![20, 31, 32, 34, 35]);
        // Markers are read only where they can move a process in.
        assert_eq!(asked, vec![21, 22, 26, 34, 36]);
    }

    #[test]
    fn start_time_decides_for_children_of_the_shell_and_orphans() {
        let table = vec![
            p(10, 1, 1),
            p(11, 10, 2),
            p(23, 10, 1003), // orphan: env -i setsid sh (no marker, started during the command)
            p(24, 23, 1004), // its child (no marker): inherits from 23
            p(25, 10, 990),  // old orphan without marker
            p(33, 10, 1009), // orphan started during the command with an old marker: current
            p(37, 10, 995),  // old orphan carrying the current marker: moved in
            p(527, 11, 1000), // bash fork in the command's own tick, pid above last_pid
            p(28, 11, 1000), // bash fork in that tick with a pid below last_pid: earlier
        ];
        let (found, _) = run(table, &[(33, "7.2"), (37, "7.3")]);
        assert_eq!(found, vec![23, 24, 33, 37, 527]);
    }

    #[test]
    fn stale_parent_links_and_cycles_are_nobodys() {
        let table = vec![
            p(10, 1, 1),
            p(11, 10, 2),
            p(41, 11, 1020), // current, but started after 40, so not 40's parent
            p(40, 41, 1012), // its parent pid was reused while the table was read
            p(42, 40, 1013),
            p(50, 51, 1000), // a torn read that looks like a cycle
            p(51, 50, 1000),
        ];
        let (found, _) = run(table, &[(40, "7.3"), (50, "7.3")]);
        assert_eq!(found, vec![41]);
    }

    #[test]
    fn exited_processes_are_not_targets() {
        let mut zombie = p(20, 11, 1005);
        zombie.state = b'Z';
        let table = vec![p(10, 1, 1), p(11, 10, 2), zombie];
        assert!(run(table, &[]).0.is_empty());
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

    #[test]
    fn descriptors_and_waits_come_from_proc() {
        let me = std::process::id();
        assert!(fd_target(me, 0).expect("readable").is_some());
        assert_eq!(fd_target(me, 1_000_000).expect("readable"), None);
        // `; :` keeps sh from exec'ing sleep: it forks and waits (until it is killed).
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 300; :"])
            .spawn()
            .expect("sh runs");
        let sh = child.id();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let waiting = loop {
            if waits_for_a_child(sh) {
                break true;
            }
            if std::time::Instant::now() >= deadline {
                break false;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        // The sleep first (it would outlive sh), then sh.
        for process in descendants(sh) {
            if let Some(pid) = i32::try_from(process.pid)
                .ok()
                .and_then(rustix::process::Pid::from_raw)
            {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        assert!(waiting, "sh running sleep never showed wait4");
        assert!(!waits_for_a_child(me));
    }
}
