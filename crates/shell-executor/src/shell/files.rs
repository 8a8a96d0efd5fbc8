//! The shells' private directories: where they go, and writing the files and FIFOs agentsh
//! shares with a shell's loop there (see `bootstrap`).

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use crate::bootstrap::{self, COMMAND_FILE, PRE_PREFIX};

/// The start of a shell's private directory's name (six random letters and digits follow).
pub(super) const PRIVATE_DIR_PREFIX: &str = agentsh_process::SHELL_DIR_PREFIX;

/// Where the shells' private directories go: a tmpfs when there is one (the per-command files
/// are rewritten on every call), else the temporary directory
/// ([`agentsh_process::runtime_dir`]). What an agentsh left there when it died together with
/// its supervisors (all of them SIGKILLed, the end of a PID namespace) goes by the sweep of a
/// later start: each is locked by its agentsh for as long as it runs (see
/// `agentsh_process::OwnedDir`, `agentsh_process::sweep_leftovers`).
pub(super) fn private_dir_parent() -> PathBuf {
    agentsh_process::runtime_dir()
}

/// Writes `bytes` to `path`, created 0600 (the mode holds whatever the umask, and a file that
/// already exists keeps the 0600 it was created with).
pub(super) fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?
        .write_all(bytes)
}

/// Creates a FIFO (0600) at `path` and opens it read-write, non-blocking, close-on-exec:
/// holding both ends, agentsh never blocks the shell's open and never sees EOF.
pub(super) fn private_fifo(path: &Path) -> io::Result<OwnedFd> {
    use rustix::fs::{CWD, Mode, OFlags};
    rustix::fs::mkfifoat(CWD, path, Mode::from_raw_mode(0o600))?;
    let flags = OFlags::RDWR | OFlags::NONBLOCK | OFlags::CLOEXEC;
    Ok(rustix::fs::open(path, flags, Mode::empty())?)
}

/// Writes all of `bytes` (a trigger: a few dozen bytes into an empty FIFO).
pub(super) fn write_all(fd: impl AsFd, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        match rustix::io::write(&fd, bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(rustix::io::Errno::INTR) => {}
            Err(err) => return Err(err.into()),
        }
    }
    Ok(())
}

/// Writes the command file: the text as given, behind [`PRE_PREFIX`] when the loop saved user
/// traps to restore for it (bash).
pub(super) fn write_command(dir: &Path, restore_traps: bool, command: &str) -> io::Result<()> {
    if restore_traps {
        let mut text = Vec::with_capacity(PRE_PREFIX.len() + command.len());
        text.extend_from_slice(PRE_PREFIX.as_bytes());
        text.extend_from_slice(command.as_bytes());
        write_private(&dir.join(COMMAND_FILE), &text)
    } else {
        write_private(&dir.join(COMMAND_FILE), command.as_bytes())
    }
}

/// What the loop recorded when it gave up after command `seq` (see `bootstrap`).
pub(super) fn find_gave_up_file(dir: &Path, seq: u64) -> Option<bootstrap::GaveUp> {
    use std::os::unix::ffi::OsStrExt as _;
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .find_map(|entry| bootstrap::parse_gave_up_file(entry.file_name().as_bytes(), seq))
}
