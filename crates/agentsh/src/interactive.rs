//! The interactive mode: `agentsh` with no subcommand, on a terminal, drawn by the default
//! renderer in the theme of `ui.theme`. The binary composes it: the session it drives (here,
//! or a far side with `--remote`) and, with `--listen`, the RPC socket server whose calls it
//! shows.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;

use agentsh_agent_session::LocalHandle;
use agentsh_remote::{RemoteConfig, RemoteHandle};
use agentsh_renderer::DefaultRenderer;
use agentsh_seam::Handle;
use agentsh_tui::{Listen, MakeSession, TuiError, TuiOptions};
use clap::CommandFactory;

use crate::cli::{Cli, InteractiveArgs};
use crate::{EXIT_USAGE, print_error, usage_error};

/// Why `--listen` and `--remote` do not go together.
const LISTEN_WITH_REMOTE: &str =
    "--listen cannot be combined with --remote: the calls of --listen run here";

/// Runs the interactive mode, or prints the help text and exits 2 without a terminal.
pub fn run(args: InteractiveArgs) -> ExitCode {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        let help = Cli::command().render_help();
        let _ = write!(std::io::stderr().lock(), "{help}");
        return ExitCode::from(EXIT_USAGE);
    }
    let settings = match crate::config::load_settings(args.session.config.as_deref()) {
        Ok(settings) => settings,
        Err(err) => return usage_error(&err),
    };
    let cwd = match crate::rpc::session_cwd(args.session.cwd.as_deref()) {
        Ok(cwd) => cwd,
        Err(message) => return usage_error(&message),
    };
    let remote = match crate::remote::choose(&args.remote, &settings, args.session.cwd.as_deref()) {
        Ok(None) => None,
        Ok(Some(_)) if args.listen.is_some() => return usage_error(&LISTEN_WITH_REMOTE),
        Ok(Some(choice)) => match remote_config(choice) {
            Ok(config) => Some(config),
            Err(code) => return code,
        },
        Err(message) => return usage_error(&message),
    };
    // The session the mode drives: on the far side, or here.
    let session: MakeSession = if let Some(config) = remote {
        Box::new(move || {
            Box::pin(async move {
                let session = RemoteHandle::connect(config).await?;
                Ok(Arc::new(session) as Handle)
            })
        })
    } else {
        let make = LocalHandle::factory_for(settings.clone(), cwd.clone(), "interactive");
        Box::new(move || {
            // Made on the mode's runtime, before the terminal is taken.
            let made = make().map_err(Into::into);
            Box::pin(async move { made })
        })
    };
    // `--listen`: an RPC socket server, one session here per connection, whose calls the
    // mode shows.
    let listen = args.listen.map(|path| {
        let new_session = LocalHandle::factory(settings.clone(), cwd);
        Listen {
            shown: path.display().to_string(),
            serve: Box::new(move |host, shutdown| {
                agentsh_rpc::listen_for_host(&path, new_session, host, shutdown)
                    .map_err(|err| format!("--listen: {err}").into())
            }),
        }
    });
    let renderer = DefaultRenderer::new(settings.ui.theme);
    let options = TuiOptions {
        tool_names: args.tools,
        listen,
        ..TuiOptions::new(settings.view_settings(), session)
    };
    match agentsh_tui::run(renderer, options) {
        Ok(code) => code,
        Err(err @ TuiError::Start(_)) => usage_error(&err),
        Err(err) => {
            print_error(&err);
            ExitCode::FAILURE
        }
    }
}

/// How to reach the far side; `--remote-install` runs here, before the terminal is taken.
fn remote_config(choice: crate::remote::Choice) -> Result<RemoteConfig, ExitCode> {
    let runtime = crate::runtime().map_err(|err| {
        print_error(&format_args!("cannot start the async runtime: {err}"));
        ExitCode::FAILURE
    })?;
    runtime
        .block_on(choice.config())
        .map_err(|message| usage_error(&message))
}
