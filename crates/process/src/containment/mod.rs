//! Containment that does not depend on the supervisor staying alive (it has no single point of
//! failure): whatever kills a supervisor — a command (`kill -9 $PPID`), the
//! OOM killer — its shell and every descendant still end, and so does what a supervisor that
//! died together with agentsh left behind.
//!
//! Decided once per process ([`containment`]), on first use:
//!
//! - **cgroup v2** ([`Containment::Cgroup`]): every supervised tree runs in a cgroup of its own,
//!   `<parent>/<pidns>-<pid>-<start>-<n>` below a private (0700) parent `agentsh` in the cgroup
//!   agentsh itself is in. The child joins it before it executes the program, so everything
//!   the program starts is inside (membership is inherited at fork and nothing but a write to
//!   another cgroup's `cgroup.procs` takes a process out). The supervisor stays outside: when
//!   it ends the tree it writes `cgroup.kill` first, and when it is gone (any way) agentsh
//!   writes `cgroup.kill` and removes the cgroup. The name carries the owning agentsh's pid
//!   namespace, pid and start time, so the sweep of a later start (`crate::sweep`, within a
//!   minute) finds the cgroups of an agentsh that died together with its supervisors and ends
//!   what is in them.
//! - **subreaper** ([`Containment::Subreaper`]), where no cgroup v2 hierarchy is mounted or
//!   writable (or `AGENTSH_NO_CGROUP` is set): agentsh makes itself a child subreaper, so the
//!   orphans of a dead supervisor are reparented to agentsh, which ends and reaps them
//!   (`adopted`). What agentsh leaves when it dies together with a supervisor is not found.
//! - elsewhere than on Linux ([`Containment::Unavailable`]) only the supervisor holds the tree.

mod adopted;
mod cgroup;

use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

pub(crate) use adopted::end_adopted;
pub(crate) use cgroup::Cgroup;
pub use cgroup::NO_CGROUP_VAR;
// For the sweep (`crate::sweep`), which must not depend on this file: it starts the sweep.
pub(crate) use cgroup::{end_leftovers_in, leftovers_parent};

/// How the process trees of supervised programs are held beyond their supervisor (see the
/// module docs of [`containment`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Containment {
    /// A cgroup v2 per supervised tree, below this private parent cgroup (a directory of the
    /// unified hierarchy).
    Cgroup {
        /// The parent cgroup's directory.
        parent: PathBuf,
    },
    /// agentsh is a child subreaper and ends the orphans a dead supervisor leaves it.
    Subreaper {
        /// Why there are no cgroups (the warning's cause).
        reason: String,
    },
    /// Only the supervisor holds the tree (not Linux).
    Unavailable {
        /// Why.
        reason: String,
    },
}

impl Containment {
    /// The warning to show once when containment is weaker than a cgroup per shell.
    pub fn warning(&self) -> Option<String> {
        match self {
            Self::Cgroup { .. } => None,
            Self::Subreaper { reason } => Some(format!(
                "no cgroup per shell ({reason}): agentsh ends what a killed supervisor leaves as \
                 a subreaper instead, and cannot find what is left when agentsh dies together \
                 with a supervisor"
            )),
            Self::Unavailable { reason } => Some(format!(
                "no containment beyond the supervisor ({reason}): what a killed supervisor \
                 leaves keeps running"
            )),
        }
    }
}

/// The containment of this process, decided on the first call: starts the sweep of what dead
/// agentsh processes left when it is due ([`sweep_leftovers`](crate::sweep_leftovers), in the
/// background), discovers the cgroup v2 hierarchy and creates the private parent cgroup, or
/// else makes agentsh a child subreaper. Later calls are cheap. A cgroup that cannot be joined at
/// run time switches the process to the subreaper from then on.
pub fn containment() -> Containment {
    let state = state();
    if state.downgraded.load(Ordering::Acquire) {
        let reason = state
            .downgrade_reason
            .get()
            .cloned()
            .unwrap_or_else(|| "cgroups failed".to_owned());
        return Containment::Subreaper { reason };
    }
    state.initial.clone()
}

/// The process-wide decision.
struct State {
    initial: Containment,
    /// Where new cgroups go, while cgroups are used.
    root: Option<cgroup::Root>,
    /// Cgroups failed at run time: the subreaper holds new trees.
    downgraded: AtomicBool,
    downgrade_reason: OnceLock<String>,
}

fn state() -> &'static State {
    static STATE: OnceLock<State> = OnceLock::new();
    STATE.get_or_init(decide)
}

fn decide() -> State {
    // Before anything of this process's own: what dead owners left is swept in the background
    // (when due), from this process's places as they are now.
    crate::sweep::sweep_leftovers();
    let (initial, root) = if cfg!(not(target_os = "linux")) {
        (
            Containment::Unavailable {
                reason: "neither cgroups nor a child subreaper outside Linux".to_owned(),
            },
            None,
        )
    } else if std::env::var_os(NO_CGROUP_VAR).is_some_and(|v| !v.is_empty() && v != "0") {
        (subreaper(format!("{NO_CGROUP_VAR} is set")), None)
    } else {
        match cgroup::Root::open() {
            Ok(root) => (
                Containment::Cgroup {
                    parent: root.parent().to_path_buf(),
                },
                Some(root),
            ),
            Err(reason) => (subreaper(reason), None),
        }
    };
    State {
        initial,
        root,
        downgraded: AtomicBool::new(false),
        downgrade_reason: OnceLock::new(),
    }
}

/// Makes this process a child subreaper; the containment that results.
fn subreaper(reason: String) -> Containment {
    #[cfg(target_os = "linux")]
    if let Err(err) = rustix::process::set_child_subreaper(Some(rustix::process::getpid())) {
        return Containment::Unavailable {
            reason: format!("{reason}; and agentsh cannot become a subreaper: {err}"),
        };
    }
    Containment::Subreaper { reason }
}

/// A new cgroup for one supervised tree, or `None` when cgroups are not used (any more). A
/// cgroup that cannot be created switches to the subreaper.
pub(crate) fn new_cgroup() -> Option<Cgroup> {
    let state = state();
    let root = state.root.as_ref()?;
    if state.downgraded.load(Ordering::Acquire) {
        return None;
    }
    match root.create() {
        Ok(cgroup) => Some(cgroup),
        Err(err) => {
            downgrade(format!(
                "cannot create a cgroup in {}: {err}",
                root.parent().display()
            ));
            None
        }
    }
}

/// Cgroups failed at run time (created, but a child could not join): new trees are held by
/// the subreaper from now on.
pub(crate) fn downgrade(reason: String) {
    let state = state();
    if state.downgrade_reason.set(reason.clone()).is_ok() {
        let _ = subreaper(reason);
        state.downgraded.store(true, Ordering::Release);
    }
}

/// Whether agentsh is a child subreaper that must end what it adopts.
pub(crate) fn is_subreaper() -> bool {
    matches!(containment(), Containment::Subreaper { .. })
}
