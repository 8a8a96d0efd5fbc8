//! Raw, allocation-free helpers for code that runs between `fork()` and `execve()` (or in the
//! supervisor, which never execs).
//!
//! After `fork()` in a multi-threaded process only async-signal-safe work is allowed: no
//! allocation, no locks, no `std::env`, no tracing. Everything here uses fixed buffers and libc
//! syscalls only, and reports failure through return values.

use std::ffi::c_int;

/// The `errno` of the last failed libc call.
pub(crate) fn errno() -> c_int {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Writes all of `bytes` to `fd`, retrying on `EINTR` and short writes. Errors are ignored:
/// callers use it to report, and have nowhere to report a failed report to.
pub(crate) fn write_all_raw(fd: c_int, mut bytes: &[u8]) {
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

/// Closes every descriptor `>= lowest`.
pub(crate) fn close_from(lowest: c_int) {
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

/// Sets `FD_CLOEXEC` on `fd`.
pub(crate) fn set_cloexec(fd: c_int) {
    // SAFETY: fcntl on a descriptor number has no memory effects.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFD);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
        }
    }
}

/// Formats `n` in decimal into `buf`, returning the digits.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
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
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
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

/// Removes every entry of the directory `dir` (files, FIFOs; not subdirectories) and then the
/// directory, without allocating. Elsewhere than on Linux only the (empty) directory goes.
pub(crate) fn remove_flat_dir(dir: &std::ffi::CStr) {
    #[cfg(target_os = "linux")]
    // SAFETY: `dir` is NUL-terminated; getdents64 writes at most `buf.len()` bytes into `buf`;
    // each name passed to unlinkat is NUL-terminated inside `buf`.
    unsafe {
        let fd = libc::open(
            dir.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return;
        }
        let mut buf = [0u8; 4096];
        // Removing entries while listing may skip some: list again until a pass removes none.
        for _ in 0..64 {
            libc::lseek(fd, 0, libc::SEEK_SET);
            let mut removed = 0;
            loop {
                let n = libc::syscall(libc::SYS_getdents64, fd, buf.as_mut_ptr(), buf.len());
                if n <= 0 {
                    break;
                }
                let n = n as usize;
                let mut off = 0;
                // struct linux_dirent64 { u64 d_ino; i64 d_off; u16 d_reclen; u8 d_type; char d_name[]; }
                while off + 19 < n {
                    let reclen = u16::from_ne_bytes([buf[off + 16], buf[off + 17]]) as usize;
                    if reclen == 0 || off + reclen > n {
                        break;
                    }
                    let name = &buf[off + 19..off + reclen];
                    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
                    let is_dot = matches!(&name[..end], b"." | b"..");
                    if !is_dot
                        && end < name.len()
                        && libc::unlinkat(fd, name.as_ptr().cast(), 0) == 0
                    {
                        removed += 1;
                    }
                    off += reclen;
                }
            }
            if removed == 0 {
                break;
            }
        }
        libc::close(fd);
    }
    // SAFETY: `dir` is NUL-terminated.
    unsafe { libc::rmdir(dir.as_ptr()) };
}

/// State and parent of a process, read from `/proc/<pid>/stat` without allocating.
#[cfg(target_os = "linux")]
pub(crate) fn raw_stat(pid: u64) -> Option<(u8, u64)> {
    let mut path = [0u8; 40];
    let mut digits = [0u8; 20];
    let digits = format_decimal(pid, &mut digits);
    let mut len = 0;
    for part in [b"/proc/".as_slice(), digits, b"/stat\0".as_slice()] {
        path.get_mut(len..len + part.len())?.copy_from_slice(part);
        len += part.len();
    }
    // SAFETY: `path` is NUL-terminated above.
    let fd = unsafe { libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return None;
    }
    let mut buf = [0u8; 1024];
    // SAFETY: `buf` is writable for its whole length.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    // SAFETY: `fd` was opened above.
    unsafe { libc::close(fd) };
    if n <= 0 {
        return None;
    }
    parse_stat_state_ppid(buf.get(..n as usize)?)
}

/// Parses `pid (comm) S ppid ...`: the state byte and the parent pid. `comm` may contain spaces
/// and parentheses, so parsing starts after the last `)`.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) fn parse_stat_state_ppid(stat: &[u8]) -> Option<(u8, u64)> {
    let close = stat.iter().rposition(|&b| b == b')')?;
    let mut fields = stat
        .get(close + 1..)?
        .split(|&b| b == b' ')
        .filter(|f| !f.is_empty());
    let state = *fields.next()?.first()?;
    let ppid = parse_decimal(fields.next()?)?;
    Some((state, ppid))
}

/// Calls `f` with the pid of every process listed in `/proc`, without allocating.
#[cfg(target_os = "linux")]
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
    loop {
        // SAFETY: getdents64 writes at most `buf.len()` bytes into `buf`.
        let n = unsafe { libc::syscall(libc::SYS_getdents64, dir, buf.as_mut_ptr(), buf.len()) };
        if n <= 0 {
            break;
        }
        let n = n as usize;
        let mut off = 0;
        // struct linux_dirent64 { u64 d_ino; i64 d_off; u16 d_reclen; u8 d_type; char d_name[]; }
        while off + 19 <= n {
            let reclen = u16::from_ne_bytes([buf[off + 16], buf[off + 17]]) as usize;
            if reclen == 0 || off + reclen > n {
                break;
            }
            let name = &buf[off + 19..off + reclen];
            let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
            if let Some(pid) = parse_decimal(&name[..end]) {
                f(pid);
            }
            off += reclen;
        }
    }
    // SAFETY: `dir` was opened above.
    unsafe { libc::close(dir) };
    true
}

/// Whether `pid` is a live (not zombie) descendant of `ancestor`, following parent links in
/// `/proc` (at most 256 levels).
#[cfg(target_os = "linux")]
pub(crate) fn is_live_descendant(pid: u64, ancestor: u64) -> bool {
    let Some((state, mut parent)) = raw_stat(pid) else {
        return false;
    };
    if matches!(state, b'Z' | b'X' | b'x') {
        return false;
    }
    for _ in 0..256 {
        if parent == ancestor {
            return true;
        }
        if parent <= 1 {
            return false;
        }
        match raw_stat(parent) {
            Some((_, next)) => parent = next,
            None => return false,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[cfg(target_os = "linux")]
    #[test]
    fn own_stat_names_own_parent() {
        let me = u64::from(std::process::id());
        let (state, ppid) = raw_stat(me).expect("own stat is readable");
        // Another thread of this process may be the one sleeping: any live state will do.
        assert!(b"RSD".contains(&state), "state {}", char::from(state));
        assert_eq!(ppid, u64::from(std::os::unix::process::parent_id()));
        let mut seen = false;
        assert!(for_each_pid(|pid| seen |= pid == me));
        assert!(seen, "own pid listed in /proc");
    }
}
