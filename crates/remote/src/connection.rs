//! One open connection to a far side: a writer task, a reader task that routes each line (a
//! response to its request, an event to its call, a warning to the list), the transport's
//! stderr kept for error messages, and the keep-alive pings.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use agentsh_jsonl::{AsyncLineReader, InputLine};
use agentsh_protocol::wire::{Command, Message, Request, RequestId};
use agentsh_seam::{EventHub, lock};
use serde_json::value::RawValue;
use tokio::io::{AsyncBufRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::Child;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use crate::transport::{Channel, Transport};

/// The longest line taken from the far side (a `read_artifact` of a whole large artifact is one
/// line); a longer one ends the connection.
pub(crate) const MAX_LINE_BYTES: usize = 1 << 30;

/// How much of the transport's stderr is kept for messages.
const STDERR_TAIL_BYTES: usize = 8 * 1024;

/// How long a closed channel's process gets to exit before its status is given up on.
const EXIT_WAIT: Duration = Duration::from_secs(2);

/// How long the far side's output is still read after the transport's process exited.
const EXIT_DRAIN: Duration = Duration::from_millis(300);

/// A far side's answer to a request: its `data` as it was written (a whole artifact, say, is
/// parsed once, into the type its reader wants).
#[derive(Debug)]
pub(crate) struct Answer {
    /// Whether the far side carried the request out.
    pub(crate) success: bool,
    /// Its `data`, unparsed.
    pub(crate) data: Option<Box<RawValue>>,
    /// Why not, in its words.
    pub(crate) error: Option<String>,
}

/// Requests waiting for their responses, by the id this side gave them.
type Pending = HashMap<u64, oneshot::Sender<Answer>>;

/// Calls waiting for their events, by the far-side `toolCallId` (or a `bash` request's
/// `streamId`) this side gave them.
type Calls = HashMap<String, mpsc::UnboundedSender<Message>>;

/// An open connection. Dropping the last handle closes the far side's input and kills the
/// transport's process.
pub(crate) struct Connection {
    lines: mpsc::UnboundedSender<Vec<u8>>,
    next_id: AtomicU64,
    state: Arc<Shared>,
    lost: watch::Receiver<Option<String>>,
}

/// What the tasks and the handle share.
struct Shared {
    pending: Mutex<Pending>,
    calls: Mutex<Calls>,
    warnings: Mutex<Vec<String>>,
    stderr: Mutex<Vec<u8>>,
    /// When a line last came from the far side.
    heard: Mutex<Instant>,
    lost: watch::Sender<Option<String>>,
    /// Set once the far side sent its first JSON line (what came before was skipped).
    spoke: std::sync::atomic::AtomicBool,
    /// Kills the transport's process (the reader task owns it).
    kill: Mutex<Option<oneshot::Sender<()>>>,
    transport: Arc<dyn Transport>,
    /// Where the far side's session events go: this side's subscribers.
    events: EventHub,
}

impl Shared {
    /// Marks the connection lost (the first reason wins) and fails everything waiting.
    fn lose(&self, reason: &str) {
        let first = self.lost.send_if_modified(|lost| {
            if lost.is_none() {
                *lost = Some(reason.to_owned());
                true
            } else {
                false
            }
        });
        if first {
            tracing::debug!("remote connection lost: {reason}");
        }
        // Dropping the senders wakes every waiter, which then reads the reason.
        lock(&self.pending).clear();
        lock(&self.calls).clear();
        if let Some(kill) = lock(&self.kill).take() {
            let _ = kill.send(());
        }
    }

    /// The last lines of the transport's stderr, trimmed.
    fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&lock(&self.stderr))
            .trim()
            .to_owned()
    }

    /// Why the channel ended: what the transport explains, else its last stderr line, else the
    /// process's exit.
    fn end_reason(&self, exit: Option<String>) -> String {
        let stderr = self.stderr_text();
        if let Some(explained) = self.transport.explain(&stderr) {
            return explained;
        }
        let last = stderr
            .lines()
            .rev()
            .map(str::trim)
            .find(|line| !line.is_empty());
        match (last, exit) {
            (Some(line), Some(exit)) => format!("{line} ({exit})"),
            (Some(line), None) => line.to_owned(),
            (None, Some(exit)) => format!("the far side closed the connection ({exit})"),
            (None, None) => "the far side closed the connection".to_owned(),
        }
    }

    fn route(&self, message: Message) {
        // The session's own events, whatever they are, go to this side's subscribers.
        let message = match message.into_event() {
            Ok(event) => return self.events.send(event),
            Err(message) => message,
        };
        match message {
            Message::Response {
                id,
                success,
                data,
                error,
                ..
            } => {
                let Some(id) = id.as_ref().and_then(|id| id.value().as_u64()) else {
                    tracing::debug!("a response without an id of ours: {id:?}");
                    return;
                };
                if let Some(waiter) = lock(&self.pending).remove(&id) {
                    let _ = waiter.send(Answer {
                        success,
                        data,
                        error,
                    });
                }
            }
            Message::Warning { message } => lock(&self.warnings).push(message),
            event => {
                // A tool call's events name it by `toolCallId`; a streamed `bash` request's
                // output by its `streamId` (the two share one namespace of this side's ids).
                let sender = event
                    .stream()
                    .and_then(|call| lock(&self.calls).get(call).cloned());
                if let Some(sender) = sender {
                    let _ = sender.send(event);
                }
            }
        }
    }
}

impl Connection {
    /// Opens a channel through `transport` and starts its tasks, pinging every `lease / 3` and
    /// giving the connection up after `lease` without a line from the far side.
    pub(crate) fn start(
        channel: Channel,
        transport: &Arc<dyn Transport>,
        lease: Duration,
        events: EventHub,
    ) -> Arc<Self> {
        let Channel {
            writer,
            reader,
            stderr,
            child,
        } = channel;
        let (lost_tx, lost) = watch::channel(None);
        let (kill_tx, kill_rx) = oneshot::channel();
        let state = Arc::new(Shared {
            pending: Mutex::default(),
            calls: Mutex::default(),
            warnings: Mutex::default(),
            stderr: Mutex::default(),
            heard: Mutex::new(Instant::now()),
            lost: lost_tx,
            spoke: std::sync::atomic::AtomicBool::new(false),
            kill: Mutex::new(Some(kill_tx)),
            transport: Arc::clone(transport),
            events,
        });
        let (lines, lines_rx) = mpsc::unbounded_channel();
        tokio::spawn(write_lines(writer, lines_rx, Arc::clone(&state)));
        let stderr_done =
            stderr.map(|stderr| tokio::spawn(read_stderr(stderr, Arc::clone(&state))));
        tokio::spawn(read_lines(
            BufReader::with_capacity(64 * 1024, reader),
            child,
            kill_rx,
            stderr_done,
            Arc::clone(&state),
        ));
        let connection = Arc::new(Self {
            lines,
            next_id: AtomicU64::new(1),
            state,
            lost,
        });
        tokio::spawn(keep_alive(Arc::downgrade(&connection), lease));
        connection
    }

    /// Why the connection was lost, if it was.
    pub(crate) fn lost(&self) -> Option<String> {
        self.lost.borrow().clone()
    }

    /// Waits until the connection is lost; its reason.
    pub(crate) async fn lost_reason(&self) -> String {
        let mut lost = self.lost.clone();
        match lost.wait_for(Option::is_some).await {
            Ok(reason) => reason.clone().unwrap_or_default(),
            Err(_) => "the connection ended".to_owned(),
        }
    }

    /// Gives the connection up with `reason` (everything waiting fails with it).
    pub(crate) fn abandon(&self, reason: &str) {
        self.state.lose(reason);
    }

    /// Warnings the far side sent, taken.
    pub(crate) fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.state.warnings))
    }

    /// A fresh request id.
    fn id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Sends `command` (under an id of this side's) and waits for its response;
    /// `Err(reason)` when the connection is lost first.
    pub(crate) async fn request(&self, command: Command) -> Result<Answer, String> {
        let id = self.id();
        let (tx, rx) = oneshot::channel();
        lock(&self.state.pending).insert(id, tx);
        self.send(Some(id), command)?;
        match rx.await {
            Ok(answer) => Ok(answer),
            Err(_) => Err(self.lost_reason().await),
        }
    }

    /// Registers a call's events under the far-side `toolCallId` (or `streamId`) `call`.
    pub(crate) fn events(&self, call: &str) -> mpsc::UnboundedReceiver<Message> {
        let (tx, rx) = mpsc::unbounded_channel();
        if self.lost().is_none() {
            lock(&self.state.calls).insert(call.to_owned(), tx);
        }
        rx
    }

    /// Forgets a call's events.
    pub(crate) fn forget(&self, call: &str) {
        lock(&self.state.calls).remove(call);
    }

    /// Queues one request line for the far side; `id`: an id of this side's (whose answer is
    /// routed to no one unless it is pending).
    pub(crate) fn send(&self, id: Option<u64>, command: Command) -> Result<(), String> {
        if let Some(reason) = self.lost() {
            return Err(reason);
        }
        let request = Request {
            id: id.map(RequestId::from),
            command,
        };
        let mut line = request.to_line().into_bytes();
        line.push(b'\n');
        self.lines
            .send(line)
            .map_err(|_| "the connection's writer ended".to_owned())
    }

    /// A fresh id for a request whose answer nobody waits for.
    pub(crate) fn unanswered_id(&self) -> u64 {
        self.id()
    }

    /// Ends the connection in order: the far side's input is closed (it ends every tree, as at
    /// end of input) and its exit awaited for up to `grace`, then the transport is killed.
    pub(crate) async fn close(self: Arc<Self>, grace: Duration) {
        let mut lost = self.lost.clone();
        let state = Arc::clone(&self.state);
        // Dropping the handle drops the line sender: the writer task shuts the far side's
        // input once it has written what is queued.
        drop(self);
        let ended = tokio::time::timeout(grace, lost.wait_for(Option::is_some)).await;
        if ended.is_err() {
            state.lose("closed");
        }
    }
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("lost", &self.lost())
            .finish_non_exhaustive()
    }
}

/// Writes queued lines until the queue ends (the handle dropped), then closes the far side's
/// input.
async fn write_lines(
    mut writer: Box<dyn tokio::io::AsyncWrite + Send + Unpin>,
    mut lines: mpsc::UnboundedReceiver<Vec<u8>>,
    state: Arc<Shared>,
) {
    let mut lost = state.lost.subscribe();
    loop {
        let line = tokio::select! {
            line = lines.recv() => line,
            _ = lost.wait_for(Option::is_some) => return,
        };
        let Some(line) = line else { break };
        let written = async {
            writer.write_all(&line).await?;
            writer.flush().await
        };
        if let Err(err) = written.await {
            state.lose(&format!("cannot write to the far side: {err}"));
            return;
        }
    }
    let _ = writer.shutdown().await;
}

/// Keeps the last [`STDERR_TAIL_BYTES`] of the transport's stderr.
async fn read_stderr(mut stderr: Box<dyn tokio::io::AsyncRead + Send + Unpin>, state: Arc<Shared>) {
    let mut buf = vec![0u8; 4096];
    loop {
        match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let mut tail = lock(&state.stderr);
                tail.extend_from_slice(&buf[..n]);
                if tail.len() > STDERR_TAIL_BYTES {
                    let cut = tail.len() - STDERR_TAIL_BYTES;
                    tail.drain(..cut);
                }
            }
        }
    }
}

/// Reads the far side's lines and routes them until its output ends or the connection is
/// lost; then kills the transport's process and records why the channel ended.
async fn read_lines(
    reader: BufReader<Box<dyn tokio::io::AsyncRead + Send + Unpin>>,
    mut child: Option<Child>,
    kill: oneshot::Receiver<()>,
    stderr_done: Option<tokio::task::JoinHandle<()>>,
    state: Arc<Shared>,
) {
    let mut reader = AsyncLineReader::new(reader, MAX_LINE_BYTES);
    let end = tokio::select! {
        ended = route_lines(&mut reader, &state) => End::Routed(ended),
        _ = kill => End::Killed,
        status = wait_child(child.as_mut()) => End::Exited(status),
    };
    let (ended, mut exit) = match end {
        End::Routed(ended) => (Some(ended), None),
        End::Killed => (None, None),
        // The transport's process ended while the far side's output may still be open (held
        // by a far-side process it started): what is already there is read, then the channel
        // counts as ended.
        End::Exited(status) => {
            let drained = tokio::time::timeout(EXIT_DRAIN, route_lines(&mut reader, &state))
                .await
                .unwrap_or(Ok(()));
            (Some(drained), status.ok().map(describe_exit))
        }
    };
    if let Some(child) = &mut child
        && exit.is_none()
    {
        // Given up or ended: the transport's process goes too (an ssh client whose link is
        // silent would otherwise wait for its keep-alives).
        if ended.is_none() {
            let _ = child.start_kill();
        }
        exit = match tokio::time::timeout(EXIT_WAIT, child.wait()).await {
            Ok(Ok(status)) => Some(describe_exit(status)),
            Ok(Err(_)) => None,
            Err(_) => {
                let _ = child.start_kill();
                let _ = child.wait().await;
                None
            }
        };
    }
    if let Some(done) = stderr_done {
        let _ = tokio::time::timeout(EXIT_WAIT, done).await;
    }
    let reason = match ended {
        Some(Err(err)) => err,
        _ => state.end_reason(exit),
    };
    state.lose(&reason);
}

/// How the reader stopped.
enum End {
    /// The far side's output ended (or failed).
    Routed(Result<(), String>),
    /// The connection was given up.
    Killed,
    /// The transport's process exited first.
    Exited(std::io::Result<std::process::ExitStatus>),
}

/// The exit of the transport's process; never, without one.
async fn wait_child(child: Option<&mut Child>) -> std::io::Result<std::process::ExitStatus> {
    match child {
        Some(child) => child.wait().await,
        None => std::future::pending().await,
    }
}

/// `exit status N` or `killed by signal N`.
fn describe_exit(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => status.to_string(),
    }
}

/// Routes lines until end of output (`Ok`) or a read error or an oversized line (`Err`).
async fn route_lines<R: AsyncBufRead + Unpin>(
    reader: &mut AsyncLineReader<R>,
    state: &Shared,
) -> Result<(), String> {
    loop {
        let line = match reader.next_line().await {
            Ok(Some(InputLine::Complete(line))) => line,
            Ok(Some(InputLine::Oversized { .. })) => {
                return Err(format!(
                    "the far side sent a line of more than {MAX_LINE_BYTES} bytes"
                ));
            }
            Ok(None) => return Ok(()),
            Err(err) => return Err(format!("cannot read from the far side: {err}")),
        };
        *lock(&state.heard) = Instant::now();
        if let Ok(message) = serde_json::from_slice::<Message>(&line) {
            state.spoke.store(true, Ordering::Relaxed);
            state.route(message);
        } else {
            // Before the first JSON line: a chatty rc (a banner, `motd`); skipped. After it,
            // a line that is no message of the protocol is skipped too.
            let spoke = state.spoke.load(Ordering::Relaxed);
            tracing::debug!(
                spoke,
                "skipped a far-side line that is no message: {}",
                String::from_utf8_lossy(&line).trim_end()
            );
        }
    }
}

/// Pings every `lease / 3`; gives the connection up when nothing came from the far side for a
/// whole `lease` (a silent link: the far side's own lease ends its trees by then).
async fn keep_alive(connection: Weak<Connection>, lease: Duration) {
    let period = lease / 3;
    let mut ticks = tokio::time::interval_at(Instant::now() + period, period);
    loop {
        ticks.tick().await;
        let Some(connection) = connection.upgrade() else {
            return;
        };
        if connection.lost().is_some() {
            return;
        }
        let silent = lock(&connection.state.heard).elapsed();
        if silent >= lease {
            connection.abandon(&format!(
                "no answer from the far side for {} s",
                silent.as_secs()
            ));
            return;
        }
        // The answer only refreshes `heard`: it is routed to no one.
        let id = connection.id();
        if connection.send(Some(id), Command::Ping).is_err() {
            return;
        }
    }
}
