//! The messages the mode's tasks send to its loop, and the hosts calls are given: the PTY host
//! (a program's screen becomes the overlay) and the input thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use agentsh_protocol::{
    ApprovalDecision, ApprovalRequest, ApprovalResolution, BashResult, JobView, ToolOutcome,
};
use agentsh_pty_runtime::PtyController;
use agentsh_seam::wire::ArtifactData;
use agentsh_seam::{CancellationToken, Handle, PtyAttachment, PtyHost, Value};
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::oneshot;

/// A transcript entry's key (calls from every connection share one counter).
pub(crate) type CallKey = u64;

/// Something for the loop.
pub(crate) enum AppEvent {
    /// A key, a paste, a resize.
    Terminal(crossterm::event::Event),
    /// The input thread stopped (the terminal is gone).
    InputClosed,
    /// A call's live tail.
    ToolUpdate(CallKey, String),
    /// A call ended.
    ToolDone(CallKey, ToolOutcome),
    /// A bang command's output, as committed.
    BangOutput(CallKey, String),
    /// A bang command ended.
    BangDone(CallKey, Result<BashResult, String>),
    /// A call's program started on a PTY: its screen becomes the overlay.
    PtyAttached(CallKey, PtyController),
    /// Lines of an artifact were read for an expanded view.
    Window {
        /// The artifact.
        id: String,
        /// The first line asked for.
        first_line: u64,
        /// The lines, or why they could not be read.
        read: Result<ArtifactData, String>,
    },
    /// A far side's status was read again and shows something new.
    FarPolled,
    /// A far side's job was read for a followed job's entry.
    JobLooked {
        /// The entry (checked against `id` before use).
        entry: usize,
        /// The job.
        id: String,
        /// What was read; `None`: the far side has no such job.
        look: Option<JobView>,
    },
    /// A client of `--listen` started a call (its session is kept for its jobs).
    Hosted(Box<HostedStart>),
    /// A call's command needs the person's yes.
    ApprovalAsked(Box<ApprovalAsk>),
    /// A job of a session shown here asks for hidden input.
    SecretAsked {
        /// Whose session: a `--listen` connection's number, `None` for the mode's own.
        connection: Option<u64>,
        /// The job, its prompt, the asking program.
        request: agentsh_protocol::InputRequest,
    },
    /// A job of a session shown here ended.
    JobEnded {
        /// Whose session: a `--listen` connection's number, `None` for the mode's own.
        connection: Option<u64>,
        /// Which job, how, after how long.
        end: agentsh_protocol::JobEnd,
    },
    /// The person's hidden input went to job `job` (or why not).
    SecretSent {
        /// The job.
        job: String,
        /// `Err`: the session's reason.
        sent: Result<(), String>,
    },
    /// Names for Tab were read (a directory's entries, `PATH`'s programs, the artifacts).
    Named {
        /// What was listed.
        source: crate::complete::NameSource,
        /// The names, sorted, or why they could not be read.
        names: Result<Vec<String>, String>,
    },
    /// `/kill N` ended (the `job_kill` tool's result).
    Killed {
        /// The line as typed.
        typed: String,
        /// The tool's outcome.
        outcome: ToolOutcome,
    },
    /// An approval request ended (answered here or elsewhere, timed out, or its call aborted).
    ApprovalResolved {
        /// Which request.
        key: ApprovalKey,
        /// How it ended.
        resolution: ApprovalResolution,
    },
}

/// An approval request in the loop: the call it belongs to and the session's request id
/// (unique within a session only, so two connections' requests may share it).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ApprovalKey {
    /// The call's transcript key.
    pub call: CallKey,
    /// The request's id.
    pub request_id: String,
}

/// A question for the person, as it reaches the loop.
pub(crate) struct ApprovalAsk {
    /// Which request.
    pub key: ApprovalKey,
    /// Whose call it is: a `--listen` connection's number, `None` for the mode's own.
    pub connection: Option<u64>,
    /// The command and the segments that need a yes.
    pub request: ApprovalRequest,
    /// Takes the person's answer.
    pub answer: oneshot::Sender<ApprovalDecision>,
}

/// A client's call, as it reaches the loop.
pub(crate) struct HostedStart {
    /// Its transcript key.
    pub key: CallKey,
    /// Its connection's number (1-based).
    pub connection: u64,
    /// Its connection's session.
    pub session: Handle,
    /// What it runs.
    pub kind: HostedKind,
    /// Aborts it (the client then gets the abort result).
    pub cancel: CancellationToken,
}

/// A tool call or a `bash` request.
pub(crate) enum HostedKind {
    /// A `tool_call`.
    Tool {
        /// The tool.
        name: String,
        /// Its arguments.
        arguments: Value,
    },
    /// A `bash` request.
    Bash {
        /// The command.
        command: String,
    },
}

/// The size a PTY gets: the terminal's full width and the rows the overlay's frame leaves,
/// kept up to date by the loop (packed `cols << 16 | rows`).
#[derive(Debug, Default)]
pub(crate) struct PtySize(AtomicU32);

impl PtySize {
    pub(crate) fn set(&self, cols: u16, rows: u16) {
        self.0
            .store(u32::from(cols) << 16 | u32::from(rows), Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> Option<(u16, u16)> {
        let packed = self.0.load(Ordering::Relaxed);
        (packed != 0).then_some(((packed >> 16) as u16, packed as u16))
    }
}

/// Hands one call's PTY controller to the loop.
pub(crate) struct UiPtyHost {
    pub key: CallKey,
    pub events: UnboundedSender<AppEvent>,
    pub size: Arc<PtySize>,
}

impl PtyHost for UiPtyHost {
    fn attach(&self, _call_id: &str, program: PtyAttachment) {
        // A session here hands over its PTY run's controller; nothing else is drawn.
        if let Ok(controller) = program.take::<PtyController>() {
            let _ = self
                .events
                .send(AppEvent::PtyAttached(self.key, controller));
        }
    }

    fn size(&self) -> Option<(u16, u16)> {
        self.size.get()
    }
}

/// Reads the terminal's events on a thread of its own (crossterm's reader blocks) and sends
/// them to the loop; ends when the loop is gone or the terminal fails.
pub(crate) fn spawn_input_thread(events: UnboundedSender<AppEvent>) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("tui-input".into())
        .spawn(move || {
            loop {
                // Polled with a timeout, so the thread notices a closed loop.
                match crossterm::event::poll(Duration::from_millis(200)) {
                    Ok(true) => match crossterm::event::read() {
                        Ok(event) => {
                            if events.send(AppEvent::Terminal(event)).is_err() {
                                return;
                            }
                        }
                        Err(_) => break,
                    },
                    Ok(false) => {
                        if events.is_closed() {
                            return;
                        }
                    }
                    Err(_) => break,
                }
            }
            let _ = events.send(AppEvent::InputClosed);
        })
        .map(drop)
}
