//! Segmenting: a command line becomes the simple commands it will run. The lexer gives the tokens
//! of a program with each word's role; this module groups them into simple commands, takes
//! their words apart (quote removal, the programs substituted into them), follows function
//! bodies, here-documents and every substitution, and hands each simple command to
//! `command.rs`, which judges its name and unwraps it.

use agentsh_bash_normalize::syntax::{self, Context, Kind, Token, WordPart, WordRole};

use crate::arg::{Arg, dangerous_assignment};
use crate::reading::{Reading, read};
use crate::table::program;

/// How deep programs inside programs (substitutions, `bash -c`, `eval`, aliases) are followed;
/// deeper, the innermost counts as one unknown segment.
pub(crate) const MAX_DEPTH: usize = 32;

/// One simple command, before the tiers judge it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawSegment {
    /// As written.
    pub text: String,
    /// Its words after quote removal and unwrapping.
    pub words: Vec<String>,
    /// `words` joined by single spaces.
    pub joined: String,
    /// When the command name is a path: its base name, for rules written for the name.
    pub base: Option<BaseName>,
    /// Its command cannot be known before it runs.
    pub unknown: bool,
    /// A wrapper (`sudo`, `bash -c`, …) whose unwrapped command is judged too: when no rule
    /// matches it, it abstains.
    pub wrapper: bool,
    /// Per word: no expansion (its value is what the program gets; a glob is its text).
    pub literal: Vec<bool>,
    /// More words come from input when it runs (`… | xargs git`).
    pub open: bool,
    /// For a program in the table: its words as it reads them.
    pub reading: Option<Box<Reading>>,
}

/// The base name of a command name that is a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BaseName {
    /// The words with the base name first, joined by single spaces.
    pub joined: String,
    /// The path is in a system directory: an allow rule may match the base name too.
    pub system: bool,
    /// The base name.
    pub name: String,
}

impl RawSegment {
    pub(crate) fn new(text: &str, words: Vec<String>, unknown: bool, wrapper: bool) -> Self {
        let joined = words.join(" ");
        let base = words.first().and_then(|name| {
            let (dir, base) = name.rsplit_once('/')?;
            if base.is_empty() {
                return None;
            }
            let system = matches!(
                dir,
                "/bin" | "/sbin" | "/usr/bin" | "/usr/sbin" | "/usr/local/bin"
            );
            let rest = &joined[name.len()..];
            Some(BaseName {
                joined: format!("{base}{rest}"),
                system,
                name: base.to_owned(),
            })
        });
        let literal = vec![true; words.len()];
        Self {
            text: text.trim().to_owned(),
            words,
            joined,
            base,
            unknown,
            wrapper: wrapper && !unknown,
            literal,
            open: false,
            reading: None,
        }
    }

    /// A simple command from its words: each word's literalness kept, and read as its program
    /// reads it when the program is in the table. `open`: more words come from input.
    pub(crate) fn command(
        text: &str,
        args: &[Arg],
        unknown: bool,
        wrapper: bool,
        open: bool,
    ) -> Self {
        let words = args.iter().map(|a| a.value.clone()).collect();
        let mut segment = Self::new(text, words, unknown, wrapper);
        segment.literal = args.iter().map(|a| a.literal && !a.quoting).collect();
        segment.open = open;
        let name = args.first().filter(|a| a.literal && !a.glob && !a.quoting);
        let entry = name.and_then(|name| {
            let base = name.value.rsplit('/').next().unwrap_or(&name.value);
            program(base)
        });
        if let Some(entry) = entry {
            let words = args[1..]
                .iter()
                .map(|a| (a.value.as_str(), a.literal && !a.quoting));
            let reading = read(entry, words);
            if reading.unknown {
                segment.unknown = true;
                segment.wrapper = false;
            }
            segment.reading = Some(Box::new(reading));
        }
        segment
    }

    /// A text that cannot be parsed: one unknown segment.
    pub(crate) fn unparsed(text: &str) -> Self {
        let text = text.trim();
        Self::new(text, vec![text.to_owned()], true, false)
    }
}

/// Where segments go while a line is walked: the judge, or a collector for examples.
pub(crate) trait Sink {
    /// A simple command of the line.
    fn segment(&mut self, segment: RawSegment);
    /// Whether `name` is a function or alias whose body held an unknown or asked segment.
    fn is_tainted(&self, name: &str) -> bool;
    /// How many segments were handed over so far.
    fn mark(&self) -> usize;
    /// The segments handed over since `since` were the body of the function or alias `name`.
    fn define(&mut self, name: &str, since: usize);
}

/// Collects the segments of a line (for `match`/`not_match` examples): nothing is tainted.
#[derive(Debug, Default)]
pub(crate) struct Collect(pub Vec<RawSegment>);

impl Sink for Collect {
    fn segment(&mut self, segment: RawSegment) {
        self.0.push(segment);
    }

    fn is_tainted(&self, _: &str) -> bool {
        false
    }

    fn mark(&self) -> usize {
        self.0.len()
    }

    fn define(&mut self, _: &str, _: usize) {}
}

/// The segments of `line`.
pub(crate) fn segments(line: &str) -> Vec<RawSegment> {
    let mut collect = Collect::default();
    Segmenter::new(&mut collect).program(line);
    collect.0
}

/// Walks programs, handing their simple commands to a [`Sink`].
pub(crate) struct Segmenter<'s, S: Sink> {
    pub(crate) sink: &'s mut S,
    pub(crate) depth: usize,
    /// A here-document whose delimiter is unquoted was opened: its body is expanded.
    heredoc_expands: bool,
    /// Above 0 while walking a program run with a changed `PATH`, `LD_PRELOAD`, … (`PATH=.
    /// bash -c '…'`): its segments are unknown.
    pub(crate) environment_changed: usize,
    /// Files this line writes or makes executable so far (`./` removed).
    written: Vec<String>,
}

impl<'s, S: Sink> Segmenter<'s, S> {
    pub(crate) fn new(sink: &'s mut S) -> Self {
        Self {
            sink,
            depth: 0,
            heredoc_expands: false,
            environment_changed: 0,
            written: Vec::new(),
        }
    }

    /// Walks a whole program (a line, a substitution, a `-c` string).
    pub(crate) fn program(&mut self, src: &str) {
        if self.depth >= MAX_DEPTH {
            self.emit(RawSegment::unparsed(src));
            return;
        }
        let Ok(tokens) = syntax::tokenize(src) else {
            self.emit(RawSegment::unparsed(src));
            return;
        };
        self.depth += 1;
        let heredoc = std::mem::replace(&mut self.heredoc_expands, false);
        self.tokens(src, &tokens);
        self.heredoc_expands = heredoc;
        self.depth -= 1;
    }

    /// Walks `tokens` of `src`: simple commands are runs of assignments, command words and
    /// redirections; everything else ends them.
    fn tokens(&mut self, src: &str, tokens: &[Token]) {
        let mut start: Option<usize> = None;
        let mut i = 0;
        while let Some(token) = tokens.get(i) {
            match token.kind {
                Kind::Word(WordRole::Assignment | WordRole::CommandName | WordRole::Argument)
                | Kind::Redirect { .. } => {
                    start.get_or_insert(i);
                    i += 1;
                    continue;
                }
                _ => {}
            }
            if let Some(first) = start.take() {
                self.simple(src, &tokens[first..i]);
            }
            match token.kind {
                Kind::Word(WordRole::FunctionName) => {
                    i = self.function(src, tokens, i);
                    continue;
                }
                Kind::Word(
                    WordRole::LoopVariable
                    | WordRole::LoopWord
                    | WordRole::CaseSubject
                    | WordRole::CasePattern
                    | WordRole::Test,
                ) => self.text(&src[token.start..token.end], Context::Word),
                Kind::Arith => self.text(&src[token.start..token.end], Context::Arithmetic),
                Kind::HeredocBody => {
                    let expands = std::mem::take(&mut self.heredoc_expands);
                    if expands {
                        self.text(&src[token.start..token.end], Context::HeredocBody);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        if let Some(first) = start {
            self.simple(src, &tokens[first..]);
        }
    }

    /// The programs substituted into a text that is no command word (a loop word, a `case`
    /// pattern, arithmetic, a here-document body).
    fn text(&mut self, text: &str, context: Context) {
        match syntax::parse_word(text, context) {
            Ok(word) => {
                for substitution in &word.substitutions {
                    self.program(&substitution.program(text));
                }
            }
            Err(_) => self.emit(RawSegment::unparsed(text)),
        }
    }

    /// A function definition whose name is `tokens[at]`: its body is walked as the function's.
    /// Returns the index after the body.
    fn function(&mut self, src: &str, tokens: &[Token], at: usize) -> usize {
        let name_token = tokens[at];
        let name = match decode(&src[name_token.start..name_token.end]) {
            Ok((arg, _)) => arg.value,
            Err(_) => src[name_token.start..name_token.end].to_owned(),
        };
        let depth = name_token.depth;
        let Some(open) = tokens[at + 1..]
            .iter()
            .position(|t| t.depth == depth && matches!(t.kind, Kind::Word(WordRole::Reserved)))
            .map(|p| at + 1 + p)
        else {
            return at + 1;
        };
        let close = tokens[open + 1..]
            .iter()
            .position(|t| t.depth <= depth)
            .map_or(tokens.len() - 1, |p| open + 1 + p);
        let since = self.sink.mark();
        self.tokens(src, &tokens[open..=close]);
        self.sink.define(&name, since);
        close + 1
    }

    /// One simple command: its assignments, words and redirections.
    fn simple(&mut self, src: &str, tokens: &[Token]) {
        let (Some(first), Some(last)) = (tokens.first(), tokens.last()) else {
            return;
        };
        let text = &src[first.start..last.end];
        let mut args = Vec::new();
        let mut assignments = Vec::new();
        let mut programs = Vec::new();
        let mut dangerous = false;
        for token in tokens {
            let word = &src[token.start..token.end];
            let decoded = match token.kind {
                Kind::Redirect { .. } => self.redirect(word).map(|programs| (None, programs)),
                _ => decode(word).map(|(arg, programs)| (Some(arg), programs)),
            };
            let Ok((arg, substitutions)) = decoded else {
                self.emit(RawSegment::unparsed(text));
                return;
            };
            programs.extend(substitutions);
            let Some(mut arg) = arg else {
                continue;
            };
            arg.start += token.start;
            arg.end += token.start;
            if token.kind == Kind::Word(WordRole::Assignment) {
                // `IFS=, read -r a b`: a leading `IFS` only changes how that command splits.
                let leading_ifs = arg.value.starts_with("IFS=")
                    && tokens
                        .iter()
                        .any(|t| t.kind == Kind::Word(WordRole::CommandName));
                dangerous |= dangerous_assignment(&arg.value) && !leading_ifs;
                assignments.push(arg.value);
            } else {
                args.push(arg);
            }
        }
        if !args.is_empty() {
            self.command(src, (first.start, last.end), &args, dangerous, false);
        } else if dangerous {
            self.emit(RawSegment::new(text, assignments, true, false));
        }
        for program in programs {
            self.program(&program);
        }
    }

    /// A redirection: the programs substituted into its target. Notes a here-document whose
    /// body is expanded (its delimiter is unquoted); a here-document's delimiter is no word.
    fn redirect(&mut self, text: &str) -> Result<Vec<String>, syntax::Unparsed> {
        let bytes = text.as_bytes();
        let mut p = if bytes.first() == Some(&b'{') {
            text.find('}').map_or(0, |i| i + 1)
        } else {
            bytes.iter().take_while(|b| b.is_ascii_digit()).count()
        };
        let op_start = p;
        while bytes
            .get(p)
            .is_some_and(|b| matches!(b, b'<' | b'>' | b'&' | b'|'))
        {
            p += 1;
        }
        let heredoc = &text[op_start..p] == "<<";
        if heredoc && bytes.get(p) == Some(&b'-') {
            p += 1;
        }
        let mut target = text[p..].trim_start_matches([' ', '\t']);
        while let Some(rest) = target.strip_prefix("\\\n") {
            target = rest.trim_start_matches([' ', '\t']);
        }
        if heredoc {
            if !target.contains(['\'', '"', '\\']) {
                self.heredoc_expands = true;
            }
            return Ok(Vec::new());
        }
        let op = &text[op_start..p];
        let (arg, programs) = decode(target)?;
        if op.contains('>') && !op.ends_with('&') && arg.literal {
            self.note_written(&arg.value);
        }
        Ok(programs)
    }

    /// Notes a file the line writes or makes executable.
    pub(crate) fn note_written(&mut self, path: &str) {
        let path = plain_path(path);
        if !path.is_empty() && !self.written.iter().any(|w| w == path) {
            self.written.push(path.to_owned());
        }
    }

    /// Whether the line wrote `path` or made it executable before.
    pub(crate) fn wrote(&self, path: &str) -> bool {
        let path = plain_path(path);
        self.written.iter().any(|w| w == path)
    }

    /// Notes the files the command `base` writes or makes executable: `chmod`'s and `tee`'s
    /// operands, the destination of `cp`, `mv`, `ln`, `install`, `curl -o`, `wget -O`.
    pub(crate) fn note_writes(&mut self, base: &str, args: &[Arg]) {
        let operands = || {
            args[1..]
                .iter()
                .filter(|a| a.literal && !a.value.starts_with('-') && !a.value.starts_with('+'))
        };
        let mut found: Vec<String> = Vec::new();
        match base {
            "chmod" | "tee" => found.extend(operands().map(|a| a.value.clone())),
            "cp" | "mv" | "ln" | "install" => {
                found.extend(operands().next_back().map(|a| a.value.clone()));
            }
            "curl" | "wget" => {
                let flag: &[&str] = if base == "curl" {
                    &["-o", "--output"]
                } else {
                    &["-O", "--output-document"]
                };
                for pair in args.windows(2) {
                    if flag.contains(&pair[0].value.as_str()) && pair[1].literal {
                        found.push(pair[1].value.clone());
                    }
                }
            }
            _ => {}
        }
        for path in found {
            self.note_written(&path);
        }
    }

    /// Hands a segment over; inside a command run with a changed `PATH`, `LD_PRELOAD`, … every
    /// segment is unknown.
    pub(crate) fn emit(&mut self, mut segment: RawSegment) {
        if self.environment_changed > 0 {
            segment.unknown = true;
            segment.wrapper = false;
        }
        self.sink.segment(segment);
    }
}

/// A path without its leading `./`.
fn plain_path(path: &str) -> &str {
    let mut path = path;
    while let Some(rest) = path.strip_prefix("./") {
        path = rest.trim_start_matches('/');
    }
    path
}

/// Takes a word apart: its value after quote removal (expansions kept as written), what makes
/// it unknowable as a command name, and the programs substituted into it.
pub(crate) fn decode(text: &str) -> Result<(Arg, Vec<String>), syntax::Unparsed> {
    let mut arg = Arg {
        start: 0,
        end: text.len(),
        literal: true,
        ..Arg::default()
    };
    let mut braces = Braces::default();
    // Most words are plain text: no quotes, escapes, expansions or substitutions.
    if !text.contains(['\\', '\'', '"', '`', '$', '(', '<', '>']) {
        let glob = braces.unquoted(text);
        let value = text.to_owned();
        return Ok((Arg { value, glob, ..arg }, Vec::new()));
    }
    let word = syntax::parse_word(text, Context::Word)?;
    for &WordPart {
        kind,
        start,
        end,
        quoted,
    } in &word.parts
    {
        let piece = &text[start..end];
        use syntax::PartKind;
        match kind {
            PartKind::Literal => {
                if !quoted {
                    arg.glob |= braces.unquoted(piece);
                }
                arg.value.push_str(piece);
            }
            PartKind::Escape => {
                braces.quoted();
                if piece != "\\\n" {
                    arg.value.push_str(&piece[1..]);
                }
            }
            PartKind::SingleQuoted => {
                braces.quoted();
                arg.value.push_str(&piece[1..piece.len() - 1]);
            }
            PartKind::AnsiC | PartKind::Localized => {
                arg.literal = false;
                arg.quoting = true;
                arg.value.push_str(piece);
            }
            PartKind::Group => {
                arg.literal = false;
                arg.glob = true;
                arg.value.push_str(piece);
            }
            PartKind::Parameter | PartKind::Arithmetic | PartKind::Substitution => {
                arg.literal = false;
                arg.value.push_str(piece);
            }
        }
    }
    let programs = word
        .substitutions
        .iter()
        .map(|s| s.program(text).into_owned())
        .collect();
    Ok((arg, programs))
}

/// Finds glob characters and brace expansions in the unquoted text of a word.
#[derive(Default)]
struct Braces {
    /// An unquoted `{` is open; a `,` or `..` was seen inside it.
    open: bool,
    separator: bool,
    /// An unquoted `[` is open.
    bracket: bool,
    /// The previous unquoted character was a `.`.
    dot: bool,
}

impl Braces {
    /// Unquoted text: whether it completes a glob or a brace expansion.
    fn unquoted(&mut self, text: &str) -> bool {
        let mut found = false;
        for c in text.chars() {
            match c {
                '*' | '?' => found = true,
                '[' => self.bracket = true,
                ']' if self.bracket => found = true,
                '{' => {
                    self.open = true;
                    self.separator = false;
                }
                ',' if self.open => self.separator = true,
                '.' if self.open && self.dot => self.separator = true,
                '}' if self.open && self.separator => found = true,
                _ => {}
            }
            self.dot = c == '.';
        }
        found
    }

    /// Quoted text in between: `..` does not continue across it.
    fn quoted(&mut self) {
        self.dot = false;
    }
}
