//! The code that runs after `fork()`: the supervisor process ([`supervisor_main`]) and the
//! supervised child until its `execve` ([`child_main`]), the supervisor's kill sweep and the
//! raw writing of its reports.
//!
//! # The rule of this module
//!
//! **After `fork()` only raw system calls on data prepared beforehand.** agentsh is
//! multi-threaded; the forked copy has only the forking thread, and any lock another thread
//! held (the allocator's, stdout's, tokio's) stays locked forever. So nothing here allocates,
//! takes a lock, uses std I/O (`std::fs`, `std::io::stdout`, `std::env`) or logs: everything
//! it reads was built by `plan::ForkPlan` before the fork (C strings, pointer arrays,
//! descriptor numbers), `/proc` is read through the allocation-free `procfs` functions on stack
//! buffers, and failures travel as a stage byte plus `errno` over the error pipe.
//!
//! That is also why this module calls `libc` directly while the rest of the crate uses
//! `rustix`: each call here is a plain async-signal-safe system call whose arguments are
//! visibly the prepared data, and the module keeps one vocabulary with the signal handler and
//! the `execve` it ends in.
//!
//! # The containment stage
//!
//! Everything that confines a shell's tree goes in one stage on each side of the fork, fed by
//! `SpawnSpec` fields that `ForkPlan::new` turns into prepared data (the cgroup created, the
//! Landlock rule set built and filled, the id maps formatted, the seccomp program compiled):
//!
//! - in the supervisor, after `setsid` and the subreaper call and before it forks the child
//!   (marked *containment, supervisor side* in [`supervisor_main`]): what must hold the
//!   supervisor itself (nothing yet: the sandbox confines only the child, so that the
//!   supervisor can still see, signal, kill and reap the whole tree);
//! - in the child, after its descriptors are in place and before `chdir` and `execve`
//!   (marked *containment, child side* in [`child_main`]): first the tree's cgroup v2 (see
//!   `crate::containment`), joined by writing `0` to its `cgroup.procs` so that everything the
//!   program starts is born inside while the supervisor stays outside; then the sandbox
//!   (`supervisor::confine`): `unshare` of a user and a mount namespace (plus a network
//!   namespace for `network = false`), the id maps while `/proc/self` is still writable,
//!   loopback up while the namespace's capabilities are still held, the mounts (read-only
//!   paths, a private `/dev/pts`, and on a terminal a new one made there), `no_new_privs` and
//!   Landlock (which also forbids mounting), and seccomp last, since it may forbid calls the
//!   steps before need. The Landlock rule set reaches the child as a descriptor after the
//!   extras and sits at [`SUP_PAYLOAD`] until `landlock_restrict_self` has used it; with a
//!   network allowlist or a controlling terminal, the socket that takes the proxy's listener
//!   and the new terminal's master to agentsh follows it, at `SUP_PAYLOAD + 1`; with a
//!   size-limited temp dir, the session's tmpfs comes last.
//!
//! When the supervisor ends the tree it writes `cgroup.kill` before its own sweep
//! ([`kill_everything`]), removes the emptied cgroup, and exits with 0 only when nothing is
//! left; agentsh's spawner thread cleans up after any other end (see `thread`).
//!
//! A failure there is reported like every other step, as a [`Stage`] and an `errno`.

use std::ffi::c_int;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicI32, Ordering};

use super::plan::ChildView;
use super::remove;
use super::report::{
    REPORT_CHILD_EXIT, REPORT_CHILD_PID, SUP_CONTROL, SUP_ERROR, SUP_PAYLOAD, SUP_REPORT, Stage,
    errno, report_error, set_errno, write_all_raw, write_record,
};
use crate::procfs;

/// The write end of the supervisor's self-pipe, for its signal handler.
static SIGNAL_PIPE: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(signal: c_int) {
    let saved = errno();
    let byte = signal as u8;
    let fd = SIGNAL_PIPE.load(Ordering::Relaxed);
    // SAFETY: write(2) is async-signal-safe; `byte` is a valid one-byte buffer.
    unsafe { libc::write(fd, (&raw const byte).cast(), 1) };
    set_errno(saved);
}

/// Every catchable signal back to its default action, nothing blocked.
unsafe fn reset_signals() {
    // SAFETY: plain signal-disposition syscalls on valid arguments.
    unsafe {
        unblock_all_signals();
        reset_dispositions();
    }
}

/// Every catchable signal back to its default action (the mask is left as it is).
unsafe fn reset_dispositions() {
    for signal in 1..32 {
        if signal != libc::SIGKILL && signal != libc::SIGSTOP {
            // SAFETY: a plain signal-disposition syscall on valid arguments.
            unsafe { libc::signal(signal, libc::SIG_DFL) };
        }
    }
}

/// Blocks every signal that can be blocked.
fn block_all_signals() {
    // SAFETY: `all` is initialised by sigfillset before use.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&raw mut all);
        libc::sigprocmask(libc::SIG_SETMASK, &raw const all, std::ptr::null_mut());
    }
}

/// Blocks no signal.
fn unblock_all_signals() {
    // SAFETY: `empty` is initialised by sigemptyset before use.
    unsafe {
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &raw const empty, std::ptr::null_mut());
    }
}

/// Ends a supervisor whose agentsh died before its tree was started: removes what the tree
/// would have had (the shell's private directory, the empty cgroup) and, once agentsh's lock
/// is free, the session's temp dir. Never returns.
#[cfg(target_os = "linux")]
unsafe fn end_before_the_tree(plan: &super::plan::ForkPlan) -> ! {
    // SAFETY: raw syscalls only, on prepared data.
    unsafe {
        // The copies of agentsh's descriptors made by the fork go first: among them is the
        // one that holds the lock of the session's temp dir.
        close_from(3);
        if let Some(dir) = &plan.remove_on_exit {
            remove::remove_tree_dir(dir);
        }
        if let Some(cgroup) = &plan.cgroup {
            libc::rmdir(cgroup.dir_path().as_ptr());
        }
        if let Some(dir) = &plan.orphan_dir {
            remove::remove_owned_if_orphaned(dir, remove::Ending::OwnerExited);
        }
        libc::_exit(0);
    }
}

unsafe fn install_handler(signal: c_int) {
    // SAFETY: `action` is fully initialised; `on_signal` is async-signal-safe.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal as *const () as usize;
        action.sa_flags = libc::SA_RESTART
            | if signal == libc::SIGCHLD {
                libc::SA_NOCLDSTOP
            } else {
                0
            };
        libc::sigemptyset(&raw mut action.sa_mask);
        libc::sigaction(signal, &raw const action, std::ptr::null_mut());
    }
}

/// The supervisor. Never returns.
pub(super) unsafe fn supervisor_main(view: &ChildView<'_>) -> ! {
    // SAFETY: raw syscalls only, on descriptors and buffers prepared before the fork.
    unsafe {
        libc::setsid();
        // Every signal waits until its handler is in place: a parent-death signal that came
        // before would end the supervisor by its default action, the directories left behind.
        block_all_signals();
        #[cfg(target_os = "linux")]
        {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM, 0, 0, 0);
            if libc::getppid() != view.parent {
                // agentsh died between fork and prctl: no tree to supervise, only its
                // directories to remove.
                end_before_the_tree(view.plan);
            }
        }
        reset_dispositions();
        // Writing a report after agentsh died must not kill us before we clean up.
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);

        // Move the descriptors we need to a fixed layout: 10 control, 11 report, 12 error,
        // 13.. payload. First above everything (so no move overwrites a source), then down.
        let count = view.wanted.len() as RawFd;
        let highest = view.wanted.iter().copied().max().unwrap_or(0);
        let above = (highest + 1).max(SUP_CONTROL + count);
        let mut temp = [0 as RawFd; 16];
        if view.wanted.len() > temp.len() {
            report_error(view.wanted[2], Stage::SupervisorFds, libc::EMFILE);
            libc::_exit(126);
        }
        for (i, &fd) in view.wanted.iter().enumerate() {
            let copy = libc::fcntl(fd, libc::F_DUPFD, above);
            if copy < 0 {
                report_error(view.wanted[2], Stage::SupervisorFds, errno());
                libc::_exit(126);
            }
            temp[i] = copy;
        }
        for (i, &copy) in temp[..view.wanted.len()].iter().enumerate() {
            libc::dup2(copy, SUP_CONTROL + i as RawFd);
        }
        close_from(SUP_CONTROL + count);
        for fd in 3..SUP_CONTROL {
            libc::close(fd);
        }
        // Our own standard descriptors must not keep agentsh's terminal or pipes open.
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            for fd in 0..3 {
                libc::dup2(null, fd);
            }
            if null > 2 {
                libc::close(null);
            }
        }
        for fd in SUP_CONTROL..SUP_CONTROL + count {
            set_cloexec(fd);
        }

        // Self-pipe for signals: the handler writes the signal number, poll wakes up.
        let mut sp = [0 as c_int; 2];
        if libc::pipe(sp.as_mut_ptr()) != 0 {
            report_error(SUP_ERROR, Stage::SupervisorFds, errno());
            libc::_exit(126);
        }
        for &fd in &sp {
            set_cloexec(fd);
            let flags = libc::fcntl(fd, libc::F_GETFL);
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
        SIGNAL_PIPE.store(sp[1], Ordering::Relaxed);
        for signal in [libc::SIGCHLD, libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
            install_handler(signal);
        }
        // A signal that came meanwhile is handled now: it ends the tree as soon as it exists.
        unblock_all_signals();

        // Containment, supervisor side: whatever must hold the supervisor itself goes here,
        // before the child exists. The tree's cgroup is joined by the child (below), so that
        // the supervisor stays outside it and can kill it whole.

        let (child, joined) = fork_child(view.plan);
        if child < 0 {
            report_error(SUP_ERROR, Stage::SupervisorFork, errno());
            libc::_exit(126);
        }
        if child == 0 {
            child_main(view, sp, joined);
        }
        write_record(SUP_REPORT, REPORT_CHILD_PID, child);
        libc::close(SUP_ERROR);
        close_from(SUP_PAYLOAD);
        // The payload range is gone; the self-pipe lives below SUP_CONTROL (3 and 4).

        let mut fds = [
            libc::pollfd {
                fd: SUP_CONTROL,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: sp[0],
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        loop {
            let rc = libc::poll(fds.as_mut_ptr(), 2, -1);
            let mut end = false;
            if rc < 0 && errno() != libc::EINTR {
                end = true;
            }
            let mut signals = [0u8; 64];
            loop {
                let n = libc::read(sp[0], signals.as_mut_ptr().cast(), signals.len());
                if n <= 0 {
                    break;
                }
                for &s in &signals[..n as usize] {
                    if c_int::from(s) != libc::SIGCHLD {
                        end = true;
                    }
                }
            }
            reap(child);
            if fds[0].revents != 0 {
                end = true;
            }
            if end {
                let ending = remove::Ending::of(SUP_CONTROL);
                // Everything in the tree's cgroup dies at once, forks included; the sweep
                // below then only reaps (and finds the rest without cgroups).
                if let Some(cgroup) = &view.plan.cgroup {
                    write_path(cgroup.kill_path(), b"1");
                }
                // The directories go before the sweep, which can take seconds on a busy
                // machine (every round reads all of `/proc`): the shell's once it can write
                // there no more, the session's temp dir (when agentsh is gone) once nothing
                // of the tree can run again (its cgroup was killed), and else after the sweep.
                libc::kill(child, libc::SIGKILL);
                if let Some(dir) = &view.plan.remove_on_exit {
                    remove::remove_tree_dir(dir);
                }
                let orphan_dir = view.plan.orphan_dir.as_ref();
                if let Some(dir) = orphan_dir.filter(|_| view.plan.cgroup.is_some()) {
                    remove::remove_owned_if_orphaned(dir, ending);
                }
                let mut clean = kill_everything(child);
                if let Some(cgroup) = &view.plan.cgroup {
                    clean &= libc::rmdir(cgroup.dir_path().as_ptr()) == 0;
                }
                // Again (a process that was inside a system call then may have added an
                // entry); a directory removed already is not found. After a signal, agentsh
                // may be dying still (its parent-death signal comes before its end): its
                // control pipe says so within moments.
                if let Some(dir) = orphan_dir {
                    let ending = match ending {
                        remove::Ending::Signalled => remove::Ending::after_signal(SUP_CONTROL),
                        ending => ending,
                    };
                    remove::remove_owned_if_orphaned(dir, ending);
                }
                // 0 tells agentsh that nothing is left to clean up after us.
                libc::_exit(i32::from(!clean));
            }
        }
    }
}

/// `clone3` flag: start the child in the cgroup given as a directory descriptor.
#[cfg(target_os = "linux")]
const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// `struct clone_args` up to `cgroup` (`CLONE_ARGS_SIZE_VER2`).
#[cfg(target_os = "linux")]
#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

/// Forks the supervised child like `fork()`; with a cgroup, directly into it when the kernel
/// can (`clone3` with `CLONE_INTO_CGROUP`, Linux 5.7): moving a process between cgroups
/// afterwards waits for an RCU grace period, about 15 ms on a quiet machine, on every shell
/// start. Returns the pid (0 in the child, negative on failure) and whether the child is in
/// its cgroup already.
///
/// The child of a raw `clone3` is a `fork` child that skipped libc's bookkeeping (`atfork`
/// handlers, its cached thread id): harmless here, where the child makes only raw system calls
/// until `execve`.
unsafe fn fork_child(plan: &super::plan::ForkPlan) -> (libc::pid_t, bool) {
    // SAFETY: raw syscalls only, on prepared data and a stack-allocated argument block.
    unsafe {
        #[cfg(target_os = "linux")]
        if let Some(cgroup) = &plan.cgroup {
            let dir = libc::open(
                cgroup.dir_path().as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
            );
            if dir >= 0 {
                let args = CloneArgs {
                    flags: CLONE_INTO_CGROUP,
                    exit_signal: libc::SIGCHLD as u64,
                    cgroup: dir as u64,
                    ..CloneArgs::default()
                };
                let pid = libc::syscall(
                    libc::SYS_clone3,
                    &raw const args,
                    std::mem::size_of::<CloneArgs>(),
                );
                if pid == 0 {
                    // The child: `dir` is close-on-exec.
                    return (0, true);
                }
                libc::close(dir);
                if pid > 0 {
                    return (pid as libc::pid_t, true);
                }
                // An older kernel (ENOSYS, E2BIG) or a refusal: fork, and the child joins.
            }
        }
        (libc::fork(), plan.cgroup.is_none())
    }
}

/// Reaps every exited child; reports the supervised child's status. Returns whether children
/// are left (false once `waitpid` says there is none: `ECHILD`).
unsafe fn reap(child: libc::pid_t) -> bool {
    loop {
        let mut status = 0;
        // SAFETY: `status` is a valid out-pointer.
        let pid = unsafe { libc::waitpid(-1, &raw mut status, libc::WNOHANG) };
        if pid <= 0 {
            return pid == 0;
        }
        if pid == child {
            write_record(SUP_REPORT, REPORT_CHILD_EXIT, status);
        }
    }
}

/// Sleeps `nanos` nanoseconds (less than a second).
#[cfg(target_os = "linux")]
fn nap(nanos: libc::c_long) {
    let pause = libc::timespec {
        tv_sec: 0,
        tv_nsec: nanos,
    };
    // SAFETY: `pause` is a valid timespec; no remainder is asked for.
    unsafe { libc::nanosleep(&raw const pause, std::ptr::null_mut()) };
}

/// Kills every descendant (stopping them first so that none can fork during the sweep) and
/// reaps them, until none is left or about two seconds have passed. True when none is left.
///
/// The child goes first, without a scan: as a subreaper we adopt whatever it leaves, so every
/// remaining descendant has one of our children as its ancestor, and a supervisor without
/// children has no descendants at all. That is the usual end (an idle shell with no background
/// jobs), and it then costs no `/proc` scan — which reads every process's `stat`, often several
/// times, and was most of the CPU time of a short `agentsh exec`.
#[cfg(target_os = "linux")]
unsafe fn kill_everything(child: libc::pid_t) -> bool {
    // SAFETY: raw syscalls only.
    unsafe {
        libc::kill(child, libc::SIGKILL);
        // A SIGKILLed process can take a moment to die (or stay in uninterruptible sleep):
        // wait for it a bounded time, then leave it to the sweep.
        for _ in 0..2000 {
            let mut status = 0;
            let r = libc::waitpid(child, &raw mut status, libc::WNOHANG);
            if r == child {
                write_record(SUP_REPORT, REPORT_CHILD_EXIT, status);
                break;
            }
            if r < 0 {
                break; // Already reaped.
            }
            nap(100_000);
        }
        if !reap(child) {
            return true; // No child, hence no descendant, is left.
        }
        // Something still runs: sweep.
        let me = libc::getpid() as u64;
        for round in 0..2000 {
            let mut found = 0u32;
            procfs::for_each_pid(|pid| {
                if pid != me && procfs::is_live_descendant(pid, me) {
                    libc::kill(pid as libc::pid_t, libc::SIGSTOP);
                    found += 1;
                }
            });
            procfs::for_each_pid(|pid| {
                if pid != me && procfs::is_live_descendant(pid, me) {
                    libc::kill(pid as libc::pid_t, libc::SIGKILL);
                }
            });
            let children_left = reap(child);
            if found == 0 && !children_left {
                return true; // Nothing left at all.
            }
            if round > 0 {
                nap(1_000_000);
            }
        }
        false
    }
}

/// Without `/proc` and a subreaper, the reach is the supervisor's process group (the session it
/// created): processes that moved to another group or session are not found.
#[cfg(not(target_os = "linux"))]
unsafe fn kill_everything(child: libc::pid_t) -> bool {
    // SAFETY: raw syscalls only.
    unsafe {
        libc::kill(child, libc::SIGKILL);
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
        libc::kill(0, libc::SIGKILL);
    }
    false
}

/// The supervised child. Never returns.
unsafe fn child_main(view: &ChildView<'_>, self_pipe: [c_int; 2], joined: bool) -> ! {
    // SAFETY: raw syscalls only, on descriptors and buffers prepared before the fork.
    unsafe {
        reset_signals();
        libc::close(self_pipe[0]);
        libc::close(self_pipe[1]);
        let plan = view.plan;
        if plan.controlling_terminal && libc::setsid() < 0 {
            report_error(SUP_ERROR, Stage::ChildTty, errno());
            libc::_exit(127);
        }
        // Payload descriptors sit at SUP_PAYLOAD.. in the order: stdio (Some), extras.
        let mut next = SUP_PAYLOAD;
        for (target, slot) in plan.stdio.iter().enumerate() {
            let source = if slot.is_some() {
                let fd = next;
                next += 1;
                fd
            } else {
                libc::open(c"/dev/null".as_ptr(), libc::O_RDWR)
            };
            if source < 0 || libc::dup2(source, target as RawFd) < 0 {
                report_error(SUP_ERROR, Stage::ChildFds, errno());
                libc::_exit(127);
            }
            if slot.is_none() && source != target as RawFd {
                libc::close(source);
            }
        }
        let mut used = [false; 10];
        for (_, target) in &plan.extras {
            if libc::dup2(next, *target) < 0 {
                report_error(SUP_ERROR, Stage::ChildFds, errno());
                libc::_exit(127);
            }
            used[*target as usize] = true;
            next += 1;
        }
        for fd in 3..SUP_CONTROL {
            if !used[fd as usize] {
                libc::close(fd);
            }
        }
        libc::close(SUP_CONTROL);
        libc::close(SUP_REPORT);
        // The sandbox's rule set follows the extras; it moves to SUP_PAYLOAD until used. When
        // descriptors go out to agentsh (a proxy's listener, a new terminal's master) the
        // socket for them follows it and moves to SUP_PAYLOAD + 1; the tmpfs of a size-limited
        // temp dir comes last (`next` >= SUP_PAYLOAD and the moves go in order: no move
        // overwrites a source not yet moved).
        let terminal_inside = plan.sandbox.is_some() && plan.controlling_terminal;
        let outbox = plan.outbox();
        let temp_mount = plan
            .sandbox
            .as_ref()
            .is_some_and(|sandbox| sandbox.temp_mount.is_some());
        let sandbox_fds = match &plan.sandbox {
            None => 0,
            Some(_) => 1 + RawFd::from(outbox) + RawFd::from(temp_mount),
        };
        if next != SUP_PAYLOAD {
            for i in 0..sandbox_fds {
                libc::dup2(next + i, SUP_PAYLOAD + i);
            }
        }
        close_from(SUP_PAYLOAD + sandbox_fds);
        set_cloexec(SUP_ERROR);
        // In a sandbox the controlling terminal is made inside it (see `confine`).
        if plan.controlling_terminal && !terminal_inside {
            #[allow(clippy::useless_conversion)]
            if libc::ioctl(0, libc::TIOCSCTTY.into(), 0) < 0 {
                report_error(SUP_ERROR, Stage::ChildTty, errno());
                libc::_exit(127);
            }
        }
        // Containment, child side, after the descriptors are in place and before the working
        // directory and the program are resolved: first the tree's cgroup (before anything
        // can fork, so that every descendant is born inside); later namespaces, then
        // Landlock, then seccomp last (it may forbid the calls before it).
        if let Some(cgroup) = plan.cgroup.as_ref().filter(|_| !joined) {
            let fd = libc::open(
                cgroup.procs_path().as_ptr(),
                libc::O_WRONLY | libc::O_CLOEXEC,
            );
            // "0" is the writing process.
            if fd < 0 || libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                report_error(SUP_ERROR, Stage::ChildCgroup, errno());
                libc::_exit(127);
            }
            libc::close(fd);
        }
        // Then the cgroups of the tree's resource limits, before the sandbox's user namespace
        // (from inside it the cgroup files are no longer the child's to write), each by the
        // file that moves the writer: on cgroup v1 a hierarchy's `tasks`, where "0" moves this
        // thread alone (the only one after `fork`), which the kernel does without waiting for
        // an RCU grace period.
        for file in &plan.join_cgroups {
            let fd = libc::open(file.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            if fd < 0 || libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                report_error(SUP_ERROR, Stage::ChildLimitsCgroup, errno());
                libc::_exit(127);
            }
            libc::close(fd);
        }
        #[cfg(target_os = "linux")]
        if let Some(sandbox) = &plan.sandbox {
            super::confine::enter_sandbox(
                sandbox,
                SUP_PAYLOAD,
                outbox.then_some(SUP_PAYLOAD + 1),
                temp_mount.then_some(SUP_PAYLOAD + sandbox_fds - 1),
                terminal_inside,
            );
        }
        // Backstops of the tree's resource limits (lowering an rlimit never fails for want of
        // a privilege; one the host already holds lower stays lower).
        if let Some(bytes) = plan.backstops.data_bytes {
            lower_rlimit(libc::RLIMIT_DATA, bytes);
        }
        if let Some(tasks) = plan.backstops.sandboxed_tasks
            && plan.sandbox.is_some()
            && libc::getuid() != 0
        {
            lower_rlimit(libc::RLIMIT_NPROC, tasks);
        }
        if libc::chdir(plan.cwd.as_ptr()) != 0 {
            report_error(SUP_ERROR, Stage::ChildCwd, errno());
            libc::_exit(127);
        }
        libc::execve(
            plan.program.as_ptr(),
            view.argv.as_ptr(),
            view.envp.as_ptr(),
        );
        report_error(SUP_ERROR, Stage::ChildExec, errno());
        libc::_exit(127);
    }
}

// Raw helpers.

/// The type of an rlimit's resource number, as the C library declares it.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
type RlimitResource = libc::__rlimit_resource_t;
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
type RlimitResource = libc::c_int;

/// Lowers `resource` to `value` (soft and hard), unless it is already lower. Async-signal-safe.
///
/// # Safety
/// Raw system calls; called in the forked child.
unsafe fn lower_rlimit(resource: RlimitResource, value: u64) {
    let mut current = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `current` is a valid rlimit to fill.
    if unsafe { libc::getrlimit(resource, &raw mut current) } != 0 {
        return;
    }
    let value = value as libc::rlim_t;
    let lowered = libc::rlimit {
        rlim_cur: current.rlim_cur.min(value),
        rlim_max: current.rlim_max.min(value),
    };
    // SAFETY: `lowered` is a valid rlimit.
    unsafe { libc::setrlimit(resource, &raw const lowered) };
}

/// Closes every descriptor `>= lowest`.
fn close_from(lowest: c_int) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: close_range only closes descriptors; no memory is touched.
        let rc = unsafe { libc::syscall(libc::SYS_close_range, lowest as u32, u32::MAX, 0u32) };
        if rc == 0 {
            return;
        }
    }
    // Fallback (kernels before 5.9, other systems): close up to the descriptor limit.
    // SAFETY: sysconf has no memory effects.
    let max = unsafe { libc::sysconf(libc::_SC_OPEN_MAX) };
    let max = if max <= 0 {
        4096
    } else {
        max.min(1 << 20) as c_int
    };
    for fd in lowest..max {
        // SAFETY: closing an arbitrary descriptor number is harmless in the forked child.
        unsafe { libc::close(fd) };
    }
}

/// Writes `bytes` to the file at `path` (a cgroup control file), best effort.
fn write_path(path: &std::ffi::CStr, bytes: &[u8]) {
    // SAFETY: `path` is NUL-terminated.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd >= 0 {
        write_all_raw(fd, bytes);
        // SAFETY: `fd` was opened above and is closed once.
        unsafe { libc::close(fd) };
    }
}

/// Sets `FD_CLOEXEC` on `fd`.
fn set_cloexec(fd: c_int) {
    // SAFETY: fcntl on a descriptor number has no memory effects.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFD);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
        }
    }
}
