//! `agentsh artifact ID [--offset N] [--limit N]`: lines of an artifact printed as they are,
//! so that a result's `Full: artifact://ID` can be read after `agentsh exec`.
//!
//! The read is the RPC `read_artifact` request's: `SessionHandle::read_artifact` on the session
//! the configuration makes, here (the configured store, `[artifacts] dir`) or, with `--remote`,
//! on the far side (its store). The same ids, line ranges and error texts, whichever asks.

use std::io::{self, Write};
use std::process::ExitCode;

use crate::cli::ArtifactArgs;
use crate::{print_error, print_warnings, usage_error};

/// Exit status when the artifact cannot be read (not found, not an artifact id, no store).
const EXIT_UNREADABLE: u8 = 1;

/// Runs `agentsh artifact`.
pub fn run(args: ArtifactArgs) -> ExitCode {
    let config = args.session.config.as_deref();
    let cwd = args.session.cwd.as_deref();
    let remote = match crate::config::load_settings(config)
        .map_err(|err| err.to_string())
        .and_then(|settings| crate::remote::choose(&args.remote, &settings, cwd))
    {
        Ok(remote) => remote,
        Err(message) => return usage_error(&message),
    };
    let (runtime, mut signals, session) =
        match crate::serve_session("artifact", config, cwd, remote, |_| {}) {
            Ok(started) => started,
            Err(code) => return code,
        };
    let ArtifactArgs {
        id, offset, limit, ..
    } = args;
    let read = runtime.block_on(async {
        print_warnings(&session.take_warnings());
        let read = tokio::select! {
            read = session.read_artifact(id, offset, limit) => Ok(read),
            code = signals.recv() => Err(code),
        };
        print_warnings(&session.take_warnings());
        // A far side's connection closes in order; a session here has nothing running.
        session.shutdown().await;
        read
    });
    match read {
        Ok(Ok(artifact)) => match print(&artifact.text) {
            Ok(()) => ExitCode::SUCCESS,
            // `agentsh artifact 7 | head` closed the pipe on purpose.
            Err(err) if err.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
            Err(err) => {
                print_error(&format_args!("cannot write the artifact: {err}"));
                ExitCode::FAILURE
            }
        },
        Ok(Err(err)) => {
            print_error(&err);
            ExitCode::from(EXIT_UNREADABLE)
        }
        Err(signal) => ExitCode::from(signal),
    }
}

/// Writes `text` to stdout as it is: no newline added.
fn print(text: &str) -> io::Result<()> {
    let mut stdout = io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()
}
