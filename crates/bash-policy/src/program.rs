//! Reading one simple command the way its programs read their words: a word's value after
//! quote removal, the command a wrapper (`env`, `timeout`, `nice`, `sudo`, …) runs, and where a
//! program's subcommand stands after its global options (`git -C dir log`), from the table of
//! well-known programs the policy reads by meaning. The policy judges commands with the same
//! reading; output shaping uses it to name the program a call runs.

use crate::arg::Arg;
use crate::command::{Inner, wrapper_inner};
use crate::segment::decode;
use crate::table;

/// One word of a simple command as the shell will see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandWord {
    /// Its value after quote removal; expansions (`$x`, `$(…)`) stay as written.
    pub value: String,
    /// No expansion, glob or locale quoting: `value` is exactly what the program gets.
    pub literal: bool,
}

impl CommandWord {
    /// Takes the text of a word apart; `None` when the lexer cannot read it.
    pub fn parse(text: &str) -> Option<Self> {
        let (arg, _) = decode(text).ok()?;
        Some(Self::from_arg(&arg))
    }

    fn from_arg(arg: &Arg) -> Self {
        Self {
            value: arg.value.clone(),
            literal: arg.literal && !arg.glob && !arg.quoting,
        }
    }

    fn to_arg(&self) -> Arg {
        Arg {
            value: self.value.clone(),
            literal: self.literal,
            ..Arg::default()
        }
    }
}

/// Where the command a wrapper runs starts: `Some(2)` for `timeout 5 git log`, `Some(1)` for
/// `nice make`; `None` when `words[0]` is no wrapper, runs nothing (`command -v x`) or runs a
/// string (`env -S '…'`).
pub fn wrapped_command(words: &[CommandWord]) -> Option<usize> {
    let first = words.first()?;
    if !first.literal {
        return None;
    }
    let base = first.value.rsplit('/').next().unwrap_or(&first.value);
    let args: Vec<Arg> = words.iter().map(CommandWord::to_arg).collect();
    match wrapper_inner(base, &args)? {
        Inner::Command { at, .. } => Some(at),
        _ => None,
    }
}

/// Where `program`'s subcommand stands in `words` (`words[0]` is the program): after its
/// global options (`git -C dir --no-pager log` → `Some(4)`); `None` when the program has
/// subcommands nobody listed here, or the words end before one.
pub fn subcommand_at(program: &str, words: &[CommandWord]) -> Option<usize> {
    let entry = table::program(program).filter(|p| p.subcommands)?;
    let mut i = 1;
    while let Some(word) = words.get(i) {
        let value = word.value.as_str();
        if !word.literal {
            return None;
        }
        if entry.plus_prefix && value.starts_with('+') {
            i += 1;
            continue;
        }
        if !value.starts_with('-') || value == "-" {
            return Some(i);
        }
        if value == "--" {
            return None;
        }
        i += if entry.global_values.contains(&value) {
            2
        } else {
            1
        };
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<CommandWord> {
        line.split(' ')
            .map(|w| CommandWord::parse(w).unwrap())
            .collect()
    }

    #[test]
    fn wrappers_are_unwrapped_to_their_command() {
        assert_eq!(wrapped_command(&words("timeout 5 git log")), Some(2));
        assert_eq!(wrapped_command(&words("timeout -s KILL 5 make")), Some(4));
        assert_eq!(wrapped_command(&words("nice -n 5 cargo test")), Some(3));
        assert_eq!(wrapped_command(&words("env A=1 B=2 pytest")), Some(3));
        assert_eq!(wrapped_command(&words("/usr/bin/env pytest")), Some(1));
        assert_eq!(wrapped_command(&words("command -v git")), None);
        assert_eq!(wrapped_command(&words("git log")), None);
    }

    #[test]
    fn global_options_are_skipped_to_the_subcommand() {
        assert_eq!(subcommand_at("git", &words("git log")), Some(1));
        assert_eq!(
            subcommand_at("git", &words("git -C dir --no-pager log")),
            Some(4)
        );
        assert_eq!(
            subcommand_at("git", &words("git -c a=b --git-dir=.git push")),
            Some(4)
        );
        assert_eq!(
            subcommand_at("cargo", &words("cargo +nightly -q test")),
            Some(3)
        );
        assert_eq!(
            subcommand_at("cargo", &words("cargo --color never build")),
            Some(3)
        );
        assert_eq!(
            subcommand_at("npm", &words("npm --prefix web test")),
            Some(3)
        );
        assert_eq!(subcommand_at("git", &words("git --version")), None);
        assert_eq!(subcommand_at("ls", &words("ls -la")), None);
        assert_eq!(
            subcommand_at(
                "git",
                &[CommandWord {
                    value: "$x".into(),
                    literal: false
                }]
            ),
            None
        );
    }

    #[test]
    fn words_lose_their_quotes() {
        let word = CommandWord::parse("'lo'g").unwrap();
        assert_eq!(word.value, "log");
        assert!(word.literal);
        assert!(!CommandWord::parse("$sub").unwrap().literal);
        assert!(!CommandWord::parse("*.rs").unwrap().literal);
    }
}
