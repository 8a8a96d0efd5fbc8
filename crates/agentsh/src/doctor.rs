//! `agentsh doctor`: what this host gives agentsh, one line per thing it depends on, each
//! found out for real where that is cheap — a session is started with the user's
//! configuration, a command runs in it, a PTY program's hidden input is watched, and a
//! sandboxed session of each mode is started and tried — so that every line says what a
//! session here would meet.
//!
//! Each line is `✓ <what>: <finding>` or `✗ <what>: <why not, and what it costs>`. The exit
//! status is 0 whatever the host lacks, and 2 when the configuration (or `--cwd`) cannot be
//! used, after the other lines (a session of defaults stands in for the broken one).

mod probes;

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use agentsh_cli::DoctorArgs;
use agentsh_config::{ConfigPath, Settings, config_path};

use crate::{print_error, runtime};

/// Exit status when the configuration cannot be used.
const EXIT_CONFIG: u8 = 2;

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Check {
    /// Whether the host gives it.
    pub(crate) ok: bool,
    /// What was checked (`bash`, `sandbox read-only`, …).
    pub(crate) what: String,
    /// What was found, or why it is missing.
    pub(crate) finding: String,
}

impl Check {
    pub(crate) fn pass(what: impl Into<String>, finding: impl Into<String>) -> Self {
        Self {
            ok: true,
            what: what.into(),
            finding: finding.into(),
        }
    }

    pub(crate) fn fail(what: impl Into<String>, finding: impl Into<String>) -> Self {
        Self {
            ok: false,
            what: what.into(),
            finding: finding.into(),
        }
    }

    /// The line as printed.
    pub(crate) fn line(&self) -> String {
        let mark = if self.ok { '✓' } else { '✗' };
        format!("{mark} {}: {}", self.what, self.finding)
    }
}

/// Runs `agentsh doctor`.
pub fn run(args: &DoctorArgs) -> ExitCode {
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(err) => {
            print_error(&format_args!("cannot start the async runtime: {err}"));
            return ExitCode::FAILURE;
        }
    };
    let mut broken = false;
    let mut out = std::io::stdout().lock();
    let mut print = |check: Check| {
        // A closed stdout ends nothing here: the checks clean up after themselves.
        let _ = writeln!(out, "{}", check.line());
        let _ = out.flush();
    };
    let _ = writeln!(
        std::io::stdout().lock(),
        "agentsh {} on {}",
        env!("CARGO_PKG_VERSION"),
        probes::host_name()
    );

    // Decided before the first session starts a shell (on cgroup v2 agentsh may have to move
    // itself into a leaf, which a supervisor beside it would prevent); printed in its place.
    let limits = probes::resource_limits();
    let (settings, config) = config_check(args.session.config.as_deref());
    broken |= !config.ok;
    print(config);
    let cwd = match crate::rpc::session_cwd(args.session.cwd.as_deref()) {
        Ok(cwd) => cwd,
        Err(message) => {
            broken = true;
            print(Check::fail("cwd", message));
            std::env::temp_dir()
        }
    };

    for check in probes::shells(&settings) {
        print(check);
    }
    runtime.block_on(async {
        for check in probes::session(&settings, &cwd).await {
            print(check);
        }
        print(probes::proc_fs());
        for check in probes::pty().await {
            print(check);
        }
        for check in probes::kernel() {
            print(check);
        }
        print(limits);
        for check in probes::sandbox_modes().await {
            print(check);
        }
        print(probes::network_allowlist().await);
    });
    for check in probes::programs() {
        print(check);
    }
    print(probes::artifacts(&settings));
    // Nothing is left to wait for: every session was shut down.
    runtime.shutdown_background();
    if broken {
        ExitCode::from(EXIT_CONFIG)
    } else {
        ExitCode::SUCCESS
    }
}

/// The configuration's line, and the settings to go on with (the defaults when it is broken).
fn config_check(flag: Option<&Path>) -> (Settings, Check) {
    let source = config_path(flag, |name| std::env::var_os(name));
    match crate::config::load_settings(flag) {
        Ok(settings) => {
            let finding = match &source {
                Some(ConfigPath::Default(path)) if !path.exists() => {
                    format!("no file at {} (the defaults apply)", path.display())
                }
                Some(source) => format!("{} is valid", source.path().display()),
                None => "no file (neither XDG_CONFIG_HOME nor HOME is set; the defaults apply)"
                    .to_owned(),
            };
            (settings, Check::pass("config", finding))
        }
        Err(err) => (
            Settings::default(),
            Check::fail(
                "config",
                format!("{err} (the lines below use the defaults)"),
            ),
        ),
    }
}
