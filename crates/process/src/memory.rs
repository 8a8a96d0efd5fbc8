//! The memory agentsh may use: the machine's (`MemTotal`), or less when a cgroup agentsh is in
//! (or one above it) has a lower memory limit — a container's, a systemd unit's. A limit of
//! `limits.memory` written as a percent is of this.

use std::fs;
use std::path::PathBuf;

use crate::cgroupfs::{self, CgroupMount};

/// The memory agentsh may use, in bytes: the smaller of `MemTotal` (`/proc/meminfo`) and the
/// lowest memory limit of agentsh's own cgroups, walking up from the cgroup agentsh is in to
/// the top its mount shows: cgroup v2 `memory.max` (`max`: no limit) and cgroup v1
/// `memory.limit_in_bytes` (whose "no limit" is a number above any machine's memory). `None`
/// when none of it can be read (not Linux).
pub fn memory_agentsh_may_use() -> Option<u64> {
    let total = fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| mem_total(&text));
    let cgroups = cgroupfs::process_cgroups(None).unwrap_or_default();
    let files = limit_files(&cgroupfs::cgroup_mounts(), &cgroups);
    let limits = files.iter().filter_map(|file| {
        fs::read_to_string(file)
            .ok()
            .and_then(|text| memory_limit(&text))
    });
    lowest(total, limits)
}

/// `MemTotal` of the text of `/proc/meminfo`, in bytes (the file says kB, which are KiB).
fn mem_total(meminfo: &str) -> Option<u64> {
    meminfo.lines().find_map(|line| {
        let rest = line.strip_prefix("MemTotal:")?;
        let mut words = rest.split_whitespace();
        let kib: u64 = words.next()?.parse().ok()?;
        matches!(words.next(), Some("kB") | None).then(|| kib.saturating_mul(1024))
    })
}

/// A memory limit file's value: bytes, or `None` for `max` (v2's no limit) or text that is
/// no number.
fn memory_limit(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

/// The memory limit files to read for the cgroups of `cgroups` (`(controllers, path)` as
/// `/proc/<pid>/cgroup` lists them), found under `mounts`: for the unified hierarchy
/// `memory.max`, for the v1 `memory` hierarchy `memory.limit_in_bytes`, in the cgroup itself
/// and each one above it up to the mount point (a cgroup the mounts do not show is left out).
fn limit_files(mounts: &[CgroupMount], cgroups: &[(Vec<String>, String)]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for (controllers, path) in cgroups {
        // Whether the hierarchy is the unified one, and its limit file.
        let (unified, file) = if controllers.is_empty() {
            (true, "memory.max")
        } else if controllers.iter().any(|c| c == "memory") {
            (false, "memory.limit_in_bytes")
        } else {
            continue;
        };
        let is_its_mount = |mount: &CgroupMount| {
            if unified {
                mount.unified
            } else {
                !mount.unified && mount.has("memory")
            }
        };
        let Some((mount, dir)) = mounts
            .iter()
            .filter(|mount| is_its_mount(mount))
            .find_map(|mount| Some((mount, mount.dir_of(path)?)))
        else {
            continue;
        };
        for cgroup in dir.ancestors() {
            files.push(cgroup.join(file));
            if cgroup == mount.mount {
                break;
            }
        }
    }
    files
}

/// The smallest of `total` and `limits`; `None` when there is neither.
fn lowest(total: Option<u64>, limits: impl IntoIterator<Item = u64>) -> Option<u64> {
    limits.into_iter().chain(total).min()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::cgroupfs::{parse_cgroups, parse_mounts};

    /// `/proc/self/mountinfo` of a hybrid host (v1 controllers, v2 at `unified`), as this
    /// project's CI machine has it.
    const HYBRID_MOUNTINFO: &str = "\
23 1 0:21 / /sys rw,nosuid,nodev,noexec,relatime - sysfs sysfs rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    /// `/proc/self/cgroup` on that host.
    const HYBRID_CGROUP: &str = "\
9:name=systemd:/
8:pids:/
4:memory:/process_api/174cf469
2:cpuacct:/
1:cpu:/
0::/
";

    /// `/proc/self/mountinfo` of a pure v2 host.
    const V2_MOUNTINFO: &str = "\
22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw
30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
";

    /// `/proc/self/cgroup` of a process in a user session there.
    const V2_CGROUP: &str = "0::/user.slice/user-1000.slice/session-2.scope\n";

    fn files(mountinfo: &str, cgroup: &str) -> Vec<PathBuf> {
        limit_files(&parse_mounts(mountinfo), &parse_cgroups(cgroup))
    }

    #[test]
    fn mem_total_is_in_bytes() {
        let meminfo = "MemTotal:       24731400 kB\nMemFree:         1000000 kB\n";
        assert_eq!(mem_total(meminfo), Some(24_731_400 * 1024));
        assert_eq!(mem_total("MemFree: 1 kB\nMemTotal: 2 kB\n"), Some(2048));
        for bad in [
            "",
            "MemFree: 1 kB\n",
            "MemTotal: lots kB\n",
            "MemTotal: 1 MB\n",
        ] {
            assert_eq!(mem_total(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn limit_files_say_bytes_or_no_limit() {
        assert_eq!(memory_limit("max\n"), None);
        assert_eq!(memory_limit("536870912\n"), Some(512 << 20));
        // v1's "no limit": a number above any machine's memory, which MemTotal is below.
        assert_eq!(
            memory_limit("9223372036854771712\n"),
            Some(9_223_372_036_854_771_712)
        );
        assert_eq!(memory_limit(""), None);
    }

    #[test]
    fn the_lowest_of_the_machine_and_its_cgroups() {
        assert_eq!(lowest(Some(100), []), Some(100));
        assert_eq!(lowest(Some(100), [9_223_372_036_854_771_712, 60]), Some(60));
        assert_eq!(lowest(Some(100), [200]), Some(100));
        assert_eq!(lowest(None, [200, 300]), Some(200));
        assert_eq!(lowest(None, []), None);
    }

    #[test]
    fn a_hybrid_host_reads_v1_memory_and_v2_up_the_hierarchy() {
        assert_eq!(
            files(HYBRID_MOUNTINFO, HYBRID_CGROUP),
            [
                // `4:memory:/process_api/174cf469`, and up to the mount.
                Path::new("/sys/fs/cgroup/memory/process_api/174cf469/memory.limit_in_bytes"),
                Path::new("/sys/fs/cgroup/memory/process_api/memory.limit_in_bytes"),
                Path::new("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
                // `0::/`: the unified hierarchy's top.
                Path::new("/sys/fs/cgroup/unified/memory.max"),
            ]
        );
    }

    #[test]
    fn a_v2_host_reads_memory_max_up_to_the_mount() {
        assert_eq!(
            files(V2_MOUNTINFO, V2_CGROUP),
            [
                Path::new("/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope/memory.max"),
                Path::new("/sys/fs/cgroup/user.slice/user-1000.slice/memory.max"),
                Path::new("/sys/fs/cgroup/user.slice/memory.max"),
                Path::new("/sys/fs/cgroup/memory.max"),
            ]
        );
        // In a container's cgroup namespace its cgroup is the mount's top.
        assert_eq!(
            files(V2_MOUNTINFO, "0::/\n"),
            [Path::new("/sys/fs/cgroup/memory.max")]
        );
        // A v1 container whose cgroup is bind-mounted as the top.
        assert_eq!(
            files(
                "40 31 0:32 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n",
                "5:memory:/docker/abc\n"
            ),
            [Path::new("/sys/fs/cgroup/memory/memory.limit_in_bytes")]
        );
    }

    #[test]
    fn cgroups_the_mounts_do_not_show_are_left_out() {
        // A cgroup outside the mount's root; no memory hierarchy mounted; no memory line.
        assert!(
            files(
                "40 31 0:32 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n",
                "5:memory:/elsewhere\n"
            )
            .is_empty()
        );
        assert!(files(V2_MOUNTINFO, "4:memory:/a\n").is_empty());
        assert!(files(HYBRID_MOUNTINFO, "8:pids:/a\n1:cpu:/\n").is_empty());
        assert!(files("", V2_CGROUP).is_empty());
    }

    #[test]
    fn here_it_is_some_memory_and_at_most_the_machines() {
        let total = fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|text| mem_total(&text))
            .expect("MemTotal in /proc/meminfo");
        let may_use = memory_agentsh_may_use().expect("the memory agentsh may use");
        assert!(may_use > 0, "{may_use}");
        assert!(may_use <= total, "{may_use} > MemTotal {total}");
    }
}
