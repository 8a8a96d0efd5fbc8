//! `agentsh completions bash|zsh|fish`: a completion script from the clap definitions
//! (`clap_complete`), printed on stdout.

use std::io::Write;
use std::process::ExitCode;

use agentsh_cli::{Cli, CompletionShell};
use clap::CommandFactory;
use clap_complete::Shell;

use crate::print_error;

/// Prints the completion script for `shell`.
pub fn run(shell: CompletionShell) -> ExitCode {
    let shell = match shell {
        CompletionShell::Bash => Shell::Bash,
        CompletionShell::Zsh => Shell::Zsh,
        CompletionShell::Fish => Shell::Fish,
    };
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "agentsh", &mut script);
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(&script).and_then(|()| stdout.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        // `agentsh completions bash | head` closed the pipe on purpose.
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(err) => {
            print_error(&format_args!("cannot write the completion script: {err}"));
            ExitCode::FAILURE
        }
    }
}
