//! Resource limits of command trees, enforced by the kernel where the host lets agentsh: one
//! cgroup per command tree (a foreground call's command with everything it starts, or a job)
//! with a memory limit and a task limit, its usage read back and the limits the kernel
//! enforced counted.
//!
//! The mechanism is decided once per process ([`limits_mechanism`]), best first:
//!
//! - **cgroup v2** ([`LimitsMechanism::CgroupV2`]): a v2 subtree where the `memory` and
//!   `pids` controllers are available to agentsh's cgroup (a delegated one, e.g. under
//!   `systemd-run --user --scope -p Delegate=yes`, or a container's cgroup namespace). cgroup
//!   v2 enables controllers for the children of a cgroup only while it has no processes of its
//!   own (the root excepted), so agentsh enables `+memory +pids` in its own cgroup's
//!   `cgroup.subtree_control` — moving itself into a leaf `agentsh-self` first when it alone
//!   is in it; when other processes are, there is no v2 mechanism — then makes the private
//!   parent `<own>/agentsh-limits` (0700, `+memory +pids` too, never a process in it) and
//!   per command `<own>/agentsh-limits/<pidns>-<pid>-<start>-<n>` with `memory.max`,
//!   `memory.swap.max = 0` and `pids.max`.
//! - **cgroup v1** ([`LimitsMechanism::CgroupV1`]): writable v1 `memory` and `pids`
//!   hierarchies (root on a hybrid host), and `cpuacct` and `freezer` where they are writable
//!   too: per command a group of the same name in each, under a private parent
//!   `agentsh-limits` in agentsh's own group of that hierarchy, with `memory.limit_in_bytes`
//!   (and `memory.memsw.limit_in_bytes` equal to it where swap is accounted, so swap does not
//!   extend it), the OOM killer on, and `pids.max`.
//! - **watchdog** ([`LimitsMechanism::Watchdog`]): neither; the reason names what was
//!   missing, and the caller samples the tree itself.
//!
//! `AGENTSH_LIMITS_MECHANISM` ([`LIMITS_MECHANISM_VAR`]) overrides the choice, for tests and
//! for hosts whose cgroups misbehave: `watchdog` forces the watchdog, `cgroup-v1` skips v2,
//! `cgroup-v2` skips v1, `auto` (or empty) is the default; any other value is taken as
//! `watchdog`, with a reason that says so.
//!
//! **The shell goes into its command's cgroup.** A command's processes are forked by the
//! long-lived shell, and cgroup membership is inherited at fork: so for the duration of each
//! command the shell itself is moved into the command's cgroup ([`CommandCgroup::enter`]) and
//! moved back after it ([`CommandCgroup::leave`]), leaving the command's processes (and the
//! `&` children that outlive it) inside. Consequences:
//!
//! - the memory charged to the cgroup includes what the shell allocates meanwhile (what it
//!   had before stays charged where it was), and its task counts toward `pids.max`;
//! - `memory.oom.group` stays 0: a group OOM kill would end the shell too. The OOM killer
//!   picks the biggest task (the hog) and [`CgroupEvents::oom_kills`] tells the caller, which
//!   ends the rest of the tree;
//! - [`CommandCgroup::kill_all`] (and dropping) ends whatever is inside, the shell too if it
//!   was not moved out first.
//!
//! Each command cgroup is named `<pidns>-<pid>-<start>-<n>` after the agentsh that made it,
//! so the first [`limits_mechanism`] of a later agentsh ends and removes what an agentsh
//! that died left behind (in its own pid namespace), in a thread, at most once a minute per
//! host and user (`crate::sweep`).

mod cgroup_v1;
mod cgroup_v2;
mod watch;

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use agentsh_protocol::ResourceLimits;
use rustix::process::{Pid, Signal};

pub use watch::{
    CgroupWatch, LIMIT_CHECK, LimitFound, ShellShare, TreeWatchdog, cgroup_limits_with_shell,
    cpu_over_limit, over_limit,
};

use crate::cgroupfs::{
    CgroupMount, PidNamespaces, cgroup_dir_of, create_new_private_dir, is_dead_owners,
    move_process, owner_id, read_procs,
};

/// The environment variable that overrides the mechanism: `watchdog`, `cgroup-v1`,
/// `cgroup-v2` or `auto`.
pub const LIMITS_MECHANISM_VAR: &str = "AGENTSH_LIMITS_MECHANISM";

/// The name of the private parent of the command cgroups, in agentsh's own cgroup.
const PARENT_NAME: &str = "agentsh-limits";

/// How long [`CommandCgroup::kill_all`] waits for the processes to be gone.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// How long the sweep waits for a dead owner's cgroups to empty.
const LEFTOVER_WAIT: Duration = Duration::from_secs(1);

/// The start of the name of the stamp of the sweep of dead owners' command cgroups.
const LEFTOVERS_STAMP: &str = ".agentsh-limits-swept-";

/// How the resource limits of command trees are enforced on this host (see the module docs
/// of [`limits_mechanism`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LimitsMechanism {
    /// A cgroup v2 per command tree, below this private parent.
    CgroupV2 {
        /// `<agentsh's cgroup>/agentsh-limits`.
        parent: PathBuf,
    },
    /// A cgroup v1 group per command tree in the memory and pids hierarchies.
    CgroupV1 {
        /// The parent in the memory hierarchy.
        memory: PathBuf,
        /// The parent in the pids hierarchy.
        pids: PathBuf,
        /// The parent in the cpuacct hierarchy, where it is writable (CPU time is read there).
        cpuacct: Option<PathBuf>,
        /// The parent in the freezer hierarchy, where it is writable (a group is thawed before
        /// it is killed, never frozen).
        freezer: Option<PathBuf>,
        /// Whether swap is accounted (`memory.memsw`), so that it does not extend the limit.
        swap_counted: bool,
        /// Why cgroup v2 is not used.
        no_v2: String,
    },
    /// No cgroup can hold the limits: the caller samples the tree.
    Watchdog {
        /// What was missing.
        reason: String,
    },
}

impl LimitsMechanism {
    /// Whether the kernel enforces the limits (a cgroup), not a watchdog.
    pub fn is_kernel_enforced(&self) -> bool {
        !matches!(self, Self::Watchdog { .. })
    }

    /// What `agentsh doctor` says of it: the mechanism and what it guarantees on this host.
    pub fn describe(&self) -> String {
        match self {
            Self::CgroupV2 { parent } => format!(
                "cgroup v2 memory and pids controllers: a command tree's memory (without swap) \
                 and tasks are capped by the kernel, its CPU time read from cpu.stat (cgroups \
                 under {})",
                parent.display()
            ),
            Self::CgroupV1 {
                memory,
                pids,
                cpuacct,
                swap_counted,
                no_v2,
                ..
            } => format!(
                "cgroup v1 memory and pids controllers: a command tree's memory{} and tasks \
                 are capped by the kernel, its CPU time {} (groups under {} and {}; no cgroup \
                 v2 for this: {no_v2})",
                if *swap_counted {
                    " (swap included)"
                } else {
                    " (swap not counted: no memory.memsw)"
                },
                if cpuacct.is_some() {
                    "read from cpuacct"
                } else {
                    "sampled from /proc"
                },
                memory.display(),
                pids.display()
            ),
            Self::Watchdog { reason } => format!(
                "watchdog: memory and tasks sampled every 100 ms, a tree above a limit is \
                 ended; RLIMIT_DATA backstop (no cgroup for this: {reason})"
            ),
        }
    }
}

/// The mechanism of this process, decided on the first call: finds the cgroups, prepares the
/// private parents and ends what dead owners left in them. Later calls are cheap.
///
/// On cgroup v2 this may move agentsh into a leaf of its own cgroup (see the module docs):
/// decide it before the first supervised shell starts, whose supervisor would otherwise be a
/// process in agentsh's cgroup that keeps the controllers from being enabled.
pub fn limits_mechanism() -> LimitsMechanism {
    state().mechanism.clone()
}

/// Whether the kernel holds command trees to their limits here ([`limits_mechanism`]'s
/// [`is_kernel_enforced`](LimitsMechanism::is_kernel_enforced), without copying the
/// mechanism: asked before every command).
pub fn limits_kernel_enforced() -> bool {
    state().mechanism.is_kernel_enforced()
}

/// The process-wide decision.
struct State {
    mechanism: LimitsMechanism,
    backend: Option<Backend>,
    /// `<pidns>-<pid>-<start>` of this process.
    owner: String,
    next: AtomicU64,
}

/// Where command cgroups are made.
enum Backend {
    V2(cgroup_v2::Root),
    V1(cgroup_v1::Root),
}

fn state() -> &'static State {
    static STATE: OnceLock<State> = OnceLock::new();
    STATE.get_or_init(decide)
}

/// The choice the environment variable makes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Wanted {
    Auto,
    V2,
    V1,
}

fn decide() -> State {
    let owner = owner_id(std::process::id()).unwrap_or_default();
    let watchdog = |reason: String| State {
        mechanism: LimitsMechanism::Watchdog { reason },
        backend: None,
        owner: owner.clone(),
        next: AtomicU64::new(0),
    };
    if cfg!(not(target_os = "linux")) {
        return watchdog("cgroups are Linux's".to_owned());
    }
    if owner.is_empty() {
        return watchdog("cannot read agentsh's own process identity in /proc".to_owned());
    }
    let value = std::env::var(LIMITS_MECHANISM_VAR).unwrap_or_default();
    let wanted = match value.as_str() {
        "" | "auto" => Wanted::Auto,
        "cgroup-v2" => Wanted::V2,
        "cgroup-v1" => Wanted::V1,
        "watchdog" => return watchdog(format!("{LIMITS_MECHANISM_VAR}=watchdog is set")),
        other => {
            return watchdog(format!(
                "{LIMITS_MECHANISM_VAR}={other} is set, which is none of auto, cgroup-v2, \
                 cgroup-v1, watchdog"
            ));
        }
    };
    let mut state = watchdog(String::new());
    let no_v2 = if wanted == Wanted::V1 {
        format!("{LIMITS_MECHANISM_VAR}=cgroup-v1 is set")
    } else {
        match cgroup_v2::Root::open().and_then(|root| probe(&state, Backend::V2(root))) {
            Ok(backend) => return state.with(backend, String::new()),
            Err(reason) => reason,
        }
    };
    let no_v1 = if wanted == Wanted::V2 {
        format!("{LIMITS_MECHANISM_VAR}=cgroup-v2 is set")
    } else {
        match cgroup_v1::Root::open().and_then(|root| probe(&state, Backend::V1(root))) {
            Ok(backend) => return state.with(backend, no_v2),
            Err(reason) => reason,
        }
    };
    state.mechanism = LimitsMechanism::Watchdog {
        reason: format!("{no_v2}; {no_v1}"),
    };
    state
}

/// Makes and removes a first command cgroup: creating them works. The error is the reason.
fn probe(state: &State, backend: Backend) -> Result<Backend, String> {
    let cgroup = CommandCgroup::create_in(state, &backend, &ResourceLimits::default())
        .map_err(|err| format!("cannot make a command cgroup: {err}"))?;
    cgroup
        .remove()
        .map_err(|err| format!("cannot remove a command cgroup: {err}"))?;
    Ok(backend)
}

impl State {
    /// This state with cgroups made by `backend` (`no_v2`: why not v2, for v1), after ending
    /// what dead owners left.
    fn with(mut self, backend: Backend, no_v2: String) -> Self {
        self.mechanism = match &backend {
            Backend::V2(root) => LimitsMechanism::CgroupV2 {
                parent: root.parent.clone(),
            },
            Backend::V1(root) => {
                let parent = |i: usize| root.hierarchies[i].parent.clone();
                LimitsMechanism::CgroupV1 {
                    memory: parent(root.roles.memory),
                    pids: parent(root.roles.pids),
                    cpuacct: root.roles.cpuacct.map(parent),
                    freezer: root.roles.freezer.map(parent),
                    swap_counted: root.memsw,
                    no_v2,
                }
            }
        };
        self.backend = Some(backend);
        // In the background, at most once a period per host and user (`crate::sweep`): the
        // thread waits for this state to be set.
        crate::sweep::sweep_in_background(LEFTOVERS_STAMP, || state().end_leftovers());
        self
    }

    /// Ends what the command cgroups of owners that are gone (in this pid namespace) hold,
    /// and removes them. Waits at most [`LEFTOVER_WAIT`] for each; one that does not empty
    /// stays for a later sweep.
    fn end_leftovers(&self) {
        if let (Some(backend), Some(namespace)) = (&self.backend, self.owner.split('-').next()) {
            end_leftovers_of(backend, namespace);
        }
    }
}

/// Ends and removes the command cgroups of dead owners, as a sweep in pid namespace
/// `namespace` (its inode number, as the names carry it) tells.
fn end_leftovers_of(backend: &Backend, namespace: &str) {
    let parents: Vec<&Path> = match backend {
        Backend::V2(root) => vec![root.parent.as_path()],
        Backend::V1(root) => root
            .hierarchies
            .iter()
            .map(|h| h.parent.as_path())
            .collect(),
    };
    let mut live = PidNamespaces::default();
    let mut names: Vec<String> = parents
        .iter()
        .filter_map(|parent| fs::read_dir(parent).ok())
        .flat_map(Iterator::flatten)
        .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| is_dead_owners(name, namespace, &mut live))
        .collect();
    names.sort();
    names.dedup();
    for name in names {
        let cgroup = CommandCgroup::at(backend, &name);
        // Removed, or still populated (a process stuck in the kernel): left for a later
        // start.
        let _ = cgroup.end(LEFTOVER_WAIT);
        cgroup.forget();
    }
}

/// What a command's cgroup uses now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CgroupUsage {
    /// Bytes of memory charged to it now (v2 `memory.current`, v1 `memory.usage_in_bytes`):
    /// its processes' memory and the page cache they brought in.
    pub memory_bytes: u64,
    /// The most it was charged at once (v2 `memory.peak`, Linux 5.19; v1
    /// `memory.max_usage_in_bytes`); `None` where the kernel does not keep it.
    pub memory_peak_bytes: Option<u64>,
    /// Tasks (processes and threads, zombies not yet reaped too) in it now (`pids.current`).
    pub tasks: u64,
    /// CPU time its tasks used, user and system, in microseconds (v2 `cpu.stat` `usage_usec`,
    /// v1 `cpuacct.usage`); `None` on v1 without a writable cpuacct hierarchy.
    pub cpu_usec: Option<u64>,
}

/// What the kernel enforced in a command's cgroup since it was made: how the caller tells
/// that a limit was hit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CgroupEvents {
    /// Processes the OOM killer ended because the memory limit was reached (v2
    /// `memory.events` `oom_kill`, v1 `memory.oom_control` `oom_kill`).
    pub oom_kills: u64,
    /// Forks refused because the task limit was reached (`pids.events` `max`).
    pub pids_refused: u64,
}

/// One command tree's cgroup, v1 or v2 (see the module docs of [`limits_mechanism`]).
/// Dropping it ends what is left inside and removes it, blocking until the processes are gone
/// (at most 5 s; then the directories stay for a later start to clean up).
#[derive(Debug)]
pub struct CommandCgroup {
    /// The cgroup's directory in each hierarchy (one on v2).
    places: Vec<Place>,
    kind: Kind,
    /// The cgroups each entered process came from, by pid, in the order of `places`.
    origins: Mutex<HashMap<u32, Vec<PathBuf>>>,
    /// Removed, or given up on: nothing to do on drop.
    done: bool,
    /// Its `pids.current`, kept open once [`tasks`](CommandCgroup::tasks) read it: a look
    /// between two commands is then one `pread`.
    pids_current: OnceLock<(fs::File, PathBuf)>,
}

/// A cgroup's directory in one hierarchy.
#[derive(Debug)]
struct Place {
    mount: CgroupMount,
    dir: PathBuf,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    V2,
    V1(cgroup_v1::Roles),
}

impl CommandCgroup {
    /// A new cgroup for one command tree with `limits` (memory and processes; `None`: no
    /// limit of that kind; the CPU time is not the kernel's to enforce: the caller compares
    /// [`CgroupUsage::cpu_usec`] with it). `Unsupported` when the mechanism is the watchdog.
    pub fn create(limits: &ResourceLimits) -> io::Result<Self> {
        let state = state();
        match &state.backend {
            Some(backend) => Self::create_in(state, backend, limits),
            None => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "no cgroup for resource limits: {}",
                    state.mechanism.describe()
                ),
            )),
        }
    }

    /// The cgroup a tree whose shell is inside with its commands starts in, made with `limits`
    /// ([`cgroup_limits_with_shell`]: the shell is one task more): `None` without limits,
    /// where the kernel does not hold trees, or when no cgroup can be had (the watchdog then
    /// measures the tree).
    pub fn for_shell_tree(limits: &ResourceLimits) -> Option<Self> {
        if !limits.any() || !limits_kernel_enforced() {
            return None;
        }
        Self::create(&cgroup_limits_with_shell(limits)).ok()
    }

    fn create_in(state: &State, backend: &Backend, limits: &ResourceLimits) -> io::Result<Self> {
        let n = state.next.fetch_add(1, Ordering::Relaxed);
        let mut cgroup = Self::at(backend, &format!("{}-{n}", state.owner));
        // Nothing to end or remove until the directories exist.
        cgroup.done = true;
        for (made, place) in cgroup.places.iter().enumerate() {
            if let Err(err) = create_new_private_dir(&place.dir) {
                for made in &cgroup.places[..made] {
                    let _ = fs::remove_dir(&made.dir);
                }
                return Err(io::Error::new(
                    err.kind(),
                    format!("cannot create {}: {err}", place.dir.display()),
                ));
            }
        }
        cgroup.done = false;
        let set = match cgroup.kind {
            Kind::V2 => cgroup_v2::set_limits(cgroup.dir(0), limits),
            Kind::V1(roles) => {
                cgroup_v1::set_limits(cgroup.dir(roles.memory), cgroup.dir(roles.pids), limits)
            }
        };
        // Dropped on error: removed.
        set.map(|()| cgroup)
    }

    /// The cgroup named `name` under the backend's parents (made or not).
    fn at(backend: &Backend, name: &str) -> Self {
        let (places, kind) = match backend {
            Backend::V2(root) => (
                vec![Place {
                    mount: root.mount.clone(),
                    dir: root.parent.join(name),
                }],
                Kind::V2,
            ),
            Backend::V1(root) => (
                root.hierarchies
                    .iter()
                    .map(|h| Place {
                        mount: h.mount.clone(),
                        dir: h.parent.join(name),
                    })
                    .collect(),
                Kind::V1(root.roles),
            ),
        };
        Self {
            places,
            kind,
            origins: Mutex::new(HashMap::new()),
            done: false,
            pids_current: OnceLock::new(),
        }
    }

    fn dir(&self, index: usize) -> &Path {
        &self.places[index].dir
    }

    /// The cgroup's directories, one per hierarchy (one on v2).
    pub fn dirs(&self) -> impl Iterator<Item = &Path> {
        self.places.iter().map(|place| place.dir.as_path())
    }

    /// Moves process `pid` (all its threads) into the cgroup, remembering where it was in each
    /// hierarchy for [`leave`](Self::leave). What it forks from then on is born inside; what
    /// it forked before stays where it is. On an error it is where it was.
    pub fn enter(&self, pid: u32) -> io::Result<()> {
        let mut origins = Vec::with_capacity(self.places.len());
        for place in &self.places {
            let origin = cgroup_dir_of(&place.mount, Some(pid)).ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::NotFound,
                    format!(
                        "the cgroup of process {pid} in {} is not known",
                        place.mount.mount.display()
                    ),
                )
            })?;
            origins.push(origin);
        }
        for (i, place) in self.places.iter().enumerate() {
            if let Err(err) = move_process(&place.dir, pid) {
                for origin in &origins[..i] {
                    let _ = move_process(origin, pid);
                }
                return Err(err);
            }
        }
        // Entered again without leaving: it still goes back to where it first came from.
        self.origins
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(pid)
            .or_insert(origins);
        Ok(())
    }

    /// The files a process about to run writes `0` to, to join this cgroup itself before it
    /// forks anything ([`SpawnSpec::join_cgroups`](crate::SpawnSpec::join_cgroups)): on cgroup
    /// v1 each hierarchy's `tasks` (one thread moving itself, which costs the kernel no RCU
    /// grace period); on v2 `cgroup.procs`, where a process moves only as a whole.
    pub fn self_join_files(&self) -> Vec<PathBuf> {
        let file = match self.kind {
            Kind::V2 => "cgroup.procs",
            Kind::V1(_) => "tasks",
        };
        self.places
            .iter()
            .map(|place| place.dir.join(file))
            .collect()
    }

    /// Whether process `pid` is inside, in every hierarchy (it joined itself, or
    /// [`enter`](Self::enter) moved it).
    pub fn holds(&self, pid: u32) -> bool {
        self.places
            .iter()
            .all(|place| read_procs(&place.dir.join("cgroup.procs")).contains(&pid))
    }

    /// Moves process `pid`, which [`enter`](Self::enter) moved in, back to where it came from
    /// (in each hierarchy). What it forked meanwhile stays inside. `Ok` also when the process
    /// is gone; `NotFound` when it was not entered.
    pub fn leave(&self, pid: u32) -> io::Result<()> {
        let origins = self
            .origins
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&pid)
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("process {pid} was not moved into this cgroup"),
                )
            })?;
        let mut first_error = None;
        for origin in &origins {
            match move_process(origin, pid) {
                Err(err) if err.raw_os_error() != Some(libc::ESRCH) => {
                    first_error.get_or_insert(err);
                }
                _ => {}
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// What the cgroup uses now.
    pub fn usage(&self) -> io::Result<CgroupUsage> {
        match self.kind {
            Kind::V2 => cgroup_v2::usage(self.dir(0)),
            Kind::V1(roles) => cgroup_v1::usage(
                self.dir(roles.memory),
                self.dir(roles.pids),
                roles.cpuacct.map(|i| self.dir(i)),
            ),
        }
    }

    /// How many tasks are in it now (`pids.current`), for a look between commands: the file
    /// is opened at the first look and kept, so each later one is a single `pread` from its
    /// start (which makes the kernel render the count afresh).
    pub fn tasks(&self) -> io::Result<u64> {
        let (file, path) = if let Some(open) = self.pids_current.get() {
            open
        } else {
            let pids = match self.kind {
                Kind::V2 => self.dir(0),
                Kind::V1(roles) => self.dir(roles.pids),
            };
            let path = pids.join("pids.current");
            let file = fs::File::open(&path)?;
            self.pids_current.get_or_init(|| (file, path))
        };
        let mut buf = [0u8; 32];
        let len = rustix::io::pread(file, &mut buf, 0)?;
        Ok(crate::cgroupfs::parse_number(&buf[..len], path)?.unwrap_or(0))
    }

    /// The limits the kernel enforced since the cgroup was made.
    pub fn events(&self) -> io::Result<CgroupEvents> {
        match self.kind {
            Kind::V2 => cgroup_v2::events(self.dir(0)),
            Kind::V1(roles) => cgroup_v1::events(self.dir(roles.memory), self.dir(roles.pids)),
        }
    }

    /// Whether a live process is inside (zombies not reaped yet are not).
    pub fn is_populated(&self) -> bool {
        match self.kind {
            Kind::V2 => cgroup_v2::is_populated(self.dir(0)),
            Kind::V1(_) => !self.members().is_empty(),
        }
    }

    /// The live processes inside (v1: in any of its hierarchies).
    fn members(&self) -> Vec<u32> {
        let mut pids: Vec<u32> = self
            .places
            .iter()
            .flat_map(|place| read_procs(&place.dir.join("cgroup.procs")))
            .collect();
        pids.sort_unstable();
        pids.dedup();
        pids
    }

    /// SIGKILLs every process inside — the shell too if it was not moved out — and waits
    /// (at most 5 s) until none is left. v2: `cgroup.kill`. v1: passes of SIGKILL over
    /// `cgroup.procs` until it is empty (a fork loop held at `pids.max` cannot outgrow them),
    /// the group thawed first where a freezer hierarchy is writable (it is never frozen).
    /// `TimedOut` when processes are left (stuck in the kernel).
    pub fn kill_all(&self) -> io::Result<()> {
        self.kill_within(KILL_WAIT)
    }

    fn kill_within(&self, wait: Duration) -> io::Result<()> {
        let deadline = Instant::now() + wait;
        if let Kind::V2 = self.kind
            && cgroup_v2::kill(self.dir(0))
        {
            return self.wait_empty(deadline);
        }
        // v1: passes of SIGKILL over the members until none is left. The freezer is never used
        // to freeze: a group left frozen (a freeze that timed out and went on to FROZEN later,
        // or agentsh gone between freezing and thawing) holds its processes in the kernel,
        // unkillable, until someone thaws it — so it is only thawed here, in case. A fork loop
        // held at `pids.max` cannot outgrow the passes.
        if let Kind::V1(roles) = self.kind
            && let Some(freezer) = roles.freezer
        {
            cgroup_v1::freeze(self.dir(freezer), false, deadline);
        }
        loop {
            let members = self.members();
            for &pid in &members {
                if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
                    let _ = rustix::process::kill_process(pid, Signal::KILL);
                }
            }
            if members.is_empty() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(self.still_populated());
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Waits until nothing is inside, or `deadline`.
    fn wait_empty(&self, deadline: Instant) -> io::Result<()> {
        while self.is_populated() {
            if Instant::now() >= deadline {
                return Err(self.still_populated());
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        Ok(())
    }

    fn still_populated(&self) -> io::Error {
        io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "processes {:?} are still in {} after SIGKILL",
                self.members(),
                self.dir(0).display()
            ),
        )
    }

    /// Ends what is inside ([`kill_all`](Self::kill_all)) and removes the cgroup's directories.
    /// On an error they are left for a later agentsh to clean up.
    pub fn remove(mut self) -> io::Result<()> {
        drop(self.pids_current.take());
        let result = self.end(KILL_WAIT);
        self.done = true;
        result
    }

    /// Kills what is inside, waiting at most `wait`, then removes the directories (`Ok` for
    /// those gone already).
    fn end(&self, wait: Duration) -> io::Result<()> {
        self.kill_within(wait)?;
        let mut first_error = None;
        for place in &self.places {
            match fs::remove_dir(&place.dir) {
                Err(err) if err.kind() != io::ErrorKind::NotFound => {
                    first_error.get_or_insert(io::Error::new(
                        err.kind(),
                        format!("cannot remove {}: {err}", place.dir.display()),
                    ));
                }
                _ => {}
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Leaves the directories as they are (for a later start to clean up).
    fn forget(mut self) {
        self.done = true;
    }
}

impl Drop for CommandCgroup {
    fn drop(&mut self) {
        // Closed before the directories go.
        drop(self.pids_current.take());
        if !self.done {
            let _ = self.end(KILL_WAIT);
        }
    }
}

#[cfg(test)]
mod tests;
