//! The options given before the subcommand's name, moved into the subcommand's arguments: the
//! session's options (`--config`, `--cwd`, `--remote`, `--remote-install`) are declared once,
//! in the top level and in each mode that takes them, and whichever side they were given on, a
//! mode finds them in its own arguments.

use clap::CommandFactory;
use clap::error::ErrorKind;

use crate::{Cli, InteractiveArgs, Mode, PolicyCommand, RawCli, RemoteArgs, SessionArgs};

/// The parsed command line with the options given before the subcommand moved into it; a
/// usage error when one is given on both sides, when the subcommand does not take it, or when
/// it is one of the interactive mode's own (`--listen`, `--tools`).
pub(crate) fn settle(raw: RawCli) -> Result<Cli, clap::Error> {
    let RawCli { mode, interactive } = raw;
    let Some(mut mode) = mode else {
        return Ok(Cli {
            mode: None,
            interactive,
        });
    };
    move_into(interactive, &mut mode).map_err(usage_error)?;
    Ok(Cli {
        mode: Some(mode),
        interactive: InteractiveArgs::default(),
    })
}

/// Moves what `top` holds into `mode`'s arguments, or says why it cannot go there.
fn move_into(top: InteractiveArgs, mode: &mut Mode) -> Result<(), String> {
    let InteractiveArgs {
        session,
        listen,
        tools,
        remote,
    } = top;
    let (name, mut slots) = slots(mode);
    if listen.is_some() {
        return Err(interactive_only("listen", name));
    }
    if !tools.is_empty() {
        return Err(interactive_only("tools", name));
    }
    let SessionArgs { config, cwd } = session;
    let RemoteArgs {
        remote,
        remote_install,
    } = remote;
    let session_slot = slots.session.as_deref_mut();
    put(
        "config",
        config,
        session_slot.map(|slot| &mut slot.config),
        name,
    )?;
    let session_slot = slots.session.as_deref_mut();
    put("cwd", cwd, session_slot.map(|slot| &mut slot.cwd), name)?;
    let remote_slot = slots.remote.as_deref_mut();
    put(
        "remote",
        remote,
        remote_slot.map(|slot| &mut slot.remote),
        name,
    )?;
    let remote_slot = slots.remote.as_deref_mut();
    let install_slot = remote_slot.map(|slot| &mut slot.remote_install);
    put_flag("remote-install", remote_install, install_slot, name)
}

/// Where the top-level options go in one mode.
struct Slots<'a> {
    session: Option<&'a mut SessionArgs>,
    remote: Option<&'a mut RemoteArgs>,
}

/// The mode's name as typed (`exec`, `policy check`) and where the options it takes go.
fn slots(mode: &mut Mode) -> (&'static str, Slots<'_>) {
    let (name, session, remote) = match mode {
        Mode::Exec(args) => ("exec", Some(&mut args.session), Some(&mut args.remote)),
        Mode::Artifact(args) => ("artifact", Some(&mut args.session), Some(&mut args.remote)),
        Mode::Rpc(args) => ("rpc", Some(&mut args.session), Some(&mut args.remote)),
        Mode::Mcp(args) => ("mcp", Some(&mut args.session), Some(&mut args.remote)),
        Mode::Policy(args) => match &mut args.command {
            PolicyCommand::Check(args) => ("policy check", Some(&mut args.session), None),
        },
        Mode::Doctor(args) => ("doctor", Some(&mut args.session), None),
        Mode::Completions(_) => ("completions", None, None),
    };
    (name, Slots { session, remote })
}

/// Puts `given` (option `--long`, given before the subcommand) into `slot`, the subcommand's
/// own; `None` as `slot`: the subcommand does not take it.
fn put<T>(
    long: &str,
    given: Option<T>,
    slot: Option<&mut Option<T>>,
    mode: &str,
) -> Result<(), String> {
    let Some(given) = given else {
        return Ok(());
    };
    match slot {
        None => Err(not_taken(long, mode)),
        Some(Some(_)) => Err(given_twice(long, mode)),
        Some(slot @ None) => {
            *slot = Some(given);
            Ok(())
        }
    }
}

/// [`put`] for a flag (`--remote-install`).
fn put_flag(long: &str, given: bool, slot: Option<&mut bool>, mode: &str) -> Result<(), String> {
    if !given {
        return Ok(());
    }
    match slot {
        None => Err(not_taken(long, mode)),
        Some(true) => Err(given_twice(long, mode)),
        Some(slot) => {
            *slot = true;
            Ok(())
        }
    }
}

/// Why `--long`, given before subcommand `mode`, cannot go to it.
fn not_taken(long: &str, mode: &str) -> String {
    format!(
        "the argument '{}' cannot be used with 'agentsh {mode}'",
        shown(long)
    )
}

/// Why `--long`, given before subcommand `mode` and after it, is refused.
fn given_twice(long: &str, mode: &str) -> String {
    format!(
        "the argument '{}' cannot be used multiple times (it was given before '{mode}' and \
         after it; give it once)",
        shown(long)
    )
}

/// Why `--long` (the interactive mode's) cannot come before subcommand `mode`.
fn interactive_only(long: &str, mode: &str) -> String {
    format!(
        "the argument '{}' is an option of the interactive mode and cannot be used with \
         'agentsh {mode}' (a subcommand's own options come after its name)",
        shown(long)
    )
}

/// `--long` as clap shows it in its own errors (`--config <FILE>`).
fn shown(long: &str) -> String {
    let mut command = RawCli::command();
    // An argument shows its value's name only once its command is built.
    command.build();
    command
        .get_arguments()
        .find(|arg| arg.get_long() == Some(long))
        .map_or_else(|| format!("--{long}"), ToString::to_string)
}

/// A usage error (exit status 2), shown as clap shows its own.
fn usage_error(message: String) -> clap::Error {
    clap::Error::raw(ErrorKind::ArgumentConflict, message)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use clap::Parser;

    use crate::{Cli, Mode};

    /// `agentsh <words…>` parsed.
    fn parse(words: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("agentsh").chain(words.iter().copied()))
    }

    /// The usage error of `agentsh <words…>`, rendered without colour.
    fn refused(words: &[&str]) -> String {
        let err = parse(words).expect_err("a usage error");
        assert_eq!(err.exit_code(), 2, "{words:?}");
        err.render().to_string()
    }

    fn exec(words: &[&str]) -> crate::ExecArgs {
        match parse(words).expect("valid").mode {
            Some(Mode::Exec(args)) => args,
            other => panic!("expected exec: {other:?}"),
        }
    }

    #[test]
    fn session_options_before_or_after_the_subcommand_land_in_it() {
        let before = exec(&["--config", "a.toml", "--cwd", "/w", "exec", "--", "ls"]);
        let after = exec(&["exec", "--config", "a.toml", "--cwd", "/w", "--", "ls"]);
        let split = exec(&["--cwd", "/w", "exec", "--config", "a.toml", "--", "ls"]);
        for args in [&before, &after, &split] {
            assert_eq!(args.session.config, Some(PathBuf::from("a.toml")));
            assert_eq!(args.session.cwd, Some(PathBuf::from("/w")));
            assert_eq!(args.command, ["ls"]);
        }
        let remote = exec(&[
            "--remote",
            "ssh://h",
            "--remote-install",
            "exec",
            "--",
            "ls",
        ]);
        assert_eq!(remote.remote.remote.as_deref(), Some("ssh://h"));
        assert!(remote.remote.remote_install);
        let cli = parse(&["--config", "a.toml", "exec", "--", "ls"]).expect("valid");
        assert_eq!(cli.interactive, crate::InteractiveArgs::default());
    }

    #[test]
    fn every_mode_that_makes_a_session_takes_them_first() {
        for words in [
            &["--config", "c", "artifact", "7"][..],
            &["--config", "c", "rpc"],
            &["--config", "c", "mcp"],
            &["--config", "c", "doctor"],
            &["--config", "c", "policy", "check", "--", "ls"],
        ] {
            let cli = parse(words).unwrap_or_else(|err| panic!("{words:?}: {err}"));
            let config = match cli.mode.expect("a mode") {
                Mode::Artifact(args) => args.session.config,
                Mode::Rpc(args) => args.session.config,
                Mode::Mcp(args) => args.session.config,
                Mode::Doctor(args) => args.session.config,
                Mode::Policy(args) => match args.command {
                    crate::PolicyCommand::Check(args) => args.session.config,
                },
                other => panic!("{other:?}"),
            };
            assert_eq!(config, Some(PathBuf::from("c")), "{words:?}");
        }
    }

    #[test]
    fn given_twice_is_a_usage_error() {
        let text = refused(&["--config", "a", "exec", "--config", "b", "--", "ls"]);
        assert!(
            text.starts_with(
                "error: the argument '--config <FILE>' cannot be used multiple times (it was \
                 given before 'exec' and after it; give it once)\n"
            ),
            "{text}"
        );
        assert!(text.contains("Usage: agentsh"), "{text}");
        // Twice on one side: clap's own refusal.
        for words in [
            &["exec", "--config", "a", "--config", "b", "--", "ls"][..],
            &["--config", "a", "--config", "b", "exec", "--", "ls"],
            &["--cwd", "a", "rpc", "--cwd", "b"],
            &["--remote", "ssh://a", "mcp", "--remote", "ssh://b"],
            &["--remote-install", "artifact", "1", "--remote-install"],
        ] {
            let text = refused(words);
            assert!(
                text.contains("cannot be used multiple times"),
                "{words:?}: {text}"
            );
        }
    }

    #[test]
    fn an_option_the_subcommand_does_not_take_is_refused_before_it_too() {
        assert!(refused(&["--remote", "ssh://h", "doctor"]).starts_with(
            "error: the argument '--remote <TARGET>' cannot be used with 'agentsh doctor'\n"
        ));
        assert!(
            refused(&["--remote-install", "policy", "check", "--", "ls"])
                .contains("'--remote-install' cannot be used with 'agentsh policy check'")
        );
        assert!(
            refused(&["--config", "c", "completions", "bash"])
                .contains("'--config <FILE>' cannot be used with 'agentsh completions'")
        );
        // After the name, clap refuses what the subcommand does not declare.
        assert!(refused(&["doctor", "--remote", "ssh://h"]).contains("unexpected argument"));
    }

    #[test]
    fn the_interactive_modes_own_options_stay_before_no_subcommand() {
        let text = refused(&["--listen", "/tmp/s", "rpc"]);
        assert!(
            text.starts_with(
                "error: the argument '--listen <PATH>' is an option of the interactive mode and \
                 cannot be used with 'agentsh rpc'"
            ),
            "{text}"
        );
        assert!(refused(&["--tools", "read", "exec", "--", "ls"]).contains("'--tools <a,b>'"));
        let cli = parse(&["--listen", "/tmp/s", "--config", "c", "--remote", "ssh://h"])
            .expect("interactive");
        assert!(cli.mode.is_none());
        assert_eq!(cli.interactive.session.config, Some(PathBuf::from("c")));
        assert_eq!(cli.interactive.remote.remote.as_deref(), Some("ssh://h"));
    }

    #[test]
    fn nothing_after_the_double_dash_is_an_option() {
        let args = exec(&[
            "--config", "a", "exec", "--", "echo", "--config", "x", "--cwd",
        ]);
        assert_eq!(args.session.config, Some(PathBuf::from("a")));
        assert_eq!(args.command, ["echo", "--config", "x", "--cwd"]);
        let cli = parse(&["artifact", "--", "--config"]).expect("an id that looks like a flag");
        let Some(Mode::Artifact(args)) = cli.mode else {
            panic!("expected artifact");
        };
        assert_eq!(args.id, "--config");
        assert_eq!(args.session.config, None);
        let cli = parse(&["policy", "check", "--", "rm", "--cwd", "/"]).expect("valid");
        let Some(Mode::Policy(args)) = cli.mode else {
            panic!("expected policy");
        };
        let crate::PolicyCommand::Check(check) = args.command;
        assert_eq!(check.command, ["rm", "--cwd", "/"]);
        assert_eq!(check.session.cwd, None);
    }

    #[test]
    fn artifact_takes_an_id_and_a_line_range() {
        let cli =
            parse(&["artifact", "artifact://12", "--offset", "3", "--limit", "2"]).expect("valid");
        let Some(Mode::Artifact(args)) = cli.mode else {
            panic!("expected artifact");
        };
        assert_eq!(args.id, "artifact://12");
        assert_eq!((args.offset, args.limit), (Some(3), Some(2)));
        assert_eq!(parse(&["artifact"]).expect_err("no id").exit_code(), 2);
        assert_eq!(
            parse(&["artifact", "1", "--offset", "-1"])
                .expect_err("negative")
                .exit_code(),
            2
        );
        assert_eq!(
            parse(&["artifact", "1", "2"])
                .expect_err("two ids")
                .exit_code(),
            2
        );
    }

    #[test]
    fn an_update_settles_as_a_parse_does() {
        let mut cli = parse(&["exec", "--", "ls"]).expect("valid");
        cli.try_update_from(["agentsh", "--config", "c", "exec", "--", "ls"])
            .expect("update");
        let Some(Mode::Exec(args)) = &cli.mode else {
            panic!("expected exec");
        };
        assert_eq!(args.session.config, Some(PathBuf::from("c")));
    }
}
