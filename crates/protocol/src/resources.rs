//! Resource limits of a command tree: what a session enforces (`[limits]`, resolved) and
//! what a result says when one was passed.

use std::time::Duration;

use crate::text::format_size;

/// The limits one command tree (a foreground call's command with everything it starts, or a
/// job) runs under, resolved to numbers; `None`: no limit of that kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResourceLimits {
    /// Bytes of memory the tree may hold at once.
    pub memory: Option<u64>,
    /// Tasks the tree may have at once.
    pub processes: Option<u64>,
    /// CPU time (user and system) the call or job may use.
    pub cpu_time: Option<Duration>,
}

impl ResourceLimits {
    /// Whether any limit is set.
    pub fn any(&self) -> bool {
        self.memory.is_some() || self.processes.is_some() || self.cpu_time.is_some()
    }
}

/// Which limit a tree passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum LimitKind {
    /// `limits.memory`.
    Memory,
    /// `limits.processes`.
    Processes,
    /// `limits.cpu_time`.
    CpuTime,
}

impl LimitKind {
    /// The setting's key, as the closing line names it (`limits.memory`).
    pub fn key(self) -> &'static str {
        match self {
            Self::Memory => "limits.memory",
            Self::Processes => "limits.processes",
            Self::CpuTime => "limits.cpu_time",
        }
    }
}

/// A limit a command tree passed: `details.limit` of its result, a job's `job_end` reason.
/// `limit` and `used` are bytes (memory), tasks (processes) or whole seconds (CPU time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LimitHit {
    /// Which limit.
    pub kind: LimitKind,
    /// The limit.
    pub limit: u64,
    /// What the tree used when it was found over (memory: its most; processes: how many it
    /// had at once; CPU: seconds used).
    pub used: u64,
}

impl LimitHit {
    /// The closing line that tells the model: `[Ended: this command's processes used more than
    /// 256.0MB of memory (limits.memory)]`, `[Ended: this command's processes used 2 s of CPU
    /// (limits.cpu_time)]`, `[Process limit: this command's processes reached 256 at once; more
    /// were refused (limits.processes)]`.
    pub fn closing_line(&self) -> String {
        let key = self.kind.key();
        match self.kind {
            LimitKind::Memory => format!(
                "[Ended: this command's processes used more than {} of memory ({key})]",
                format_size(self.limit)
            ),
            LimitKind::CpuTime => format!(
                "[Ended: this command's processes used {} s of CPU ({key})]",
                self.limit
            ),
            LimitKind::Processes => format!(
                "[Process limit: this command's processes reached {} at once; more were refused ({key})]",
                self.limit
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closing_lines_are_the_specs() {
        let memory = LimitHit {
            kind: LimitKind::Memory,
            limit: 4 << 30,
            used: 5 << 30,
        };
        assert_eq!(
            memory.closing_line(),
            "[Ended: this command's processes used more than 4.0GB of memory (limits.memory)]"
        );
        let cpu = LimitHit {
            kind: LimitKind::CpuTime,
            limit: 600,
            used: 600,
        };
        assert_eq!(
            cpu.closing_line(),
            "[Ended: this command's processes used 600 s of CPU (limits.cpu_time)]"
        );
        let processes = LimitHit {
            kind: LimitKind::Processes,
            limit: 4096,
            used: 4096,
        };
        assert_eq!(
            processes.closing_line(),
            "[Process limit: this command's processes reached 4096 at once; more were refused (limits.processes)]"
        );
        assert_eq!(
            serde_json::to_value(processes).expect("serialises"),
            serde_json::json!({"kind": "processes", "limit": 4096, "used": 4096})
        );
        assert_eq!(
            serde_json::to_value(LimitKind::CpuTime).expect("serialises"),
            "cpu_time"
        );
    }
}
