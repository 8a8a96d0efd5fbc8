//! Where the cgroup hierarchies are mounted (`/proc/self/mountinfo`) and which cgroups this
//! process is in (`/proc/self/cgroup`), for cgroup v2 (the unified hierarchy) and v1 (one
//! hierarchy per controller, or a few together). The parsing is pure, on the files' text; the
//! readers of this process's own files are at the end.
//!
//! Layouts met: a pure v2 host has the unified hierarchy at `/sys/fs/cgroup`; a hybrid host
//! has each v1 controller at `/sys/fs/cgroup/<controller>` and the unified hierarchy at
//! `/sys/fs/cgroup/unified`; in a container (a cgroup namespace, or a bind mount of a subtree)
//! the mount's root is the container's cgroup.

use std::fs;
use std::path::PathBuf;

/// A mounted cgroup hierarchy: one `cgroup2` or `cgroup` line of `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mount {
    /// Where it is mounted.
    pub(crate) point: PathBuf,
    /// The cgroup the mount point shows (`/` unless the mount shows a subtree).
    pub(crate) root: String,
    /// `None`: the unified (v2) hierarchy; else the options of a v1 mount, which name its
    /// controllers (`memory`; `cpu`, `cpuacct`; `name=systemd`).
    pub(crate) controllers: Option<Vec<String>>,
}

impl Mount {
    /// Whether this is the v1 hierarchy of `controller`.
    pub(crate) fn has_v1(&self, controller: &str) -> bool {
        self.controllers
            .as_ref()
            .is_some_and(|names| names.iter().any(|name| name == controller))
    }

    /// The directory of `cgroup` (a path of this hierarchy, as `/proc/self/cgroup` gives it)
    /// under this mount; `None` when the mount does not show it (it is outside the mount's
    /// root).
    pub(crate) fn directory(&self, cgroup: &str) -> Option<PathBuf> {
        let relative = cgroup
            .strip_prefix(self.root.trim_end_matches('/'))
            .filter(|rest| rest.is_empty() || rest.starts_with('/'))?;
        let relative = relative.trim_start_matches('/');
        Some(if relative.is_empty() {
            self.point.clone()
        } else {
            self.point.join(relative)
        })
    }
}

/// The cgroup hierarchies mounted, in the order of `mountinfo` (the text of
/// `/proc/<pid>/mountinfo`).
pub(crate) fn mounts(mountinfo: &str) -> Vec<Mount> {
    mountinfo
        .lines()
        .filter_map(|line| {
            let (before, after) = line.split_once(" - ")?;
            let mut after = after.split(' ');
            let fs_type = after.next()?;
            let _source = after.next()?;
            let options = after.next().unwrap_or_default();
            let controllers = match fs_type {
                "cgroup2" => None,
                "cgroup" => Some(
                    options
                        .split(',')
                        .filter(|option| !matches!(*option, "rw" | "ro"))
                        .map(str::to_owned)
                        .collect(),
                ),
                _ => return None,
            };
            let fields: Vec<&str> = before.split(' ').collect();
            Some(Mount {
                root: unescape(fields.get(3)?),
                point: PathBuf::from(unescape(fields.get(4)?)),
                controllers,
            })
        })
        .collect()
}

/// One line of `/proc/<pid>/cgroup`: the cgroup a process is in, in one hierarchy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Membership {
    /// The controllers of a v1 hierarchy (`memory`; `cpu`, `cpuacct`; `name=systemd`); empty
    /// for the unified hierarchy (`0::<path>`).
    pub(crate) controllers: Vec<String>,
    /// The cgroup, a path of that hierarchy (without a `(deleted)` mark).
    pub(crate) path: String,
}

impl Membership {
    /// Whether this is the unified (v2) hierarchy's line.
    pub(crate) fn is_unified(&self) -> bool {
        self.controllers.is_empty()
    }

    /// Whether this is the line of the v1 hierarchy of `controller`.
    pub(crate) fn has_v1(&self, controller: &str) -> bool {
        self.controllers.iter().any(|name| name == controller)
    }
}

/// The cgroups of a process, from the text of `/proc/<pid>/cgroup`
/// (`<hierarchy id>:<controllers>:<path>` a line).
pub(crate) fn memberships(text: &str) -> Vec<Membership> {
    text.lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, ':');
            let _id = parts.next()?;
            let controllers = parts.next()?;
            let path = parts.next()?;
            Some(Membership {
                controllers: controllers
                    .split(',')
                    .filter(|name| !name.is_empty())
                    .map(str::to_owned)
                    .collect(),
                path: path.trim_end_matches(" (deleted)").to_owned(),
            })
        })
        .collect()
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

/// The cgroup hierarchies mounted in this process's mount namespace (none when
/// `/proc/self/mountinfo` cannot be read).
pub(crate) fn own_mounts() -> Vec<Mount> {
    fs::read_to_string("/proc/self/mountinfo")
        .map(|text| mounts(&text))
        .unwrap_or_default()
}

/// The cgroups this process is in (none when `/proc/self/cgroup` cannot be read).
pub(crate) fn own_memberships() -> Vec<Membership> {
    fs::read_to_string("/proc/self/cgroup")
        .map(|text| memberships(&text))
        .unwrap_or_default()
}

#[cfg(test)]
pub(crate) mod tests {
    use std::path::Path;

    use super::*;

    /// `/proc/self/mountinfo` of a hybrid host (v1 controllers, v2 at `unified`), as this
    /// project's CI machine has it.
    pub(crate) const HYBRID_MOUNTINFO: &str = "\
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
    pub(crate) const HYBRID_CGROUP: &str = "\
9:name=systemd:/
8:pids:/
4:memory:/process_api/174cf469
2:cpuacct:/
1:cpu:/
0::/
";

    /// `/proc/self/mountinfo` of a pure v2 host.
    pub(crate) const V2_MOUNTINFO: &str = "\
22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw
30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
";

    /// `/proc/self/cgroup` of a process in a user session there.
    pub(crate) const V2_CGROUP: &str = "0::/user.slice/user-1000.slice/session-2.scope\n";

    #[test]
    fn mountinfo_escapes_are_undone() {
        assert_eq!(unescape(r"/sys/fs/cgroup/a\040b"), "/sys/fs/cgroup/a b");
        assert_eq!(unescape(r"/x\\y"), r"/x\\y");
        assert_eq!(unescape(r"/x\04"), r"/x\04");
    }

    #[test]
    fn mounts_of_a_hybrid_and_a_v2_host() {
        let hybrid = mounts(HYBRID_MOUNTINFO);
        let v1 = |point: &str, controllers: &[&str]| Mount {
            point: PathBuf::from(point),
            root: "/".to_owned(),
            controllers: Some(controllers.iter().map(|&c| c.to_owned()).collect()),
        };
        assert_eq!(
            hybrid,
            [
                v1("/sys/fs/cgroup/cpu", &["cpu"]),
                v1("/sys/fs/cgroup/cpuacct", &["cpuacct"]),
                v1("/sys/fs/cgroup/memory", &["memory"]),
                v1("/sys/fs/cgroup/pids", &["pids"]),
                v1("/sys/fs/cgroup/systemd", &["name=systemd"]),
                Mount {
                    point: PathBuf::from("/sys/fs/cgroup/unified"),
                    root: "/".to_owned(),
                    controllers: None,
                },
            ]
        );
        assert!(hybrid[2].has_v1("memory") && !hybrid[5].has_v1("memory"));
        assert_eq!(
            mounts(V2_MOUNTINFO),
            [Mount {
                point: PathBuf::from("/sys/fs/cgroup"),
                root: "/".to_owned(),
                controllers: None,
            }]
        );
        // Controllers mounted together, a subtree shown, an escaped mount point.
        let text = "50 31 0:40 /docker/abc /sys/fs/cgroup/cpu,cpuacct ro,nosuid - cgroup cgroup ro,cpu,cpuacct\n\
                    51 31 0:41 / /mnt/my\\040cg rw - cgroup2 none rw\n";
        assert_eq!(
            mounts(text),
            [
                Mount {
                    point: PathBuf::from("/sys/fs/cgroup/cpu,cpuacct"),
                    root: "/docker/abc".to_owned(),
                    controllers: Some(vec!["cpu".to_owned(), "cpuacct".to_owned()]),
                },
                Mount {
                    point: PathBuf::from("/mnt/my cg"),
                    root: "/".to_owned(),
                    controllers: None,
                },
            ]
        );
        assert_eq!(mounts("garbage\n\n1 2 3 - cgroup2\n"), []);
    }

    #[test]
    fn memberships_of_each_layout() {
        let hybrid = memberships(HYBRID_CGROUP);
        assert_eq!(hybrid.len(), 6);
        let memory = hybrid.iter().find(|m| m.has_v1("memory")).expect("memory");
        assert_eq!(memory.path, "/process_api/174cf469");
        let unified = hybrid.iter().find(|m| m.is_unified()).expect("unified");
        assert_eq!(unified.path, "/");
        assert_eq!(
            memberships("12:cpu,cpuacct:/a\n0::/b/c (deleted)\n"),
            [
                Membership {
                    controllers: vec!["cpu".to_owned(), "cpuacct".to_owned()],
                    path: "/a".to_owned(),
                },
                Membership {
                    controllers: Vec::new(),
                    path: "/b/c".to_owned(),
                },
            ]
        );
        // A path may hold a colon.
        assert_eq!(memberships("0::/a:b\n")[0].path, "/a:b");
    }

    #[test]
    fn a_cgroup_is_found_under_the_mount_that_shows_it() {
        let mount = |root: &str| Mount {
            point: PathBuf::from("/sys/fs/cgroup"),
            root: root.to_owned(),
            controllers: None,
        };
        assert_eq!(
            mount("/").directory("/user.slice/a.scope").as_deref(),
            Some(Path::new("/sys/fs/cgroup/user.slice/a.scope"))
        );
        assert_eq!(
            mount("/").directory("/").as_deref(),
            Some(Path::new("/sys/fs/cgroup"))
        );
        assert_eq!(
            mount("/docker/abc").directory("/docker/abc").as_deref(),
            Some(Path::new("/sys/fs/cgroup"))
        );
        assert_eq!(
            mount("/docker/abc").directory("/docker/abc/x").as_deref(),
            Some(Path::new("/sys/fs/cgroup/x"))
        );
        assert_eq!(mount("/docker/abc").directory("/docker/abcd"), None);
        assert_eq!(mount("/docker/abc").directory("/other"), None);
    }
}
