//! Reading the cgroup file systems: which hierarchies are mounted where
//! (`/proc/self/mountinfo`), which cgroup a process is in (`/proc/<pid>/cgroup`), the owner
//! names of agentsh's cgroups (`<pidns>-<pid>-<start>-<n>`), and the small reads and writes of
//! cgroup control files. Shared by containment (one cgroup v2 per supervised tree) and the
//! resource limits (one cgroup per command tree, v1 or v2).

use std::collections::HashSet;
use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use crate::procfs;

/// One mounted cgroup hierarchy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CgroupMount {
    /// A cgroup v2 (unified) hierarchy, not a v1 one.
    pub(crate) unified: bool,
    /// The cgroup the mount shows at its mount point (`/` unless a container bind-mounted a
    /// part of the hierarchy).
    pub(crate) root: String,
    /// Where it is mounted.
    pub(crate) mount: PathBuf,
    /// The v1 controllers of the hierarchy (`memory`, `cpu`, `cpuacct`, `name=systemd`, …):
    /// the mount's super options less `rw`/`ro` and the like; empty for v2.
    pub(crate) controllers: Vec<String>,
}

impl CgroupMount {
    /// Whether this v1 hierarchy has `controller`.
    pub(crate) fn has(&self, controller: &str) -> bool {
        self.controllers.iter().any(|c| c == controller)
    }

    /// The directory of cgroup `path` (as `/proc/<pid>/cgroup` names it) in this mount;
    /// `None` when the path lies outside the mounted part.
    pub(crate) fn dir_of(&self, path: &str) -> Option<PathBuf> {
        let relative = path
            .strip_prefix(self.root.trim_end_matches('/'))
            .filter(|rest| rest.is_empty() || rest.starts_with('/'))?;
        Some(self.mount.join(relative.trim_start_matches('/')))
    }
}

/// The cgroup hierarchies of `/proc/self/mountinfo`, in its order (empty when it cannot be
/// read).
pub(crate) fn cgroup_mounts() -> Vec<CgroupMount> {
    let Ok(text) = fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    parse_mounts(&text)
}

/// The cgroup hierarchies of a `/proc/<pid>/mountinfo` text, in its order.
pub(crate) fn parse_mounts(mountinfo: &str) -> Vec<CgroupMount> {
    mountinfo.lines().filter_map(parse_mount).collect()
}

/// One `/proc/self/mountinfo` line, if it is a cgroup mount.
fn parse_mount(line: &str) -> Option<CgroupMount> {
    let (before, after) = line.split_once(" - ")?;
    let mut tail = after.split(' ');
    let unified = match tail.next()? {
        "cgroup2" => true,
        "cgroup" => false,
        _ => return None,
    };
    let _source = tail.next()?;
    let options = tail.next().unwrap_or("");
    let fields: Vec<&str> = before.split(' ').collect();
    let root = unescape(fields.get(3)?);
    let mount = PathBuf::from(unescape(fields.get(4)?));
    let controllers = if unified {
        Vec::new()
    } else {
        options
            .split(',')
            .filter(|o| {
                !matches!(
                    *o,
                    "rw" | "ro" | "noprefix" | "clone_children" | "xattr" | "cpuset_v2_mode"
                ) && !o.starts_with("release_agent=")
            })
            .map(str::to_owned)
            .collect()
    };
    Some(CgroupMount {
        unified,
        root,
        mount,
        controllers,
    })
}

/// The first cgroup v2 mount.
pub(crate) fn unified_mount() -> Option<CgroupMount> {
    cgroup_mounts().into_iter().find(|m| m.unified)
}

/// The cgroups process `pid` (`None`: this process) is in: `(controllers, path)` per line of
/// `/proc/<pid>/cgroup`, the controllers split at commas (empty for the v2 line `0::<path>`).
pub(crate) fn process_cgroups(pid: Option<u32>) -> io::Result<Vec<(Vec<String>, String)>> {
    let file = pid.map_or_else(
        || "/proc/self/cgroup".to_owned(),
        |pid| format!("/proc/{pid}/cgroup"),
    );
    Ok(parse_cgroups(&fs::read_to_string(file)?))
}

/// The `(controllers, path)` lines of a `/proc/<pid>/cgroup` text (see [`process_cgroups`]).
pub(crate) fn parse_cgroups(text: &str) -> Vec<(Vec<String>, String)> {
    text.lines()
        .filter_map(|line| {
            let (_id, rest) = line.split_once(':')?;
            let (controllers, path) = rest.split_once(':')?;
            let controllers = controllers
                .split(',')
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
                .collect();
            Some((controllers, path.trim_end_matches(" (deleted)").to_owned()))
        })
        .collect()
}

/// agentsh's cgroup in the unified hierarchy (`0::<path>` in `/proc/self/cgroup`).
pub(crate) fn own_cgroup() -> Option<String> {
    process_cgroups(None)
        .ok()?
        .into_iter()
        .find_map(|(controllers, path)| controllers.is_empty().then_some(path))
}

/// The directory of process `pid`'s cgroup in `mount` (`None`: this process); `None` when it
/// cannot be told.
pub(crate) fn cgroup_dir_of(mount: &CgroupMount, pid: Option<u32>) -> Option<PathBuf> {
    let lines = process_cgroups(pid).ok()?;
    let path = lines.into_iter().find_map(|(controllers, path)| {
        let matches = if mount.unified {
            controllers.is_empty()
        } else {
            !controllers.is_empty() && controllers.iter().all(|c| mount.has(c))
        };
        matches.then_some(path)
    })?;
    mount.dir_of(&path)
}

/// Undoes the octal escapes (`\040` for a space) of `/proc/self/mountinfo`.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)))
            .map(|d| d.iter().fold(0u32, |n, b| n * 8 + u32::from(b - b'0')));
        if let Some(byte) = octal.and_then(|n| u8::try_from(n).ok()) {
            out.push(byte);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Creates directory `dir` with mode 0700 (whatever the umask); `Ok` also when it exists.
pub(crate) fn create_private_dir(dir: &Path) -> io::Result<()> {
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {
            // The mode holds whatever the umask.
            let _ = fs::set_permissions(dir, fs::Permissions::from_mode(0o700));
            Ok(())
        }
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(err) => Err(err),
    }
}

/// Creates the new directory `dir` with mode 0700; an error when it exists.
pub(crate) fn create_new_private_dir(dir: &Path) -> io::Result<()> {
    fs::DirBuilder::new().mode(0o700).create(dir)?;
    let _ = fs::set_permissions(dir, fs::Permissions::from_mode(0o700));
    Ok(())
}

/// The number after `key ` in a flat keyed control file (`memory.events`, `pids.events`,
/// `memory.oom_control`, `cpu.stat`); `None` when the key is missing.
pub(crate) fn keyed_value(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (name, value) = line.split_once(' ')?;
        (name == key).then(|| value.trim().parse().ok())?
    })
}

/// A single-number control file (`memory.current`, `pids.current`); `max` reads as `None`.
pub(crate) fn read_number(path: &Path) -> io::Result<Option<u64>> {
    parse_number(&fs::read(path)?, path)
}

/// The number [`read_number`] reads, from the bytes `bytes` read from `path`.
pub(crate) fn parse_number(bytes: &[u8], path: &Path) -> io::Result<Option<u64>> {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim();
    if text == "max" {
        return Ok(None);
    }
    text.parse().map(Some).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: not a number: {text:?}", path.display()),
        )
    })
}

/// The pids in a `cgroup.procs` file (none when it is gone).
pub(crate) fn read_procs(procs: &Path) -> Vec<u32> {
    fs::read_to_string(procs)
        .map(|text| text.lines().filter_map(|l| l.trim().parse().ok()).collect())
        .unwrap_or_default()
}

/// Moves process `pid` into the cgroup at `dir` (its `cgroup.procs`).
pub(crate) fn move_process(dir: &Path, pid: u32) -> io::Result<()> {
    fs::write(dir.join("cgroup.procs"), pid.to_string()).map_err(|err| {
        io::Error::new(
            err.kind(),
            format!("cannot move process {pid} into {}: {err}", dir.display()),
        )
    })
}

/// The owner fields of a cgroup name `<pidns>-<pid>-<start>-<n>`.
pub(crate) struct Owner<'a> {
    /// The pid namespace's inode number, as text.
    pub(crate) namespace: &'a str,
    pub(crate) pid: u32,
    pub(crate) start: u64,
}

/// The owner of cgroup name `<pidns>-<pid>-<start>-<n>`; `None` for any other name.
pub(crate) fn parse_owner(name: &str) -> Option<Owner<'_>> {
    let mut parts = name.split('-');
    let namespace = parts.next()?;
    let pid = parts.next()?.parse().ok()?;
    let start = parts.next()?.parse().ok()?;
    let _n: u64 = parts.next()?.parse().ok()?;
    parts.next().is_none().then_some(Owner {
        namespace,
        pid,
        start,
    })
}

impl Owner<'_> {
    /// Whether the owning process still runs: same pid, same start time.
    pub(crate) fn is_alive(&self) -> bool {
        let mut buf = [0u8; procfs::STAT_BUFFER];
        procfs::read_stat(u64::from(self.pid), &mut buf).is_some_and(|stat| {
            stat.start_ticks() == Some(self.start)
                && stat.state().is_some_and(|s| !procfs::is_exited_state(s))
        })
    }
}

/// `<pidns inode>-<pid>-<start ticks>` of process `pid`.
pub(crate) fn owner_id(pid: u32) -> Option<String> {
    let namespace = fs::metadata(format!("/proc/{pid}/ns/pid")).ok()?.ino();
    let mut buf = [0u8; procfs::STAT_BUFFER];
    let start = procfs::read_stat(u64::from(pid), &mut buf)?.start_ticks()?;
    Some(format!("{namespace}-{pid}-{start}"))
}

/// Whether the cgroup named `name` belongs to an owner that is gone, as a sweep in pid
/// namespace `namespace` can tell:
/// - an owner in `namespace`: its process no longer runs (pid and start time);
/// - an owner in another pid namespace (an agentsh that ran as PID 1 of its own, as a far side
///   under `unshare --pid` does): no process is left in that namespace. Told only by a sweep in
///   the initial pid namespace, with a `/proc` that shows every process of the host; the
///   namespaces that have a process are listed once per sweep, by `live`, and only when a
///   foreign owner is met.
pub(crate) fn is_dead_owners(name: &str, namespace: &str, live: &mut PidNamespaces) -> bool {
    let Some(owner) = parse_owner(name) else {
        return false;
    };
    if owner.namespace == namespace {
        return !owner.is_alive();
    }
    namespace == INITIAL_PID_NAMESPACE && live.is_empty(owner.namespace)
}

/// The inode number of the initial pid namespace, which the kernel gives it at boot
/// (`PROC_PID_INIT_INO`): only a sweep there sees every process of the host.
const INITIAL_PID_NAMESPACE: &str = "4026531836";

/// The pid namespaces that have a process, as one sweep learns them: listed at the first
/// question, and only where every process of the host can be seen.
#[derive(Debug, Default)]
pub(crate) struct PidNamespaces {
    /// `None` until listed.
    listed: Option<Listing>,
}

/// What one listing of the pid namespaces found.
#[derive(Debug)]
enum Listing {
    /// The namespaces that have a process.
    Live(HashSet<String>),
    /// This process does not see every process of the host.
    Unseen,
}

impl PidNamespaces {
    /// Whether pid namespace `namespace` (its inode number) is known to have no process.
    fn is_empty(&mut self, namespace: &str) -> bool {
        let listing = self
            .listed
            .get_or_insert_with(|| live_pid_namespaces().map_or(Listing::Unseen, Listing::Live));
        match listing {
            Listing::Live(live) => !live.contains(namespace),
            Listing::Unseen => false,
        }
    }
}

/// The inode numbers of the pid namespaces that have a process, when `/proc` shows every
/// process of the host (its `NSpid` of this process has one entry: it is mounted for the
/// namespace this process runs in, which the caller knows to be the initial one); `None`
/// otherwise. (`NSpid` counts from the namespace of the `/proc` mount, so it alone cannot tell
/// the initial namespace: under `unshare --pid --mount-proc` it has one entry too.)
fn live_pid_namespaces() -> Option<HashSet<String>> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let levels = status
        .lines()
        .find_map(|line| line.strip_prefix("NSpid:"))?
        .split_whitespace()
        .count();
    if levels != 1 {
        return None;
    }
    let entries = fs::read_dir("/proc").ok()?;
    Some(
        entries
            .flatten()
            .filter(|entry| {
                entry
                    .file_name()
                    .to_str()
                    .is_some_and(|name| name.bytes().all(|b| b.is_ascii_digit()))
            })
            .filter_map(|entry| fs::metadata(entry.path().join("ns/pid")).ok())
            .map(|meta| meta.ino().to_string())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_escapes_are_undone() {
        assert_eq!(unescape(r"/sys/fs/cgroup/a\040b"), "/sys/fs/cgroup/a b");
        assert_eq!(unescape(r"/x\\y"), r"/x\\y");
        assert_eq!(unescape(r"/x\04"), r"/x\04");
    }

    #[test]
    fn cgroup_mounts_are_parsed_with_their_controllers() {
        let v1 = parse_mount(
            "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct",
        )
        .expect("a v1 mount");
        assert!(!v1.unified && v1.has("cpu") && v1.has("cpuacct") && !v1.has("rw"));
        assert_eq!(v1.mount, Path::new("/sys/fs/cgroup/cpu,cpuacct"));
        let v2 = parse_mount("41 31 0:38 /box /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw")
            .expect("a v2 mount");
        assert!(v2.unified && v2.controllers.is_empty());
        assert_eq!(
            v2.dir_of("/box/a/b"),
            Some(PathBuf::from("/sys/fs/cgroup/a/b"))
        );
        assert_eq!(v2.dir_of("/box"), Some(PathBuf::from("/sys/fs/cgroup")));
        assert_eq!(v2.dir_of("/boxes"), None, "outside the mounted part");
        assert!(parse_mount("22 1 8:1 / / rw - ext4 /dev/vda rw").is_none());
    }

    #[test]
    fn keyed_files_are_read_by_key() {
        let text = "low 0\nhigh 0\nmax 7\noom 2\noom_kill 1\n";
        assert_eq!(keyed_value(text, "max"), Some(7));
        assert_eq!(keyed_value(text, "oom_kill"), Some(1));
        assert_eq!(keyed_value(text, "oom_group_kill"), None);
        assert_eq!(keyed_value("oom_kill_disable 0\n", "oom_kill"), None);
    }

    #[test]
    fn cgroup_names_carry_their_owner() {
        let owner = parse_owner("4026531836-4711-98765-3").expect("parses");
        assert_eq!(
            (owner.namespace, owner.pid, owner.start),
            ("4026531836", 4711, 98765)
        );
        for bad in ["probe", "1-2-3", "1-2-3-4-5", "1-x-3-4", ""] {
            assert!(parse_owner(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn this_process_is_a_live_owner_and_a_dead_pid_is_not() {
        let me = owner_id(std::process::id()).expect("own identity");
        let name = format!("{me}-0");
        assert!(parse_owner(&name).expect("parses").is_alive());
        let namespace = me.split('-').next().expect("namespace");
        let mut live = PidNamespaces::default();
        assert!(!is_dead_owners(&name, namespace, &mut live));
        let dead = Owner {
            namespace: "1",
            pid: std::process::id(),
            start: 0,
        };
        assert!(!dead.is_alive(), "a reused pid with another start time");
        assert!(is_dead_owners(
            &format!("{namespace}-{}-0-0", std::process::id()),
            namespace,
            &mut live
        ));
    }

    #[test]
    fn an_owner_in_a_namespace_no_process_is_left_in_is_dead() {
        let me = owner_id(std::process::id()).expect("own identity");
        let namespace = me.split('-').next().expect("namespace");
        let mut live = PidNamespaces::default();
        // PID 1 of a namespace that does not exist (no inode number is 0).
        let gone = is_dead_owners("0-1-5-1", namespace, &mut live);
        match &live.listed {
            Some(Listing::Live(namespaces)) => {
                assert!(gone);
                assert!(namespaces.contains(namespace), "{namespaces:?}");
            }
            // Not in the initial pid namespace: nothing can be told of another.
            _ => assert!(!gone),
        }
        // A sweep in another pid namespace (under `unshare --pid --mount-proc` its `/proc`
        // looks whole) never judges a foreign owner.
        assert!(!is_dead_owners(
            "0-1-5-1",
            "4026532999",
            &mut PidNamespaces::default()
        ));
        // A namespace that has a process (this one, named as foreign by a sweep elsewhere):
        // its owners are not judged by it.
        assert!(!is_dead_owners(
            &format!("{namespace}-1-5-1"),
            "0",
            &mut live
        ));
    }
}
