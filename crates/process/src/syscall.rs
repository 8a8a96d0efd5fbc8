//! `/proc/<tid>/syscall` (Linux on x86_64 and aarch64): the one reading of what system call a
//! thread sleeps in, and the one table of the system call numbers this crate looks for.
//!
//! The kernel writes `nr arg0 … arg5 sp pc` (arguments in hex) for a thread blocked in system
//! call `nr`, `-1 sp pc` for one blocked outside a system call, and `running` for one on a CPU.
//! The numbers are the architecture's own: [`Call::of`] names the ones that matter here (reads
//! and waits on descriptors for [`input_wait`](crate::input_wait), `wait4` for
//! [`waits_for_a_child`](crate::waits_for_a_child)).

use crate::procfs;

/// What `/proc/<tid>/syscall` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Syscall {
    /// The thread is on a CPU.
    Running,
    /// Blocked, but not in a system call (`-1 sp pc`).
    Outside,
    /// Blocked in system call `nr` with these arguments.
    Blocked { nr: u64, args: [u64; 6] },
}

/// Parses `nr arg0 … arg5 sp pc` (arguments in hex), `-1 sp pc` or `running`; `None` for
/// anything else.
pub(crate) fn parse_syscall(text: &[u8]) -> Option<Syscall> {
    let mut fields = text
        .split(|&b| b == b' ' || b == b'\n')
        .filter(|f| !f.is_empty());
    let nr = match fields.next()? {
        b"running" => return Some(Syscall::Running),
        b"-1" => return Some(Syscall::Outside),
        nr => procfs::parse_decimal(nr)?,
    };
    let mut args = [0u64; 6];
    for arg in &mut args {
        let hex = fields.next()?.strip_prefix(b"0x")?;
        *arg = procfs::parse_hex(hex)?;
    }
    Some(Syscall::Blocked { nr, args })
}

/// The system calls this crate looks for, by what they do with their arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Call {
    /// `read`, `readv`, `pread64`, `preadv`, `preadv2`: the descriptor is argument 0.
    Read,
    /// `poll`, `ppoll`: a `pollfd` array (argument 0) of argument 1 entries.
    Poll,
    /// `select`, `pselect6`: argument 0 descriptors, the read set at argument 1.
    Select,
    /// `epoll_wait`, `epoll_pwait`, `epoll_pwait2`: the epoll descriptor is argument 0.
    Epoll,
    /// `wait4`: waiting for a child.
    Wait4,
    /// Any other system call (and every one on another architecture).
    Other,
}

impl Call {
    /// The call with number `nr` on this architecture.
    pub(crate) fn of(nr: u64) -> Self {
        #[cfg(target_arch = "x86_64")]
        let call = match nr {
            // read, pread64, readv, preadv, preadv2
            0 | 17 | 19 | 295 | 327 => Self::Read,
            // poll, ppoll
            7 | 271 => Self::Poll,
            // select, pselect6
            23 | 270 => Self::Select,
            // epoll_wait, epoll_pwait, epoll_pwait2
            232 | 281 | 441 => Self::Epoll,
            61 => Self::Wait4,
            _ => Self::Other,
        };
        // The generic table (no poll, select or epoll_wait there).
        #[cfg(target_arch = "aarch64")]
        let call = match nr {
            // read, readv, pread64, preadv, preadv2
            63 | 65 | 67 | 69 | 286 => Self::Read,
            // ppoll
            73 => Self::Poll,
            // pselect6
            72 => Self::Select,
            // epoll_pwait, epoll_pwait2
            22 | 441 => Self::Epoll,
            260 => Self::Wait4,
            _ => Self::Other,
        };
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        let call = {
            let _ = nr;
            Self::Other
        };
        call
    }
}

#[cfg(test)]
mod tests {
    use super::{Call, Syscall, parse_syscall};

    #[test]
    fn syscall_lines_parse() {
        assert_eq!(parse_syscall(b"running\n"), Some(Syscall::Running));
        assert_eq!(parse_syscall(b"-1 0x7ffd1 0x7f2\n"), Some(Syscall::Outside));
        assert_eq!(
            parse_syscall(
                b"270 0xfb 0x7fff4f1ebba0 0x0 0x0 0x7fff4f1ebab0 0x7fff4f1ebac0 0x7fff4f1eba80 0x7fb86cd10aec\n"
            ),
            Some(Syscall::Blocked {
                nr: 270,
                args: [0xfb, 0x7fff_4f1e_bba0, 0, 0, 0x7fff_4f1e_bab0, 0x7fff_4f1e_bac0]
            })
        );
        assert_eq!(parse_syscall(b"0 0x0 0x1"), None, "cut short");
        assert_eq!(parse_syscall(b"x 0x0"), None);
        assert_eq!(parse_syscall(b""), None);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_table_names_this_architectures_numbers() {
        assert_eq!(Call::of(0), Call::Read);
        assert_eq!(Call::of(270), Call::Select);
        assert_eq!(Call::of(61), Call::Wait4);
        assert_eq!(Call::of(1), Call::Other);
    }
}
