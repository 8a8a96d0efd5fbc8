//! The sandbox steps of the forked child, between its cgroup and its `execve`:
//! post-fork code under the rule at the top of `forked` (raw system calls on data prepared
//! by `crate::sandbox::prepare` before the fork, failures as a stage and `errno`).

use std::os::fd::RawFd;

use super::report::{SUP_ERROR, Stage, errno, report_error, set_errno};

/// Confines the child, in this order:
///
/// 1. `unshare(CLONE_NEWUSER | CLONE_NEWNET)` (the network namespace only for
///    `network = false`): the new network namespace belongs to the new user namespace, in
///    which the child holds every capability until its `execve` — enough for step 3, and
///    nothing outside: root stays uid 0 but has no capability over the parent namespaces, so
///    `setns` into them (`nsenter`) and everything root could do to undo the rest fail.
/// 2. `setgroups` `deny`, then `uid_map` and `gid_map` mapping the own ids to themselves (the
///    one mapping an unprivileged process may write for itself).
/// 3. Loopback up in the new network namespace (`SIOCSIFFLAGS`): the only interface.
/// 4. `no_new_privs` (no set-uid program or file capability regains anything), then
///    `landlock_restrict_self` with the rule set built before the fork (writes only below the
///    writable roots; also no mounts). Both after the namespace steps, which Landlock and
///    seccomp would not hinder but which must see the child's own `/proc`.
/// 5. The seccomp filter last: it forbids `socket(AF_UNIX, …)` and must not hinder the steps
///    before it.
///
/// A failing step reports its stage and `errno` and ends the child: nothing runs unconfined.
#[cfg(target_os = "linux")]
pub(super) unsafe fn enter_sandbox(sandbox: &crate::sandbox::Prepared, ruleset: RawFd) {
    let fail = |stage: Stage| -> ! {
        report_error(SUP_ERROR, stage, errno());
        // SAFETY: ending the forked child.
        unsafe { libc::_exit(127) }
    };
    // SAFETY: raw syscalls only, on data prepared before the fork.
    unsafe {
        let mut flags = libc::CLONE_NEWUSER;
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

/// Writes all of `bytes` to the existing file `path`; false when opening or writing failed
/// (errno tells why).
#[cfg(target_os = "linux")]
fn write_file(path: &std::ffi::CStr, bytes: &[u8]) -> bool {
    // SAFETY: `path` is NUL-terminated; `bytes` is a valid buffer of its length.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        let saved = errno();
        libc::close(fd);
        set_errno(saved);
        written == bytes.len() as isize
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
