//! Opening a pseudo-terminal pair with rustix (`posix_openpt`, `grantpt`, `unlockpt`, then the
//! peer: `TIOCGPTPEER` on Linux, the `ptsname` path elsewhere).

use std::io;
use std::os::fd::{AsFd, OwnedFd};

use rustix::fs::OFlags;
use rustix::pty::OpenptFlags;
use rustix::termios::{self, InputModes, OptionalActions, Winsize};

use crate::terminal::TerminalSize;

/// A master/slave pair. Both close on exec and on drop; the master is non-blocking.
pub(crate) struct PtyPair {
    pub(crate) master: OwnedFd,
    pub(crate) slave: OwnedFd,
}

pub(crate) fn open(size: TerminalSize) -> io::Result<PtyPair> {
    let master =
        rustix::pty::openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)?;
    rustix::pty::grantpt(&master)?;
    rustix::pty::unlockpt(&master)?;
    let slave = open_slave(&master)?;
    set_size(&master, size)?;
    // UTF-8 aware line editing (Backspace removes a whole character in canonical mode).
    let mut modes = termios::tcgetattr(&slave)?;
    modes.input_modes |= InputModes::IUTF8;
    termios::tcsetattr(&slave, OptionalActions::Now, &modes)?;
    set_nonblocking(&master)?;
    Ok(PtyPair { master, slave })
}

/// Makes `master` non-blocking.
pub(crate) fn set_nonblocking(master: impl AsFd) -> io::Result<()> {
    let flags = rustix::fs::fcntl_getfl(&master)?;
    rustix::fs::fcntl_setfl(&master, flags | OFlags::NONBLOCK)?;
    Ok(())
}

/// The device number (`st_rdev`) of the slave side of `master`, wherever its `devpts` is
/// mounted (a sandbox's private one has no path here): read from a peer opened through the
/// master and closed again.
pub(crate) fn slave_device(master: &OwnedFd) -> io::Result<u64> {
    Ok(rustix::fs::fstat(open_slave(master)?)?.st_rdev)
}

#[cfg(target_os = "linux")]
fn open_slave(master: &OwnedFd) -> io::Result<OwnedFd> {
    let flags = OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC;
    match rustix::pty::ioctl_tiocgptpeer(master, flags) {
        Ok(slave) => Ok(slave),
        // Kernels before 4.13: open the slave by its path.
        Err(_) => open_slave_by_name(master),
    }
}

#[cfg(not(target_os = "linux"))]
fn open_slave(master: &OwnedFd) -> io::Result<OwnedFd> {
    open_slave_by_name(master)
}

fn open_slave_by_name(master: &OwnedFd) -> io::Result<OwnedFd> {
    let name = rustix::pty::ptsname(master, Vec::new())?;
    Ok(rustix::fs::open(
        name.as_c_str(),
        OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )?)
}

/// Sets the window size (the kernel sends SIGWINCH to the foreground process group).
pub(crate) fn set_size(master: impl AsFd, size: TerminalSize) -> io::Result<()> {
    termios::tcsetwinsize(
        master,
        Winsize {
            ws_row: size.rows,
            ws_col: size.cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        },
    )?;
    Ok(())
}
