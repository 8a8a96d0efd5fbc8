//! Raw system-call helpers shared by the code that runs after a `fork()` (`confine`,
//! `temp_fs`): no allocation, no lock, failures as `errno` (the rule at the top of `forked`).

use std::os::fd::RawFd;

use super::report::{errno, set_errno};

/// Sends `fd` over the Unix socket `socket` with one byte of data; false on failure.
#[cfg(target_os = "linux")]
pub(super) unsafe fn send_fd(socket: RawFd, fd: RawFd) -> bool {
    // SAFETY: the message and its control buffer are on the stack and outlive the call; the
    // buffer is aligned for `cmsghdr` and large enough for one descriptor.
    unsafe {
        let mut control = [0u64; 4];
        let space = libc::CMSG_SPACE(std::mem::size_of::<libc::c_int>() as u32) as usize;
        if space > std::mem::size_of_val(&control) {
            set_errno(libc::EINVAL);
            return false;
        }
        let mut byte = 0u8;
        let mut iov = libc::iovec {
            iov_base: (&raw mut byte).cast(),
            iov_len: 1,
        };
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &raw mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        let cmsg = libc::CMSG_FIRSTHDR(&raw const msg);
        if cmsg.is_null() {
            set_errno(libc::EINVAL);
            return false;
        }
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<libc::c_int>() as u32) as _;
        libc::CMSG_DATA(cmsg)
            .cast::<libc::c_int>()
            .write_unaligned(fd);
        libc::sendmsg(socket, &raw const msg, libc::MSG_NOSIGNAL) == 1
    }
}

/// Writes all of `bytes` to the existing file `path`; false when opening or writing failed
/// (errno tells why).
#[cfg(target_os = "linux")]
pub(super) fn write_file(path: &std::ffi::CStr, bytes: &[u8]) -> bool {
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

/// `open_tree` flags: a copy of the mount (detached), close-on-exec.
const OPEN_TREE_CLONE: libc::c_uint = 1;
const OPEN_TREE_CLOEXEC: libc::c_uint = libc::O_CLOEXEC as libc::c_uint;

/// A detached copy of the mount `mount` (`open_tree` with `OPEN_TREE_CLONE`); negative on
/// failure (errno tells why).
#[cfg(target_os = "linux")]
pub(super) fn clone_mount(mount: RawFd) -> RawFd {
    // SAFETY: a raw system call on a descriptor and a NUL-terminated empty path.
    unsafe {
        libc::syscall(
            libc::SYS_open_tree,
            mount,
            c"".as_ptr(),
            OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | libc::AT_EMPTY_PATH as libc::c_uint,
        ) as RawFd
    }
}
