//! What process trees use: CPU time and resident memory, summed over each tree, from one
//! pass over `/proc`.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::procfs;
use crate::tree::{CommandScope, command_processes};

/// What one process tree uses now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TreeUsage {
    /// CPU time in clock ticks ([`ticks_per_second`]) of its processes (user and system),
    /// with that of the children they waited for: it grows as the tree computes.
    pub cpu_ticks: u64,
    /// Resident memory of its processes, in bytes.
    pub rss_bytes: u64,
    /// How many processes it has.
    pub processes: usize,
}

/// Clock ticks per second of `/proc`'s CPU times (`sysconf(_SC_CLK_TCK)`, usually 100).
pub fn ticks_per_second() -> u64 {
    static TICKS: OnceLock<u64> = OnceLock::new();
    *TICKS.get_or_init(|| {
        // SAFETY: sysconf has no memory effects.
        let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        u64::try_from(ticks).ok().filter(|&t| t > 0).unwrap_or(100)
    })
}

fn page_size() -> u64 {
    static PAGE: OnceLock<u64> = OnceLock::new();
    *PAGE.get_or_init(|| {
        // SAFETY: sysconf has no memory effects.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        u64::try_from(page).ok().filter(|&p| p > 0).unwrap_or(4096)
    })
}

/// What each tree rooted at one of `roots` uses (the root and all its descendants), in the
/// order of `roots`; `None` for a root that is gone. One `stat` read per process on the
/// system, whatever the number of roots; an empty `roots` reads nothing.
pub fn tree_usages(roots: &[u32]) -> Vec<Option<TreeUsage>> {
    if roots.is_empty() {
        return Vec::new();
    }
    // pid → (parent, cpu ticks, rss pages)
    let mut table: HashMap<u64, (u64, u64, u64)> = HashMap::new();
    let mut buf = [0u8; procfs::STAT_BUFFER];
    procfs::for_each_pid(|pid| {
        if let Some(stat) = procfs::read_stat(pid, &mut buf)
            && let (Some(ppid), Some(cpu), Some(rss)) =
                (stat.ppid(), stat.cpu_ticks(), stat.rss_pages())
        {
            table.insert(pid, (ppid, cpu, rss));
        }
    });
    let mut children: HashMap<u64, Vec<u64>> = HashMap::new();
    for (&pid, &(ppid, _, _)) in &table {
        children.entry(ppid).or_default().push(pid);
    }
    let page = page_size();
    roots
        .iter()
        .map(|&root| {
            let root = u64::from(root);
            table.get(&root)?;
            let mut usage = TreeUsage::default();
            let mut stack = vec![root];
            while let Some(pid) = stack.pop() {
                let Some(&(_, cpu, rss)) = table.get(&pid) else {
                    continue;
                };
                usage.cpu_ticks = usage.cpu_ticks.saturating_add(cpu);
                usage.rss_bytes = usage.rss_bytes.saturating_add(rss.saturating_mul(page));
                usage.processes += 1;
                if let Some(kids) = children.get(&pid) {
                    stack.extend(kids.iter().copied().filter(|&kid| kid != pid));
                }
            }
            Some(usage)
        })
        .collect()
}

/// What one command's processes use now, its shell aside: what a resource limit is checked
/// against where no cgroup holds the tree.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CommandUsage {
    /// Memory only these processes hold (`RssAnon` + `RssShmem` of each: pages of files they
    /// read are not theirs alone and the kernel can drop them), in bytes.
    pub memory_bytes: u64,
    /// How many processes the command has.
    pub processes: usize,
    /// CPU time in clock ticks of these processes (user and system), with that of the
    /// children they waited for.
    pub cpu_ticks: u64,
}

/// What the processes of command `scope` use now (one pass over `/proc`, then each process's
/// `stat` and `status`). A process that ends on the way counts for nothing.
pub fn command_usage(scope: &CommandScope) -> CommandUsage {
    let mut usage = CommandUsage::default();
    let mut stat_buf = [0u8; procfs::STAT_BUFFER];
    let mut status_buf = [0u8; 4096];
    for process in command_processes(scope) {
        let pid = u64::from(process.pid);
        usage.processes += 1;
        if let Some(cpu) = procfs::read_stat(pid, &mut stat_buf).and_then(|stat| stat.cpu_ticks()) {
            usage.cpu_ticks = usage.cpu_ticks.saturating_add(cpu);
        }
        let mut path = [0u8; 48];
        if let Some(path) = procfs::proc_path(pid, b"/status", &mut path)
            && let Some(status) = procfs::read_file(path, &mut status_buf)
        {
            usage.memory_bytes = usage.memory_bytes.saturating_add(own_memory(status));
        }
    }
    usage
}

/// What process `pid` alone uses now, measured as [`command_usage`] measures each process of
/// a command (`processes` is 1, or 0 when it is gone).
pub fn process_usage(pid: u32) -> CommandUsage {
    let mut usage = CommandUsage::default();
    let mut stat_buf = [0u8; procfs::STAT_BUFFER];
    let Some(cpu) =
        procfs::read_stat(u64::from(pid), &mut stat_buf).and_then(|stat| stat.cpu_ticks())
    else {
        return usage;
    };
    usage.processes = 1;
    usage.cpu_ticks = cpu;
    let mut status_buf = [0u8; 4096];
    let mut path = [0u8; 48];
    if let Some(path) = procfs::proc_path(u64::from(pid), b"/status", &mut path)
        && let Some(status) = procfs::read_file(path, &mut status_buf)
    {
        usage.memory_bytes = own_memory(status);
    }
    usage
}

/// `RssAnon` + `RssShmem` of a `/proc/<pid>/status` text, in bytes (0 for a kernel thread or a
/// zombie, which have neither).
fn own_memory(status: &[u8]) -> u64 {
    let mut kib = 0u64;
    for line in status.split(|&b| b == b'\n') {
        let Some(rest) = line
            .strip_prefix(b"RssAnon:")
            .or_else(|| line.strip_prefix(b"RssShmem:"))
        else {
            continue;
        };
        let digits: Vec<u8> = rest
            .iter()
            .copied()
            .skip_while(u8::is_ascii_whitespace)
            .take_while(u8::is_ascii_digit)
            .collect();
        if let Some(value) = procfs::parse_decimal(&digits) {
            kib = kib.saturating_add(value);
        }
    }
    kib.saturating_mul(1024)
}

/// The parent of process `pid`, as `/proc` tells.
pub fn parent_pid(pid: u32) -> Option<u32> {
    let mut buf = [0u8; procfs::STAT_BUFFER];
    let stat = procfs::read_stat(u64::from(pid), &mut buf)?;
    u32::try_from(stat.ppid()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_memory_is_anonymous_and_shared_memory() {
        let status = b"Name:\tpython3\nVmRSS:\t  70000 kB\nRssAnon:\t   65536 kB\nRssFile:\t    4000 kB\nRssShmem:\t      16 kB\nThreads:\t1\n";
        assert_eq!(own_memory(status), (65536 + 16) * 1024);
        assert_eq!(own_memory(b"Name:\tkthreadd\nState:\tS\n"), 0);
    }

    #[test]
    fn a_busy_child_and_its_memory_count_for_its_tree() {
        // A child that holds 64 MiB and spins until it has used 0.6 s of CPU (not of wall
        // time: on a loaded machine that could be far less CPU), under this test's process.
        let mut child = std::process::Command::new("python3")
            .args([
                "-c",
                "b = bytearray(64 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\nimport time\nwhile time.process_time() < 0.6: pass\nprint('done', flush=True)\ninput()",
            ])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("python3");
        let mut line = String::new();
        let mut out = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        std::io::BufRead::read_line(&mut out, &mut line).expect("read");
        assert_eq!(line, "done\n");
        let me = std::process::id();
        let usages = tree_usages(&[me, u32::MAX]);
        let mine = usages[0].expect("this process");
        assert!(usages[1].is_none(), "no such process");
        assert!(mine.processes >= 2, "{mine:?}");
        assert!(mine.rss_bytes >= 64 << 20, "{mine:?}");
        assert!(mine.cpu_ticks >= ticks_per_second() / 2, "{mine:?}");
        assert_eq!(parent_pid(child.id()), Some(me));
        let _ = child.kill();
        let _ = child.wait();
        assert!(tree_usages(&[]).is_empty());
    }
}
