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
    let renderer = DefaultRenderer::new(settings.ui.theme);
    let options = TuiOptions {
        tool_names: args.tools,
        listen: args.listen,
        ..TuiOptions::new(settings, cwd)
    };
    match agentsh_tui::run(renderer, options) {
        Ok(code) => code,
        Err(err @ (TuiError::Session(_) | TuiError::Listen(_))) => usage_error(&err),
        Err(err) => {
            print_error(&err);
            ExitCode::FAILURE
        }
    }
}
