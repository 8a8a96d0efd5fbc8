//! What the forked processes tell agentsh, and how: the records of the report pipe, the
//! [`Stage`] of a start-up failure on the error pipe, the supervisor's descriptor layout, and
//! the raw writing of all of it. Post-fork code, under the rule at the top of `forked` (raw
//! system calls only, no allocation).

use std::ffi::c_int;
use std::os::fd::RawFd;

// Report records: 8 bytes, `[kind: i32][value: i32]` in native byte order.
/// Report record: the child's pid (sent once, right after its fork).
pub(super) const REPORT_CHILD_PID: i32 = 1;
/// Report record: the child's raw wait status.
pub(super) const REPORT_CHILD_EXIT: i32 = 2;

/// The step of the start-up that failed, first byte of an error-pipe record
/// `[stage: u8][errno: i32]`.
#[derive(Clone, Copy)]
#[repr(u8)]
pub(super) enum Stage {
    /// The supervisor's fork of the child.
    SupervisorFork = 1,
    /// The supervisor's descriptor layout.
    SupervisorFds = 2,
    /// The child's descriptors.
    ChildFds = 3,
    /// The child's controlling terminal.
    ChildTty = 4,
    /// The child's working directory.
    ChildCwd = 5,
    /// The child's `execve`.
    ChildExec = 6,
    /// The child joining its cgroup.
    ChildCgroup = 7,
    /// The sandbox: `unshare` of the user and mount (and network) namespace.
    SandboxUnshare = 8,
    /// The sandbox: `setgroups`, `uid_map`, `gid_map`.
    SandboxIdMap = 9,
    /// The sandbox: the new network namespace's loopback.
    SandboxLoopback = 10,
    /// The sandbox: `no_new_privs` and `landlock_restrict_self`.
    SandboxLandlock = 11,
    /// The sandbox: the seccomp filter.
    SandboxSeccomp = 12,
    /// The sandbox: the mount namespace made private, the read-only paths bound read-only.
    SandboxMounts = 13,
    /// The sandbox: the private `devpts` instance at `/dev/pts`.
    SandboxDevpts = 14,
    /// The sandbox: the child's terminal made anew in its private `devpts` instance.
    SandboxTerminal = 15,
    /// Making the network allowlist's listener in the new network namespace.
    SandboxProxy = 16,
    /// The sandbox: the session's tmpfs mounted at its temp dir.
    SandboxTempFs = 17,
    /// The child joining the cgroups of [`SpawnSpec::cgroups`](super::SpawnSpec::cgroups).
    ChildLimitsCgroup = 18,
}

impl Stage {
    /// The stage of a record's first byte.
    pub(super) fn from_byte(byte: u8) -> Option<Self> {
        [
            Self::SupervisorFork,
            Self::SupervisorFds,
            Self::ChildFds,
            Self::ChildTty,
            Self::ChildCwd,
            Self::ChildExec,
            Self::ChildCgroup,
            Self::SandboxUnshare,
            Self::SandboxIdMap,
            Self::SandboxLoopback,
            Self::SandboxLandlock,
            Self::SandboxSeccomp,
            Self::SandboxMounts,
            Self::SandboxDevpts,
            Self::SandboxTerminal,
            Self::SandboxProxy,
            Self::SandboxTempFs,
            Self::ChildLimitsCgroup,
        ]
        .into_iter()
        .find(|stage| *stage as u8 == byte)
    }

    /// What a sandbox stage did, for `Sandbox unavailable: <step>: <error>`; `None` for the
    /// other stages.
    pub(super) fn sandbox_step(self) -> Option<&'static str> {
        Some(match self {
            Self::SandboxUnshare => "creating a user namespace for the shell",
            Self::SandboxIdMap => "mapping the shell's user and group in its user namespace",
            Self::SandboxLoopback => "bringing up loopback in the shell's network namespace",
            Self::SandboxLandlock => "restricting the shell with Landlock",
            Self::SandboxSeccomp => "installing the shell's seccomp filter",
            Self::SandboxMounts => {
                "keeping the read-only paths read-only in the shell's mount namespace"
            }
            Self::SandboxDevpts => "mounting the shell's private /dev/pts",
            Self::SandboxTerminal => "giving the shell a terminal in its private /dev/pts",
            Self::SandboxProxy => "making the network proxy's listener in the shell's namespace",
            Self::SandboxTempFs => "mounting the session's temp dir of limited size",
            _ => return None,
        })
    }
}

/// The byte agentsh writes to the control pipe right before it closes it to end a tree
/// itself (a handle dropped or shut down): the supervisor then knows agentsh lives on, and
/// leaves the session's temp dir to it. A control pipe that ends without it was closed by
/// agentsh's exit (its death, or the end of `agentsh exec`).
pub(super) const ORDERLY_END: u8 = b'e';

// Descriptor layout inside the supervisor: control, report, error, then the payload (the
// child's stdio descriptors that are not /dev/null, then the extras).
pub(super) const SUP_CONTROL: RawFd = 10;
pub(super) const SUP_REPORT: RawFd = 11;
pub(super) const SUP_ERROR: RawFd = 12;
pub(super) const SUP_PAYLOAD: RawFd = 13;

pub(super) fn set_errno(value: c_int) {
    // SAFETY: the errno location is thread-local and always valid.
    unsafe {
        #[cfg(target_os = "linux")]
        {
            *libc::__errno_location() = value;
        }
        #[cfg(any(target_os = "macos", target_os = "ios", target_os = "freebsd"))]
        {
            *libc::__error() = value;
        }
    }
}

pub(super) fn report_error(fd: RawFd, stage: Stage, errno: c_int) {
    let e = errno.to_ne_bytes();
    write_all_raw(fd, &[stage as u8, e[0], e[1], e[2], e[3]]);
}

pub(super) fn write_record(fd: RawFd, kind: i32, value: i32) {
    let k = kind.to_ne_bytes();
    let v = value.to_ne_bytes();
    write_all_raw(fd, &[k[0], k[1], k[2], k[3], v[0], v[1], v[2], v[3]]);
}

/// The `errno` of the last failed libc call.
pub(super) fn errno() -> c_int {
    // `last_os_error` only reads errno into an enum: no allocation.
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Writes all of `bytes` to `fd`, retrying on `EINTR` and short writes. Errors are ignored:
/// callers use it to report, and have nowhere to report a failed report to.
pub(super) fn write_all_raw(fd: c_int, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: `bytes` is a valid readable buffer of the given length.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n < 0 {
            if errno() == libc::EINTR {
                continue;
            }
            return;
        }
        if n == 0 {
            return;
        }
        bytes = bytes.get(n as usize..).unwrap_or(&[]);
    }
}
