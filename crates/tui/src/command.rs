//! What a line typed at the prompt means: a bang command, a JSON tool call, one of
//! the slash words, or a `bash` tool call.

use serde_json::{Map, Value};

/// One submitted input line, classified.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Input {
    /// Nothing but blanks: nothing happens.
    Empty,
    /// `!cmd` (`exclude_from_context: false`) or `!!cmd` (kept out of the context).
    Bang {
        /// The command after the `!` or `!!`.
        command: String,
        /// `!!cmd`.
        exclude_from_context: bool,
    },
    /// A line that parses whole as a JSON object: a `bash` tool call with these arguments.
    ToolArgs(Map<String, Value>),
    /// One of the slash words.
    Slash(Slash),
    /// Anything else: the model's `bash` tool call with this command.
    Tool(String),
}

/// The slash commands; only these words are commands (`/usr/bin/ls` runs as a tool call).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Slash {
    /// `/jobs`: every job as a line.
    Jobs,
    /// `/job N`: a job's output or screen, live.
    Job(String),
    /// `/kill N`: ends job N and every process it left.
    Kill(String),
    /// `/context`: the context messages recorded so far.
    Context,
    /// `/artifact ID`: an artifact, read window by window.
    Artifact(String),
    /// `/help`.
    Help,
    /// `/quit`.
    Quit,
    /// One of the words with a missing or extra argument: the usage text to show.
    Usage(&'static str),
}

/// The `/help` text: every kind of input and every key.
pub(crate) const HELP: &str = "\
Input
  !cmd            run cmd in your shell; its output goes into the model's context
  !!cmd           the same, kept out of the context
  {\"command\": …}  a bash tool call with these arguments (a whole JSON object)
  any other line  runs as the model's bash tool call
  /jobs           list background jobs
  /job N          follow job N's output or screen
  /kill N         end job N and every process it started
  /context        show the context messages recorded so far
  /artifact ID    read an artifact (artifact://ID)
  /help           this text
  /quit           leave (asks once while jobs run)
Keys
  y / a / n       answer the oldest waiting approval: allow, allow for the session, deny
                  (Esc denies it too, rather than cancelling a call)
  Esc             cancel the newest running call (in a program's screen: see its footer)
  ctrl+o          expand or collapse the last result
  PgUp / PgDn     scroll (an expanded result: its lines)
  Tab             complete: a / command, a job or artifact id, a file, a command name
                  (several: a list under the input; Tab again cycles, Esc closes it)
  ctrl+r          search the history (fuzzy, newest first; Enter takes, Esc leaves it)
  → / End         take the dimmed suggestion from the history
  Up / Down       input history
  Home / End      an expanded result: its first or last lines (on an empty line)
  ctrl+l          redraw the screen
  Ctrl+C          clear the input, or cancel the newest running call
  Ctrl+D          quit on an empty line (asks once while jobs run)";

/// Classifies one submitted line.
pub(crate) fn parse_input(line: &str) -> Input {
    let trimmed = line.trim();
    if trimmed.is_empty() {
        return Input::Empty;
    }
    if let Some(rest) = trimmed.strip_prefix("!!") {
        return Input::Bang {
            command: rest.trim_start().to_owned(),
            exclude_from_context: true,
        };
    }
    if let Some(rest) = trimmed.strip_prefix('!') {
        return Input::Bang {
            command: rest.trim_start().to_owned(),
            exclude_from_context: false,
        };
    }
    if trimmed.starts_with('{')
        && let Ok(Value::Object(args)) = serde_json::from_str::<Value>(trimmed)
    {
        return Input::ToolArgs(args);
    }
    if let Some(slash) = parse_slash(trimmed) {
        return Input::Slash(slash);
    }
    // The line as typed (a heredoc's or a group's spacing is the command's).
    Input::Tool(line.to_owned())
}

/// A slash word and its argument, or `None` when the first word is not one of them.
fn parse_slash(line: &str) -> Option<Slash> {
    let mut words = line.split_whitespace();
    let word = words.next()?;
    let args: Vec<&str> = words.collect();
    let slash = match (word, args.as_slice()) {
        ("/jobs", []) => Slash::Jobs,
        ("/jobs", _) => Slash::Usage("/jobs takes no argument"),
        ("/job", [id]) => Slash::Job((*id).to_owned()),
        ("/job", _) => Slash::Usage("usage: /job N (a job id, see /jobs)"),
        ("/kill", [id]) => Slash::Kill((*id).to_owned()),
        ("/kill", _) => Slash::Usage("usage: /kill N (a job id, see /jobs)"),
        ("/context", []) => Slash::Context,
        ("/context", _) => Slash::Usage("/context takes no argument"),
        ("/artifact", [id]) => Slash::Artifact((*id).to_owned()),
        ("/artifact", _) => Slash::Usage("usage: /artifact ID (digits or artifact://ID)"),
        ("/help", _) => Slash::Help,
        ("/quit", []) => Slash::Quit,
        ("/quit", _) => Slash::Usage("/quit takes no argument"),
        _ => return None,
    };
    Some(slash)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bang(command: &str, excluded: bool) -> Input {
        Input::Bang {
            command: command.to_owned(),
            exclude_from_context: excluded,
        }
    }

    #[test]
    fn bang_and_double_bang() {
        assert_eq!(parse_input("!echo hi"), bang("echo hi", false));
        assert_eq!(parse_input("!!echo x"), bang("echo x", true));
        assert_eq!(parse_input("  ! ls -l "), bang("ls -l", false));
    }

    #[test]
    fn a_whole_json_object_is_tool_arguments() {
        let Input::ToolArgs(args) = parse_input(r#"{"command": "make", "tail": 20}"#) else {
            panic!("not tool arguments");
        };
        assert_eq!(args["command"], "make");
        assert_eq!(args["tail"], 20);
    }

    #[test]
    fn a_brace_group_is_a_command() {
        assert_eq!(parse_input("{ make; }"), Input::Tool("{ make; }".into()));
        assert_eq!(
            parse_input(r#"{"command": "x"} && ls"#),
            Input::Tool(r#"{"command": "x"} && ls"#.into())
        );
        // A JSON value that is not an object is a command too.
        assert_eq!(parse_input("[1]"), Input::Tool("[1]".into()));
    }

    #[test]
    fn only_the_slash_words_are_commands() {
        assert_eq!(parse_input("/jobs"), Input::Slash(Slash::Jobs));
        assert_eq!(parse_input("/job 3"), Input::Slash(Slash::Job("3".into())));
        assert_eq!(parse_input("/context"), Input::Slash(Slash::Context));
        assert_eq!(
            parse_input("/kill 2"),
            Input::Slash(Slash::Kill("2".into()))
        );
        assert!(matches!(
            parse_input("/kill"),
            Input::Slash(Slash::Usage(_))
        ));
        assert_eq!(
            parse_input("/artifact artifact://12"),
            Input::Slash(Slash::Artifact("artifact://12".into()))
        );
        assert_eq!(parse_input("/help"), Input::Slash(Slash::Help));
        assert_eq!(parse_input("/quit"), Input::Slash(Slash::Quit));
        assert_eq!(
            parse_input("/usr/bin/ls -l"),
            Input::Tool("/usr/bin/ls -l".into())
        );
        assert_eq!(parse_input("/jobsx"), Input::Tool("/jobsx".into()));
        assert!(matches!(parse_input("/job"), Input::Slash(Slash::Usage(_))));
    }

    #[test]
    fn blank_lines_are_nothing() {
        assert_eq!(parse_input("   "), Input::Empty);
        assert_eq!(parse_input(""), Input::Empty);
    }
}
