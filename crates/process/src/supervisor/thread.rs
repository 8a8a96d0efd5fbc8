//! The spawner thread: forks every supervisor, watches each until it is gone, and then ends
//! what it left (containment has no single point of failure).
//!
//! Forking happens on this one long-lived thread, so `PR_SET_PDEATHSIG` — which fires when the
//! forking *thread* exits — fires only when agentsh itself is gone. The thread sleeps in
//! `poll` on a wake-up pipe (requests) and on agentsh's own copy of each supervisor's report
//! pipe, which hangs up when the supervisor exits — whatever ended it, also when no command is
//! running and nobody reads the reports. Then (the supervisor stays a zombie until its handle
//! is released, so that its pid is not reused while agentsh may still name it):
//!
//! - its cgroup is removed; while something is still inside (the supervisor was killed before
//!   it could end its tree) `cgroup.kill` goes first, and removal is retried every
//!   [`RETRY`] until the cgroup is empty;
//! - without cgroups, unless the supervisor exited cleanly (status 0: it ended its tree itself),
//!   agentsh — a subreaper then — ends and reaps what it adopted from the supervisor.
//!
//! Whoever waits for a supervisor's end ([`Supervisor::shutdown`](super::Supervisor::shutdown),
//! the blocking supervisor of the rc snapshot) is answered only after that.

use std::os::fd::OwnedFd;
use std::sync::{Mutex, OnceLock, mpsc};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags};
use rustix::process::{Pid, WaitId, WaitIdOptions, WaitOptions};

use super::SpawnError;
use super::plan::ForkPlan;
use super::spawner::{ForkFailure, SpawnedRaw, fork_supervisor, pipe_cloexec, set_nonblocking};
use crate::containment::{self, Cgroup};

/// How often the removal of an exited supervisor's non-empty cgroup is retried, and the exit
/// of a supervisor whose report pipe hung up is looked for.
const RETRY: Duration = Duration::from_millis(5);
/// After this long a cgroup that does not empty is left for a later start, and its waiters
/// are answered.
const GIVE_UP: Duration = Duration::from_secs(5);

/// A callback the spawner thread runs with its answer.
pub(super) type Reply<T> = Box<dyn FnOnce(T) + Send>;

/// What the spawner thread is asked to do.
pub(super) enum Request {
    /// Fork a supervisor for this plan.
    Spawn(Box<ForkPlan>, Reply<Result<SpawnedRaw, SpawnError>>),
    /// The supervisor with this id was told to end (its control pipe is closed): answer once
    /// it has exited and its tree is gone.
    Release(u64, Reply<()>),
}

/// The way to the spawner thread.
pub(super) struct Spawner {
    requests: Mutex<mpsc::Sender<Request>>,
    /// Write end of the thread's wake-up pipe (non-blocking).
    wake: OwnedFd,
}

impl Spawner {
    /// Hands `request` to the thread.
    pub(super) fn send(&self, request: Request) -> Result<(), SpawnError> {
        let gone = || SpawnError::Setup(std::io::Error::other("the spawner thread is gone"));
        self.requests
            .lock()
            .map_err(|_| gone())?
            .send(request)
            .map_err(|_| gone())?;
        // A full pipe already wakes the thread: the byte is not needed then.
        let _ = rustix::io::write(&self.wake, &[1]);
        Ok(())
    }
}

/// The spawner thread, started on first use.
pub(super) fn spawner() -> Result<&'static Spawner, SpawnError> {
    static SPAWNER: OnceLock<Spawner> = OnceLock::new();
    static START: Mutex<()> = Mutex::new(());
    if let Some(spawner) = SPAWNER.get() {
        return Ok(spawner);
    }
    let _one_at_a_time = START.lock();
    if let Some(spawner) = SPAWNER.get() {
        return Ok(spawner);
    }
    let (wake_r, wake_w) = pipe_cloexec().map_err(SpawnError::Setup)?;
    for fd in [&wake_r, &wake_w] {
        set_nonblocking(fd).map_err(SpawnError::Setup)?;
    }
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("agentsh-spawner".into())
        .spawn(move || spawner_loop(&rx, &wake_r))
        .map_err(SpawnError::Setup)?;
    Ok(SPAWNER.get_or_init(|| Spawner {
        requests: Mutex::new(tx),
        wake: wake_w,
    }))
}

/// One supervisor the thread forked, until it is gone, cleaned up after and released.
///
/// A dead supervisor stays a zombie until its handle is released: its pid is not reused while
/// agentsh may still name it (`Supervisor::kill_tree`, the command scope of its shell).
struct Tracked {
    id: u64,
    pid: i32,
    /// agentsh's copy of the supervisor's report pipe; `None` once it hung up.
    watch: Option<OwnedFd>,
    cgroup: Option<Cgroup>,
    /// Once it has exited: whether it ended its tree itself (exit status 0).
    exit: Option<Exit>,
    /// Nothing is left to clean up after it.
    cleaned: bool,
    /// Its handle is gone: reap it once cleaned up after.
    released: bool,
    waiters: Vec<Reply<()>>,
}

#[derive(Clone, Copy)]
struct Exit {
    clean: bool,
    at: Instant,
    killed_cgroup: bool,
}

impl Tracked {
    fn new(id: u64, pid: i32, watch: Option<OwnedFd>, cgroup: Option<Cgroup>) -> Self {
        Self {
            id,
            pid,
            watch,
            cgroup,
            exit: None,
            cleaned: false,
            released: false,
            waiters: Vec::new(),
        }
    }

    /// Notes whether the supervisor has exited, leaving it a zombie.
    fn check_exit(&mut self) {
        if self.exit.is_some() {
            return;
        }
        let status = Pid::from_raw(self.pid).map(|pid| {
            rustix::process::waitid(
                WaitId::Pid(pid),
                WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT,
            )
        });
        let clean = match status {
            Some(Ok(None)) => return,
            Some(Ok(Some(status))) => status.exited() && status.exit_status() == Some(0),
            // Not our child (any more): nothing is known of how it ended.
            Some(Err(_)) | None => false,
        };
        self.watch = None;
        self.exit = Some(Exit {
            clean,
            at: Instant::now(),
            killed_cgroup: false,
        });
    }

    /// After the supervisor exited: removes its cgroup, killing what is inside first. Sets
    /// `cleaned` once nothing is left to do.
    fn clean_up(&mut self) {
        let Some(exit) = &mut self.exit else { return };
        let Some(cgroup) = &self.cgroup else {
            self.cleaned = true;
            return;
        };
        if cgroup.remove().is_ok() {
            self.cgroup = None;
            self.cleaned = true;
            return;
        }
        if !exit.killed_cgroup {
            exit.killed_cgroup = true;
            let _ = cgroup.kill();
            if cgroup.remove().is_ok() {
                self.cgroup = None;
                self.cleaned = true;
            }
            return;
        }
        if exit.at.elapsed() >= GIVE_UP {
            // Something in it does not die: a later start ends it (or gives up the same way).
            if let Some(cgroup) = self.cgroup.take() {
                cgroup.forget();
            }
            self.cleaned = true;
        }
    }

    /// Reaps the zombie.
    fn reap(&self) {
        if let Some(pid) = Pid::from_raw(self.pid) {
            let _ = rustix::process::waitpid(Some(pid), WaitOptions::NOHANG);
        }
    }
}

/// The spawner thread's loop (see the module docs).
fn spawner_loop(requests: &mpsc::Receiver<Request>, wake: &OwnedFd) {
    let mut tracked: Vec<Tracked> = Vec::new();
    loop {
        let mut drain = [0u8; 64];
        while matches!(rustix::io::read(wake, &mut drain), Ok(n) if n > 0) {}
        loop {
            match requests.try_recv() {
                Ok(Request::Spawn(plan, reply)) => reply(spawn(plan, &mut tracked)),
                Ok(Request::Release(id, done)) => match tracked.iter_mut().find(|t| t.id == id) {
                    Some(entry) => {
                        entry.released = true;
                        entry.waiters.push(done);
                    }
                    None => done(()),
                },
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => return,
            }
        }
        let mut sweep = false;
        for entry in &mut tracked {
            if entry.watch.is_none() {
                entry.check_exit();
            }
            if !entry.cleaned && entry.exit.is_some() {
                entry.clean_up();
                sweep |= entry.cleaned && entry.exit.is_some_and(|exit| !exit.clean);
            }
        }
        if sweep && containment::is_subreaper() {
            // Supervisors (live or zombies) are never targets.
            let supervisors: Vec<u32> = tracked
                .iter()
                .filter_map(|t| u32::try_from(t.pid).ok())
                .collect();
            containment::end_adopted(&supervisors);
        }
        tracked.retain_mut(|entry| {
            if !(entry.cleaned && entry.released) {
                return true;
            }
            entry.reap();
            for done in entry.waiters.drain(..) {
                done(());
            }
            false
        });
        wait_for_news(wake, &mut tracked);
    }
}

/// Sleeps until a request comes or a watched supervisor's report pipe hangs up (its watch is
/// then dropped, and its exit looked at), or for [`RETRY`] while an exit is still to be seen
/// or a cleanup is unfinished.
fn wait_for_news(wake: &OwnedFd, tracked: &mut [Tracked]) {
    let retry = tracked
        .iter()
        .any(|t| (t.watch.is_none() && t.exit.is_none()) || (t.exit.is_some() && !t.cleaned));
    let mut fds = vec![PollFd::new(wake, PollFlags::IN)];
    // No events asked: only the hang-up (always reported) wakes the thread.
    fds.extend(
        tracked
            .iter()
            .filter_map(|t| t.watch.as_ref())
            .map(|fd| PollFd::new(fd, PollFlags::empty())),
    );
    let timeout = rustix::time::Timespec {
        tv_sec: 0,
        tv_nsec: i64::try_from(RETRY.as_nanos()).unwrap_or(5_000_000),
    };
    let polled = rustix::event::poll(&mut fds, retry.then_some(&timeout));
    let hung_up: Vec<bool> = fds[1..]
        .iter()
        .map(|fd| polled.is_err() || !fd.revents().is_empty())
        .collect();
    drop(fds);
    let mut hung_up = hung_up.into_iter();
    for entry in tracked.iter_mut().filter(|t| t.watch.is_some()) {
        if hung_up.next().unwrap_or(true) {
            entry.watch = None;
        }
    }
}

/// Forks a supervisor for `plan` and tracks it. A cgroup the child could not join switches
/// the process to the subreaper, and the fork is retried without it.
fn spawn(mut plan: Box<ForkPlan>, tracked: &mut Vec<Tracked>) -> Result<SpawnedRaw, SpawnError> {
    loop {
        match fork_supervisor(&plan) {
            Ok(raw) => {
                // Without a copy of the report pipe it is waited for by `RETRY` instead.
                let watch = raw.report.try_clone().ok();
                tracked.push(Tracked::new(raw.id, raw.pid, watch, plan.cgroup.take()));
                return Ok(raw);
            }
            Err(ForkFailure {
                error,
                forked,
                cgroup_join,
            }) => {
                let cgroup = plan.cgroup.take();
                if let Some((id, pid, report)) = forked {
                    // It exits by itself (its error is reported, its control pipe closed), and
                    // nobody holds a handle to it.
                    let mut entry = Tracked::new(id, pid, Some(report), cgroup);
                    entry.released = true;
                    tracked.push(entry);
                }
                if !cgroup_join {
                    return Err(error);
                }
                containment::downgrade(format!(
                    "a supervised program could not join its cgroup: {error}"
                ));
            }
        }
    }
}
