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

/// The scan gave up: the input is not understood (or is not valid bash).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bail;

use std::cell::Cell;
use std::collections::HashMap;

type Scan<T> = Result<T, Bail>;

/// Work budget: byte inspections allowed per input byte, plus a constant. Ordinary commands
/// need a few per byte.
const WORK_PER_BYTE: usize = 64;
const WORK_BASE: usize = 4096;

/// Deepest nesting of `$( )`, quotes and groups the lexer follows before giving up. Keeps the
/// recursion far from the stack limit on hostile input.
const MAX_NESTING: usize = 200;

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

/// Tokenises `src` as a complete bash program. Fails on anything not understood and on
/// syntax bash rejects (unbalanced groups, unterminated quotes or heredocs, dangling operators).
pub(crate) fn tokenize(src: &str) -> Scan<Program> {
    let mut lexer = Lexer {
        src: src.as_bytes(),
        pos: 0,
        heredocs: Vec::new(),
        heredoc_floor: 0,
        queued: None,
        nesting: 0,
        steps: Cell::new(0),
        budget: src
            .len()
            .saturating_mul(WORK_PER_BYTE)
            .saturating_add(WORK_BASE),
        arith_memo: HashMap::new(),
        subprogram_memo: HashMap::new(),
    };
    let mut program = Program::default();
    let mut machine = Machine::new(false);
    let result = machine.run(&mut lexer, Some(&mut program));
    if lexer.steps.get() > lexer.budget {
        return Err(Bail);
    }
    result.map(|()| program)
}

/// A heredoc whose body has not been read yet.
struct PendingHeredoc {
    delimiter: Vec<u8>,
    strip_tabs: bool,
}

struct Lexer<'a> {
    src: &'a [u8],
    pos: usize,
    heredocs: Vec<PendingHeredoc>,
    /// Heredocs below this index belong to an enclosing program: a newline inside a nested
    /// program while they are pending is not understood.
    heredoc_floor: usize,
    /// A heredoc body read right after a newline, returned as the next token.
    queued: Option<(Kind, usize, usize)>,
    nesting: usize,
    /// Bytes inspected so far, and the most allowed: retries (`$((` that turns out to be `$( (`)
    /// rescan text, and hostile nesting must not make that exponential.
    steps: Cell<usize>,
    budget: usize,
    /// Results of `((`/`$((` arithmetic scans and of nested program scans, by start position, so
    /// that a retry never rescans what was already understood.
    arith_memo: HashMap<usize, Option<usize>>,
    subprogram_memo: HashMap<usize, usize>,
}

/// What the state machine tells the lexer about the position of the next token.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Position {
    /// Where a command may start: `((` opens an arithmetic command.
    CommandStart,
    /// Anywhere else.
    Other,
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// Bytes that end an unquoted word.
fn is_word_end(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\n' | b'|' | b'&' | b';' | b'(' | b')' | b'<' | b'>'
    )
}

fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_name_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Whether `word` is a shell name (`[A-Za-z_][A-Za-z0-9_]*`).
fn is_name(word: &[u8]) -> bool {
    word.first().is_some_and(|&b| is_name_start(b)) && word.iter().all(|&b| is_name_char(b))
}

/// Whether `word` starts like an assignment: `NAME=`, `NAME+=`, `NAME[…]=`, `NAME[…]+=`.
/// Returns the length of the `NAME…=` prefix.
fn assignment_prefix(word: &[u8]) -> Option<usize> {
    let mut i = 0;
    if !word.first().is_some_and(|&b| is_name_start(b)) {
        return None;
    }
    while word.get(i).is_some_and(|&b| is_name_char(b)) {
        i += 1;
    }
    if word.get(i) == Some(&b'[') {
        let close = word[i..].iter().position(|&b| b == b']')?;
        i += close + 1;
    }
    if word.get(i) == Some(&b'+') {
        i += 1;
    }
    (word.get(i) == Some(&b'=')).then_some(i + 1)
}

impl Lexer<'_> {
    /// The byte at `i`. Every inspection counts against the work budget; once it is spent the
    /// input looks finished, so the scan ends quickly, and [`tokenize`] reports a bail.
    fn at(&self, i: usize) -> Option<u8> {
        let steps = self.steps.get() + 1;
        self.steps.set(steps);
        if steps > self.budget {
            return None;
        }
        self.src.get(i).copied()
    }

    /// Runs `scan` one nesting level deeper; bails once the nesting is too deep.
    fn nested<T>(&mut self, scan: impl FnOnce(&mut Self) -> Scan<T>) -> Scan<T> {
        if self.nesting >= MAX_NESTING {
            return Err(Bail);
        }
        self.nesting += 1;
        let result = scan(self);
        self.nesting -= 1;
        result
    }

    /// Skips blanks and line continuations.
    fn skip_blanks(&mut self) {
        loop {
            match self.at(self.pos) {
                Some(b) if is_blank(b) => self.pos += 1,
                Some(b'\\') if self.at(self.pos + 1) == Some(b'\n') => self.pos += 2,
                _ => return,
            }
        }
    }

    /// Returns the next top-level token, `None` at the end of the input.
    fn next(&mut self, position: Position) -> Scan<Option<(Kind, usize, usize)>> {
        if let Some(token) = self.queued.take() {
            return Ok(Some(token));
        }
        self.skip_blanks();
        let start = self.pos;
        let Some(b) = self.at(start) else {
            return Ok(None);
        };
        let next = self.at(start + 1);
        let op = |lexer: &mut Self, op: Op, len: usize| {
            lexer.pos = start + len;
            Ok(Some((Kind::Op(op), start, start + len)))
        };
        match b {
            b'\n' => {
                self.pos = start + 1;
                self.read_heredoc_bodies()?;
                Ok(Some((Kind::Op(Op::Newline), start, start + 1)))
            }
            b'#' => {
                let end =
                    memchr::memchr(b'\n', &self.src[start..]).map_or(self.src.len(), |i| start + i);
                self.pos = end;
                Ok(Some((Kind::Comment, start, end)))
            }
            b'|' => match next {
                Some(b'|') => op(self, Op::OrIf, 2),
                Some(b'&') => op(self, Op::PipeAmp, 2),
                _ => op(self, Op::Pipe, 1),
            },
            b'&' => match next {
                Some(b'&') => op(self, Op::AndIf, 2),
                Some(b'>') => self.redirect(start, start),
                _ => op(self, Op::Amp, 1),
            },
            b';' => match (next, self.at(start + 2)) {
                (Some(b';'), Some(b'&')) => op(self, Op::CaseEnd, 3),
                (Some(b';' | b'&'), _) => op(self, Op::CaseEnd, 2),
                _ => op(self, Op::Semi, 1),
            },
            b'(' => {
                if position == Position::CommandStart
                    && next == Some(b'(')
                    && let Some(end) = self.arith(start + 2)?
                {
                    self.pos = end;
                    return Ok(Some((Kind::Arith, start, end)));
                }
                op(self, Op::LParen, 1)
            }
            b')' => op(self, Op::RParen, 1),
            b'<' | b'>' if next == Some(b'(') => self.word(start),
            b'<' | b'>' => self.redirect(start, start),
            b'0'..=b'9' => {
                let digits = self.src[start..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit())
                    .count();
                match self.at(start + digits) {
                    Some(b'<' | b'>') if self.at(start + digits + 1) != Some(b'(') => {
                        self.redirect(start, start + digits)
                    }
                    _ => self.word(start),
                }
            }
            b'{' => {
                // `{name}>file`: bash allocates a new fd and stores it in `name`.
                let name = self.src[start + 1..]
                    .iter()
                    .take_while(|&&b| is_name_char(b))
                    .count();
                let close = start + 1 + name;
                if name > 0
                    && is_name(&self.src[start + 1..close])
                    && self.at(close) == Some(b'}')
                    && matches!(self.at(close + 1), Some(b'<' | b'>'))
                    && self.at(close + 2) != Some(b'(')
                {
                    self.redirect(start, close + 1)
                } else {
                    self.word(start)
                }
            }
            _ => self.word(start),
        }
    }

    fn word(&mut self, start: usize) -> Scan<Option<(Kind, usize, usize)>> {
        let end = self.scan_word(start)?;
        if end == start {
            return Err(Bail);
        }
        self.pos = end;
        Ok(Some((Kind::Word, start, end)))
    }

    /// A redirection starting at `start` whose operator starts at `op_start` (after the fd).
    fn redirect(&mut self, start: usize, op_start: usize) -> Scan<Option<(Kind, usize, usize)>> {
        let fd = &self.src[start..op_start];
        let rest = &self.src[op_start..];
        // (operator length, default fd: 0 = stdin, 1 = stdout, 3 = both stdout and stderr)
        let (len, default_fd, heredoc) = if rest.starts_with(b"&>>") {
            (3, 3, None)
        } else if rest.starts_with(b"&>") {
            (2, 3, None)
        } else if rest.starts_with(b"<<<") {
            (3, 0, None)
        } else if rest.starts_with(b"<<-") {
            (3, 0, Some(true))
        } else if rest.starts_with(b"<<") {
            (2, 0, Some(false))
        } else if rest.starts_with(b"<>") || rest.starts_with(b"<&") {
            (2, 0, None)
        } else if rest.starts_with(b">>") || rest.starts_with(b">|") || rest.starts_with(b">&") {
            (2, 1, None)
        } else if rest.starts_with(b"<") {
            (1, 0, None)
        } else {
            (1, 1, None)
        };
        self.pos = op_start + len;
        self.skip_blanks();
        let target_start = self.pos;
        match (self.at(target_start), self.at(target_start + 1)) {
            // A process substitution is a word: `done < <(find .)`.
            (Some(b'<' | b'>'), Some(b'(')) => {}
            (None | Some(b'\n' | b'|' | b'&' | b';' | b'(' | b')' | b'<' | b'>'), _) => {
                return Err(Bail);
            }
            _ => {}
        }
        let target_end = self.scan_word(target_start)?;
        self.pos = target_end;
        let target = &self.src[target_start..target_end];
        if let Some(strip_tabs) = heredoc {
            self.heredocs.push(PendingHeredoc {
                delimiter: unquote(target),
                strip_tabs,
            });
        }
        let touches = if fd.is_empty() {
            // `>&word` without an fd redirects both stdout and stderr: covered by fd 1.
            default_fd != 0
        } else if fd.first() == Some(&b'{') {
            false
        } else {
            fd == b"1" || fd == b"2"
        };
        Ok(Some((
            Kind::Redirect {
                touches_stdout_or_stderr: touches,
            },
            start,
            target_end,
        )))
    }

    /// Reads the bodies of the pending heredocs, starting at `self.pos` (just after a newline).
    fn read_heredoc_bodies(&mut self) -> Scan<()> {
        if self.heredoc_floor > 0 {
            // A newline inside `$( )` while the enclosing line still owes heredoc bodies: bash
            // versions disagree on where those bodies are.
            return Err(Bail);
        }
        if self.heredocs.is_empty() {
            return Ok(());
        }
        let start = self.pos;
        let mut pos = start;
        for heredoc in self.heredocs.drain(..) {
            loop {
                if pos >= self.src.len() {
                    // Delimited by end of file: bash warns; we do not rewrite such input.
                    return Err(Bail);
                }
                let line_end =
                    memchr::memchr(b'\n', &self.src[pos..]).map_or(self.src.len(), |i| pos + i);
                let mut line = &self.src[pos..line_end];
                if heredoc.strip_tabs {
                    while let [b'\t', rest @ ..] = line {
                        line = rest;
                    }
                }
                pos = (line_end + 1).min(self.src.len());
                if line == heredoc.delimiter.as_slice() {
                    break;
                }
            }
        }
        self.pos = pos;
        self.queued = Some((Kind::HeredocBody, start, pos));
        Ok(())
    }

    /// Scans a word starting at `start`; returns its end.
    fn scan_word(&mut self, start: usize) -> Scan<usize> {
        self.nested(|lexer| lexer.scan_word_inner(start))
    }

    fn scan_word_inner(&mut self, start: usize) -> Scan<usize> {
        let mut p = start;
        while let Some(b) = self.at(p) {
            match b {
                b'(' if p > start => {
                    // An extglob group such as `!(…)` or `@(a|b)`, or an array literal
                    // `name=(a b c)`.
                    let extglob = matches!(self.src[p - 1], b'?' | b'*' | b'+' | b'@' | b'!')
                        && !escaped(self.src, start, p - 1);
                    if extglob || assignment_prefix(&self.src[start..p]) == Some(p - start) {
                        p = self.balanced(p + 1, b'(', b')', true)?;
                    } else {
                        return Ok(p);
                    }
                }
                b'<' | b'>' if self.at(p + 1) == Some(b'(') => {
                    p = self.subprogram(p + 2)?;
                }
                _ if is_word_end(b) => return Ok(p),
                b'\\' => p = (p + 2).min(self.src.len()),
                b'\'' => p = self.single_quoted(p + 1)?,
                b'"' => p = self.double_quoted(p + 1)?,
                b'`' => p = self.escaped_quoted(p + 1, b'`')?,
                b'$' => p = self.dollar(p)?,
                _ => p += 1,
            }
        }
        Ok(p)
    }

    /// After an opening `'` at `p - 1`: returns the position after the closing `'`.
    fn single_quoted(&self, p: usize) -> Scan<usize> {
        memchr::memchr(b'\'', &self.src[p..])
            .map(|i| p + i + 1)
            .ok_or(Bail)
    }

    /// After an opening `quote` at `p - 1` of a string where a backslash escapes the next byte
    /// (`` `…` ``, and `$'…'` where `\'` does not end the string): returns the position after
    /// the closing `quote`.
    fn escaped_quoted(&self, mut p: usize, quote: u8) -> Scan<usize> {
        loop {
            match self.at(p) {
                None => return Err(Bail),
                Some(b'\\') => p += 2,
                Some(b) if b == quote => return Ok(p + 1),
                Some(_) => p += 1,
            }
        }
    }

    /// After an opening `"` at `p - 1`: returns the position after the closing `"`.
    fn double_quoted(&mut self, mut p: usize) -> Scan<usize> {
        self.nested(|lexer| {
            loop {
                p = match lexer.at(p) {
                    None => return Err(Bail),
                    Some(b'"') => return Ok(p + 1),
                    Some(b'\\') => p + 2,
                    Some(b'`') => lexer.escaped_quoted(p + 1, b'`')?,
                    // `$'` and `$"` are not special inside double quotes.
                    Some(b'$') if matches!(lexer.at(p + 1), Some(b'\'' | b'"')) => p + 1,
                    Some(b'$') => lexer.dollar(p)?,
                    Some(_) => p + 1,
                };
            }
        })
    }

    /// A `$` at `p`: returns the end of the expansion it starts (or `p + 1` for a lone `$`).
    fn dollar(&mut self, p: usize) -> Scan<usize> {
        match self.at(p + 1) {
            Some(b'\'') => self.escaped_quoted(p + 2, b'\''),
            Some(b'"') => self.double_quoted(p + 2),
            // `${ }`, and `$[ ]` (old arithmetic).
            Some(b'{') => self.balanced(p + 2, b'{', b'}', false),
            Some(b'[') => self.balanced(p + 2, b'[', b']', false),
            Some(b'(') => {
                if self.at(p + 2) == Some(b'(')
                    && let Some(end) = self.arith(p + 3)?
                {
                    return Ok(end);
                }
                self.subprogram(p + 2)
            }
            _ => Ok(p + 1),
        }
    }

    /// After an `open` byte at `p - 1`: returns the position after the matching `close`,
    /// skipping nested `open`…`close` pairs, escapes, quotes and expansions, and with `comments`
    /// also comments (in extglob groups and array literals).
    fn balanced(&mut self, mut p: usize, open: u8, close: u8, comments: bool) -> Scan<usize> {
        self.nested(|lexer| {
            let mut depth = 0usize;
            loop {
                p = match lexer.at(p) {
                    None => return Err(Bail),
                    Some(b) if b == close && depth == 0 => return Ok(p + 1),
                    Some(b) if b == close => {
                        depth -= 1;
                        p + 1
                    }
                    Some(b) if b == open => {
                        depth += 1;
                        p + 1
                    }
                    Some(b'#')
                        if comments
                            && p > 0
                            && matches!(lexer.src[p - 1], b' ' | b'\t' | b'\n' | b'(') =>
                    {
                        memchr::memchr(b'\n', &lexer.src[p..]).map_or(lexer.src.len(), |i| p + i)
                    }
                    Some(b'\\') => p + 2,
                    Some(b'\'') => lexer.single_quoted(p + 1)?,
                    Some(b'"') => lexer.double_quoted(p + 1)?,
                    Some(b'`') => lexer.escaped_quoted(p + 1, b'`')?,
                    Some(b'$') => lexer.dollar(p)?,
                    Some(_) => p + 1,
                };
            }
        })
    }

    /// After `((` (or `$((`): returns the position after the matching `))`, or `None` when the
    /// parentheses close in a way that is not arithmetic (then it is a nested subshell).
    fn arith(&mut self, p: usize) -> Scan<Option<usize>> {
        if let Some(&end) = self.arith_memo.get(&p) {
            return Ok(end);
        }
        let after_close = self.balanced(p, b'(', b')', false)?;
        let end = (self.at(after_close) == Some(b')')).then_some(after_close + 1);
        self.arith_memo.insert(p, end);
        Ok(end)
    }

    /// A nested program starting at `p` (after `$(`, `<(` or `>(`): returns the position after
    /// the `)` that closes it.
    fn subprogram(&mut self, p: usize) -> Scan<usize> {
        if let Some(&end) = self.subprogram_memo.get(&p) {
            return Ok(end);
        }
        let end = self.nested(|lexer| lexer.subprogram_uncached(p))?;
        self.subprogram_memo.insert(p, end);
        Ok(end)
    }

    fn subprogram_uncached(&mut self, p: usize) -> Scan<usize> {
        let saved_pos = self.pos;
        let saved_floor = self.heredoc_floor;
        let saved_queue = self.queued.take();
        self.pos = p;
        self.heredoc_floor = self.heredocs.len();
        let mut machine = Machine::new(true);
        let result = match machine.run(self, None) {
            // A heredoc started inside must also end inside.
            Ok(()) if self.heredocs.len() > self.heredoc_floor => Err(Bail),
            Ok(()) => Ok(self.pos),
            Err(bail) => Err(bail),
        };
        self.pos = saved_pos;
        self.heredoc_floor = saved_floor;
        self.queued = saved_queue;
        result
    }
}

/// Whether the byte at `i` is preceded by an odd number of backslashes since `start`.
fn escaped(src: &[u8], start: usize, i: usize) -> bool {
    src[start..i]
        .iter()
        .rev()
        .take_while(|&&b| b == b'\\')
        .count()
        % 2
        == 1
}

/// Quote removal for a heredoc delimiter: `'EOF'`, `"EOF"`, `\EOF` and `E"O"F` all mean `EOF`.
fn unquote(word: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(word.len());
    let mut i = 0;
    while let Some(&b) = word.get(i) {
        match b {
            b'\\' => {
                if let Some(&next) = word.get(i + 1) {
                    out.push(next);
                }
                i += 2;
            }
            b'\'' | b'"' => i += 1,
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// The word's text with line continuations removed (`i\<newline>f` is the reserved word `if`).
fn word_text(raw: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if memchr::memmem::find(raw, b"\\\n").is_none() {
        return std::borrow::Cow::Borrowed(raw);
    }
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while let Some(&b) = raw.get(i) {
        if b == b'\\' && raw.get(i + 1) == Some(&b'\n') {
            i += 2;
        } else if b == b'\\' {
            out.push(b);
            if let Some(&next) = raw.get(i + 1) {
                out.push(next);
            }
            i += 2;
        } else {
            out.push(b);
            i += 1;
        }
    }
    std::borrow::Cow::Owned(out)
}

/// An open compound command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    /// `( … )`
    Subshell,
    /// `{ … }`
    Brace,
    /// `if … fi`
    If,
    /// `while`/`until`/`for`/`select` … `done`
    Loop,
    /// `case … esac`; `body` is true inside a `pattern) …` item.
    Case { body: bool },
    /// `[[ … ]]`
    Test,
}

/// Where the state machine is within a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// A command may start here (reserved words are recognised). `required`: an operator before
    /// demands one (after `|`, `&&`, `(`, `then`, …), so a separator here is a syntax error.
    Start { required: bool },
    /// After `time`: `-p` may follow.
    Time,
    /// After assignments or redirections that start a simple command.
    Prefix,
    /// After the command name of a simple command (`words` words so far; `name`: the first could
    /// name a function): arguments and redirections.
    Args { words: u32, name: bool },
    /// After the end of a compound command: only redirections and operators may follow.
    Compound,
    /// After `name (`: `)` must follow.
    FunctionParen,
    /// After `function`: the name must follow.
    FunctionName,
    /// After `function name`: `()` or the body.
    FunctionBody,
    /// After `for`/`select`: the variable name or `((`.
    ForName,
    /// After the loop variable: `in`, `do`, `;` or a newline.
    ForIn,
    /// After `in`: words until `;` or a newline.
    ForWords,
    /// After `case`: the subject word.
    CaseSubject,
    /// After the subject: `in`.
    CaseIn,
    /// Reading a pattern list `(a|b)`; `need_word` after `(` or `|`, `any` once a word was seen.
    CasePattern { need_word: bool, any: bool },
}

struct Machine {
    frames: Vec<Frame>,
    state: State,
    /// Scanning a nested program (`$( )`): an unmatched `)` ends it.
    nested: bool,
    /// The next depth-0 command token starts a new pipeline.
    at_list_start: bool,
}

impl Machine {
    fn new(nested: bool) -> Self {
        Self {
            frames: Vec::new(),
            state: State::Start { required: false },
            nested,
            at_list_start: true,
        }
    }

    fn position(&self) -> Position {
        match self.state {
            State::Start { .. } | State::Time | State::ForName | State::FunctionBody
                if self.frames.last() != Some(&Frame::Test) =>
            {
                Position::CommandStart
            }
            _ => Position::Other,
        }
    }

    /// Runs to the end of the input (top level) or to the unmatched `)` (nested). Top-level
    /// tokens are pushed to `out`.
    fn run(&mut self, lexer: &mut Lexer<'_>, mut out: Option<&mut Program>) -> Scan<()> {
        loop {
            let Some((kind, start, end)) = lexer.next(self.position())? else {
                if !lexer.heredocs.is_empty() {
                    // A heredoc operator on the last line, with no body at all.
                    return Err(Bail);
                }
                return self.finish();
            };
            let depth_before = self.frames.len();
            let step = self.step(kind, &lexer.src[start..end])?;
            let depth = depth_before.min(self.frames.len());
            if step == Step::EndOfNested {
                return Ok(());
            }
            if let Some(program) = out.as_deref_mut() {
                let index = program.tokens.len();
                program.tokens.push(Token {
                    kind,
                    start,
                    end,
                    depth,
                });
                if depth == 0 {
                    match kind {
                        Kind::Op(Op::Semi | Op::Amp | Op::AndIf | Op::OrIf) => {
                            self.at_list_start = true;
                        }
                        Kind::Op(Op::Newline) if step == Step::Separator => {
                            self.at_list_start = true;
                        }
                        Kind::Op(Op::Newline) | Kind::Comment | Kind::HeredocBody => {}
                        _ if self.at_list_start => {
                            self.at_list_start = false;
                            program.pipelines.push(index);
                        }
                        _ => {}
                    }
                }
            }
        }
    }

    fn finish(&self) -> Scan<()> {
        if self.nested || !self.frames.is_empty() {
            return Err(Bail);
        }
        match self.state {
            State::Start { required: false }
            | State::Time
            | State::Prefix
            | State::Args { .. }
            | State::Compound => Ok(()),
            _ => Err(Bail),
        }
    }

    fn step(&mut self, kind: Kind, text: &[u8]) -> Scan<Step> {
        if self.frames.last() == Some(&Frame::Test) {
            // Inside `[[ … ]]` everything up to the closing `]]` belongs to the test.
            if kind == Kind::Word && word_text(text).as_ref() == b"]]" {
                self.frames.pop();
                self.state = State::Compound;
            }
            return Ok(Step::Other);
        }
        match kind {
            Kind::Comment | Kind::HeredocBody => Ok(Step::Other),
            Kind::Word => self.word(text),
            Kind::Arith => match self.state {
                State::Start { .. } | State::Time => {
                    self.state = State::Compound;
                    Ok(Step::Other)
                }
                State::ForName => {
                    self.state = State::ForIn;
                    Ok(Step::Other)
                }
                _ => Err(Bail),
            },
            Kind::Redirect { .. } => {
                self.state = match self.state {
                    State::Start { .. } | State::Time | State::Prefix => State::Prefix,
                    State::Args { words, .. } => State::Args { words, name: false },
                    State::Compound => State::Compound,
                    _ => return Err(Bail),
                };
                Ok(Step::Other)
            }
            Kind::Op(op) => self.operator(op),
        }
    }

    fn word(&mut self, raw: &[u8]) -> Scan<Step> {
        let text = word_text(raw);
        let text = text.as_ref();
        match self.state {
            State::Start { .. } | State::FunctionBody => self.command_word(text),
            State::Time => {
                if text == b"-p" {
                    self.state = State::Start { required: false };
                    Ok(Step::Other)
                } else {
                    self.command_word(text)
                }
            }
            State::Prefix => {
                if assignment_prefix(text).is_none() {
                    self.state = State::Args {
                        words: 2,
                        name: false,
                    };
                }
                Ok(Step::Other)
            }
            State::Args { words, .. } => {
                self.state = State::Args {
                    words: words.saturating_add(1),
                    name: false,
                };
                Ok(Step::Other)
            }
            // After `fi`, `done`, `esac`, `}` or `)` bash still recognises reserved words, so
            // `if (a) then b; fi done` closes both; any other word is a syntax error.
            State::Compound
                if matches!(
                    text,
                    b"}" | b"fi" | b"done" | b"esac" | b"then" | b"do" | b"else" | b"elif"
                ) =>
            {
                self.command_word(text)
            }
            State::FunctionParen | State::Compound => Err(Bail),
            State::FunctionName => {
                self.state = State::FunctionBody;
                Ok(Step::Other)
            }
            State::ForName => {
                if !is_name(text) {
                    return Err(Bail);
                }
                self.state = State::ForIn;
                Ok(Step::Other)
            }
            State::ForIn => match text {
                b"in" => {
                    self.state = State::ForWords;
                    Ok(Step::Other)
                }
                b"do" => {
                    self.state = State::Start { required: true };
                    Ok(Step::Other)
                }
                _ => Err(Bail),
            },
            State::ForWords => Ok(Step::Other),
            State::CaseSubject => {
                self.state = State::CaseIn;
                Ok(Step::Other)
            }
            State::CaseIn => {
                if text != b"in" {
                    return Err(Bail);
                }
                self.state = State::CasePattern {
                    need_word: true,
                    any: false,
                };
                Ok(Step::Other)
            }
            State::CasePattern { any, need_word } => {
                if !any && text == b"esac" {
                    self.close(|frame| matches!(frame, Frame::Case { .. }))?;
                    return Ok(Step::Other);
                }
                if !need_word {
                    return Err(Bail);
                }
                self.state = State::CasePattern {
                    need_word: false,
                    any: true,
                };
                Ok(Step::Other)
            }
        }
    }

    /// A word where a command may start: a reserved word, an assignment or the command name.
    fn command_word(&mut self, text: &[u8]) -> Scan<Step> {
        let open = |machine: &mut Self, frame: Frame, state: State| {
            machine.frames.push(frame);
            machine.state = state;
            Ok(Step::Other)
        };
        let required = State::Start { required: true };
        let top = self.frames.last().copied();
        if self.state == State::FunctionBody
            && !matches!(
                text,
                b"{" | b"if" | b"while" | b"until" | b"for" | b"select" | b"case" | b"[["
            )
        {
            // A function body must be a compound command.
            return Err(Bail);
        }
        match text {
            b"{" => open(self, Frame::Brace, required),
            b"}" => self
                .close(|frame| frame == Frame::Brace)
                .map(|()| Step::Other),
            b"if" => open(self, Frame::If, required),
            b"then" | b"elif" | b"else" if top == Some(Frame::If) => {
                self.state = required;
                Ok(Step::Other)
            }
            b"fi" => self.close(|frame| frame == Frame::If).map(|()| Step::Other),
            b"while" | b"until" => open(self, Frame::Loop, required),
            b"for" | b"select" => open(self, Frame::Loop, State::ForName),
            b"do" if top == Some(Frame::Loop) => {
                self.state = required;
                Ok(Step::Other)
            }
            b"done" => self
                .close(|frame| frame == Frame::Loop)
                .map(|()| Step::Other),
            b"case" => open(self, Frame::Case { body: false }, State::CaseSubject),
            b"esac" if top == Some(Frame::Case { body: true }) => self
                .close(|frame| matches!(frame, Frame::Case { .. }))
                .map(|()| Step::Other),
            b"[[" => open(self, Frame::Test, State::Compound),
            b"!" => {
                self.state = required;
                Ok(Step::Other)
            }
            b"time" if self.state != State::Time => {
                self.state = State::Time;
                Ok(Step::Other)
            }
            b"function" => {
                self.state = State::FunctionName;
                Ok(Step::Other)
            }
            // Reserved words out of place, and constructs this lexer does not follow.
            b"then" | b"elif" | b"else" | b"do" | b"esac" | b"in" | b"]]" | b"coproc" => Err(Bail),
            _ => {
                self.state = if assignment_prefix(text).is_some() {
                    State::Prefix
                } else {
                    State::Args {
                        words: 1,
                        name: is_name(text) || text.iter().all(|&b| is_name_char(b) || b == b'-'),
                    }
                };
                Ok(Step::Other)
            }
        }
    }

    /// Closes the innermost frame, which must satisfy `is`; the closing token is followed by
    /// redirections or an operator.
    fn close(&mut self, is: impl Fn(Frame) -> bool) -> Scan<()> {
        match self.frames.last() {
            Some(&frame) if is(frame) => {
                self.frames.pop();
                self.state = State::Compound;
                Ok(())
            }
            _ => Err(Bail),
        }
    }

    fn operator(&mut self, op: Op) -> Scan<Step> {
        let in_command = matches!(
            self.state,
            State::Prefix | State::Args { .. } | State::Compound | State::Time
        );
        match op {
            Op::Newline => match self.state {
                State::Prefix | State::Args { .. } | State::Compound | State::Time => {
                    self.state = State::Start { required: false };
                    Ok(Step::Separator)
                }
                State::Start { .. }
                | State::FunctionBody
                | State::CaseIn
                | State::CasePattern { any: false, .. } => Ok(Step::Other),
                State::ForIn | State::ForWords => {
                    self.state = State::Start { required: true };
                    Ok(Step::Other)
                }
                _ => Err(Bail),
            },
            Op::Semi | Op::Amp => match self.state {
                _ if in_command => {
                    self.state = State::Start { required: false };
                    Ok(Step::Separator)
                }
                State::ForIn | State::ForWords if op == Op::Semi => {
                    self.state = State::Start { required: true };
                    Ok(Step::Other)
                }
                _ => Err(Bail),
            },
            Op::Pipe
                if self.state
                    == (State::CasePattern {
                        need_word: false,
                        any: true,
                    }) =>
            {
                self.state = State::CasePattern {
                    need_word: true,
                    any: true,
                };
                Ok(Step::Other)
            }
            Op::AndIf | Op::OrIf | Op::Pipe | Op::PipeAmp => {
                if !in_command {
                    return Err(Bail);
                }
                self.state = State::Start { required: true };
                Ok(Step::Other)
            }
            Op::CaseEnd => {
                let ends_item = in_command || self.state == State::Start { required: false };
                match self.frames.last_mut() {
                    Some(Frame::Case { body }) if *body && ends_item => {
                        *body = false;
                        self.state = State::CasePattern {
                            need_word: true,
                            any: false,
                        };
                        Ok(Step::Other)
                    }
                    _ => Err(Bail),
                }
            }
            Op::LParen => match self.state {
                State::Start { .. } => {
                    self.frames.push(Frame::Subshell);
                    self.state = State::Start { required: true };
                    Ok(Step::Other)
                }
                State::Args {
                    words: 1,
                    name: true,
                }
                | State::FunctionBody => {
                    self.state = State::FunctionParen;
                    Ok(Step::Other)
                }
                State::CasePattern {
                    need_word: true,
                    any: false,
                } => Ok(Step::Other),
                _ => Err(Bail),
            },
            Op::RParen => match self.state {
                State::FunctionParen => {
                    self.state = State::FunctionBody;
                    Ok(Step::Other)
                }
                State::CasePattern {
                    need_word: false,
                    any: true,
                } => {
                    if let Some(Frame::Case { body }) = self.frames.last_mut() {
                        *body = true;
                    }
                    self.state = State::Start { required: false };
                    Ok(Step::Other)
                }
                State::Start { required: false }
                | State::Prefix
                | State::Args { .. }
                | State::Compound
                | State::Time => match self.frames.last() {
                    Some(Frame::Subshell) => {
                        self.frames.pop();
                        self.state = State::Compound;
                        Ok(Step::Other)
                    }
                    None if self.nested => Ok(Step::EndOfNested),
                    _ => Err(Bail),
                },
                _ => Err(Bail),
            },
        }
    }
}

/// What a token did, as far as the caller cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// A newline, `;` or `&` that ends a list element.
    Separator,
    /// The `)` that ends a nested program.
    EndOfNested,
    /// Anything else.
    Other,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Renders the tokens as `text · text`, a token inside a compound command prefixed with its
    /// depth (`1:x`), the first token of the last pipeline with `▸`, a newline as `⏎`.
    fn render(src: &str) -> String {
        let Ok(program) = tokenize(src) else {
            return "BAIL".to_owned();
        };
        let mut parts = Vec::new();
        for (i, token) in program.tokens.iter().enumerate() {
            let mut part = String::new();
            if program.last_pipeline() == Some(i) {
                part.push('▸');
            }
            if token.depth > 0 {
                part = format!("{part}{}:", token.depth);
            }
            part.push_str(&src[token.start..token.end].replace('\n', "⏎"));
            parts.push(part);
        }
        parts.join(" · ")
    }

    #[track_caller]
    fn check(src: &str, expect: &str) {
        assert_eq!(render(src), expect, "source: {src:?}");
    }

    #[test]
    fn operators_and_lists() {
        check("a | b", "▸a · | · b");
        check("a|b", "▸a · | · b");
        check("a || b", "a · || · ▸b");
        check("a |& b", "▸a · |& · b");
        check("a && b; c & d\ne", "a · && · b · ; · c · & · d · ⏎ · ▸e");
        check("a |\n\n b", "▸a · | · ⏎ · ⏎ · b");
        check("a &&\n b", "a · && · ⏎ · ▸b");
        check("a;", "▸a · ;");
        check("", "");
        check("\n\n", "⏎ · ⏎");
    }

    #[test]
    fn quotes_and_expansions_stay_inside_words() {
        check(
            r#"echo 'x | y' "a;b" $'c\'|d'"#,
            r#"▸echo · 'x | y' · "a;b" · $'c\'|d'"#,
        );
        check(r#"echo "$'" | x"#, r#"▸echo · "$'" · | · x"#);
        check(
            "echo $(a | b) `c | d` ${x:-|} $((1|2)) $[1|2]",
            "▸echo · $(a | b) · `c | d` · ${x:-|} · $((1|2)) · $[1|2]",
        );
        check("echo a\\|b \\; c", "▸echo · a\\|b · \\; · c");
        check(
            "echo \"a `b \\` | c` d\" | e",
            "▸echo · \"a `b \\` | c` d\" · | · e",
        );
        check("echo ${x:-'}'} | y", "▸echo · ${x:-'}'} · | · y");
        check("echo \"${x#'}'}\" | y", "▸echo · \"${x#'}'}\" · | · y");
        check("echo ${a[${i}]}x|y", "▸echo · ${a[${i}]}x · | · y");
        check(
            "echo $(case x in a) b;; (c|d) e;;& esac) | f",
            "▸echo · $(case x in a) b;; (c|d) e;;& esac) · | · f",
        );
        check("echo $((a) | b) | c", "▸echo · $((a) | b) · | · c");
        check(
            "echo $(echo ')' \") # (\" # )\n) | x",
            "▸echo · $(echo ')' \") # (\" # )⏎) · | · x",
        );
        check(
            "x=$(cat <<EOF\na)\nEOF\n) | y",
            "▸x=$(cat <<EOF⏎a)⏎EOF⏎) · | · y",
        );
        check(
            "diff <(a | b) >(c) x<(d)",
            "▸diff · <(a | b) · >(c) · x<(d)",
        );
        check(
            "ls @(a|b) !(c) x*(y) | z",
            "▸ls · @(a|b) · !(c) · x*(y) · | · z",
        );
        check(
            "a=(x | y) b+=([k]=v) c[1]=(z) | d",
            "▸a=(x | y) · b+=([k]=v) · c[1]=(z) · | · d",
        );
        check("a#b | c", "▸a#b · | · c");
    }

    #[test]
    fn comments() {
        check("a # b | c\nd", "a · # b | c · ⏎ · ▸d");
        check("a | # b ; c\nd", "▸a · | · # b ; c · ⏎ · d");
        check("# only", "# only");
        check("a #", "▸a · #");
    }

    #[test]
    fn redirections() {
        check(
            "a 2>&1 >log <in 3<>f &>all &>>x >|y",
            "▸a · 2>&1 · >log · <in · 3<>f · &>all · &>>x · >|y",
        );
        check(
            "a > 'my file' 2> /dev/null | b",
            "▸a · > 'my file' · 2> /dev/null · | · b",
        );
        check(
            "a {fd}>f 12>&- <<<'x | y' | b",
            "▸a · {fd}>f · 12>&- · <<<'x | y' · | · b",
        );
        check("a 2>&1", "▸a · 2>&1");
        check(">f a", "▸>f · a");
        let kinds = |src: &str| {
            tokenize(src)
                .map(|p| {
                    p.tokens
                        .iter()
                        .filter_map(|t| match t.kind {
                            Kind::Redirect {
                                touches_stdout_or_stderr,
                            } => Some(touches_stdout_or_stderr),
                            _ => None,
                        })
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        };
        assert_eq!(
            kinds("a >f 1>f 2>f >>f >|f >&f &>f &>>f 1<&0 2>&1"),
            [true, true, true, true, true, true, true, true, true, true]
        );
        assert_eq!(kinds("a <f 0<f 3>f <&3 <>f {fd}>f {x}>&1 <<<w"), [false; 8]);
    }

    #[test]
    fn heredocs() {
        check(
            "cat <<EOF | x\nbody | y\nEOF\nz",
            "cat · <<EOF · | · x · ⏎ · body | y⏎EOF⏎ · ▸z",
        );
        check(
            "cat <<-'E O'\n\t$(\n\tE O\nz",
            "cat · <<-'E O' · ⏎ · \t$(⏎\tE O⏎ · ▸z",
        );
        check(
            "cat <<A <<\\B\na\nA\nb\nB\nz",
            "cat · <<A · <<\\B · ⏎ · a⏎A⏎b⏎B⏎ · ▸z",
        );
        check("cat <<EOF\nx\nEOF", "▸cat · <<EOF · ⏎ · x⏎EOF");
        check("cat <<EOF\nx\n EOF", "BAIL");
        check("cat <<EOF", "BAIL");
        check("cat <<", "BAIL");
        check("cat <<E; echo $(\nx\n)\nE\n", "BAIL");
    }

    #[test]
    fn compound_commands_nest() {
        check("(a | b) | c", "▸( · 1:a · 1:| · 1:b · ) · | · c");
        check("{ a; } | b", "▸{ · 1:a · 1:; · } · | · b");
        check(
            "if a; then b | c; fi | d",
            "▸if · 1:a · 1:; · 1:then · 1:b · 1:| · 1:c · 1:; · fi · | · d",
        );
        check(
            "while a; do b; done",
            "▸while · 1:a · 1:; · 1:do · 1:b · 1:; · done",
        );
        check(
            "for x in a b; do c; done",
            "▸for · 1:x · 1:in · 1:a · 1:b · 1:; · 1:do · 1:c · 1:; · done",
        );
        check(
            "for ((i=0;i<2;i++)); do c; done",
            "▸for · 1:((i=0;i<2;i++)) · 1:; · 1:do · 1:c · 1:; · done",
        );
        check(
            "case x in (a|b) c;; d) e;& *) ;; esac | f",
            "▸case · 1:x · 1:in · 1:( · 1:a · 1:| · 1:b · 1:) · 1:c · 1:;; · 1:d · 1:) · 1:e · 1:;& · 1:* · 1:) · 1:;; · esac · | · f",
        );
        check(
            "case x in a) echo esac;; esac",
            "▸case · 1:x · 1:in · 1:a · 1:) · 1:echo · 1:esac · 1:;; · esac",
        );
        check(
            "[[ a < b && ( c || d ) ]] | e",
            "▸[[ · 1:a · 1:< b · 1:&& · 1:( · 1:c · 1:|| · 1:d · 1:) · ]] · | · e",
        );
        check("(( x = 1 | 2 )) | y", "▸(( x = 1 | 2 )) · | · y");
        check("((a) ) | y", "▸( · 1:( · 2:a · 1:) · ) · | · y");
        check("f() { a; } | b", "▸f · ( · ) · { · 1:a · 1:; · } · | · b");
        check(
            "function g { a; }; h",
            "function · g · { · 1:a · 1:; · } · ; · ▸h",
        );
        check("time -p a | b", "▸time · -p · a · | · b");
        check("! a | b", "▸! · a · | · b");
        check(
            "i\\\nf a; then b; fi",
            "▸i\\⏎f · 1:a · 1:; · 1:then · 1:b · 1:; · fi",
        );
        check("echo if then fi | x", "▸echo · if · then · fi · | · x");
        check("A=1 if", "▸A=1 · if");
        check("{a,b} }", "▸{a,b} · }");
        check(
            "if (a) then b; fi",
            "▸if · 1:( · 2:a · 1:) · 1:then · 1:b · 1:; · fi",
        );
        check(
            "while a; do if b; then c; fi done",
            "▸while · 1:a · 1:; · 1:do · 1:if · 2:b · 2:; · 2:then · 2:c · 2:; · 1:fi · done",
        );
        check("{ (a) }", "▸{ · 1:( · 2:a · 1:) · }");
        check("done < <(a | b) 2> >(c)", "BAIL");
        check(
            "while a; do b; done < <(c | d) | e",
            "▸while · 1:a · 1:; · 1:do · 1:b · 1:; · done · < <(c | d) · | · e",
        );
        check(
            "{ a; } >f 2>&1 | b",
            "▸{ · 1:a · 1:; · } · >f · 2>&1 · | · b",
        );
        for src in [
            "{ a; } b",
            "(a) b",
            "if a; then b; fi c",
            "[[ a ]] b",
            "((1)) b",
            "fi if",
            "(a) (b)",
        ] {
            check(src, "BAIL");
        }
    }

    #[test]
    fn bails_on_what_it_does_not_understand_or_bash_rejects() {
        for src in [
            "echo 'a",
            "echo \"a",
            "echo $(a",
            "echo ${a",
            "echo `a",
            "echo $'a",
            "a )",
            "( a",
            "( )",
            "fi",
            "then",
            "a |",
            "a &&",
            ";",
            "a ;;",
            "| a",
            "a | | b",
            "a > ",
            "a > | b",
            "a=(",
            "coproc x",
            "case x in a) b;;",
            "for x in a; do b; ",
            "if a; then b",
            "{ a; ",
            "[[ a",
            "f() a",
            "{ a }",
            "echo $( a; ",
        ] {
            check(src, "BAIL");
        }
    }

    #[test]
    fn retried_substitutions_stay_cheap() {
        // Each `$((a) | …)` first looks like arithmetic, then is rescanned as `$( (a) | …)`.
        let nest = |depth: usize| {
            let mut command = "x".to_owned();
            for _ in 0..depth {
                command = format!("$((a) | {command})");
            }
            format!("echo {command} | y")
        };
        let shallow = nest(8);
        let word = &shallow["echo ".len()..shallow.len() - " | y".len()];
        check(&shallow, &format!("▸echo · {word} · | · y"));
        // Rescanning every level again on every retry would take 2^60 scans.
        let deep = nest(60);
        let word = &deep["echo ".len()..deep.len() - " | y".len()];
        check(&deep, &format!("▸echo · {word} · | · y"));
    }

    #[test]
    fn deep_nesting_bails_without_overflowing_the_stack() {
        let deep = "$(".repeat(100_000);
        check(&deep, "BAIL");
        let deep = "\"$(".repeat(50_000);
        check(&deep, "BAIL");
        let deep = "${".repeat(100_000);
        check(&deep, "BAIL");
        let deep = "$[".repeat(100_000);
        check(&deep, "BAIL");
        let parens = "(".repeat(100_000);
        check(&parens, "BAIL");
        let nested = format!("{}a{}", "$(".repeat(50), ")".repeat(50));
        check(&nested, &format!("▸{nested}"));
    }
}
