//! `agentsh-compact-tui [--listen PATH]`: agentsh's interactive mode drawn by the
//! compact renderer of `examples/compact-renderer` instead of the default one — the swap a
//! downstream crate makes, end to end. The configuration is found as `agentsh` finds it
//! (`$AGENTSH_CONFIG`, else `$XDG_CONFIG_HOME/agentsh/config.toml`); the session runs in the
//! current directory.

use std::path::PathBuf;
use std::process::ExitCode;

use agentsh_agent_session::LocalHandle;
use agentsh_compact_renderer::CompactRenderer;
use agentsh_config::{Settings, config_path};
use agentsh_tui::{Listen, TuiError, TuiOptions};

fn main() -> ExitCode {
    let mut listen = None;
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        let (Some("--listen"), Some(path)) = (arg.to_str(), args.next()) else {
            eprintln!("usage: agentsh-compact-tui [--listen PATH]");
            return ExitCode::from(2);
        };
        listen = Some(PathBuf::from(path));
    }
    let source = config_path(None, |name| std::env::var_os(name));
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let settings = match Settings::load(source.as_ref(), home.as_deref()) {
        Ok(settings) => settings,
        Err(err) => {
            eprintln!("agentsh-compact-tui: {err}");
            return ExitCode::from(2);
        }
    };
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(err) => {
            eprintln!("agentsh-compact-tui: cannot read the current directory: {err}");
            return ExitCode::FAILURE;
        }
    };
    // The session: one here, in the current directory.
    let new_session = LocalHandle::factory(settings.clone(), cwd.clone());
    let session = Box::new(move || {
        let made = new_session().map_err(Into::into);
        Box::pin(async move { made }) as agentsh_tui::BoxFuture<'static, _>
    });
    // `--listen`: an RPC socket server, one session per connection, whose calls are shown.
    let listen = listen.map(|path: PathBuf| {
        let new_session = LocalHandle::factory(settings.clone(), cwd);
        Listen {
            shown: path.display().to_string(),
            serve: Box::new(move |host, shutdown| {
                agentsh_rpc::listen_for_host(&path, new_session, host, shutdown)
                    .map_err(|err| format!("--listen: {err}").into())
            }),
        }
    });
    let options = TuiOptions {
        listen,
        ..TuiOptions::new(settings.view_settings(), session)
    };
    match agentsh_tui::run(CompactRenderer, options) {
        Ok(code) => code,
        Err(err @ TuiError::NotATerminal) => {
            eprintln!("agentsh-compact-tui: {err}");
            ExitCode::from(2)
        }
        Err(err) => {
            eprintln!("agentsh-compact-tui: {err}");
            ExitCode::FAILURE
        }
    }
}
