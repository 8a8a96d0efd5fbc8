//! `agentsh-compact-tui [--listen PATH]`: agentsh's interactive mode drawn by the
//! compact renderer of `examples/compact-renderer` instead of the default one — the swap a
//! downstream crate makes, end to end. The configuration is found as `agentsh` finds it
//! (`$AGENTSH_CONFIG`, else `$XDG_CONFIG_HOME/agentsh/config.toml`); the session runs in the
//! current directory.

use std::path::PathBuf;
use std::process::ExitCode;

use agentsh_agent_session::{Settings, config_path};
use agentsh_compact_renderer::CompactRenderer;
use agentsh_tui::{TuiError, TuiOptions};

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
    let options = TuiOptions {
        listen,
        ..TuiOptions::new(settings, cwd)
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
