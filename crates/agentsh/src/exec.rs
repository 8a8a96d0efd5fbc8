//! Print mode: `agentsh exec … -- <command…>`, one `bash` tool call.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use agentsh_agent_session::{
    AgentSession, BASH_TOOL, SessionError, SessionOptions, ToolContext, ToolOutcome, ToolResult,
    check_cwd,
};
use agentsh_seam::{HandleError, SessionHandle, ToolCall};
use agentsh_signals::{EXIT_INTERRUPTED, Signals};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::cli::ExecArgs;
use crate::config::load_settings;
use crate::{print_error, print_warnings, runtime, usage_error};

/// Exit status of a tool error (non-zero exit, timeout, blocked command, bad `--cwd`).
const EXIT_TOOL_ERROR: u8 = 1;
/// The `toolCallId` of the one call.
const CALL_ID: &str = "exec";

/// Why the call could not be made.
enum Failure {
    Session(SessionError),
    Signals(io::Error),
}

/// Runs `agentsh exec`.
pub fn run(args: ExecArgs) -> ExitCode {
    let settings = match load_settings(args.session.config.as_deref()) {
        Ok(settings) => settings,
        Err(err) => return usage_error(&err),
    };
    let current = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(err) => return usage_error(&format_args!("cannot read the current directory: {err}")),
    };
    // The tool's `cwd` argument is text: a `--cwd` that is not UTF-8 cannot become one.
    let cwd_flag = match args.session.cwd.as_deref() {
        None => None,
        Some(dir) => match dir.to_str() {
            Some(text) => Some(text),
            None => return usage_error(&format_args!("--cwd {}: not valid UTF-8", dir.display())),
        },
    };
    // `--cwd` is the session's cwd. One that is no directory stays the call's argument, so
    // that the model-facing cwd error (exit status 1) reports it.
    let (cwd, call_cwd) = session_cwd(cwd_flag, current);
    let tool_args = tool_arguments(&args, call_cwd);
    // On a far side, `--cwd` is that side's session directory, resolved there.
    let far_cwd = cwd_flag.map(far_side_cwd);
    let remote = match crate::remote::choose(&args.remote, &settings, far_cwd.as_deref()) {
        Ok(remote) => remote,
        Err(message) => return usage_error(&message),
    };
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(err) => {
            print_error(&format_args!("cannot start the async runtime: {err}"));
            return ExitCode::FAILURE;
        }
    };
    if let Some(remote) = remote {
        let tool_args = tool_arguments(&args, None);
        return run_remote(&runtime, remote, &tool_args, &args);
    }
    let outcome = runtime.block_on(async {
        // Installed before anything runs: from here on SIGINT/SIGTERM/SIGHUP cancel the call instead
        // of killing agentsh.
        let mut signals = Signals::install().map_err(Failure::Signals)?;
        let session = AgentSession::new(SessionOptions {
            settings,
            cwd,
            mode: Some("exec".to_owned()),
            ..SessionOptions::default()
        })
        .map_err(Failure::Session)?;
        print_warnings(&session.take_warnings());
        let cancel = CancellationToken::new();
        // Print mode has no interactive UI: never a PTY.
        let context = ToolContext {
            tool_names: args.tools,
            cancel: cancel.clone(),
            pty_host: None,
            // The result is printed once, at the end.
            skip_live_updates: true,
            no_jobs: true,
            // Nobody can be asked: a command that needs a yes is denied.
            approver: None,
        };
        // Boxed: a tool call's future is large (the executor's, the gate's, the PTY path's
        // state), and this one runs once.
        let call = Box::pin(session.execute_tool(CALL_ID, &tool_args, context, |_| {}));
        // A second signal exits: that closes every supervisor's control pipe, which ends
        // whatever is left.
        let (outcome, interrupted) = until_signalled(call, &mut signals, &cancel).await;
        // No `session.shutdown()`: the process ends right after printing, and its end closes
        // every supervisor's control pipe, which ends each shell's whole tree. An orderly close
        // would only add the shell's stop-and-kill round trips (~30 ms, most of the cost of
        // `agentsh exec -- true`).
        print_warnings(&session.take_warnings());
        Ok((outcome, interrupted))
    });
    // Nothing left to wait for (see above); blocking-pool threads must not delay the exit.
    runtime.shutdown_background();
    let (outcome, interrupted) = match outcome {
        Ok(done) => done,
        // An unusable `bash.shell`: nothing runs on a broken configuration.
        Err(Failure::Session(err)) => return usage_error(&err),
        Err(Failure::Signals(err)) => {
            print_error(&format_args!("cannot handle signals: {err}"));
            return ExitCode::FAILURE;
        }
    };
    let aborted = matches!(outcome, ToolOutcome::Aborted(_));
    let result = outcome.into_result();
    if let Err(err) = print_result(&result, args.json) {
        // A closed stdout (`agentsh exec … | head -c0`) is the reader's choice, not an error.
        if err.kind() != io::ErrorKind::BrokenPipe {
            print_error(&format_args!("cannot write the result: {err}"));
        }
    }
    if let Some(code) = interrupted {
        ExitCode::from(code)
    } else if aborted {
        ExitCode::from(EXIT_INTERRUPTED)
    } else if result.is_error {
        ExitCode::from(EXIT_TOOL_ERROR)
    } else {
        ExitCode::SUCCESS
    }
}

/// `agentsh exec --remote`: the one call made on the far side, the result printed here.
fn run_remote(
    runtime: &tokio::runtime::Runtime,
    remote: crate::remote::Choice,
    tool_args: &Value,
    args: &ExecArgs,
) -> ExitCode {
    let outcome = runtime.block_on(async {
        let mut signals =
            Signals::install().map_err(|err| format!("cannot handle signals: {err}"))?;
        let session = tokio::select! {
            session = remote.connect() => session?,
            code = signals.recv() => return Ok((None, Some(code))),
        };
        print_warnings(&session.take_warnings());
        let cancel = CancellationToken::new();
        let call = session.tool_call(ToolCall {
            tool_names: &args.tools,
            cancel: cancel.clone(),
            ..ToolCall::new(CALL_ID, BASH_TOOL, tool_args)
        });
        // A second signal exits: the transport dies with this process, and the far side ends
        // everything at end of its input.
        let (answer, interrupted) = until_signalled(call, &mut signals, &cancel).await;
        print_warnings(&session.take_warnings());
        // An orderly close: the far side ends its shells before the connection goes.
        session.shutdown().await;
        let result: ToolResult = match answer {
            Ok(outcome) => outcome.into_result(),
            Err(HandleError::Failed(error)) => return Err(error),
            Err(err) => err.tool_result(),
        };
        Ok((Some(result), interrupted))
    });
    let (result, interrupted) = match outcome {
        Ok(done) => done,
        Err(message) => {
            print_error(&message);
            return ExitCode::from(2);
        }
    };
    if let Some(result) = &result
        && let Err(err) = print_result(result, args.json)
        && err.kind() != io::ErrorKind::BrokenPipe
    {
        print_error(&format_args!("cannot write the result: {err}"));
    }
    match (interrupted, result) {
        (Some(code), _) => ExitCode::from(code),
        (None, Some(result)) if result.is_error => ExitCode::from(EXIT_TOOL_ERROR),
        _ => ExitCode::SUCCESS,
    }
}

/// Waits for `call`; the first signal cancels it (the call still ends, and its exit status is
/// kept), a second one exits at once with the first one's status.
async fn until_signalled<T>(
    call: impl Future<Output = T>,
    signals: &mut Signals,
    cancel: &CancellationToken,
) -> (T, Option<u8>) {
    tokio::pin!(call);
    let mut interrupted: Option<u8> = None;
    loop {
        let code = tokio::select! {
            done = &mut call => return (done, interrupted),
            code = signals.recv() => code,
        };
        if let Some(first) = interrupted {
            std::process::exit(i32::from(first));
        }
        interrupted = Some(code);
        cancel.cancel();
    }
}

/// The session's cwd for `--cwd` (resolved as the tool's `cwd` argument is: `~/`, a leading
/// `@`, relative to `current`), and the call's `cwd` argument: none when it is a directory (the
/// session starts there), else the flag as given, so that the call fails with the cwd error.
fn session_cwd(flag: Option<&str>, current: PathBuf) -> (PathBuf, Option<&str>) {
    let Some(flag) = flag else {
        return (current, None);
    };
    let home = std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from);
    match check_cwd(Some(flag), &current, home.as_deref()) {
        Ok(dir) => (dir, None),
        Err(_) => (current, Some(flag)),
    }
}

/// `--cwd` for a far side's session: its home there is where it starts, so `~/x` is `x` and
/// `~` is `.`; one leading `@` goes, as for the tool's argument.
fn far_side_cwd(flag: &str) -> PathBuf {
    let flag = flag.strip_prefix('@').unwrap_or(flag);
    match flag {
        "~" => PathBuf::from("."),
        _ => PathBuf::from(flag.strip_prefix("~/").unwrap_or(flag)),
    }
}

/// The tool's arguments: `{command, timeout?, cwd?, head?, tail?}`; the command's words are
/// joined with single spaces.
fn tool_arguments(args: &ExecArgs, cwd: Option<&str>) -> Value {
    let mut map = Map::new();
    map.insert("command".into(), Value::from(args.command.join(" ")));
    if let Some(timeout) = args.timeout {
        map.insert("timeout".into(), Value::from(timeout));
    }
    if let Some(cwd) = cwd {
        map.insert("cwd".into(), Value::from(cwd));
    }
    if let Some(head) = args.head {
        map.insert("head".into(), Value::from(head));
    }
    if let Some(tail) = args.tail {
        map.insert("tail".into(), Value::from(tail));
    }
    if args.raw {
        map.insert("raw".into(), Value::from(true));
    }
    Value::Object(map)
}

/// The result's text (ending with a newline), or with `--json` the result object on one line.
fn print_result(result: &ToolResult, json: bool) -> io::Result<()> {
    let mut text = if json {
        serde_json::to_string(result).map_err(io::Error::other)?
    } else {
        result.text()
    };
    if !text.ends_with('\n') {
        text.push('\n');
    }
    let mut stdout = io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use clap::Parser;
    use serde_json::json;

    use super::*;
    use crate::cli::{Cli, Mode};

    fn args(words: &[&str]) -> ExecArgs {
        let cli = Cli::try_parse_from(["agentsh", "exec"].iter().chain(words)).expect("valid");
        match cli.mode {
            Some(Mode::Exec(args)) => args,
            Some(_) | None => panic!("expected exec"),
        }
    }

    #[test]
    fn words_are_joined_with_single_spaces() {
        assert_eq!(
            tool_arguments(&args(&["--", "ls  -la", "|", "head", "-n", "5"]), None),
            json!({"command": "ls  -la | head -n 5"})
        );
    }

    #[test]
    fn every_flag_becomes_an_argument() {
        let parsed = args(&[
            "--cwd",
            "@src",
            "--timeout",
            "1.5",
            "--head",
            "3",
            "--tail",
            "2",
            "--",
            "seq",
            "9",
        ]);
        assert_eq!(
            tool_arguments(
                &parsed,
                parsed.session.cwd.as_deref().and_then(Path::to_str)
            ),
            json!({"command": "seq 9", "cwd": "@src", "timeout": 1.5, "head": 3, "tail": 2})
        );
    }

    #[test]
    fn a_far_sides_cwd_starts_in_its_home() {
        assert_eq!(far_side_cwd("~/proj"), PathBuf::from("proj"));
        assert_eq!(far_side_cwd("~"), PathBuf::from("."));
        assert_eq!(far_side_cwd("@src"), PathBuf::from("src"));
        assert_eq!(far_side_cwd("/srv/app"), PathBuf::from("/srv/app"));
    }

    #[test]
    fn a_directory_is_the_sessions_cwd_and_anything_else_the_calls() {
        let temp = tempfile::tempdir().expect("temp dir");
        let current = temp.path().to_path_buf();
        std::fs::create_dir(current.join("src")).expect("src");
        assert_eq!(
            session_cwd(Some("@src"), current.clone()),
            (current.join("src"), None)
        );
        assert_eq!(
            session_cwd(Some("missing"), current.clone()),
            (current.clone(), Some("missing"))
        );
        assert_eq!(session_cwd(None, current.clone()), (current, None));
    }
}
