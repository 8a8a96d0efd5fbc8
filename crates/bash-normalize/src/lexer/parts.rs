//! Word decomposition: the pieces of one word (text, quotes, escapes, expansions, substitutions)
//! and the programs substituted into it, for callers that need what a word stands for. It walks
//! the word with the same scanners that found the word's end, so both agree on where a quote or
//! a substitution ends.

use std::borrow::Cow;

use super::scan::{Lexer, is_name_char, is_name_start};
use super::{Bail, Scan};

/// What a piece of a word is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PartKind {
    /// Text that stands for itself: unquoted text, or the text of `"…"` between its expansions.
    Literal,
    /// A backslash and the byte it escapes: stands for that byte (a line continuation, for
    /// nothing). Inside double quotes only `\$`, `` \` ``, `\"`, `\\` and a line continuation are
    /// escapes; any other backslash is literal text there.
    Escape,
    /// `'…'`, quotes included: stands for the text between them.
    SingleQuoted,
    /// `$'…'`: ANSI-C quoting, whose value depends on its escapes.
    AnsiC,
    /// `$"…"`: a string translated at run time.
    Localized,
    /// `$name`, `$1`, `$@` and the other special parameters, `${…}`.
    Parameter,
    /// `$(( … ))` and `$[ … ]`.
    Arithmetic,
    /// `$( … )`, `` `…` ``, `<( … )`, `>( … )`, or bash 5.3's `${ …; }` and `${| …; }`: see
    /// [`Word::substitutions`] for the program.
    Substitution,
    /// An extglob group (`@(a|b)`, the `(…)` after `@`, `!`, `*`, `+` or `?`) or the `(…)` of an
    /// array assignment.
    Group,
}

/// A piece of a word: its kind, its byte span in the word, and whether it sits inside double
/// quotes (or in a here-document body).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WordPart {
    /// What it is.
    pub kind: PartKind,
    /// Where it starts.
    pub start: usize,
    /// Where it ends (exclusive).
    pub end: usize,
    /// Inside `"…"` (or a here-document body): glob characters and braces are not special.
    pub quoted: bool,
}

/// How a program is substituted into a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SubstitutionKind {
    /// `$( … )`, and bash 5.3's `${ …; }` and `${| …; }`
    Command,
    /// `` `…` `` (backslashes inside still escape `$`, `` ` `` and `\`: see
    /// [`Substitution::program`]).
    Backquote,
    /// `<( … )` or `>( … )`
    Process,
}

/// A program substituted into a word: its kind and the byte span of its text (delimiters
/// excluded).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Substitution {
    /// How it is substituted.
    pub kind: SubstitutionKind,
    /// Where its text starts.
    pub start: usize,
    /// Where its text ends (exclusive).
    pub end: usize,
    /// Inside `"…"`: in backquotes, `\"` then stands for `"`.
    pub quoted: bool,
}

impl Substitution {
    /// The program as the shell runs it, given the text the spans refer to: the text between the
    /// delimiters, with backquotes' escapes removed (`` \` ``, `\$`, `\\`, and `\"` inside double
    /// quotes).
    pub fn program<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let inner = &text[self.start..self.end];
        if self.kind != SubstitutionKind::Backquote || !inner.contains('\\') {
            return Cow::Borrowed(inner);
        }
        let mut out = String::with_capacity(inner.len());
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some(next @ ('$' | '`' | '\\')) => out.push(next),
                Some('"') if self.quoted => out.push('"'),
                Some(next) => {
                    out.push('\\');
                    out.push(next);
                }
                None => out.push('\\'),
            }
        }
        Cow::Owned(out)
    }
}

/// A word taken apart: its pieces in order, and every program substituted anywhere in it
/// (inside quotes, `${ }`, arithmetic and groups too), in order. Programs nested inside those
/// programs are not listed: take the program apart in turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Word {
    /// The pieces, in order. Quote characters of `"…"` belong to no piece; `""` has none.
    pub parts: Vec<WordPart>,
    /// The programs substituted into the word.
    pub substitutions: Vec<Substitution>,
}

/// What kind of text [`parse_word`](crate::syntax::parse_word) takes apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Context {
    /// One word as the lexer found it (a word token, or the target of a redirection).
    Word,
    /// A here-document body whose delimiter was not quoted: expansions happen, quotes do not.
    HeredocBody,
    /// An arithmetic command `(( … ))`: only the substitutions inside are found (`parts` is
    /// empty).
    Arithmetic,
}

/// Bytes with a meaning inside an unquoted word; a word without them is one literal piece.
fn is_special(b: u8) -> bool {
    matches!(b, b'\\' | b'\'' | b'"' | b'`' | b'$' | b'(' | b'<' | b'>')
}

/// Takes `text` apart (see [`Context`]).
pub(crate) fn parse(text: &str, context: Context) -> Scan<Word> {
    if context == Context::Word && !text.bytes().any(is_special) {
        let parts = if text.is_empty() {
            Vec::new()
        } else {
            vec![WordPart {
                kind: PartKind::Literal,
                start: 0,
                end: text.len(),
                quoted: false,
            }]
        };
        return Ok(Word {
            parts,
            substitutions: Vec::new(),
        });
    }
    let mut walk = Walk {
        lexer: Lexer::new(text),
        word: Word::default(),
        silent: 0,
    };
    let end = text.len();
    match context {
        Context::Word => walk.unquoted(0, end)?,
        Context::HeredocBody => {
            walk.quoted(0, end, false)?;
        }
        Context::Arithmetic => walk.free(0, end, false)?,
    }
    if walk.lexer.over_budget() {
        return Err(Bail);
    }
    Ok(walk.word)
}

struct Walk<'a> {
    lexer: Lexer<'a>,
    word: Word,
    /// Above 0 inside a piece that is recorded whole (`${ }`, `$"…"`, groups): only the
    /// substitutions inside are recorded.
    silent: usize,
}

impl Walk<'_> {
    fn at(&self, i: usize) -> Option<u8> {
        self.lexer.at(i)
    }

    /// The end of the escape whose backslash is at `p`: after the whole character it escapes
    /// (spans stay on character boundaries).
    fn escape_end(&self, p: usize) -> usize {
        let len = match self.at(p + 1) {
            None => 0,
            Some(b) if b < 0xC0 => 1,
            Some(b) if b < 0xE0 => 2,
            Some(b) if b < 0xF0 => 3,
            Some(_) => 4,
        };
        (p + 1 + len).min(self.lexer.src.len())
    }

    fn part(&mut self, kind: PartKind, start: usize, end: usize, quoted: bool) {
        if self.silent == 0 && start < end {
            self.word.parts.push(WordPart {
                kind,
                start,
                end,
                quoted,
            });
        }
    }

    fn substitution(&mut self, kind: SubstitutionKind, start: usize, end: usize, quoted: bool) {
        self.word.substitutions.push(Substitution {
            kind,
            start,
            end,
            quoted,
        });
    }

    /// An unquoted word from `lo` to `hi`.
    fn unquoted(&mut self, lo: usize, hi: usize) -> Scan<()> {
        let mut p = lo;
        let mut literal = lo;
        while p < hi {
            let Some(b) = self.at(p) else {
                return Err(Bail);
            };
            let (kind, end) = match b {
                b'\\' => (PartKind::Escape, self.escape_end(p).min(hi)),
                b'\'' => (PartKind::SingleQuoted, self.lexer.single_quoted(p + 1)?),
                b'"' => {
                    self.part(PartKind::Literal, literal, p, false);
                    p = self.quoted(p + 1, hi, true)?;
                    literal = p;
                    continue;
                }
                b'`' => (PartKind::Substitution, self.backquote(p, false)?),
                b'$' => {
                    let Some(found) = self.dollar(p, false)? else {
                        p += 1;
                        continue;
                    };
                    found
                }
                b'<' | b'>' if self.at(p + 1) == Some(b'(') => {
                    (PartKind::Substitution, self.process(p)?)
                }
                b'(' if p > lo => {
                    let end = self.lexer.balanced(p + 1, b'(', b')', true)?;
                    self.free(p + 1, end - 1, true)?;
                    (PartKind::Group, end)
                }
                _ => {
                    p += 1;
                    continue;
                }
            };
            self.part(PartKind::Literal, literal, p, false);
            self.part(kind, p, end, false);
            p = end;
            literal = end;
        }
        self.part(PartKind::Literal, literal, p, false);
        Ok(())
    }

    /// Double-quoted text from `p` (after the opening quote) to the closing quote when
    /// `closed`, else a here-document body up to `hi`. Returns the position after it.
    fn quoted(&mut self, mut p: usize, hi: usize, closed: bool) -> Scan<usize> {
        let mut literal = p;
        loop {
            if p >= hi {
                if closed {
                    return Err(Bail);
                }
                self.part(PartKind::Literal, literal, hi, true);
                return Ok(hi);
            }
            let Some(b) = self.at(p) else {
                return Err(Bail);
            };
            let (kind, end) = match b {
                b'"' if closed => {
                    self.part(PartKind::Literal, literal, p, true);
                    return Ok(p + 1);
                }
                b'\\' => match self.at(p + 1) {
                    Some(b'$' | b'`' | b'\\' | b'\n') => (PartKind::Escape, p + 2),
                    Some(b'"') if closed => (PartKind::Escape, p + 2),
                    // Literal text: the next byte is no quote, so the run goes on.
                    _ => {
                        p = self.escape_end(p).min(hi);
                        continue;
                    }
                },
                b'`' => (PartKind::Substitution, self.backquote(p, true)?),
                b'$' => {
                    let Some(found) = self.dollar(p, true)? else {
                        p += 1;
                        continue;
                    };
                    found
                }
                _ => {
                    p += 1;
                    continue;
                }
            };
            self.part(PartKind::Literal, literal, p, true);
            self.part(kind, p, end, true);
            p = end;
            literal = end;
        }
    }

    /// Text recorded whole from `lo` to `hi` (inside `${ }`, arithmetic, groups): records only
    /// the substitutions in it. Quotes are taken as plain bytes, so a substitution inside
    /// single quotes there is found too (stricter than bash, never laxer); `process`: whether
    /// `<( )` and `>( )` are substitutions here (not in arithmetic, where `<` compares).
    fn free(&mut self, lo: usize, hi: usize, process: bool) -> Scan<()> {
        self.silent += 1;
        let mut p = lo;
        while p < hi {
            let Some(b) = self.at(p) else {
                return Err(Bail);
            };
            p = match b {
                b'\\' => p + 2,
                b'`' => self.backquote(p, false)?,
                b'$' => match self.dollar(p, false)? {
                    Some((_, end)) => end,
                    None => p + 1,
                },
                b'<' | b'>' if process && self.at(p + 1) == Some(b'(') => self.process(p)?,
                _ => p + 1,
            };
        }
        self.silent -= 1;
        Ok(())
    }

    /// A backquote at `p`: records the program; returns the position after the closing one.
    fn backquote(&mut self, p: usize, quoted: bool) -> Scan<usize> {
        let end = self.lexer.escaped_quoted(p + 1, b'`')?;
        self.substitution(SubstitutionKind::Backquote, p + 1, end - 1, quoted);
        Ok(end)
    }

    /// `<(` or `>(` at `p`: records the program; returns the position after the `)`.
    fn process(&mut self, p: usize) -> Scan<usize> {
        let end = self.lexer.subprogram(p + 2)?;
        self.substitution(SubstitutionKind::Process, p + 2, end - 1, false);
        Ok(end)
    }

    /// A `$` at `p`: the kind and end of the expansion it starts, `None` for a `$` that stands
    /// for itself. Records the substitutions inside.
    fn dollar(&mut self, p: usize, quoted: bool) -> Scan<Option<(PartKind, usize)>> {
        let Some(next) = self.at(p + 1) else {
            return Ok(None);
        };
        let found = match next {
            b'\'' if !quoted => (PartKind::AnsiC, self.lexer.escaped_quoted(p + 2, b'\'')?),
            b'"' if !quoted => {
                self.silent += 1;
                let end = self.quoted(p + 2, usize::MAX, true)?;
                self.silent -= 1;
                (PartKind::Localized, end)
            }
            b'{' => {
                let end = self.lexer.balanced(p + 2, b'{', b'}', false)?;
                // bash 5.3's `${ cmd; }` and `${| cmd; }` run `cmd` in the shell itself (older
                // versions reject them): a program either way, never a parameter.
                let program = match self.at(p + 2) {
                    Some(b' ' | b'\t' | b'\n') => Some(p + 2),
                    Some(b'|') => Some(p + 3),
                    _ => None,
                };
                if let Some(start) = program {
                    self.substitution(SubstitutionKind::Command, start, end - 1, quoted);
                    return Ok(Some((PartKind::Substitution, end)));
                }
                self.free(p + 2, end - 1, false)?;
                (PartKind::Parameter, end)
            }
            b'[' => {
                let end = self.lexer.balanced(p + 2, b'[', b']', false)?;
                self.free(p + 2, end - 1, false)?;
                (PartKind::Arithmetic, end)
            }
            b'(' => {
                if self.at(p + 2) == Some(b'(')
                    && let Some(end) = self.lexer.arith(p + 3)?
                {
                    self.free(p + 3, end - 2, false)?;
                    return Ok(Some((PartKind::Arithmetic, end)));
                }
                let end = self.lexer.subprogram(p + 2)?;
                self.substitution(SubstitutionKind::Command, p + 2, end - 1, quoted);
                (PartKind::Substitution, end)
            }
            b if is_name_start(b) => {
                let mut end = p + 2;
                while self.at(end).is_some_and(is_name_char) {
                    end += 1;
                }
                (PartKind::Parameter, end)
            }
            b'0'..=b'9' | b'@' | b'*' | b'#' | b'?' | b'$' | b'!' | b'-' => {
                (PartKind::Parameter, p + 2)
            }
            _ => return Ok(None),
        };
        Ok(Some(found))
    }
}
