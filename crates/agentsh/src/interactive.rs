//! The interactive mode: `agentsh` with no subcommand, on a terminal (SPEC §15), drawn by the
//! default renderer in the theme of `ui.theme`.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use agentsh_renderer::DefaultRenderer;
use agentsh_tui::{TuiError, TuiOptions};
use clap::CommandFactory;

use crate::cli::{Cli, InteractiveArgs};
use crate::{EXIT_USAGE, print_error, usage_error};

/// Runs the interactive mode, or prints the help text and exits 2 without a terminal.
pub fn run(args: InteractiveArgs) -> ExitCode {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        let help = Cli::command().render_help();
        let _ = write!(std::io::stderr().lock(), "{help}");
        return ExitCode::from(EXIT_USAGE);
    }
    let settings = match crate::config::load_settings(args.config.as_deref()) {
        Ok(settings) => settings,
        Err(err) => return usage_error(&err),
    };
    let cwd = match crate::rpc::session_cwd(args.cwd.as_deref()) {
        Ok(cwd) => cwd,
        Err(message) => return usage_error(&message),
    };
    let remote = match crate::remote::choose(&args.remote, &settings, args.cwd.as_deref()) {
        Ok(None) => None,
        Ok(Some(_)) if args.listen.is_some() => return usage_error(&TuiError::ListenWithRemote),
        Ok(Some(choice)) => match remote_config(choice) {
            Ok(config) => Some(config),
            Err(code) => return code,
        },
        Err(message) => return usage_error(&message),
    };
    let renderer = DefaultRenderer::new(settings.ui.theme);
    let options = TuiOptions {
        tool_names: args.tools,
        listen: args.listen,
        remote,
        ..TuiOptions::new(settings, cwd)
    };
    match agentsh_tui::run(renderer, options) {
        Ok(code) => code,
        Err(
            err @ (TuiError::Session(_)
            | TuiError::Listen(_)
            | TuiError::Remote(_)
            | TuiError::ListenWithRemote),
        ) => usage_error(&err),
        Err(err) => {
            print_error(&err);
            ExitCode::FAILURE
        }
    }
}

/// How to reach the far side; `--remote-install` runs here, before the terminal is taken.
fn remote_config(choice: crate::remote::Choice) -> Result<agentsh_tui::RemoteConfig, ExitCode> {
    let runtime = crate::runtime().map_err(|err| {
        print_error(&format_args!("cannot start the async runtime: {err}"));
        ExitCode::FAILURE
    })?;
    runtime
        .block_on(choice.config())
        .map_err(|message| usage_error(&message))
}
