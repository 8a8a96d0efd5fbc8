//! The tokens the lexer produces: what each is, where it is, how deep it sits.

/// A control operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// `|`
    Pipe,
    /// `|&`
    PipeAmp,
    /// `&&`
    AndIf,
    /// `||`
    OrIf,
    /// `;`
    Semi,
    /// `&`
    Amp,
    /// An unquoted newline.
    Newline,
    /// `;;`, `;&` or `;;&` (ends a `case` item).
    CaseEnd,
    /// `(`
    LParen,
    /// `)`
    RParen,
}

/// What a word does where it stands, as bash's grammar reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WordRole {
    /// A reserved word where bash recognises one: `if`, `then`, `do`, `{`, `}`, `!`, `time`
    /// (and its `-p`), `in`, `function`, `[[`, `]]`, …
    Reserved,
    /// An assignment before the command name, or as the whole simple command: `A=1 make`, `x=2`.
    Assignment,
    /// The first word of a simple command that is not an assignment.
    CommandName,
    /// A word after the command name.
    Argument,
    /// The name a function definition defines: `f` in `f() { …; }` and `function f { …; }`.
    FunctionName,
    /// The variable of a `for`/`select` loop.
    LoopVariable,
    /// A word of a `for`/`select` loop's `in` list.
    LoopWord,
    /// The word a `case` examines.
    CaseSubject,
    /// A pattern of a `case` item.
    CasePattern,
    /// A word inside `[[ … ]]` (its operands and operators).
    Test,
}

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A word (including its quotes and expansions), with its role.
    Word(WordRole),
    /// A control operator.
    Op(Op),
    /// A redirection: optional fd, operator and target word, e.g. `2>&1`, `> log`, `<<EOF`.
    Redirect {
        /// Whether it redirects fd 1 or fd 2 (or both).
        touches_stdout_or_stderr: bool,
    },
    /// An arithmetic command `(( … ))` or the `(( … ))` header of an arithmetic `for`.
    Arith,
    /// A comment, without its newline.
    Comment,
    /// The bodies of the heredocs started on the line before, delimiter lines included.
    HeredocBody,
}

/// A top-level token: its kind, byte span in the source and nesting depth (0 = top level;
/// the opening and closing tokens of a compound command are at the depth outside it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Token {
    /// What it is.
    pub kind: Kind,
    /// Where it starts in the source (a byte offset).
    pub start: usize,
    /// Where it ends in the source (exclusive).
    pub end: usize,
    /// How many compound commands it sits inside.
    pub depth: usize,
}

/// The tokens of a whole program, with the index of the first token of each top-level pipeline
/// (the pipelines of its top-level lists, in order).
#[derive(Debug, Default)]
pub(crate) struct Program {
    pub tokens: Vec<Token>,
    pub pipelines: Vec<usize>,
}

impl Program {
    /// The index of the first token of the last top-level pipeline.
    pub fn last_pipeline(&self) -> Option<usize> {
        self.pipelines.last().copied()
    }
}
