//! `agentsh rpc`: one session served on stdin and stdout.

use std::io;
use std::time::Duration;

use agentsh_seam::Handle;
use agentsh_signals::Stop;
use tokio::runtime::Runtime;
use tokio::sync::mpsc;

use crate::input::Incoming;
use crate::output::Output;
use crate::server::Server;
use crate::{REQUEST_QUEUE, input, output};

/// How long the runtime waits for leftover blocking work when the server ends.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Why [`serve_stdio`] could not serve.
#[derive(Debug, thiserror::Error)]
pub enum StdioError {
    /// The thread that writes stdout could not be started.
    #[error("cannot start the output thread: {0}")]
    OutputThread(#[source] io::Error),
    /// The thread that reads a stdin that is not a pipe or a socket could not be started.
    #[error("cannot start the input thread: {0}")]
    InputThread(#[source] io::Error),
}

/// How [`serve_stdio`] serves, beyond its session.
#[derive(Debug, Clone, Copy, Default)]
pub struct StdioOptions {
    /// `agentsh rpc --lease S`: once no input line (a request, a bad line, a blank line) has
    /// come for this long, serving ends exactly as at end of input. Running calls do not
    /// renew it. `None`: never.
    pub lease: Option<Duration>,
}

/// Serves `session` (here or on a far side) on stdin and stdout until stdin ends, the lease of
/// `options` runs out or `stop` asks, then ends every running command, shuts the session down
/// and shuts `runtime` down (waiting up to 2 s for leftover blocking work). Returns the reason
/// of the first stop request, if one came. A `hello` with settings is applied by the session
/// (a session here made renewable makes a new session with them; a far side forwards them).
///
/// `runtime` is the one `session` was made in. Stdin is read by a task on it when it is a pipe
/// or a socket (made non-blocking while served, its flags restored after), else by a thread
/// doing blocking reads. Stdout is written by a thread, or by the sender itself when nothing
/// is queued and the line fits the pipe at once; lines never interleave, and a client that
/// stops reading never blocks the server.
pub fn serve_stdio<S: Stop>(
    runtime: Runtime,
    session: Handle,
    options: StdioOptions,
    stop: S,
) -> Result<Option<S::Reason>, StdioError> {
    serve_with(runtime, |output, requests| {
        Server::new(session, output, None)
            .with_lease(options.lease)
            .serve(requests, stop)
    })
}

/// Stdin and stdout set up for `serve`, which runs on `runtime` until it returns.
fn serve_with<R, F>(
    runtime: Runtime,
    serve: impl FnOnce(Output, mpsc::Receiver<Incoming>) -> F,
) -> Result<Option<R>, StdioError>
where
    F: Future<Output = Option<R>>,
{
    let (output, writer) = output::spawn_writer(io::stdout(), output::stdout_has_room)
        .map_err(StdioError::OutputThread)?;
    let (requests_tx, requests) = mpsc::channel(REQUEST_QUEUE);
    let stdin = {
        let _entered = runtime.enter();
        input::AsyncStdin::open()
    };
    if let Some(stdin) = stdin {
        runtime.spawn(input::read_async(stdin, requests_tx));
    } else {
        std::thread::Builder::new()
            .name("rpc-reader".into())
            .spawn(move || input::read_blocking(&requests_tx))
            .map_err(StdioError::InputThread)?;
    }
    let stopped = runtime.block_on(serve(output, requests));
    // Drops the reader task, and with it the non-blocking stdin, whose flags it restores.
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    // Every `Output` was owned by the server and its tasks, now gone: the writer drains its
    // queue and ends.
    if writer.join().is_err() {
        tracing::error!("the output thread panicked");
    }
    Ok(stopped)
}
