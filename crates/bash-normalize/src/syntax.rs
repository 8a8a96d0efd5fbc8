//! The lexer's view of a command line, for crates that must know what a command will run (the
//! approval policy judges each simple command of a line).
//!
//! [`tokenize`] splits a whole program into tokens with byte spans and nesting depths; each word
//! carries its [`WordRole`] as bash's grammar reads it (reserved word, assignment, command name,
//! argument, function name, loop or `case` word, `[[ ]]` operand). Programs inside `$( )`,
//! backquotes and process substitutions stay inside their word: [`parse_word`] takes a word
//! apart into quoted, escaped and expanded pieces and lists the programs substituted into it,
//! which can be tokenised in turn. Both use the same lexer as normalisation, and both refuse
//! what they do not understand ([`Unparsed`]) rather than guess.
//!
//! ```
//! use agentsh_bash_normalize::syntax::{self, Context, Kind, PartKind, WordRole};
//!
//! let line = "sudo r'm' -rf \"$(cat list)\"";
//! let tokens = syntax::tokenize(line)?;
//! let roles: Vec<_> = tokens.iter().map(|t| t.kind).collect();
//! assert_eq!(roles[0], Kind::Word(WordRole::CommandName));
//! assert_eq!(roles[1], Kind::Word(WordRole::Argument));
//!
//! let word = syntax::parse_word(&line[tokens[1].start..tokens[1].end], Context::Word)?;
//! let kinds: Vec<_> = word.parts.iter().map(|p| p.kind).collect();
//! assert_eq!(kinds, [PartKind::Literal, PartKind::SingleQuoted]);
//!
//! let text = &line[tokens[3].start..tokens[3].end];
//! let word = syntax::parse_word(text, Context::Word)?;
//! assert_eq!(word.substitutions[0].program(text), "cat list");
//! # Ok::<(), syntax::Unparsed>(())
//! ```

use std::fmt;

pub use crate::lexer::{
    Context, Kind, Op, PartKind, Substitution, SubstitutionKind, Token, Word, WordPart, WordRole,
};

/// The text is not understood: bash would reject it (an unterminated quote, an unbalanced
/// group, a dangling operator), or it uses a construct the lexer does not follow (`coproc`), or
/// it is too deeply nested or costly to follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Unparsed;

impl fmt::Display for Unparsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the command line cannot be parsed")
    }
}

impl std::error::Error for Unparsed {}

/// The tokens of `program`, a complete bash program, in order: every token outside
/// substitutions, at any depth of compound commands.
pub fn tokenize(program: &str) -> Result<Vec<Token>, Unparsed> {
    crate::lexer::tokenize(program)
        .map(|p| p.tokens)
        .map_err(|_| Unparsed)
}

/// Takes `text` apart: a word (the text of a [`Kind::Word`] token, or the target of a
/// redirection), a here-document body or an arithmetic command, per `context`.
pub fn parse_word(text: &str, context: Context) -> Result<Word, Unparsed> {
    crate::lexer::parse_word(text, context).map_err(|_| Unparsed)
}
