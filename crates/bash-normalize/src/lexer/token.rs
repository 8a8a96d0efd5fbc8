//! The tokens the lexer produces: what each is, where it is, how deep it sits.

/// A control operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
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

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A word (including its quotes and expansions), or a reserved word.
    Word,
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
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
