//! Reading `/proc` (Linux) without allocating: the one stat parser, the one "has exited" test,
//! the one process walk and the one environment probe of this crate.
//!
//! Everything here runs on a caller's stack buffer and raw `libc` calls, because the
//! supervisor's kill sweep uses it after `fork()` (see `supervisor::forked`), where allocation,
//! locks and std I/O are not allowed. The ordinary code ([`crate::process_info`], the command
//! attribution, the tree-kill loop) uses the same functions, so there is one reading of
//! `/proc/<pid>/stat` for both.

use std::ffi::{CStr, c_int};

/// Size of a buffer that holds any `/proc/<pid>/stat` line (the command name is at most 64
/// bytes; the 52 numeric fields fit in well under 1 KiB).
pub(crate) const STAT_BUFFER: usize = 1024;

/// Whether a process in this state has exited: a zombie waiting to be reaped, or dead.
pub(crate) fn is_exited_state(state: u8) -> bool {
    matches!(state, b'Z' | b'X' | b'x')
}

/// The fields of one `/proc/<pid>/stat` line after the command name, read on demand.
///
/// The command name may contain spaces and parentheses, so the fields start after the *last*
/// `)`. Field numbers below count from the state (0) as `proc(5)` numbers them minus 3.
#[derive(Clone, Copy)]
pub(crate) struct Stat<'a> {
    fields: &'a [u8],
}

impl<'a> Stat<'a> {
    /// The fields of `line` (`pid (comm) S ppid ...`); `None` without a command name.
    pub(crate) fn parse(line: &'a [u8]) -> Option<Self> {
        let close = line.iter().rposition(|&b| b == b')')?;
        Some(Self {
            fields: line.get(close + 1..)?,
        })
    }

    fn field(&self, index: usize) -> Option<&'a [u8]> {
        self.fields
            .split(|&b| b == b' ' || b == b'\n')
            .filter(|f| !f.is_empty())
            .nth(index)
    }

    fn number(&self, index: usize) -> Option<u64> {
        parse_decimal(self.field(index)?)
    }

    /// The state letter (`R`, `S`, `D`, `T`, `Z`, …).
    pub(crate) fn state(&self) -> Option<u8> {
        self.field(0)?.first().copied()
    }

    /// The parent pid.
    pub(crate) fn ppid(&self) -> Option<u64> {
        self.number(1)
    }

    /// The process group id.
    pub(crate) fn pgrp(&self) -> Option<u64> {
        self.number(2)
    }

    /// The session id.
    pub(crate) fn session(&self) -> Option<u64> {
        self.number(3)
    }

    /// The controlling terminal (`tty_nr`, the kernel's encoding of its device number; 0 for
    /// none).
    pub(crate) fn tty_nr(&self) -> Option<u64> {
        self.number(4)
    }

    /// The foreground process group of the controlling terminal (`tpgid`); `None` without a
    /// controlling terminal (the kernel writes -1).
    pub(crate) fn tpgid(&self) -> Option<u64> {
        self.number(5)
    }

    /// The start time in clock ticks since boot.
    pub(crate) fn start_ticks(&self) -> Option<u64> {
        self.number(19)
    }

    /// CPU time used, in clock ticks: its own (user and system) and that of its children it
    /// waited for.
    pub(crate) fn cpu_ticks(&self) -> Option<u64> {
        let mut total = 0u64;
        for index in 11..=14 {
            total = total.saturating_add(self.number(index)?);
        }
        Some(total)
    }

    /// Resident set size, in pages.
    pub(crate) fn rss_pages(&self) -> Option<u64> {
        self.number(21)
    }

    /// State and parent, the two fields the post-fork sweep needs.
    pub(crate) fn state_and_parent(&self) -> Option<(u8, u64)> {
        Some((self.state()?, self.ppid()?))
    }
}

/// Reads a small procfs file with one `read` into `buf` (procfs hands out the whole text of
/// such a file at once). `None` when it cannot be opened or read.
pub(crate) fn read_file<'a>(path: &CStr, buf: &'a mut [u8]) -> Option<&'a [u8]> {
    // SAFETY: `path` is NUL-terminated.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return None;
    }
    // SAFETY: `buf` is writable for its whole length.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    // SAFETY: `fd` was opened above and is closed once.
    unsafe { libc::close(fd) };
    let n = usize::try_from(n).ok().filter(|&n| n > 0)?;
    buf.get(..n)
}

/// Writes `/proc/<pid><leaf>` into `buf` (`leaf` such as `/stat`, without the NUL).
pub(crate) fn proc_path<'a>(pid: u64, leaf: &[u8], buf: &'a mut [u8; 48]) -> Option<&'a CStr> {
    let mut digits = [0u8; 20];
    let digits = format_decimal(pid, &mut digits);
    let mut len = 0;
    for part in [b"/proc/".as_slice(), digits, leaf, b"\0".as_slice()] {
        buf.get_mut(len..len + part.len())?.copy_from_slice(part);
        len += part.len();
    }
    CStr::from_bytes_until_nul(buf).ok()
}

/// Reads and parses `/proc/<pid>/stat` into `buf`.
/// The most of a command line read from `/proc/<pid>/cmdline` (options come first).
pub(crate) const CMDLINE_READ: usize = 4096;

/// The arguments of process `pid` (`/proc/<pid>/cmdline`, at most `buf.len()` bytes of it);
/// `None` when `/proc` cannot tell.
pub(crate) fn read_args(pid: u32, buf: &mut [u8]) -> Option<Vec<&[u8]>> {
    let mut path = [0u8; 48];
    let path = proc_path(u64::from(pid), b"/cmdline", &mut path)?;
    let args = read_file(path, buf)?;
    let args = args.strip_suffix(b"\0").unwrap_or(args);
    Some(if args.is_empty() {
        Vec::new()
    } else {
        args.split(|&byte| byte == 0).collect()
    })
}

pub(crate) fn read_stat(pid: u64, buf: &mut [u8; STAT_BUFFER]) -> Option<Stat<'_>> {
    let mut path = [0u8; 48];
    let path = proc_path(pid, b"/stat", &mut path)?;
    Stat::parse(read_file(path, buf)?)
}

/// Whether the first `name=` entry of the environment `pid` was started with
/// (`/proc/<pid>/environ`) is exactly `name=value`. False when there is none, or when the
/// environment cannot be read (another user's process, a zombie, a process gone). The file is
/// streamed through a stack buffer, however large the environment is.
pub(crate) fn environ_value_is(pid: u64, name: &[u8], value: &[u8]) -> bool {
    let mut path = [0u8; 48];
    let Some(path) = proc_path(pid, b"/environ", &mut path) else {
        return false;
    };
    // SAFETY: `path` is NUL-terminated.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return false;
    }
    let mut matcher = EntryMatch::new(name, value);
    let mut buf = [0u8; 4096];
    let answer = loop {
        // SAFETY: `buf` is writable for its whole length.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        let Some(read) = usize::try_from(n).ok().and_then(|n| buf.get(..n)) else {
            break false;
        };
        if read.is_empty() {
            break matcher.finish();
        }
        if let Some(answer) = read.iter().find_map(|&byte| matcher.feed(byte)) {
            break answer;
        }
    };
    // SAFETY: `fd` was opened above and is closed once.
    unsafe { libc::close(fd) };
    answer
}

/// Matches NUL-separated `NAME=VALUE` entries, fed byte by byte, against one `name=value`:
/// the first entry named `name` decides.
struct EntryMatch<'a> {
    name: &'a [u8],
    value: &'a [u8],
    /// Bytes of `name=value` matched so far in the current entry.
    pos: usize,
    /// Whether the current entry still matches up to `pos`.
    live: bool,
}

impl<'a> EntryMatch<'a> {
    fn new(name: &'a [u8], value: &'a [u8]) -> Self {
        Self {
            name,
            value,
            pos: 0,
            live: true,
        }
    }

    /// The byte of `name=value` at `pos`.
    fn expected(&self, pos: usize) -> Option<u8> {
        match pos.checked_sub(self.name.len()) {
            None => self.name.get(pos).copied(),
            Some(0) => Some(b'='),
            Some(at) => self.value.get(at - 1).copied(),
        }
    }

    /// Whether the current entry is complete and equal to `name=value`.
    fn complete(&self) -> bool {
        self.live && self.pos == self.name.len() + 1 + self.value.len()
    }

    /// Takes one byte; `Some(answer)` once the first `name=` entry has been seen whole (or has
    /// differed).
    fn feed(&mut self, byte: u8) -> Option<bool> {
        let named = self.live && self.pos > self.name.len();
        if byte == 0 {
            let answer = named.then(|| self.complete());
            self.pos = 0;
            self.live = true;
            return answer;
        }
        if !self.live {
            return None;
        }
        if self.expected(self.pos) == Some(byte) {
            self.pos += 1;
            return None;
        }
        self.live = false;
        // An entry named `name` with another value decides; any other entry does not.
        named.then_some(false)
    }

    /// The answer at the end of the text (the last entry may lack its NUL).
    fn finish(&self) -> bool {
        self.complete()
    }
}

/// Calls `f` with the pid of every process listed in `/proc`. False when `/proc` cannot be
/// read.
pub(crate) fn for_each_pid(mut f: impl FnMut(u64)) -> bool {
    // SAFETY: the path literal is NUL-terminated.
    let dir = unsafe {
        libc::open(
            c"/proc".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if dir < 0 {
        return false;
    }
    let mut buf = [0u8; 8192];
    for_each_dir_entry(dir, &mut buf, |name| {
        if let Some(pid) = parse_decimal(name) {
            f(pid);
        }
        false
    });
    // SAFETY: `dir` was opened above and is closed once.
    unsafe { libc::close(dir) };
    true
}

/// Calls `f` with the name of every entry of the open directory `dir` from its current
/// position, using `buf` for `getdents64`; returns how many calls of `f` returned true. Each
/// name is followed in `buf` by the NUL that ends it, so `name.as_ptr()` is a C string.
#[cfg(target_os = "linux")]
pub(crate) fn for_each_dir_entry(
    dir: c_int,
    buf: &mut [u8],
    mut f: impl FnMut(&[u8]) -> bool,
) -> usize {
    let mut count = 0;
    loop {
        // SAFETY: getdents64 writes at most `buf.len()` bytes into `buf`.
        let n = unsafe { libc::syscall(libc::SYS_getdents64, dir, buf.as_mut_ptr(), buf.len()) };
        let Ok(n) = usize::try_from(n) else { break };
        if n == 0 {
            break;
        }
        let mut off = 0;
        // struct linux_dirent64 { u64 d_ino; i64 d_off; u16 d_reclen; u8 d_type; char d_name[]; }
        while off + 19 <= n {
            let reclen = usize::from(u16::from_ne_bytes([buf[off + 16], buf[off + 17]]));
            if reclen == 0 || off + reclen > n {
                break;
            }
            let name = &buf[off + 19..off + reclen];
            // The kernel ends every name with a NUL inside its record; `f` relies on it.
            if let Some(end) = name.iter().position(|&b| b == 0)
                && f(&name[..end])
            {
                count += 1;
            }
            off += reclen;
        }
    }
    count
}

/// Without `getdents64` there is no allocation-free directory walk: nothing is listed.
#[cfg(not(target_os = "linux"))]
pub(crate) fn for_each_dir_entry(
    _dir: c_int,
    _buf: &mut [u8],
    _f: impl FnMut(&[u8]) -> bool,
) -> usize {
    0
}

/// Whether `pid` is a live (not exited) descendant of `ancestor`, following parent links in
/// `/proc` (at most 256 levels).
pub(crate) fn is_live_descendant(pid: u64, ancestor: u64) -> bool {
    let mut buf = [0u8; STAT_BUFFER];
    let Some((state, mut parent)) = read_stat(pid, &mut buf).and_then(|s| s.state_and_parent())
    else {
        return false;
    };
    if is_exited_state(state) {
        return false;
    }
    for _ in 0..256 {
        if parent == ancestor {
            return true;
        }
        if parent <= 1 {
            return false;
        }
        match read_stat(parent, &mut buf).and_then(|s| s.ppid()) {
            Some(next) => parent = next,
            None => return false,
        }
    }
    false
}

/// Formats `n` in decimal into `buf`, returning the digits.
pub(crate) fn format_decimal(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 || i == 0 {
            break;
        }
    }
    &buf[i..]
}

/// Parses ASCII decimal digits; `None` for anything else (or overflow).
pub(crate) fn parse_decimal(bytes: &[u8]) -> Option<u64> {
    if bytes.is_empty() {
        return None;
    }
    let mut n: u64 = 0;
    for &b in bytes {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(n)
}

/// Parses lowercase or uppercase hex digits (no prefix); `None` for anything else.
pub(crate) fn parse_hex(bytes: &[u8]) -> Option<u64> {
    if bytes.is_empty() || bytes.len() > 16 {
        return None;
    }
    let mut n = 0u64;
    for &b in bytes {
        n = (n << 4) | u64::from(char::from(b).to_digit(16)?);
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_stat_state_ppid(stat: &[u8]) -> Option<(u8, u64)> {
        Stat::parse(stat)?.state_and_parent()
    }

    #[test]
    fn decimal_round_trip() {
        let mut buf = [0u8; 20];
        assert_eq!(format_decimal(0, &mut buf), b"0");
        assert_eq!(format_decimal(4_194_304, &mut buf), b"4194304");
        assert_eq!(format_decimal(u64::MAX, &mut buf), b"18446744073709551615");
        assert_eq!(parse_decimal(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_decimal(b"18446744073709551616"), None);
        assert_eq!(parse_decimal(b""), None);
        assert_eq!(parse_decimal(b"1a"), None);
    }

    #[test]
    fn stat_parsing_survives_odd_command_names() {
        assert_eq!(
            parse_stat_state_ppid(b"42 (a) b) c) S 7 42 42 0 -1"),
            Some((b'S', 7))
        );
        assert_eq!(parse_stat_state_ppid(b"1 (init) R 0 1"), Some((b'R', 0)));
        assert_eq!(parse_stat_state_ppid(b"garbage"), None);
    }

    #[test]
    fn stat_fields_include_session_and_start() {
        let stat =
            Stat::parse(b"9 (x y) S 1 5 6 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 98765 1000 10\n")
                .expect("parses");
        assert_eq!(stat.pgrp(), Some(5));
        assert_eq!(stat.session(), Some(6));
        assert_eq!(stat.tty_nr(), Some(0));
        assert_eq!(stat.tpgid(), None, "-1: no controlling terminal");
        assert_eq!(stat.start_ticks(), Some(98765));
        assert!(is_exited_state(b'Z') && !is_exited_state(b'S'));
    }

    fn first_entry_matches(environ: &[u8], name: &str, value: &str) -> bool {
        let mut matcher = EntryMatch::new(name.as_bytes(), value.as_bytes());
        environ
            .iter()
            .find_map(|&byte| matcher.feed(byte))
            .unwrap_or_else(|| matcher.finish())
    }

    #[test]
    fn the_first_entry_of_a_name_decides() {
        let (name, value) = ("AGENTSH_CMD", "ab.3");
        for (environ, want) in [
            (b"A=1\0AGENTSH_CMD=ab.3\0B=2\0".as_slice(), true),
            (b"AGENTSH_CMD=ab.3", true),
            (b"AGENTSH_CMD=ab.3\0AGENTSH_CMD=ab.4\0", true),
            (b"AGENTSH_CMD=ab.4\0AGENTSH_CMD=ab.3\0", false),
            (b"AGENTSH_CMD=ab.31\0", false),
            (b"AGENTSH_CMD=ab.\0", false),
            (b"AGENTSH_CMD=\0", false),
            (b"AGENTSH_CMDX=ab.3\0", false),
            (b"X_AGENTSH_CMD=ab.3\0AGENTSH_CMD=ab.3\0", true),
            (b"AGENTSH_CM\0", false),
            (b"", false),
        ] {
            assert_eq!(
                first_entry_matches(environ, name, value),
                want,
                "{}",
                String::from_utf8_lossy(environ)
            );
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn own_environ_is_read_whole() {
        let me = u64::from(std::process::id());
        let path = std::env::var_os("PATH").expect("PATH is set");
        let path = path.as_encoded_bytes();
        assert!(environ_value_is(me, b"PATH", path));
        assert!(!environ_value_is(me, b"PATH", b"/nowhere"));
        assert!(!environ_value_is(me, b"AGENTSH_NO_SUCH_VARIABLE", b""));
        assert!(!environ_value_is(u64::from(u32::MAX), b"PATH", path));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn own_stat_names_own_parent() {
        let me = u64::from(std::process::id());
        let mut buf = [0u8; STAT_BUFFER];
        let (state, ppid) = read_stat(me, &mut buf)
            .and_then(|s| s.state_and_parent())
            .expect("own stat is readable");
        // Another thread of this process may be the one sleeping: any live state will do.
        assert!(b"RSD".contains(&state), "state {}", char::from(state));
        assert_eq!(ppid, u64::from(std::os::unix::process::parent_id()));
        let mut seen = false;
        assert!(for_each_pid(|pid| seen |= pid == me));
        assert!(seen, "own pid listed in /proc");
    }
}
