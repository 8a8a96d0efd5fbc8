//! The lexer's cursor: reads the next top-level token (operators, redirections, comments,
//! heredoc bodies, words) and owns the work budget and nesting limit that keep hostile input
//! cheap. The scanners that find where a word, quote or expansion ends are in `words.rs`.

use std::cell::Cell;
use std::collections::HashMap;

use super::token::{Kind, Op, WordRole};
use super::{Bail, Scan};

/// Work budget: byte inspections allowed per input byte, plus a constant. Ordinary commands
/// need a few per byte.
const WORK_PER_BYTE: usize = 64;
const WORK_BASE: usize = 4096;

/// Deepest nesting of `$( )`, quotes and groups the lexer follows before giving up. Keeps the
/// recursion far from the stack limit on hostile input.
const MAX_NESTING: usize = 200;

/// A heredoc whose body has not been read yet.
pub(super) struct PendingHeredoc {
    pub(super) delimiter: Vec<u8>,
    pub(super) strip_tabs: bool,
}

pub(super) struct Lexer<'a> {
    pub(super) src: &'a [u8],
    pub(super) pos: usize,
    pub(super) heredocs: Vec<PendingHeredoc>,
    /// Heredocs below this index belong to an enclosing program: a newline inside a nested
    /// program while they are pending is not understood.
    pub(super) heredoc_floor: usize,
    /// A heredoc body read right after a newline, returned as the next token.
    pub(super) queued: Option<(Kind, usize, usize)>,
    pub(super) nesting: usize,
    /// Bytes inspected so far, and the most allowed: retries (`$((` that turns out to be `$( (`)
    /// rescan text, and hostile nesting must not make that exponential.
    pub(super) steps: Cell<usize>,
    pub(super) budget: usize,
    /// Results of `((`/`$((` arithmetic scans and of nested program scans, by start position, so
    /// that a retry never rescans what was already understood.
    pub(super) arith_memo: HashMap<usize, Option<usize>>,
    pub(super) subprogram_memo: HashMap<usize, usize>,
}

/// What the state machine tells the lexer about the position of the next token.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Position {
    /// Where a command may start: `((` opens an arithmetic command.
    CommandStart,
    /// Anywhere else.
    Other,
}

pub(super) fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// Bytes that end an unquoted word.
pub(super) fn is_word_end(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\n' | b'|' | b'&' | b';' | b'(' | b')' | b'<' | b'>'
    )
}

pub(super) fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

pub(super) fn is_name_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Whether `word` is a shell name (`[A-Za-z_][A-Za-z0-9_]*`).
pub(super) fn is_name(word: &[u8]) -> bool {
    word.first().is_some_and(|&b| is_name_start(b)) && word.iter().all(|&b| is_name_char(b))
}

/// Whether `word` starts like an assignment: `NAME=`, `NAME+=`, `NAME[…]=`, `NAME[…]+=`.
/// Returns the length of the `NAME…=` prefix.
pub(super) fn assignment_prefix(word: &[u8]) -> Option<usize> {
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

impl<'a> Lexer<'a> {
    /// A lexer at the start of `src`, with a work budget proportional to its length.
    pub(super) fn new(src: &'a str) -> Self {
        Lexer {
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
        }
    }

    /// Whether the scan inspected more bytes than its budget allows.
    pub(super) fn over_budget(&self) -> bool {
        self.steps.get() > self.budget
    }
}

impl Lexer<'_> {
    /// The byte at `i`. Every inspection counts against the work budget; once it is spent the
    /// input looks finished, so the scan ends quickly, and [`tokenize`] reports a bail.
    pub(super) fn at(&self, i: usize) -> Option<u8> {
        let steps = self.steps.get() + 1;
        self.steps.set(steps);
        if steps > self.budget {
            return None;
        }
        self.src.get(i).copied()
    }

    /// Runs `scan` one nesting level deeper; bails once the nesting is too deep.
    pub(super) fn nested<T>(&mut self, scan: impl FnOnce(&mut Self) -> Scan<T>) -> Scan<T> {
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
    pub(super) fn next(&mut self, position: Position) -> Scan<Option<(Kind, usize, usize)>> {
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
        // The grammar machine gives the word its real role.
        Ok(Some((Kind::Word(WordRole::Argument), start, end)))
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
