//! The sandbox steps of the forked child, between its cgroup and its `execve`:
//! post-fork code under the rule at the top of `forked` (raw system calls on data prepared
//! by `crate::sandbox::prepare` before the fork, failures as a stage and `errno`).

use std::os::fd::RawFd;

use super::raw::{send_fd, write_file};
use super::report::{SUP_ERROR, Stage, errno, report_error, set_errno};

/// Confines the child, in this order:
///
/// 1. `unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET)` (the network namespace only for
///    `network = false`): the new mount and network namespaces belong to the new user
///    namespace, in which the child holds every capability until its `execve` — enough for
///    steps 3 to 5, and nothing outside: root stays uid 0 but has no capability over the
///    parent namespaces, so `setns` into them (`nsenter`) and everything root could do to undo
///    the rest fail.
/// 2. `setgroups` `deny`, then `uid_map` and `gid_map` mapping the own ids to themselves (the
///    one mapping an unprivileged process may write for itself).
/// 3. Loopback up in the new network namespace (`SIOCSIFFLAGS`): the only interface. With a
///    network allowlist, a TCP listener bound at `127.0.0.1:<port>` there, sent to agentsh
///    (see [`proxy_listener`]): the namespace's one way out.
/// 4. The mount namespace: every mount private (`MS_REC | MS_PRIVATE` on `/`, so nothing done
///    here propagates anywhere); with a size-limited temp dir, a copy of the session's tmpfs
///    mounted at the temp dir (`temp_mount`: the same files in every process of the session;
///    Landlock's rule on the directory below it still applies, its checks cross the mount
///    point); each read-only path bind-mounted onto itself and that bind
///    remounted read-only (with the flags its mount already had, which a user namespace may
///    not clear); a new `devpts` instance at `/dev/pts` (`newinstance`: it holds only the PTYs
///    opened inside; every other terminal of the machine has no name there), added to the
///    Landlock rule set as writable (its directory exists only now).
/// 5. With a controlling terminal: the terminal swapped for one of the private instance (see
///    [`terminal_inside`]) and the new master sent to agentsh.
/// 6. `no_new_privs` (no set-uid program or file capability regains anything), then
///    `landlock_restrict_self` with the rule set (writes only below the writable roots; also
///    no mounts or unmounts, so step 4 cannot be undone). Both after the namespace steps,
///    which Landlock and seccomp would not hinder but which must see the child's own `/proc`.
/// 7. The seccomp filter last: it forbids `socket(AF_UNIX, …)` and must not hinder the steps
///    before it.
///
/// A failing step reports its stage and `errno` and ends the child: nothing runs unconfined.
/// `outbox` is the socket descriptors go to agentsh over: the proxy's listener (step 3) when
/// the policy has an allowlist, then the new terminal's master (step 5) when `terminal` (the
/// child has a controlling terminal); it is closed before anything runs, as is `temp_mount`.
#[cfg(target_os = "linux")]
pub(super) unsafe fn enter_sandbox(
    sandbox: &crate::sandbox::Prepared,
    ruleset: RawFd,
    outbox: Option<RawFd>,
    temp_mount: Option<RawFd>,
    terminal: bool,
) {
    let fail = |stage: Stage| -> ! {
        report_error(SUP_ERROR, stage, errno());
        // SAFETY: ending the forked child.
        unsafe { libc::_exit(127) }
    };
    // SAFETY: raw syscalls only, on data prepared before the fork.
    unsafe {
        let mut flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS;
        if sandbox.new_net {
            flags |= libc::CLONE_NEWNET;
        }
        if libc::unshare(flags) != 0 {
            fail(Stage::SandboxUnshare);
        }
        if !write_file(c"/proc/self/setgroups", b"deny")
            || !write_file(c"/proc/self/uid_map", &sandbox.uid_map)
            || !write_file(c"/proc/self/gid_map", &sandbox.gid_map)
        {
            fail(Stage::SandboxIdMap);
        }
        if sandbox.new_net && !loopback_up() {
            fail(Stage::SandboxLoopback);
        }
        if let (Some(port), Some(socket)) = (sandbox.proxy_port, outbox)
            && !proxy_listener(port, socket)
        {
            fail(Stage::SandboxProxy);
        }
        let none = std::ptr::null::<libc::c_char>();
        if libc::mount(
            none,
            c"/".as_ptr(),
            none,
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) != 0
        {
            fail(Stage::SandboxMounts);
        }
        if let (Some(mount), Some((_, dir))) = (temp_mount, &sandbox.temp_mount) {
            if !mount_copy(mount, dir) {
                fail(Stage::SandboxTempFs);
            }
            libc::close(mount);
        }
        for read_only in &sandbox.read_only {
            let path = read_only.path.as_ptr();
            if libc::mount(path, path, none, libc::MS_BIND, std::ptr::null()) != 0
                || libc::mount(none, path, none, read_only.flags, std::ptr::null()) != 0
            {
                fail(Stage::SandboxMounts);
            }
        }
        if !private_devpts(ruleset, sandbox.devpts_access) {
            fail(Stage::SandboxDevpts);
        }
        if let Some(socket) = outbox {
            if terminal && !terminal_inside(socket) {
                fail(Stage::SandboxTerminal);
            }
            libc::close(socket);
        }
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            || libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) != 0
        {
            fail(Stage::SandboxLandlock);
        }
        libc::close(ruleset);
        if !sandbox.filter.is_empty() {
            let program = libc::sock_fprog {
                len: sandbox.filter.len() as u16,
                filter: sandbox.filter.as_ptr().cast_mut().cast(),
            };
            if libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &raw const program,
                0,
                0,
            ) != 0
            {
                fail(Stage::SandboxSeccomp);
            }
        }
    }
}

/// `struct landlock_path_beneath_attr` (packed, as the kernel declares it).
#[cfg(target_os = "linux")]
#[repr(C, packed)]
struct PathBeneath {
    allowed_access: u64,
    parent_fd: i32,
}

/// `LANDLOCK_RULE_PATH_BENEATH`.
#[cfg(target_os = "linux")]
const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;

/// Mounts a new `devpts` instance at `/dev/pts` and lets the rule set `ruleset` write below
/// it (`access`); false on failure (errno tells why).
///
/// `newinstance` makes a `devpts` of its own, empty but for its `ptmx` (`ptmxmode=0666`, so
/// that anyone inside can open PTYs in it); `mode=0620` is the usual mode of a terminal. The
/// machine's instance stays mounted below it, out of reach by name. `/dev/ptmx`, a device node
/// outside `/dev/pts`, opens PTYs in this instance: the kernel takes the `devpts` mounted at
/// `pts` beside the `ptmx` node a process opened (Linux 4.7 and later; Landlock needs 6.2).
#[cfg(target_os = "linux")]
unsafe fn private_devpts(ruleset: RawFd, access: u64) -> bool {
    // SAFETY: raw syscalls on NUL-terminated literals and a stack-allocated attribute.
    unsafe {
        if libc::mount(
            c"devpts".as_ptr(),
            c"/dev/pts".as_ptr(),
            c"devpts".as_ptr(),
            libc::MS_NOSUID | libc::MS_NOEXEC,
            c"newinstance,ptmxmode=0666,mode=0620".as_ptr().cast(),
        ) != 0
        {
            return false;
        }
        let dir = libc::open(
            c"/dev/pts".as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        if dir < 0 {
            return false;
        }
        let rule = PathBeneath {
            allowed_access: access,
            parent_fd: dir,
        };
        let added = libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            LANDLOCK_RULE_PATH_BENEATH,
            &raw const rule,
            0u32,
        ) == 0;
        let saved = errno();
        libc::close(dir);
        set_errno(saved);
        added
    }
}

/// Moves the child to a terminal of its private `devpts` instance and sends the master side
/// to agentsh over `socket` (`SCM_RIGHTS`); false on failure (errno tells why).
///
/// Why a new terminal: the one agentsh opened for the child lives in the machine's `devpts`,
/// which the private instance hides, and a terminal no path names is not a terminal to
/// `ttyname` (`tty` would print `not a tty`, and programs that reopen their terminal by name
/// fail). Binding the machine's node into the private instance cannot work (`devpts` holds no
/// files but its PTYs, and the numbers of the two instances collide). So the child opens a PTY
/// in its own instance, gives it the modes and size of the terminal it was handed (standard
/// input), puts it in place of that terminal on every standard descriptor that was it, makes
/// it its controlling terminal, and agentsh drives its master from then on
/// (`Supervisor::take_terminal`).
#[cfg(target_os = "linux")]
unsafe fn terminal_inside(socket: RawFd) -> bool {
    // SAFETY: raw syscalls on stack-allocated buffers; every descriptor is the child's own.
    unsafe {
        let master = libc::open(
            c"/dev/pts/ptmx".as_ptr(),
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        );
        if master < 0 {
            return false;
        }
        let unlock: libc::c_int = 0;
        #[allow(clippy::useless_conversion)]
        let slave = if libc::ioctl(master, libc::TIOCSPTLCK.into(), &raw const unlock) == 0 {
            libc::ioctl(
                master,
                libc::TIOCGPTPEER.into(),
                libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
            )
        } else {
            -1
        };
        let mut given: libc::stat = std::mem::zeroed();
        let mut modes: libc::termios = std::mem::zeroed();
        let mut size: libc::winsize = std::mem::zeroed();
        #[allow(clippy::useless_conversion)]
        let mut ok = slave >= 0
            && libc::fstat(0, &raw mut given) == 0
            && libc::tcgetattr(0, &raw mut modes) == 0
            && libc::tcsetattr(slave, libc::TCSANOW, &raw const modes) == 0
            && libc::ioctl(0, libc::TIOCGWINSZ.into(), &raw mut size) == 0
            && libc::ioctl(slave, libc::TIOCSWINSZ.into(), &raw const size) == 0;
        if ok {
            for fd in 0..3 {
                let mut st: libc::stat = std::mem::zeroed();
                if libc::fstat(fd, &raw mut st) == 0
                    && st.st_dev == given.st_dev
                    && st.st_ino == given.st_ino
                    && libc::dup2(slave, fd) < 0
                {
                    ok = false;
                }
            }
        }
        #[allow(clippy::useless_conversion)]
        let ok = ok && libc::ioctl(0, libc::TIOCSCTTY.into(), 0) == 0 && send_fd(socket, master);
        let saved = errno();
        if slave >= 0 {
            libc::close(slave);
        }
        libc::close(master);
        set_errno(saved);
        ok
    }
}

/// Makes the listener of a network allowlist in the child's new network namespace — a TCP
/// socket bound at `127.0.0.1:port`, listening — and sends it to agentsh over `socket`; false
/// on failure (errno tells why).
///
/// Why a listener made inside and handed out: a connection made from a network namespace
/// reaches only that namespace's sockets, and agentsh, outside, holds no capability to make
/// sockets in it. The listener made here is owned by the namespace, so connections to
/// `127.0.0.1:port` from every process inside (whatever session or process group it moves
/// to) land in its queue, and agentsh, holding the only copy once the child has closed its
/// own, accepts them outside: the proxy decides where each may go. Nothing inside can take
/// the port over (it stays bound while agentsh holds the socket) or accept on it (no process
/// inside has it).
#[cfg(target_os = "linux")]
unsafe fn proxy_listener(port: u16, socket: RawFd) -> bool {
    // SAFETY: raw syscalls on a stack-allocated address; the descriptor is the child's own.
    unsafe {
        let listener = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if listener < 0 {
            return false;
        }
        let mut address: libc::sockaddr_in = std::mem::zeroed();
        address.sin_family = libc::AF_INET as libc::sa_family_t;
        address.sin_port = port.to_be();
        address.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
        let ok = libc::bind(
            listener,
            (&raw const address).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        ) == 0
            && libc::listen(listener, libc::SOMAXCONN) == 0
            && send_fd(socket, listener);
        let saved = errno();
        libc::close(listener);
        set_errno(saved);
        ok
    }
}

/// Mounts a copy of the detached mount `mount` at `dir`; false on failure (errno tells why).
#[cfg(target_os = "linux")]
unsafe fn mount_copy(mount: RawFd, dir: &std::ffi::CStr) -> bool {
    use super::temp_fs::MOVE_MOUNT_F_EMPTY_PATH;
    // SAFETY: raw system calls on a descriptor and NUL-terminated paths.
    unsafe {
        let copy = super::raw::clone_mount(mount);
        if copy < 0 {
            return false;
        }
        let moved = libc::syscall(
            libc::SYS_move_mount,
            copy,
            c"".as_ptr(),
            libc::AT_FDCWD,
            dir.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH,
        ) == 0;
        let saved = errno();
        libc::close(copy);
        set_errno(saved);
        moved
    }
}

/// `struct ifreq` with the flags member of its union (40 bytes on 64-bit systems, 32 else).
#[cfg(target_os = "linux")]
#[repr(C)]
struct IfreqFlags {
    name: [u8; 16],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Sets `IFF_UP` on `lo`; false on failure (errno tells why).
#[cfg(target_os = "linux")]
fn loopback_up() -> bool {
    // SAFETY: raw syscalls on a stack-allocated `ifreq` large enough for the kernel's.
    unsafe {
        let sock = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if sock < 0 {
            return false;
        }
        let mut req = IfreqFlags {
            name: [0; 16],
            flags: 0,
            _pad: [0; 22],
        };
        req.name[..2].copy_from_slice(b"lo");
        #[allow(clippy::useless_conversion)]
        let ok = libc::ioctl(sock, libc::SIOCGIFFLAGS.into(), &raw mut req) == 0 && {
            req.flags |= libc::IFF_UP as libc::c_short;
            #[allow(clippy::useless_conversion)]
            let set = libc::ioctl(sock, libc::SIOCSIFFLAGS.into(), &raw const req);
            set == 0
        };
        let saved = errno();
        libc::close(sock);
        set_errno(saved);
        ok
    }
}
