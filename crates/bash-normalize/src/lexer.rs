//! A hand-written lexer for the subset of bash structure normalisation needs.
//!
//! It does not build a syntax tree. It splits the *top-level* program into tokens with byte
//! offsets and a nesting depth, skipping over everything that is opaque at that level: quotes
//! (`'…'`, `"…"`, `$'…'`, `$"…"`), escapes, `$( )`, `$(( ))`, `` `…` ``, `${ }`, `$[ ]`, process
//! substitutions, extglob groups, array literals, heredoc bodies and comments. Compound commands
//! (`( )`, `{ }`, `if`, `while`/`until`/`for`/`select`, `case`, `[[ ]]`, `(( ))`) are tracked with
//! a small state machine so that a `;`, `|` or newline inside them is seen at depth > 0.
//!
//! Anything the lexer does not understand — or that bash would reject — ends the scan with
//! [`Bail`]; the caller then leaves the command alone. Nested programs (`$( )`, `<( )`) are scanned
//! by the same state machine, so a `)` that closes a `case` pattern does not end them early.
//!
//! The parts: `token.rs` (what a token is), `scan.rs` (the cursor that reads the next token, and
//! the work budget), `words.rs` (the byte scanners for words, quotes, expansions and balanced
//! groups), `grammar.rs` (the compound-command state machine, which also gives each word its
//! role) and `parts.rs` (one word taken apart, for [`crate::syntax`]).

mod grammar;
mod parts;
mod scan;
mod token;
mod words;

pub(crate) use parts::parse as parse_word;
pub use parts::{Context, PartKind, Substitution, SubstitutionKind, Word, WordPart};
pub(crate) use token::Program;
pub use token::{Kind, Op, Token, WordRole};

use grammar::Machine;
use scan::Lexer;

/// The scan gave up: the input is not understood (or is not valid bash).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bail;

type Scan<T> = Result<T, Bail>;

/// Tokenises `src` as a complete bash program. Fails on anything not understood and on
/// syntax bash rejects (unbalanced groups, unterminated quotes or heredocs, dangling operators).
pub(crate) fn tokenize(src: &str) -> Scan<Program> {
    let mut lexer = Lexer::new(src);
    let mut program = Program::default();
    let mut machine = Machine::new(false);
    let result = machine.run(&mut lexer, Some(&mut program));
    if lexer.over_budget() {
        return Err(Bail);
    }
    result.map(|()| program)
}

#[cfg(test)]
mod tests;
