//! Remembered failures: when the rc itself is why there is no snapshot (it ran past the time
//! box, has a syntax error, ends the shell, or defines too much), `<name>.failed` keeps the
//! warning, so later sessions give it at once instead of running the rc again. The name is the
//! cache key's, which changes with the rc, so an edited rc is tried afresh.

use std::time::Duration;

use crate::error::SnapshotError;

/// First line of a record; a record without it (an older or foreign format) is ignored.
const HEADER: &str = "agentsh-rc-snapshot-failure-1";

/// Second line of a record that is not about time.
const NOT_TIMED: &str = "error";

/// Second line of a time-out's record, before the time box in milliseconds.
const TIMEOUT_PREFIX: &str = "timeout-ms ";

/// A failure worth remembering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    /// For a time-out, the time box that ran out; `None` for the other failures.
    pub(crate) timeout: Option<Duration>,
    /// The warning to give (the failure's message).
    pub(crate) warning: String,
}

impl Failure {
    /// The record of `error`, when the rc is to blame; `None` for failures of the host (the
    /// shell cannot start, the cache cannot be written), which may pass.
    pub(crate) fn of(error: &SnapshotError) -> Option<Self> {
        let timeout = match error {
            SnapshotError::Timeout { timeout, .. } => Some(*timeout),
            SnapshotError::Broken { .. }
            | SnapshotError::ShellEnded { .. }
            | SnapshotError::TooLarge { .. } => None,
            SnapshotError::Spawn { .. }
            | SnapshotError::CacheDirNotPrivate { .. }
            | SnapshotError::Io { .. }
            | SnapshotError::Remembered { .. } => return None,
        };
        Some(Self {
            timeout,
            warning: error.to_string(),
        })
    }

    /// Whether this record answers a run with the time box `timeout`: a failure not about time
    /// always does; a time-out only when `timeout` is no longer than the box that ran out (a
    /// longer one deserves a new try).
    pub(crate) fn applies_to(&self, timeout: Duration) -> bool {
        self.timeout.is_none_or(|ran_out| timeout <= ran_out)
    }

    /// The record's text: the header, `error` or `timeout-ms <n>`, then the warning.
    pub(crate) fn render(&self) -> String {
        let kind = match self.timeout {
            None => NOT_TIMED.to_owned(),
            Some(timeout) => format!("{TIMEOUT_PREFIX}{}", timeout.as_millis()),
        };
        format!("{HEADER}\n{kind}\n{}", self.warning)
    }

    /// Reads a record written by [`render`](Self::render); `None` for anything else.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        let mut parts = text.splitn(3, '\n');
        if parts.next()? != HEADER {
            return None;
        }
        let kind = parts.next()?;
        let warning = parts.next()?.to_owned();
        let timeout = if kind == NOT_TIMED {
            None
        } else {
            let millis = kind.strip_prefix(TIMEOUT_PREFIX)?.parse::<u64>().ok()?;
            Some(Duration::from_millis(millis))
        };
        if warning.is_empty() {
            return None;
        }
        Some(Self { timeout, warning })
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn timeout(secs: u64) -> SnapshotError {
        SnapshotError::Timeout {
            rc: PathBuf::from("/h/.bashrc"),
            timeout: Duration::from_secs(secs),
        }
    }

    #[test]
    fn records_round_trip() {
        for error in [
            timeout(10),
            SnapshotError::Broken {
                rc: PathBuf::from("/h/.bashrc"),
                status: 2,
                detail: "line 4: syntax error".to_owned(),
            },
            SnapshotError::ShellEnded {
                rc: PathBuf::from("/h/odd\nname"),
                how: "exit status 3".to_owned(),
                detail: String::new(),
            },
        ] {
            let failure = Failure::of(&error).expect("remembered");
            assert_eq!(failure.warning, error.to_string());
            assert_eq!(Failure::parse(&failure.render()), Some(failure));
        }
    }

    #[test]
    fn failures_of_the_host_are_not_remembered() {
        let spawn = SnapshotError::Spawn {
            shell: PathBuf::from("/bin/bash"),
            error: std::io::Error::other("no"),
        };
        let dir = SnapshotError::CacheDirNotPrivate {
            path: PathBuf::from("/c"),
        };
        assert_eq!(Failure::of(&spawn), None);
        assert_eq!(Failure::of(&dir), None);
    }

    #[test]
    fn a_time_out_answers_only_time_boxes_no_longer_than_its_own() {
        let failure = Failure::of(&timeout(10)).expect("remembered");
        assert_eq!(failure.timeout, Some(Duration::from_secs(10)));
        assert!(failure.applies_to(Duration::from_secs(1)));
        assert!(failure.applies_to(Duration::from_secs(10)));
        assert!(!failure.applies_to(Duration::from_millis(10_001)));
        let broken = Failure {
            timeout: None,
            warning: "w".to_owned(),
        };
        assert!(broken.applies_to(Duration::from_secs(60)));
    }

    #[test]
    fn anything_else_is_no_record() {
        for text in [
            "",
            "agentsh-rc-snapshot-failure-0\nerror\nw",
            "agentsh-rc-snapshot-failure-1\nerror",
            "agentsh-rc-snapshot-failure-1\nerror\n",
            "agentsh-rc-snapshot-failure-1\ntimeout-ms x\nw",
            "agentsh-rc-snapshot-failure-1\ntimeout 5\nw",
        ] {
            assert_eq!(Failure::parse(text), None, "{text:?}");
        }
    }
}
