//! `agentsh policy check`: how the approval policy judges a command line, segment by segment,
//! without running anything.

use std::io::Write;
use std::process::ExitCode;

use agentsh_bash_policy::Policy;
use agentsh_bash_policy::{Judgement, SessionMemory};

use crate::cli::{PolicyArgs, PolicyCommand};
use crate::{config, print_error, rpc, usage_error};

/// Runs `agentsh policy …`.
pub fn run(args: PolicyArgs) -> ExitCode {
    match args.command {
        PolicyCommand::Check(check) => {
            let settings = match config::load_settings(check.session.config.as_deref()) {
                Ok(settings) => settings,
                Err(err) => return usage_error(&err),
            };
            let cwd = match rpc::session_cwd(check.session.cwd.as_deref()) {
                Ok(cwd) => cwd,
                Err(message) => return usage_error(&message),
            };
            let policy = match settings.load_policy(&cwd, |name| std::env::var_os(name)) {
                Ok(policy) => policy,
                Err(err) => return usage_error(&err),
            };
            let line = check.command.join(" ");
            let judgement = policy.judge(&line, &SessionMemory::new());
            let text = report(&policy, &judgement);
            if std::io::stdout().lock().write_all(text.as_bytes()).is_err() {
                print_error(&"cannot write to stdout");
                return ExitCode::FAILURE;
            }
            ExitCode::SUCCESS
        }
    }
}

/// What `policy check` prints: one line per segment (its decision, the segment, the tier and
/// rule that decided with the reason, and the global options set aside before rules compared
/// its words), then the line's decision.
fn report(policy: &Policy, judgement: &Judgement) -> String {
    let mut lines = Vec::new();
    if policy.is_empty() {
        lines.push("(no policy: every command is allowed)".to_owned());
    }
    for segment in &judgement.segments {
        let by = match segment.decided_by_name() {
            Some(name) => format!("{name}: {}", segment.reason),
            None => segment.reason.clone(),
        };
        let unknown = if segment.unknown { " (unknown)" } else { "" };
        let set_aside = if segment.global_options.is_empty() {
            String::new()
        } else {
            format!(
                "  (global options set aside: {})",
                segment.global_options.join(" ")
            )
        };
        lines.push(format!(
            "{:<5}  {}{unknown}  [{by}]{set_aside}",
            segment.decision.as_str(),
            segment.text
        ));
    }
    lines.push(format!("decision: {}", judgement.decision.as_str()));
    lines.join("\n") + "\n"
}
