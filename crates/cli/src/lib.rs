#![doc = include_str!("../README.md")]

mod settle;

use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};

/// The clap this command line is built with: its `Parser` and `CommandFactory` traits parse
/// and describe [`Cli`].
pub use clap;

/// The whole command line, parsed: the mode and, without one, the interactive mode's options.
///
/// Parsed through clap's [`Parser`] trait (`Cli::parse()`, `Cli::try_parse_from(…)`); the
/// options every mode that makes a session takes ([`SessionArgs`], [`RemoteArgs`]) may be given
/// before or after the subcommand's name and are found in the subcommand's arguments either
/// way. Given on both sides, given before a subcommand that does not take it, or `--listen`
/// and `--tools` (the interactive mode's) before a subcommand: a usage error (exit status 2).
/// `CommandFactory::command()` describes it (help, man pages, completions).
#[derive(Debug, Clone)]
pub struct Cli {
    /// What to run; the interactive mode when none is given.
    pub mode: Option<Mode>,
    /// The interactive mode's options (all unset when a mode is given: they went to it).
    pub interactive: InteractiveArgs,
}

/// The bash tool runtime of an LLM coding agent.
///
/// Runs shell commands the way a coding agent's `bash` tool does: in a persistent shell without
/// a terminal, with bounded output (the full output is kept as an `artifact://` file, which
/// `agentsh artifact ID` prints), timeouts and whole-tree cleanup. Logging goes to stderr,
/// filtered by `RUST_LOG` (default: warnings).
///
/// Without a subcommand, on a terminal: the interactive mode (`!cmd` runs a command of yours,
/// any other line runs as the model's bash tool call; `/help` lists the rest).
///
/// --config, --cwd, --remote and --remote-install may come before the subcommand or after it
/// (once); --listen and --tools before a subcommand are the interactive mode's only.
#[derive(Debug, Parser)]
#[command(name = "agentsh", version, propagate_version = true)]
struct RawCli {
    /// What to run; the interactive mode when none is given.
    #[command(subcommand)]
    mode: Option<Mode>,
    /// The interactive mode's options, and the options given before the subcommand.
    #[command(flatten)]
    interactive: InteractiveArgs,
}

impl CommandFactory for Cli {
    fn command() -> clap::Command {
        RawCli::command()
    }

    fn command_for_update() -> clap::Command {
        RawCli::command_for_update()
    }
}

impl FromArgMatches for Cli {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        settle::settle(RawCli::from_arg_matches(matches)?)
    }

    fn from_arg_matches_mut(matches: &mut ArgMatches) -> Result<Self, clap::Error> {
        settle::settle(RawCli::from_arg_matches_mut(matches)?)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        let mut raw = RawCli {
            mode: self.mode.clone(),
            interactive: self.interactive.clone(),
        };
        raw.update_from_arg_matches(matches)?;
        *self = settle::settle(raw)?;
        Ok(())
    }
}

impl Parser for Cli {}

/// `agentsh` (the interactive mode).
#[derive(Debug, Clone, Default, PartialEq, Eq, Args)]
pub struct InteractiveArgs {
    /// The configuration and working directory.
    #[command(flatten)]
    pub session: SessionArgs,
    /// Also serve the RPC protocol on this Unix socket (mode 0600): an agent's tool calls sent
    /// there appear live in the transcript, where Esc aborts them. A stale socket file is
    /// replaced; one another agentsh listens on is an error.
    #[arg(long, value_name = "PATH")]
    pub listen: Option<PathBuf>,
    /// The agent's other tools, which blocked commands may suggest (none: nothing is blocked).
    #[arg(long, value_name = "a,b", value_delimiter = ',')]
    pub tools: Vec<String>,
    /// Where the session runs.
    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// `--config` and `--cwd`: what a session is made from, taken by every mode that makes one,
/// before or after the subcommand's name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Args)]
pub struct SessionArgs {
    /// Configuration file (default: `$AGENTSH_CONFIG`, else `$XDG_CONFIG_HOME/agentsh/config.toml`).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The session's working directory (default: the current directory; with `--remote`, the
    /// far side's, where it starts): commands run there, and the sandbox's writable root and the
    /// project's `.agentsh/policy.toml` are taken from it. `exec` also understands `~/` and a
    /// leading `@`, and reports one that is no directory as a tool error.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
}

/// The modes of the binary.
#[derive(Debug, Clone, Subcommand)]
pub enum Mode {
    /// Print mode: run one `bash` tool call and print its result.
    ///
    /// Exit status: 0 success; 1 tool error (non-zero exit, timeout, blocked command, bad
    /// --cwd); 2 usage or configuration error; 130 / 143 / 129 after SIGINT / SIGTERM / SIGHUP
    /// (each ends the command's whole process tree first).
    Exec(ExecArgs),
    /// Print an artifact: the full output a result's `Full: artifact://ID` names, or some of
    /// its lines.
    ///
    /// Read from the configured store (`[artifacts] dir`) as the RPC `read_artifact` request
    /// reads it, or with --remote from the far side's. The lines are printed as they are,
    /// nothing added. Exit status: 0 printed; 1 it cannot be read (not found, not an artifact
    /// id; the reason on stderr); 2 usage or configuration error.
    Artifact(ArtifactArgs),
    /// RPC mode: JSON lines on stdin (commands) and stdout (responses and events).
    ///
    /// Commands: `bash`, `abort_bash`, `tool_call`, `abort`, `read_artifact`,
    /// `list_artifacts`, `hello`, `ping`, `status`, `job_view`, one JSON object per line (at
    /// most 32 MiB). Ends with
    /// exit status 0 when stdin is closed (or the --lease runs out), and 130 / 143 / 129 after
    /// SIGINT / SIGTERM / SIGHUP, each time after ending every running command and every
    /// shell's process tree.
    Rpc(RpcArgs),
    /// MCP mode: an MCP server on stdio (tools bash, job_output, job_input, job_kill, job_list;
    /// artifacts as resources).
    ///
    /// One session per connection; ends with exit status 0 when stdin is closed, after ending
    /// every job and every shell's process tree.
    Mcp(McpArgs),
    /// The approval policy: `agentsh policy check -- <command…>` prints how each segment of
    /// the command is judged (decision, tier, rule, reason) and the line's decision, running
    /// nothing.
    ///
    /// Exit status: 0 when the policy loads (whatever the decision); 2 when it cannot be used
    /// (the file, key and reason are printed).
    Policy(PolicyArgs),
    /// What this host gives agentsh: one line each, ✓ or ✗ with the reason (shells, the rc
    /// snapshot, /proc, PTYs, the sandbox's kernel features and so its modes, tmux and ssh,
    /// the configuration file, the artifact directory).
    ///
    /// Exit status: 0 whatever the host lacks; 2 when the configuration cannot be used.
    Doctor(DoctorArgs),
    /// Print a completion script for a shell.
    ///
    /// bash: `source <(agentsh completions bash)` (or save it in
    /// `~/.local/share/bash-completion/completions/agentsh`); zsh: save it as `_agentsh` in a
    /// directory of `$fpath`; fish: save it in `~/.config/fish/completions/agentsh.fish`.
    Completions(CompletionsArgs),
}

/// `agentsh doctor`.
#[derive(Debug, Clone, Args)]
pub struct DoctorArgs {
    /// The configuration and working directory checked.
    #[command(flatten)]
    pub session: SessionArgs,
}

/// `agentsh completions`.
#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: CompletionShell,
}

/// The shells `agentsh completions` writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompletionShell {
    /// GNU bash (bash-completion).
    Bash,
    /// zsh (compsys).
    Zsh,
    /// fish.
    Fish,
}

/// `agentsh policy`.
#[derive(Debug, Clone, Args)]
pub struct PolicyArgs {
    /// What to do with the policy.
    #[command(subcommand)]
    pub command: PolicyCommand,
}

/// `agentsh policy <command>`.
#[derive(Debug, Clone, Subcommand)]
pub enum PolicyCommand {
    /// How the policy judges a command line.
    Check(PolicyCheckArgs),
}

/// `agentsh policy check`.
#[derive(Debug, Clone, Args)]
pub struct PolicyCheckArgs {
    /// The configuration, and the directory whose `.agentsh/policy.toml` applies.
    #[command(flatten)]
    pub session: SessionArgs,
    /// The command line; its words are joined with single spaces.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// `agentsh mcp`.
#[derive(Debug, Clone, Args)]
pub struct McpArgs {
    /// The configuration and working directory.
    #[command(flatten)]
    pub session: SessionArgs,
    /// The client's other tools, which blocked commands may suggest.
    #[arg(long, value_name = "a,b", value_delimiter = ',')]
    pub tools: Vec<String>,
    /// Where the session runs.
    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// `agentsh exec`.
#[derive(Debug, Clone, Args)]
pub struct ExecArgs {
    /// The configuration and working directory.
    #[command(flatten)]
    pub session: SessionArgs,
    /// Timeout in seconds (fractions allowed), clamped to [1, 3600]. Default: the config's
    /// `bash.default_timeout` (300).
    #[arg(long, value_name = "S", allow_negative_numbers = true, value_parser = parse_timeout)]
    pub timeout: Option<f64>,
    /// Show only the first N lines of the output (the exit status is kept).
    #[arg(long, value_name = "N")]
    pub head: Option<u32>,
    /// Show only the last N lines of the output (the exit status is kept).
    #[arg(long, value_name = "N")]
    pub tail: Option<u32>,
    /// Print the program's output as it printed it: the output of well-known programs (git,
    /// cargo, pytest, grep, …) is shaped by default, what says nothing left out with a marker.
    #[arg(long)]
    pub raw: bool,
    /// Tools the calling agent has, comma-separated (e.g. `read,grep`). The interceptor only
    /// blocks a command when the tool it suggests is among them; with none given, nothing is
    /// blocked.
    #[arg(long, value_name = "a,b", value_delimiter = ',')]
    pub tools: Vec<String>,
    /// Print the whole tool result as one line of JSON instead of its text.
    #[arg(long)]
    pub json: bool,
    /// Where the command runs.
    #[command(flatten)]
    pub remote: RemoteArgs,
    /// The command; its words are joined with single spaces.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// `agentsh artifact`.
#[derive(Debug, Clone, Args)]
pub struct ArtifactArgs {
    /// The artifact: its id (`7`) or its URL (`artifact://7`).
    #[arg(value_name = "ID")]
    pub id: String,
    /// The first line to print, 1-based (default: the first).
    #[arg(long, value_name = "N")]
    pub offset: Option<u64>,
    /// How many lines to print (default: all to the end).
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
    /// The configuration (whose `[artifacts] dir` is the store) and working directory.
    #[command(flatten)]
    pub session: SessionArgs,
    /// Whose store: with a far side, its own.
    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// `agentsh rpc`.
#[derive(Debug, Clone, Args)]
pub struct RpcArgs {
    /// The configuration and working directory.
    #[command(flatten)]
    pub session: SessionArgs,
    /// End as at end of input once no input line has come for S seconds (fractions allowed):
    /// every running command ended, exit status 0. A remote agentsh runs with one, so a link
    /// that died silently cannot leave trees running; its client pings to keep it.
    #[arg(long, value_name = "S", value_parser = parse_lease)]
    pub lease: Option<Duration>,
    /// Where the session runs.
    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// `--remote` and `--remote-install`: taken by every mode that can run its session on a far
/// side, before or after the subcommand's name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Args)]
pub struct RemoteArgs {
    /// Run everything on a far side: `ssh://[user@]host[:port]` (through the system `ssh`;
    /// default: `[remote] target`, or `[remote] command`). Processes, jobs and artifacts live
    /// there; this agentsh forwards the calls.
    #[arg(long, value_name = "TARGET")]
    pub remote: Option<String>,
    /// With an ssh target: copy this agentsh to `~/.local/bin/agentsh` there when the target
    /// lacks one, check that it runs (`--version`), and use it.
    #[arg(long)]
    pub remote_install: bool,
}

/// `--lease`: a number of seconds above 0.
fn parse_lease(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("not a number of seconds: {text:?}"))?;
    if seconds.is_nan() || seconds <= 0.0 {
        return Err(format!("must be a number of seconds above 0, got {text:?}"));
    }
    Duration::try_from_secs_f64(seconds).map_err(|_| format!("too long: {text:?} seconds"))
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn exec_joins_nothing_itself_but_keeps_every_word() {
        let cli = Cli::try_parse_from([
            "agentsh",
            "exec",
            "--tools",
            "read,grep",
            "--timeout",
            "-3",
            "--",
            "ls",
            "-la",
            "|",
            "head",
            "-n",
            "5",
        ])
        .expect("valid command line");
        let Some(Mode::Exec(args)) = cli.mode else {
            panic!("expected exec");
        };
        assert_eq!(args.tools, ["read", "grep"]);
        assert_eq!(args.timeout, Some(-3.0));
        assert_eq!(args.command, ["ls", "-la", "|", "head", "-n", "5"]);
    }

    #[test]
    fn no_subcommand_is_the_interactive_mode_with_its_flags() {
        let cli = Cli::try_parse_from(["agentsh", "--listen", "/tmp/s", "--cwd", "/tmp"])
            .expect("interactive flags");
        assert!(cli.mode.is_none());
        assert_eq!(cli.interactive.listen, Some(PathBuf::from("/tmp/s")));
        let err = Cli::try_parse_from(["agentsh", "--listen", "/tmp/s", "rpc"])
            .expect_err("interactive flags with a subcommand");
        assert_eq!(err.exit_code(), 2);
    }

    #[test]
    fn exec_needs_a_command() {
        let err = Cli::try_parse_from(["agentsh", "exec", "--json"]).expect_err("no command");
        assert_eq!(err.exit_code(), 2);
    }
}

/// `--timeout`: any number of seconds. Infinities clamp like any huge value (`inf` is the longest
/// timeout, `-inf` the shortest) — they must not reach the JSON arguments, where they would turn
/// into `null` and silently mean "the default". NaN says nothing: a usage error.
fn parse_timeout(text: &str) -> Result<f64, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("not a number of seconds: {text:?}"))?;
    if seconds.is_nan() {
        return Err(format!("not a number of seconds: {text:?}"));
    }
    Ok(if seconds.is_infinite() {
        agentsh_protocol::Timeout::clamp(seconds).seconds()
    } else {
        seconds
    })
}

#[cfg(test)]
mod timeout_tests {
    use super::parse_timeout;

    #[test]
    fn infinities_clamp_and_nan_is_refused() {
        assert_eq!(parse_timeout("inf"), Ok(3600.0));
        assert_eq!(parse_timeout("infinity"), Ok(3600.0));
        assert_eq!(parse_timeout("-inf"), Ok(1.0));
        assert_eq!(parse_timeout("1.5"), Ok(1.5));
        assert_eq!(parse_timeout("-3"), Ok(-3.0));
        assert!(parse_timeout("nan").is_err());
        assert!(parse_timeout("NaN").is_err());
        assert!(parse_timeout("soon").is_err());
    }

    #[test]
    fn a_lease_is_seconds_above_zero() {
        use std::time::Duration;

        use super::parse_lease;
        assert_eq!(parse_lease("30"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_lease("0.5"), Ok(Duration::from_millis(500)));
        for bad in ["0", "-1", "nan", "soon", ""] {
            assert!(parse_lease(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            parse_lease("0"),
            Err("must be a number of seconds above 0, got \"0\"".to_owned())
        );
        assert_eq!(
            parse_lease("inf"),
            Err("too long: \"inf\" seconds".to_owned())
        );
    }
}
