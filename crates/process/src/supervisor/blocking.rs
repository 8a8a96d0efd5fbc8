//! A supervisor driven without a runtime, for callers that block (the generating shell of
//! `agentsh-rc-snapshot`, made while a session is set up): the same spawner thread, fork and
//! containment as [`Supervisor`](super::Supervisor), with the report pipe read by `poll`.

use std::os::fd::OwnedFd;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags};

use super::plan::ForkPlan;
use super::report::REPORT_CHILD_EXIT;
use super::thread::{Request, spawner};
use super::{ChildExit, SpawnError, SpawnSpec, end_orderly, read_records, release};

/// A running supervisor and its child, waited for by blocking. [`BlockingSupervisor::shutdown`]
/// (or dropping it) ends the whole tree.
pub struct BlockingSupervisor {
    id: u64,
    control: Option<OwnedFd>,
    report: OwnedFd,
    child_exit: Option<ChildExit>,
    report_closed: bool,
}

impl BlockingSupervisor {
    /// Starts a supervisor and, under it, the child described by `spec`; blocks until it
    /// runs (or failed to start).
    pub fn spawn(spec: SpawnSpec) -> Result<Self, SpawnError> {
        let plan = ForkPlan::new(spec)?;
        let (reply, answer) = mpsc::channel();
        spawner()?.send(Request::Spawn(
            Box::new(plan),
            Box::new(move |result| {
                if let Err(mpsc::SendError(Ok(raw))) = reply.send(result) {
                    end_orderly(&mut Some(raw.control));
                    release(raw.id, Box::new(|()| {}));
                }
            }),
        ))?;
        let raw = answer.recv().map_err(|_| {
            SpawnError::Setup(std::io::Error::other("the spawner thread is gone"))
        })??;
        Ok(Self {
            id: raw.id,
            control: Some(raw.control),
            report: raw.report,
            child_exit: None,
            report_closed: false,
        })
    }

    /// Waits at most `timeout` for the child to exit. `None` when it still runs then, or when
    /// the supervisor is gone without reporting it.
    pub fn wait_child(&mut self, timeout: Duration) -> Option<ChildExit> {
        let deadline = Instant::now() + timeout;
        while self.child_exit.is_none() && !self.report_closed {
            if let Ok(records) = read_records(&self.report) {
                for (kind, value) in records.items {
                    if kind == REPORT_CHILD_EXIT {
                        self.child_exit = Some(ChildExit::from_raw(value));
                    }
                }
                self.report_closed = records.eof;
                continue;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            let left = rustix::time::Timespec {
                tv_sec: i64::try_from(left.as_secs()).unwrap_or(i64::MAX),
                tv_nsec: i64::from(left.subsec_nanos()),
            };
            let mut fds = [PollFd::new(&self.report, PollFlags::IN)];
            let _ = rustix::event::poll(&mut fds, Some(&left));
        }
        self.child_exit
    }

    /// Ends the whole tree and blocks until the supervisor and everything below it are gone.
    pub fn shutdown(mut self) {
        end_orderly(&mut self.control);
        let (done, wait) = mpsc::channel();
        let done = Box::new(move |()| {
            let _ = done.send(());
        });
        if release(self.id, done) {
            self.id = 0;
            let _ = wait.recv();
        }
    }
}

impl Drop for BlockingSupervisor {
    fn drop(&mut self) {
        end_orderly(&mut self.control);
        if self.id > 0 {
            release(self.id, Box::new(|()| {}));
        }
    }
}
