//! Making the tmpfs of a sandbox's size-limited temp dir (`limits.tmp_size`): a short-lived
//! forked process in a user and mount namespace of its own creates the filesystem
//! (`fsopen("tmpfs")` needs a capability there), makes it a detached mount, checks that a
//! copy of it can be made (what every sandboxed child does before mounting it), and sends the
//! mount to agentsh. agentsh keeps it for the session; each sandboxed child mounts a copy at the
//! temp dir in its own mount namespace (`confine`), so every shell, job and PTY of the session
//! shares the one filesystem, and the kernel frees it once the session and its processes are
//! gone. Nothing is mounted where agentsh or any other process of the host can see it.
//!
//! The forked process follows the rule of `forked`: only raw system calls on data prepared
//! before the fork.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd as _, OwnedFd, RawFd};

use super::raw::{clone_mount, send_fd, write_file};
use super::report::errno;

/// `fsconfig` commands and the flags of the new mount API (`linux/mount.h`).
const FSCONFIG_SET_STRING: libc::c_uint = 1;
const FSCONFIG_CMD_CREATE: libc::c_uint = 6;
const FSOPEN_CLOEXEC: libc::c_uint = 1;
const FSMOUNT_CLOEXEC: libc::c_uint = 1;
const MOUNT_ATTR_NOSUID: libc::c_uint = 0x2;
const MOUNT_ATTR_NODEV: libc::c_uint = 0x4;
/// `move_mount`: the source is the descriptor itself.
pub(super) const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;

/// The steps of the forked maker, as the byte it reports a failure with.
const STEPS: [&str; 6] = [
    "creating a user and mount namespace",
    "mapping the own ids in it",
    "opening a tmpfs",
    "setting the tmpfs's size",
    "creating the tmpfs",
    "making a copy of the mount (this kernel cannot share a detached mount)",
];

/// A detached tmpfs mount of `bytes` bytes (root directory 0700, `nosuid`, `nodev`), owned by
/// the calling user, or why the kernel refused it.
pub(crate) fn make(bytes: u64) -> Result<OwnedFd, String> {
    let uid = rustix::process::geteuid().as_raw();
    let gid = rustix::process::getegid().as_raw();
    let uid_map = format!("{uid} {uid} 1\n").into_bytes();
    let gid_map = format!("{gid} {gid} 1\n").into_bytes();
    let size = CString::new(bytes.to_string()).expect("digits hold no NUL");
    let (ours, theirs) = rustix::net::socketpair(
        rustix::net::AddressFamily::UNIX,
        rustix::net::SocketType::SEQPACKET,
        rustix::net::SocketFlags::CLOEXEC,
        None,
    )
    .map_err(|err| format!("a socket pair: {err}"))?;
    // SAFETY: the child runs only `maker_main`: raw system calls on the data prepared above,
    // then `_exit`.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork: {}", io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: we are the freshly forked child.
        unsafe { maker_main(theirs.as_raw_fd(), &uid_map, &gid_map, &size) }
    }
    drop(theirs);
    let received = receive(&ours);
    let mut status = 0;
    // SAFETY: waiting for our own child, which ends right after sending.
    while unsafe { libc::waitpid(pid, &raw mut status, 0) } < 0
        && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
    {}
    received
}

/// Reads what the maker sent: the mount, or the step that failed and its `errno`.
fn receive(socket: &OwnedFd) -> Result<OwnedFd, String> {
    use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags};
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let mut data = [0u8; 5];
    let got = rustix::net::recvmsg(
        socket,
        &mut [io::IoSliceMut::new(&mut data)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    )
    .map_err(|err| format!("reading the tmpfs maker's answer: {err}"))?;
    let mut mount = None;
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(fds) = message {
            for fd in fds {
                mount.get_or_insert(fd);
            }
        }
    }
    match (mount, got.bytes) {
        (Some(mount), 1) => Ok(mount),
        (_, 5) => {
            let step = STEPS
                .get(usize::from(data[0]))
                .unwrap_or(&"an unknown step");
            let errno = i32::from_ne_bytes([data[1], data[2], data[3], data[4]]);
            Err(format!("{step}: {}", io::Error::from_raw_os_error(errno)))
        }
        _ => Err("the tmpfs maker ended without an answer".to_owned()),
    }
}

/// The forked maker. Never returns.
unsafe fn maker_main(socket: RawFd, uid_map: &[u8], gid_map: &[u8], size: &CString) -> ! {
    let fail = |step: u8| -> ! {
        let code = errno().to_ne_bytes();
        let record = [step, code[0], code[1], code[2], code[3]];
        // SAFETY: write(2) of a stack buffer, then ending the forked child.
        unsafe {
            libc::write(socket, record.as_ptr().cast(), record.len());
            libc::_exit(1)
        }
    };
    // SAFETY: raw system calls on data prepared before the fork.
    unsafe {
        if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) != 0 {
            fail(0);
        }
        if !write_file(c"/proc/self/setgroups", b"deny")
            || !write_file(c"/proc/self/uid_map", uid_map)
            || !write_file(c"/proc/self/gid_map", gid_map)
        {
            fail(1);
        }
        let fs = libc::syscall(libc::SYS_fsopen, c"tmpfs".as_ptr(), FSOPEN_CLOEXEC) as RawFd;
        if fs < 0 {
            fail(2);
        }
        let set = |key: &std::ffi::CStr, value: &std::ffi::CStr| {
            libc::syscall(
                libc::SYS_fsconfig,
                fs,
                FSCONFIG_SET_STRING,
                key.as_ptr(),
                value.as_ptr(),
                0,
            ) == 0
        };
        if !set(c"size", size) || !set(c"mode", c"0700") {
            fail(3);
        }
        let none = std::ptr::null::<libc::c_char>();
        if libc::syscall(libc::SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, none, none, 0) != 0 {
            fail(4);
        }
        let mount = libc::syscall(
            libc::SYS_fsmount,
            fs,
            FSMOUNT_CLOEXEC,
            MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
        ) as RawFd;
        if mount < 0 {
            fail(4);
        }
        // What each sandboxed child does first: a copy of a mount made in another namespace
        // (a kernel that refuses it here would refuse every child: the session is told now).
        let copy = clone_mount(mount);
        if copy < 0 {
            fail(5);
        }
        libc::close(copy);
        if !send_fd(socket, mount) {
            libc::_exit(1);
        }
        libc::_exit(0)
    }
}
