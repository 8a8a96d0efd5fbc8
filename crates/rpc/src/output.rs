//! What the server writes: responses and events, one JSON object per line, never interleaved.
//!
//! A writer drains a queue of lines, so that a client that stops reading never blocks the
//! server. On stdout it is a thread, and when nothing is queued and the line can be written at
//! once (see [`WriteProbe`]), the sender writes it itself instead: that saves a thread hand-off
//! (a wake-up of the writer thread, tens of microseconds) on every response of a quick command.
//! On a socket it is a task of the runtime that writes every line.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

pub use agentsh_protocol::wire::{Message, PartialResult};
use serde::Serialize;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle as TaskHandle;

/// Whether a write of `len` bytes to the output would complete without blocking now.
pub type WriteProbe = fn(len: usize) -> bool;

/// Never writes directly: every line goes through the writer thread.
#[cfg(test)]
pub fn never_direct(_: usize) -> bool {
    false
}

/// For stdout: a line of at most `PIPE_BUF` bytes when stdout reports room (`poll` with no
/// wait). A pipe that polls writable has a free buffer for such a line, a socket has room in
/// its send buffer, a file or `/dev/null` never blocks.
pub fn stdout_has_room(len: usize) -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec};

    if len > rustix::pipe::PIPE_BUF {
        return false;
    }
    let stdout = rustix::stdio::stdout();
    let mut fds = [PollFd::new(&stdout, PollFlags::OUT)];
    let no_wait = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    let ready = rustix::event::poll(&mut fds, Some(&no_wait)).unwrap_or(0);
    let revents = fds[0].revents();
    ready == 1
        && revents.contains(PollFlags::OUT)
        && !revents.intersects(PollFlags::ERR | PollFlags::HUP)
}

/// The writer shared by senders and the writer thread.
struct SharedWriter {
    out: Mutex<Box<dyn Write + Send>>,
    /// Lines sent to the writer thread and not yet written. A sender writes directly only
    /// when this is 0 (checked under the `out` lock), so lines keep their order.
    queued: AtomicUsize,
    /// Set once a write failed (the client closed stdout): later lines are dropped.
    closed: AtomicBool,
    probe: WriteProbe,
}

impl SharedWriter {
    /// Writes `line` now if nothing is queued and it cannot block; `Err(line)` when it must be
    /// queued. `Ok` also when the output is closed (the line is dropped).
    fn try_write(&self, line: String) -> Result<(), String> {
        if self.closed.load(Ordering::SeqCst) {
            return Ok(());
        }
        if self.queued.load(Ordering::SeqCst) != 0 || !(self.probe)(line.len()) {
            return Err(line);
        }
        // Busy means the writer thread is writing (maybe blocked on a full pipe): queue.
        let mut out = match self.out.try_lock() {
            Ok(out) => out,
            Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return Err(line),
        };
        if self.queued.load(Ordering::SeqCst) != 0 {
            return Err(line);
        }
        self.write_lines(&mut **out, [line]);
        Ok(())
    }

    /// Writes `lines` and flushes, unless the output is closed; a failure closes it.
    fn write_lines(&self, out: &mut dyn Write, lines: impl IntoIterator<Item = String>) {
        let mut written = Ok(());
        for line in lines {
            if written.is_ok() && !self.closed.load(Ordering::SeqCst) {
                written = out.write_all(line.as_bytes());
            }
        }
        if let Err(err) = written.and_then(|()| out.flush()) {
            tracing::debug!("stdout closed: {err}; later output is dropped");
            self.closed.store(true, Ordering::SeqCst);
        }
    }
}

/// Sends lines to the output. Cheap to clone; sending never blocks.
#[derive(Clone)]
pub struct Output {
    lines: mpsc::UnboundedSender<String>,
    /// The writer a sender may write to itself (stdout); `None` when the writer task writes
    /// every line (a socket).
    direct: Option<Arc<SharedWriter>>,
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Output").finish_non_exhaustive()
    }
}

impl Output {
    /// Queues one message. Once the output is gone (the client closed stdout) messages are
    /// dropped.
    pub fn send(&self, message: &Message) {
        self.send_serialized(message);
    }

    fn send_serialized(&self, message: &impl Serialize) {
        match serde_json::to_string(message) {
            Ok(mut line) => {
                line.push('\n');
                if let Some(shared) = &self.direct {
                    let Err(queued) = shared.try_write(line) else {
                        return;
                    };
                    line = queued;
                    shared.queued.fetch_add(1, Ordering::SeqCst);
                }
                if self.lines.send(line).is_err() {
                    tracing::debug!("output closed; message dropped");
                }
            }
            // Values built from serde types with string keys always serialise.
            Err(err) => tracing::error!("cannot serialise an RPC message: {err}"),
        }
    }

    /// Queues several messages.
    pub fn send_all(&self, messages: impl IntoIterator<Item = Message>) {
        for message in messages {
            self.send(&message);
        }
    }
}

/// Starts the thread that writes every queued line to `out`, whole, in order, flushing
/// whenever the queue is empty (so each line is out before the writer waits for the next). It
/// ends when every [`Output`] is dropped and the queue is written, or when `out` fails.
/// Senders write a line themselves when nothing is queued and `probe` says it cannot block.
pub fn spawn_writer<W: Write + Send + 'static>(
    out: W,
    probe: WriteProbe,
) -> io::Result<(Output, JoinHandle<()>)> {
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let shared = Arc::new(SharedWriter {
        out: Mutex::new(Box::new(out)),
        queued: AtomicUsize::new(0),
        closed: AtomicBool::new(false),
        probe,
    });
    let writer = Arc::clone(&shared);
    let handle = std::thread::Builder::new()
        .name("rpc-writer".into())
        .spawn(move || {
            while let Some(first) = rx.blocking_recv() {
                let mut out = writer.out.lock().unwrap_or_else(PoisonError::into_inner);
                let mut lines = vec![first];
                while let Ok(line) = rx.try_recv() {
                    lines.push(line);
                }
                let count = lines.len();
                writer.write_lines(&mut **out, lines);
                // Counted down under the lock, after the write: a sender that then finds the
                // queue empty writes after these lines.
                writer.queued.fetch_sub(count, Ordering::SeqCst);
            }
        })?;
    Ok((
        Output {
            lines: tx,
            direct: Some(shared),
        },
        handle,
    ))
}

/// Starts the task that writes every line sent to the [`Output`] to `out` (a socket's write
/// half), whole and in order. It ends when every [`Output`] is dropped and the queue is
/// written (then it shuts `out` down: the client reads the end), or when a write fails (the
/// client is gone: later lines are dropped). Must be called within a runtime.
pub fn spawn_task_writer<W: AsyncWrite + Unpin + Send + 'static>(
    mut out: W,
) -> (Output, TaskHandle<()>) {
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let task = tokio::spawn(async move {
        while let Some(line) = rx.recv().await {
            if let Err(err) = out.write_all(line.as_bytes()).await {
                tracing::debug!("connection closed: {err}; later output is dropped");
                return;
            }
        }
        let _ = out.shutdown().await;
    });
    (
        Output {
            lines: tx,
            direct: None,
        },
        task,
    )
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use serde_json::Value;
    use serde_json::json;
    use serde_json::value::RawValue;

    use super::*;
    use crate::error::{ParseError, RpcError};

    fn json_of(message: &Message) -> Value {
        serde_json::to_value(message).expect("serialisable")
    }

    #[test]
    fn data_keeps_its_field_order() {
        #[derive(Serialize)]
        struct Data {
            zeta: u8,
            alpha: u8,
        }
        let data = serde_json::value::to_raw_value(&Data { zeta: 1, alpha: 2 }).expect("raw");
        let line =
            serde_json::to_string(&Message::success(None, "bash", Some(data))).expect("json");
        assert_eq!(
            line,
            r#"{"type":"response","command":"bash","success":true,"data":{"zeta":1,"alpha":2}}"#
        );
    }

    #[test]
    fn response_shapes() {
        assert_eq!(
            json_of(&Message::success(Some("1".into()), "abort_bash", None)),
            json!({"id": "1", "type": "response", "command": "abort_bash", "success": true})
        );
        assert_eq!(
            json_of(&Message::failure(
                None,
                "parse",
                RpcError::Parse(ParseError::Json(serde::de::Error::custom("x")))
            )),
            json!({"type": "response", "command": "parse", "success": false, "error": "Failed to parse command: x"})
        );
    }

    #[test]
    fn event_shapes_are_camel_case() {
        assert_eq!(
            json_of(&Message::ToolExecutionUpdate {
                tool_call_id: "c".into(),
                tool_name: "bash".into(),
                partial_result: PartialResult::text("so far".into()),
            }),
            json!({"type": "tool_execution_update", "toolCallId": "c", "toolName": "bash",
                   "partialResult": {"content": [{"type": "text", "text": "so far"}]}})
        );
        assert_eq!(
            json_of(&Message::ToolExecutionEnd {
                tool_call_id: "c".into(),
                tool_name: "bash".into(),
                result: RawValue::from_string("{}".into()).expect("valid JSON"),
                is_error: true,
            }),
            json!({"type": "tool_execution_end", "toolCallId": "c", "toolName": "bash", "result": {}, "isError": true})
        );
        assert_eq!(
            json_of(&Message::Warning {
                message: "w".into()
            }),
            json!({"type": "warning", "message": "w"})
        );
    }

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().expect("not poisoned").extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Says yes to every other line, so both paths run side by side.
    fn every_other(_: usize) -> bool {
        static CALLS: AtomicUsize = AtomicUsize::new(0);
        CALLS.fetch_add(1, Ordering::Relaxed).is_multiple_of(2)
    }

    #[test]
    fn direct_and_queued_lines_keep_each_senders_order() {
        let sink = Shared::default();
        let (output, writer) = spawn_writer(sink.clone(), every_other).expect("thread");
        std::thread::scope(|scope| {
            for thread in 0..4 {
                let output = output.clone();
                scope.spawn(move || {
                    for n in 0..500 {
                        output.send(&Message::Warning {
                            message: format!("{thread} {n}"),
                        });
                    }
                });
            }
        });
        drop(output);
        writer.join().expect("writer ends");
        let text = String::from_utf8(sink.0.lock().expect("not poisoned").clone()).expect("utf-8");
        let mut next = [0u32; 4];
        for line in text.lines() {
            let value: Value = serde_json::from_str(line).expect("whole line");
            let message = value["message"].as_str().expect("message");
            let (thread, n) = message.split_once(' ').expect("two numbers");
            let thread: usize = thread.parse().expect("thread");
            assert_eq!(
                n.parse::<u32>().expect("n"),
                next[thread],
                "order of {thread}"
            );
            next[thread] += 1;
        }
        assert_eq!(next, [500; 4]);
    }

    #[test]
    fn lines_from_many_threads_never_interleave() {
        let sink = Shared::default();
        let (output, writer) = spawn_writer(sink.clone(), never_direct).expect("thread");
        let big = "x".repeat(100_000);
        std::thread::scope(|scope| {
            for thread in 0..4 {
                let output = output.clone();
                let big = big.clone();
                scope.spawn(move || {
                    for n in 0..50 {
                        output.send(&Message::Warning {
                            message: format!("{thread}-{n}-{big}"),
                        });
                    }
                });
            }
        });
        drop(output);
        writer
            .join()
            .expect("writer ends when every sender is gone");
        let text = String::from_utf8(sink.0.lock().expect("not poisoned").clone()).expect("utf-8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 200);
        for line in lines {
            let value: Value = serde_json::from_str(line).expect("each line is one whole object");
            assert!(value["message"].as_str().expect("message").ends_with(&big));
        }
    }
}
