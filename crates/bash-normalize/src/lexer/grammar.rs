//! The grammar machine: follows compound commands (`( )`, `{ }`, `if`, loops, `case`, `[[ ]]`,
//! `(( ))`, functions) token by token, so each token gets its nesting depth, each top-level
//! pipeline its first token, and syntax bash rejects ends the scan.

use super::scan::{Lexer, Position, assignment_prefix, is_name, is_name_char};
use super::token::{Kind, Op, Program, Token, WordRole};
use super::{Bail, Scan};

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

pub(super) struct Machine {
    frames: Vec<Frame>,
    state: State,
    /// Scanning a nested program (`$( )`): an unmatched `)` ends it.
    nested: bool,
    /// The next depth-0 command token starts a new pipeline.
    at_list_start: bool,
}

impl Machine {
    pub(super) fn new(nested: bool) -> Self {
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
    pub(super) fn run(&mut self, lexer: &mut Lexer<'_>, mut out: Option<&mut Program>) -> Scan<()> {
        loop {
            let Some((kind, start, end)) = lexer.next(self.position())? else {
                if !lexer.heredocs.is_empty() {
                    // A heredoc operator on the last line, with no body at all.
                    return Err(Bail);
                }
                return self.finish();
            };
            let depth_before = self.frames.len();
            let (step, kind) = self.step(kind, &lexer.src[start..end])?;
            let depth = depth_before.min(self.frames.len());
            if step == Step::EndOfNested {
                return Ok(());
            }
            if let Some(program) = out.as_deref_mut() {
                if step == Step::FunctionParen
                    && let Some(name) = program.tokens.last_mut()
                    && matches!(name.kind, Kind::Word(_))
                {
                    name.kind = Kind::Word(WordRole::FunctionName);
                }
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

    /// Moves the machine past one token; returns what the token did and its kind (a word with
    /// its role).
    fn step(&mut self, kind: Kind, text: &[u8]) -> Scan<(Step, Kind)> {
        if self.frames.last() == Some(&Frame::Test) {
            // Inside `[[ … ]]` everything up to the closing `]]` belongs to the test.
            if let Kind::Word(_) = kind {
                if word_text(text).as_ref() == b"]]" {
                    self.frames.pop();
                    self.state = State::Compound;
                    return Ok((Step::Other, Kind::Word(WordRole::Reserved)));
                }
                return Ok((Step::Other, Kind::Word(WordRole::Test)));
            }
            return Ok((Step::Other, kind));
        }
        let step = match kind {
            Kind::Comment | Kind::HeredocBody => Step::Other,
            Kind::Word(_) => {
                let role = self.word(text)?;
                return Ok((Step::Other, Kind::Word(role)));
            }
            Kind::Arith => match self.state {
                State::Start { .. } | State::Time => {
                    self.state = State::Compound;
                    Step::Other
                }
                State::ForName => {
                    self.state = State::ForIn;
                    Step::Other
                }
                _ => return Err(Bail),
            },
            Kind::Redirect { .. } => {
                self.state = match self.state {
                    State::Start { .. } | State::Time | State::Prefix => State::Prefix,
                    State::Args { words, .. } => State::Args { words, name: false },
                    State::Compound => State::Compound,
                    _ => return Err(Bail),
                };
                Step::Other
            }
            Kind::Op(op) => self.operator(op)?,
        };
        Ok((step, kind))
    }

    /// Moves the machine past a word; returns the word's role.
    fn word(&mut self, raw: &[u8]) -> Scan<WordRole> {
        let text = word_text(raw);
        let text = text.as_ref();
        match self.state {
            State::Start { .. } | State::FunctionBody => self.command_word(text),
            State::Time => {
                if text == b"-p" {
                    self.state = State::Start { required: false };
                    Ok(WordRole::Reserved)
                } else {
                    self.command_word(text)
                }
            }
            State::Prefix => {
                if assignment_prefix(text).is_some() {
                    return Ok(WordRole::Assignment);
                }
                self.state = State::Args {
                    words: 2,
                    name: false,
                };
                Ok(WordRole::CommandName)
            }
            State::Args { words, .. } => {
                self.state = State::Args {
                    words: words.saturating_add(1),
                    name: false,
                };
                Ok(WordRole::Argument)
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
                Ok(WordRole::FunctionName)
            }
            State::ForName => {
                if !is_name(text) {
                    return Err(Bail);
                }
                self.state = State::ForIn;
                Ok(WordRole::LoopVariable)
            }
            State::ForIn => match text {
                b"in" => {
                    self.state = State::ForWords;
                    Ok(WordRole::Reserved)
                }
                b"do" => {
                    self.state = State::Start { required: true };
                    Ok(WordRole::Reserved)
                }
                _ => Err(Bail),
            },
            State::ForWords => Ok(WordRole::LoopWord),
            State::CaseSubject => {
                self.state = State::CaseIn;
                Ok(WordRole::CaseSubject)
            }
            State::CaseIn => {
                if text != b"in" {
                    return Err(Bail);
                }
                self.state = State::CasePattern {
                    need_word: true,
                    any: false,
                };
                Ok(WordRole::Reserved)
            }
            State::CasePattern { any, need_word } => {
                if !any && text == b"esac" {
                    self.close(|frame| matches!(frame, Frame::Case { .. }))?;
                    return Ok(WordRole::Reserved);
                }
                if !need_word {
                    return Err(Bail);
                }
                self.state = State::CasePattern {
                    need_word: false,
                    any: true,
                };
                Ok(WordRole::CasePattern)
            }
        }
    }

    /// A word where a command may start: a reserved word, an assignment or the command name.
    fn command_word(&mut self, text: &[u8]) -> Scan<WordRole> {
        let open = |machine: &mut Self, frame: Frame, state: State| {
            machine.frames.push(frame);
            machine.state = state;
            Ok(WordRole::Reserved)
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
        let reserved = |machine: &mut Self, state: State| {
            machine.state = state;
            Ok(WordRole::Reserved)
        };
        let close = |machine: &mut Self, is: fn(Frame) -> bool| {
            machine.close(is).map(|()| WordRole::Reserved)
        };
        match text {
            b"{" => open(self, Frame::Brace, required),
            b"}" => close(self, |frame| frame == Frame::Brace),
            b"if" => open(self, Frame::If, required),
            b"then" | b"elif" | b"else" if top == Some(Frame::If) => reserved(self, required),
            b"fi" => close(self, |frame| frame == Frame::If),
            b"while" | b"until" => open(self, Frame::Loop, required),
            b"for" | b"select" => open(self, Frame::Loop, State::ForName),
            b"do" if top == Some(Frame::Loop) => reserved(self, required),
            b"done" => close(self, |frame| frame == Frame::Loop),
            b"case" => open(self, Frame::Case { body: false }, State::CaseSubject),
            b"esac" if top == Some(Frame::Case { body: true }) => {
                close(self, |frame| matches!(frame, Frame::Case { .. }))
            }
            b"[[" => open(self, Frame::Test, State::Compound),
            b"!" => reserved(self, required),
            b"time" if self.state != State::Time => reserved(self, State::Time),
            b"function" => reserved(self, State::FunctionName),
            // Reserved words out of place, and constructs this lexer does not follow.
            b"then" | b"elif" | b"else" | b"do" | b"esac" | b"in" | b"]]" | b"coproc" => Err(Bail),
            _ if assignment_prefix(text).is_some() => {
                self.state = State::Prefix;
                Ok(WordRole::Assignment)
            }
            _ => {
                self.state = State::Args {
                    words: 1,
                    name: is_name(text) || text.iter().all(|&b| is_name_char(b) || b == b'-'),
                };
                Ok(WordRole::CommandName)
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
                } => {
                    self.state = State::FunctionParen;
                    Ok(Step::FunctionParen)
                }
                State::FunctionBody => {
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
    /// The `(` after `name`: the word before it names a function.
    FunctionParen,
    /// Anything else.
    Other,
}
