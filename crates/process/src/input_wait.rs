//! Whether the programs on a terminal wait for input, from what the kernel shows in `/proc`
//! (`waiting_for_input`; Linux on x86_64 and aarch64).
//!
//! The terminal waits for input when a thread of a process in its foreground process group
//! sleeps in a system call that waits for the terminal to become readable:
//!
//! | system call (`/proc/<tid>/syscall`) | the terminal is among what it waits on when |
//! |---|---|
//! | `read`, `readv`, `pread64`, `preadv`, `preadv2` | its descriptor (argument 0) is the terminal |
//! | `poll`, `ppoll` | a `pollfd` (read from `/proc/<tid>/mem` at argument 0, argument 1 entries) asks for `POLLIN`/`POLLRDNORM` on the terminal |
//! | `select`, `pselect6` | the terminal's bit is set in the read set (`/proc/<tid>/mem` at argument 1, argument 0 descriptors) |
//! | `epoll_wait`, `epoll_pwait`, `epoll_pwait2` | the epoll descriptor's `/proc/<tid>/fdinfo` lists the terminal (`tfd:`, same inode) with `EPOLLIN`/`EPOLLRDNORM` |
//!
//! A descriptor is the terminal when `stat` of `/proc/<tid>/fd/<n>` is a character device with
//! the terminal's device number, or `/dev/tty` (5:0), which is the terminal for a process whose
//! controlling terminal it is (`getpass`, `sudo`, `ssh` prompt there).
//!
//! The group's leader is looked at first (a shell's own `read -p`, or a program it `exec`ed,
//! is answered at once); otherwise one pass over `/proc` reads each `stat` once (stack
//! buffers, no allocation). Only processes whose process group is the terminal's foreground
//! group (`tpgid`) and whose controlling terminal is the terminal are looked at further, each
//! of their threads by its own `stat` and `syscall`. The answer:
//!
//! - [`InputWait::Waiting`] as soon as one thread waits as above;
//! - [`InputWait::Unknown`] when `/proc` cannot tell: not Linux on x86_64/aarch64, `/proc` or
//!   the given process unreadable, no controlling terminal or foreground group, a thread's
//!   `syscall`, descriptors, `fdinfo` or memory unreadable (another user's process, ptrace
//!   restrictions), more than 65,536 descriptors in a `poll`/`select` ([`MAX_FDS`]);
//! - [`InputWait::NotWaiting`] otherwise: every thread runs (`R`, or `running` in `syscall`),
//!   is stopped (`T`, `t`), sleeps in another system call or on other descriptors, or is gone.
//!
//! The caller decides what the answer is worth: the job tools take `Waiting` only together with
//! 300 ms without output, and treats `Unknown` like `NotWaiting` (the job stays `running`).

use std::ffi::CStr;
use std::os::fd::{AsRawFd, OwnedFd};

use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::procfs::{self, STAT_BUFFER, parse_hex};
use crate::syscall::{Call, Syscall, parse_syscall};

/// What the kernel shows about a terminal's foreground processes and their input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputWait {
    /// A process of the terminal's foreground process group waits for the terminal to become
    /// readable (`read` on it, or `poll`/`select`/`epoll` with it among what it waits on).
    Waiting,
    /// Every thread of the foreground process group runs, is stopped, or waits for something
    /// else.
    NotWaiting,
    /// `/proc` cannot tell (see the module docs for when).
    Unknown,
}

impl InputWait {
    /// The answer for two parts of the same group: `Waiting` wins, then `Unknown`.
    fn or(self, other: Self) -> Self {
        match (self, other) {
            (Self::Waiting, _) | (_, Self::Waiting) => Self::Waiting,
            (Self::Unknown, _) | (_, Self::Unknown) => Self::Unknown,
            _ => Self::NotWaiting,
        }
    }
}

/// Most descriptors a `poll` or `select` may name for its memory to be read (a `pollfd` array
/// of 512 KiB, a read set of 8 KiB); more, and the answer is [`InputWait::Unknown`].
const MAX_FDS: u64 = 1 << 16;

/// Whether the foreground processes of `pid`'s controlling terminal wait for input on it.
///
/// `pid` is any process with that controlling terminal (the shell started on it). `terminal`,
/// when given, is the terminal's device number (`st_rdev` of its slave side): a `pid` whose
/// controlling terminal is another one (its pid reused after it exited) gives
/// [`InputWait::Unknown`] instead of an answer about a stranger's terminal.
///
/// Costs one read of `/proc/<pid>/stat` per process on the system, and a few reads per thread
/// of the foreground group; allocates nothing.
pub fn input_wait(pid: u32, terminal: Option<u64>) -> InputWait {
    scan(pid, terminal).0
}

/// The process that waits for input on `pid`'s controlling terminal, as
/// [`input_wait`] finds it (the foreground group's leader first): `None` when none waits or
/// `/proc` cannot tell.
pub fn input_waiter(pid: u32, terminal: Option<u64>) -> Option<u32> {
    match scan(pid, terminal) {
        (InputWait::Waiting, waiter) => waiter.and_then(|waiter| u32::try_from(waiter).ok()),
        _ => None,
    }
}

/// [`input_wait`]'s answer, with the process that waits when one does.
fn scan(pid: u32, terminal: Option<u64>) -> (InputWait, Option<u64>) {
    use InputWait::{NotWaiting, Unknown, Waiting};
    if !cfg!(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    )) {
        return (Unknown, None);
    }
    let mut buf = [0u8; STAT_BUFFER];
    let Some(stat) = procfs::read_stat(u64::from(pid), &mut buf) else {
        return (Unknown, None);
    };
    let (Some(tty_nr), Some(group)) = (stat.tty_nr().filter(|&nr| nr != 0), stat.tpgid()) else {
        return (Unknown, None);
    };
    let tty = Device::from_tty_nr(tty_nr);
    if terminal.is_some_and(|rdev| Device::from_rdev(rdev) != tty) {
        return (Unknown, None);
    }
    // The group's leader (the shell, or the program it ran) first: a prompt of its own is
    // answered without the scan.
    let mut answer = NotWaiting;
    if procfs::read_stat(group, &mut buf)
        .is_some_and(|stat| stat.pgrp() == Some(group) && stat.tty_nr() == Some(tty_nr))
    {
        answer = process_waits(group, tty);
    }
    if answer == Waiting {
        return (Waiting, Some(group));
    }
    let mut waiter = None;
    let listed = procfs::for_each_pid(|candidate| {
        if answer == Waiting || candidate == group {
            return;
        }
        let Some(stat) = procfs::read_stat(candidate, &mut buf) else {
            return;
        };
        if stat.pgrp() == Some(group) && stat.tty_nr() == Some(tty_nr) {
            answer = answer.or(process_waits(candidate, tty));
            if answer == Waiting {
                waiter = Some(candidate);
            }
        }
    });
    if listed {
        (answer, waiter)
    } else {
        (Unknown, None)
    }
}

/// The name of the program in the foreground of `pid`'s controlling terminal: the command
/// name (`comm`) of the terminal's foreground process group leader (`bash` at a shell's prompt,
/// `python3` while the shell runs it). `None` when `pid` has no controlling terminal, or
/// `/proc` cannot tell.
pub fn foreground_program(pid: u32) -> Option<String> {
    let mut buf = [0u8; STAT_BUFFER];
    let group = procfs::read_stat(u64::from(pid), &mut buf)?.tpgid()?;
    let mut path = [0u8; 48];
    let path = procfs::proc_path(group, b"/comm", &mut path)?;
    let comm = procfs::read_file(path, &mut buf)?;
    let name = String::from_utf8_lossy(comm).trim_end().to_owned();
    (!name.is_empty()).then_some(name)
}

/// The command line of process `pid` (its arguments joined by spaces, at most 4 KiB of
/// them); `None` when `/proc` cannot tell or it has none (a kernel thread, a zombie).
pub fn command_line(pid: u32) -> Option<String> {
    let mut buf = vec![0u8; procfs::CMDLINE_READ];
    let line = procfs::read_args(pid, &mut buf)?
        .iter()
        .filter(|arg| !arg.is_empty())
        .map(|arg| String::from_utf8_lossy(arg))
        .collect::<Vec<_>>()
        .join(" ");
    (!line.is_empty()).then_some(line)
}

/// A device number as major and minor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Device {
    major: u32,
    minor: u32,
}

/// `/dev/tty`: the controlling terminal of whoever opens it.
const DEV_TTY: Device = Device { major: 5, minor: 0 };

impl Device {
    /// From `tty_nr` of `/proc/<pid>/stat` (the kernel's `new_encode_dev`: minor in bits 0–7
    /// and 20–31, major in bits 8–19).
    fn from_tty_nr(nr: u64) -> Self {
        Self {
            major: ((nr >> 8) & 0xfff) as u32,
            minor: ((nr & 0xff) | ((nr >> 12) & 0xfff_ff00)) as u32,
        }
    }

    /// From an `st_rdev`.
    fn from_rdev(rdev: u64) -> Self {
        Self {
            major: rustix::fs::major(rdev),
            minor: rustix::fs::minor(rdev),
        }
    }
}

/// Whether a thread of `pid` waits for input on `tty`.
fn process_waits(pid: u64, tty: Device) -> InputWait {
    let mut path = [0u8; 48];
    let Some(path) = procfs::proc_path(pid, b"/task", &mut path) else {
        return InputWait::Unknown;
    };
    let dir = match open(path, OFlags::DIRECTORY) {
        Ok(dir) => dir,
        Err(gone) => return gone,
    };
    let mut answer = InputWait::NotWaiting;
    let mut entries = [0u8; 2048];
    procfs::for_each_dir_entry(dir.as_raw_fd(), &mut entries, |name| {
        if answer != InputWait::Waiting
            && let Some(tid) = procfs::parse_decimal(name)
        {
            answer = answer.or(thread_waits(tid, tty));
        }
        false
    });
    answer
}

/// Whether thread `tid` waits for input on `tty`.
fn thread_waits(tid: u64, tty: Device) -> InputWait {
    let mut buf = [0u8; STAT_BUFFER];
    // Reading a file, polling, selecting: all sleep interruptibly.
    if procfs::read_stat(tid, &mut buf).and_then(|stat| stat.state()) != Some(b'S') {
        return InputWait::NotWaiting;
    }
    let mut path = [0u8; 48];
    let Some(path) = procfs::proc_path(tid, b"/syscall", &mut path) else {
        return InputWait::Unknown;
    };
    let text = match read_small(path, &mut buf) {
        Ok(text) => text,
        Err(answer) => return answer,
    };
    match parse_syscall(text) {
        None => InputWait::Unknown,
        Some(Syscall::Running | Syscall::Outside) => InputWait::NotWaiting,
        Some(Syscall::Blocked { nr, args }) => match Call::of(nr) {
            Call::Read => fd_answer(tid, args[0], tty),
            Call::Poll => poll_waits(tid, args[0], args[1], tty),
            Call::Select => select_waits(tid, args[0], args[1], tty),
            Call::Epoll => epoll_waits(tid, args[0], tty),
            Call::Wait4 | Call::Other => InputWait::NotWaiting,
        },
    }
}

/// What descriptor `fd` of `tid` is.
enum Descriptor {
    /// The terminal (or `/dev/tty`); its inode number.
    Terminal {
        ino: u64,
    },
    Other,
}

/// Looks at `/proc/<tid>/fd/<fd>`. `Err` is the answer when it cannot be looked at: gone
/// (closed, or the thread exited) is `NotWaiting`, anything else `Unknown`.
fn descriptor(tid: u64, fd: u64, tty: Device) -> Result<Descriptor, InputWait> {
    let mut leaf = [0u8; 32];
    let mut digits = [0u8; 20];
    let digits = procfs::format_decimal(fd, &mut digits);
    let len = 4 + digits.len();
    leaf[..4].copy_from_slice(b"/fd/");
    leaf[4..len].copy_from_slice(digits);
    let mut path = [0u8; 48];
    let path = procfs::proc_path(tid, &leaf[..len], &mut path).ok_or(InputWait::Unknown)?;
    let stat = rustix::fs::stat(path).map_err(failure)?;
    let device = Device::from_rdev(stat.st_rdev);
    if FileType::from_raw_mode(stat.st_mode) == FileType::CharacterDevice
        && (device == tty || device == DEV_TTY)
    {
        Ok(Descriptor::Terminal { ino: stat.st_ino })
    } else {
        Ok(Descriptor::Other)
    }
}

/// The answer for a thread that waits to read `fd`.
fn fd_answer(tid: u64, fd: u64, tty: Device) -> InputWait {
    match descriptor(tid, fd, tty) {
        Ok(Descriptor::Terminal { .. }) => InputWait::Waiting,
        Ok(Descriptor::Other) => InputWait::NotWaiting,
        Err(answer) => answer,
    }
}

/// `POLLIN | POLLRDNORM`.
const POLL_READ: i16 = 0x001 | 0x040;
/// `EPOLLIN | EPOLLRDNORM`.
const EPOLL_READ: u64 = 0x001 | 0x040;

/// `poll`/`ppoll` on `nfds` entries at `addr`.
fn poll_waits(tid: u64, addr: u64, nfds: u64, tty: Device) -> InputWait {
    const ENTRY: usize = 8;
    if nfds > MAX_FDS {
        return InputWait::Unknown;
    }
    let mut answer = InputWait::NotWaiting;
    let read = read_memory(tid, addr, nfds * ENTRY as u64, |chunk| {
        for entry in chunk.chunks_exact(ENTRY) {
            let fd = i32::from_ne_bytes([entry[0], entry[1], entry[2], entry[3]]);
            let events = i16::from_ne_bytes([entry[4], entry[5]]);
            if events & POLL_READ != 0
                && let Ok(fd) = u64::try_from(fd)
            {
                answer = answer.or(fd_answer(tid, fd, tty));
            }
        }
        answer != InputWait::Waiting
    });
    read.map_or_else(|failed| failed, |()| answer)
}

/// `select`/`pselect6` on `nfds` descriptors with the read set at `addr`.
fn select_waits(tid: u64, nfds: u64, addr: u64, tty: Device) -> InputWait {
    const WORD: usize = 8;
    if addr == 0 {
        return InputWait::NotWaiting;
    }
    if nfds > MAX_FDS {
        return InputWait::Unknown;
    }
    let mut answer = InputWait::NotWaiting;
    let mut first_fd = 0;
    let read = read_memory(tid, addr, nfds.div_ceil(64) * WORD as u64, |chunk| {
        for word in chunk.chunks_exact(WORD) {
            let mut bits = u64::from_ne_bytes(word.try_into().unwrap_or_default());
            while bits != 0 {
                let fd = first_fd + u64::from(bits.trailing_zeros());
                bits &= bits - 1;
                if fd < nfds {
                    answer = answer.or(fd_answer(tid, fd, tty));
                }
            }
            first_fd += 64;
        }
        answer != InputWait::Waiting
    });
    read.map_or_else(|failed| failed, |()| answer)
}

/// `epoll_wait` and friends on `epfd`: its targets from `/proc/<tid>/fdinfo/<epfd>`.
fn epoll_waits(tid: u64, epfd: u64, tty: Device) -> InputWait {
    let mut leaf = [0u8; 32];
    let mut digits = [0u8; 20];
    let digits = procfs::format_decimal(epfd, &mut digits);
    let len = 8 + digits.len();
    leaf[..8].copy_from_slice(b"/fdinfo/");
    leaf[8..len].copy_from_slice(digits);
    let mut path = [0u8; 48];
    let Some(path) = procfs::proc_path(tid, &leaf[..len], &mut path) else {
        return InputWait::Unknown;
    };
    let file = match open(path, OFlags::empty()) {
        Ok(file) => file,
        Err(answer) => return answer,
    };
    let mut answer = InputWait::NotWaiting;
    let mut buf = [0u8; 4096];
    let read = for_each_line(&file, &mut buf, |line| {
        if let Some(target) = parse_epoll_target(line)
            && target.events & EPOLL_READ != 0
        {
            answer = answer.or(match descriptor(tid, target.fd, tty) {
                Ok(Descriptor::Terminal { ino }) if target.ino.is_none_or(|i| i == ino) => {
                    InputWait::Waiting
                }
                Ok(_) => InputWait::NotWaiting,
                Err(answer) => answer,
            });
        }
        answer != InputWait::Waiting
    });
    if read { answer } else { InputWait::Unknown }
}

/// One `tfd:` line of an epoll descriptor's `fdinfo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct EpollTarget {
    fd: u64,
    events: u64,
    /// The inode of the registered file (kernels since 3.8 print it): tells a reused
    /// descriptor number from the file that was registered.
    ino: Option<u64>,
}

/// Parses `tfd: %8d events: %8x data: %16llx  pos:%lli ino:%lx sdev:%x`.
fn parse_epoll_target(line: &[u8]) -> Option<EpollTarget> {
    let mut fields = line
        .split(|&b| b == b' ' || b == b'\t')
        .filter(|f| !f.is_empty());
    if fields.next()? != b"tfd:" {
        return None;
    }
    let fd = procfs::parse_decimal(fields.next()?)?;
    if fields.next()? != b"events:" {
        return None;
    }
    let events = parse_hex(fields.next()?)?;
    let ino = fields
        .find_map(|f| f.strip_prefix(b"ino:"))
        .and_then(parse_hex);
    Some(EpollTarget { fd, events, ino })
}

/// Calls `f` with each line of `file` (without its newline), read through `buf`, until `f`
/// returns false. A line longer than `buf` is skipped. False when a read fails.
fn for_each_line(file: &OwnedFd, buf: &mut [u8], mut f: impl FnMut(&[u8]) -> bool) -> bool {
    let mut filled = 0;
    let mut skipping = false;
    loop {
        let n = match rustix::io::read(file, &mut buf[filled..]) {
            Ok(n) => n,
            Err(Errno::INTR) => continue,
            Err(_) => return false,
        };
        let end = filled + n;
        let mut start = 0;
        while let Some(at) = memchr_newline(&buf[start..end]) {
            let line = &buf[start..start + at];
            start += at + 1;
            if !std::mem::take(&mut skipping) && !f(line) {
                return true;
            }
        }
        if n == 0 {
            if start < end && !skipping {
                f(&buf[start..end]);
            }
            return true;
        }
        buf.copy_within(start..end, 0);
        filled = end - start;
        if filled == buf.len() {
            // No newline in a whole buffer: drop it and the rest of its line.
            filled = 0;
            skipping = true;
        }
    }
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

/// Reads `len` bytes of `tid`'s memory at `addr` (`/proc/<tid>/mem`) chunk by chunk into `f`
/// until `f` returns false. `Err` is the answer when it cannot be read.
fn read_memory(
    tid: u64,
    addr: u64,
    len: u64,
    mut f: impl FnMut(&[u8]) -> bool,
) -> Result<(), InputWait> {
    let mut path = [0u8; 48];
    let path = procfs::proc_path(tid, b"/mem", &mut path).ok_or(InputWait::Unknown)?;
    let mem = open(path, OFlags::empty())?;
    let mut chunk = [0u8; 512];
    let mut done = 0;
    while done < len {
        let want = usize::try_from((len - done).min(chunk.len() as u64)).unwrap_or(chunk.len());
        let at = addr.checked_add(done).ok_or(InputWait::Unknown)?;
        let part = &mut chunk[..want];
        let mut got = 0;
        while got < want {
            match rustix::io::pread(&mem, &mut part[got..], at + got as u64) {
                Ok(0) | Err(_) => return Err(InputWait::Unknown),
                Ok(n) => got += n,
            }
        }
        if !f(part) {
            break;
        }
        done += want as u64;
    }
    Ok(())
}

/// Opens a procfs file read-only. `Err` is the answer when it cannot be opened: gone is
/// `NotWaiting`, anything else (permissions) `Unknown`.
fn open(path: &CStr, flags: OFlags) -> Result<OwnedFd, InputWait> {
    rustix::fs::open(
        path,
        flags | OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(failure)
}

/// Reads a small procfs file whole into `buf`.
fn read_small<'a>(path: &CStr, buf: &'a mut [u8]) -> Result<&'a [u8], InputWait> {
    let file = open(path, OFlags::empty())?;
    let n = rustix::io::read(&file, &mut *buf).map_err(failure)?;
    buf.get(..n)
        .filter(|text| !text.is_empty())
        .ok_or(InputWait::Unknown)
}

/// The answer when a procfs path cannot be used: gone (`ENOENT`, `ESRCH`) is `NotWaiting`.
fn failure(err: Errno) -> InputWait {
    if err == Errno::NOENT || err == Errno::SRCH {
        InputWait::NotWaiting
    } else {
        InputWait::Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoll_fdinfo_lines_parse() {
        let line = b"tfd:        0 events:       19 data:                0  pos:0 ino:3 sdev:18";
        assert_eq!(
            parse_epoll_target(line),
            Some(EpollTarget {
                fd: 0,
                events: 0x19,
                ino: Some(3)
            })
        );
        let old = b"tfd:       12 events:      1f data: 7f00000001";
        assert_eq!(
            parse_epoll_target(old),
            Some(EpollTarget {
                fd: 12,
                events: 0x1f,
                ino: None
            })
        );
        assert_eq!(parse_epoll_target(b"pos:\t0"), None);
        assert_eq!(parse_epoll_target(b"flags:\t02000002"), None);
    }

    #[test]
    fn tty_nr_decodes_like_st_rdev() {
        // /dev/pts/3 and /dev/pts/300 (minor above 255 uses the high bits).
        for minor in [3u32, 300, 70_000] {
            let rdev = rustix::fs::makedev(136, minor);
            let nr = u64::from(minor & 0xff) | (136 << 8) | (u64::from(minor & !0xff) << 12);
            assert_eq!(Device::from_tty_nr(nr), Device::from_rdev(rdev), "{minor}");
            assert_eq!(
                Device::from_tty_nr(nr),
                Device { major: 136, minor },
                "{minor}"
            );
        }
    }

    #[test]
    fn waiting_wins_then_unknown() {
        use InputWait::{NotWaiting, Unknown, Waiting};
        assert_eq!(NotWaiting.or(NotWaiting), NotWaiting);
        assert_eq!(NotWaiting.or(Unknown), Unknown);
        assert_eq!(Unknown.or(Waiting), Waiting);
        assert_eq!(Waiting.or(NotWaiting), Waiting);
    }

    #[test]
    fn lines_stream_across_reads_and_skip_overlong_ones() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("lines");
        let long = "x".repeat(40);
        std::fs::write(&path, format!("a\n{long}\nbc\nlast")).expect("written");
        let file: OwnedFd = std::fs::File::open(&path).expect("opened").into();
        let mut buf = [0u8; 16];
        let mut lines = Vec::new();
        assert!(for_each_line(&file, &mut buf, |line| {
            lines.push(String::from_utf8_lossy(line).into_owned());
            true
        }));
        assert_eq!(lines, ["a", "bc", "last"]);
    }

    #[test]
    fn own_process_has_no_terminal_or_an_answer() {
        // Under a test runner there may or may not be a controlling terminal; either way the
        // answer must come without a panic, and a wrong terminal is never answered for.
        let me = std::process::id();
        let _ = input_wait(me, None);
        assert_eq!(
            input_wait(me, Some(rustix::fs::makedev(1, 3))),
            InputWait::Unknown,
            "/dev/null is nobody's controlling terminal"
        );
        assert_eq!(input_wait(u32::MAX, None), InputWait::Unknown);
    }
}
