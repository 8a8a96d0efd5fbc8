//! Byte scanners: given where a word, quote, expansion or balanced group starts, they return
//! where it ends. A `$( )` or `<( )` inside is handed to the grammar machine, so a `)` that
//! closes a `case` pattern does not end it early.

use super::grammar::Machine;
use super::scan::{Lexer, assignment_prefix, is_word_end};
use super::{Bail, Scan};

impl Lexer<'_> {
    /// Scans a word starting at `start`; returns its end.
    pub(super) fn scan_word(&mut self, start: usize) -> Scan<usize> {
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
    pub(super) fn single_quoted(&self, p: usize) -> Scan<usize> {
        memchr::memchr(b'\'', &self.src[p..])
            .map(|i| p + i + 1)
            .ok_or(Bail)
    }

    /// After an opening `quote` at `p - 1` of a string where a backslash escapes the next byte
    /// (`` `…` ``, and `$'…'` where `\'` does not end the string): returns the position after
    /// the closing `quote`.
    pub(super) fn escaped_quoted(&self, mut p: usize, quote: u8) -> Scan<usize> {
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
    pub(super) fn balanced(
        &mut self,
        mut p: usize,
        open: u8,
        close: u8,
        comments: bool,
    ) -> Scan<usize> {
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
    pub(super) fn arith(&mut self, p: usize) -> Scan<Option<usize>> {
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
    pub(super) fn subprogram(&mut self, p: usize) -> Scan<usize> {
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
