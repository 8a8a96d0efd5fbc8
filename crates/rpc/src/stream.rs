//! A `bash` request's output streamed to its client (`streamId`, `bash_output` events): what
//! a UI far away shows while the command runs. The pieces are joined and sent at most every
//! [`STREAM_INTERVAL`], and only the last [`STREAM_TAIL_BYTES`] of what came between two sends
//! go out: a command that prints a gigabyte costs the link a live tail, not the gigabyte (the
//! whole output is in the result and its artifact).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentsh_protocol::tail_of;
use agentsh_seam::lock;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::output::{Message, Output};

/// Shortest time between two `bash_output` events of one command.
pub(crate) const STREAM_INTERVAL: Duration = Duration::from_millis(50);

/// Bytes of output one event carries at most: the newest ones.
pub(crate) const STREAM_TAIL_BYTES: usize = 64 * 1024;

/// A running command's stream: [`OutputStream::push`] from the output callback,
/// [`OutputStream::finish`] before the response is sent.
pub(crate) struct OutputStream {
    pending: Arc<Mutex<String>>,
    done: CancellationToken,
    flusher: JoinHandle<()>,
}

impl OutputStream {
    /// Starts the stream of `stream_id` on `output`.
    pub(crate) fn start(stream_id: String, output: Output) -> Self {
        let pending = Arc::new(Mutex::new(String::new()));
        let done = CancellationToken::new();
        let flusher = tokio::spawn({
            let (pending, done) = (Arc::clone(&pending), done.clone());
            async move {
                let mut tick = tokio::time::interval(STREAM_INTERVAL);
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    let finished = tokio::select! {
                        _ = tick.tick() => false,
                        () = done.cancelled() => true,
                    };
                    let text = std::mem::take(&mut *lock(&pending));
                    if !text.is_empty() {
                        output.send(&Message::BashOutput {
                            stream_id: stream_id.clone(),
                            text,
                        });
                    }
                    if finished {
                        return;
                    }
                }
            }
        });
        Self {
            pending,
            done,
            flusher,
        }
    }

    /// A piece of output, for the next event.
    pub(crate) fn push(&self, text: &str) {
        let mut pending = lock(&self.pending);
        pending.push_str(text);
        let drop = pending.len() - tail_of(&pending, STREAM_TAIL_BYTES).len();
        pending.replace_range(..drop, "");
    }

    /// Sends what is pending and ends the stream: every event of it precedes what is sent
    /// after this returns.
    pub(crate) async fn finish(self) {
        self.done.cancel();
        let _ = self.flusher.await;
    }
}
