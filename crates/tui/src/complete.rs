//! Tab completion's pure part: which word the cursor is on and what it names (a slash word, a
//! job or artifact id, a path, a command name: command position is the lexer's, not a split on
//! blanks), the names that fit it, and the text that replaces it.

use agentsh_bash_normalize::syntax::{self, Kind, Token, WordRole};

/// The slash words, as Tab offers them.
pub(crate) const SLASH_WORDS: [&str; 7] = [
    "/artifact ",
    "/context",
    "/help",
    "/job ",
    "/jobs",
    "/kill ",
    "/quit",
];

/// What a list of names for Tab was read from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum NameSource {
    /// A directory, as the word's directory part names it (`""` for the session's own), with
    /// or without its hidden entries.
    Dir {
        /// The directory part as typed (unquoted), ending in `/` unless empty.
        dir: String,
        /// Entries starting with `.`.
        hidden: bool,
    },
    /// The programs on the session's `PATH`.
    Commands,
    /// The session's artifacts' ids.
    Artifacts,
}

/// What the word under the cursor names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WordKind {
    /// The first word of a line starting with `/`.
    Slash,
    /// The argument of `/job` or `/kill`.
    JobId,
    /// The argument of `/artifact`.
    ArtifactId,
    /// A file or directory.
    Path,
    /// A command name (the lexer's command position).
    Command,
}

/// The word the cursor is on (it ends at the cursor).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    /// Where it starts in the line (a byte offset).
    pub start: usize,
    /// What it names.
    pub kind: WordKind,
    /// What it says so far, unquoted.
    pub typed: String,
    /// The quote it is inside, when it opened one and has not closed it.
    pub quote: Option<char>,
}

/// The word of `line` that ends at `cursor`, and what it names; `None` where nothing can be
/// completed (inside an expansion, a JSON tool call, a line the lexer cannot follow).
pub(crate) fn word_at(line: &str, cursor: usize) -> Option<Word> {
    let before = line.get(..cursor)?;
    let lead = before.len() - before.trim_start().len();
    let trimmed = &before[lead..];
    // A JSON tool call (`{"command": …`), not a brace group (`{ make; }`).
    if trimmed
        .strip_prefix('{')
        .is_some_and(|rest| rest.trim_start().starts_with('"'))
    {
        return None;
    }
    if trimmed.starts_with('/')
        && let Some(word) = slash_word(trimmed, lead)
    {
        return Some(word);
    }
    // A bang command's text starts after its `!` or `!!`.
    let shell_start = if let Some(rest) = trimmed.strip_prefix("!!") {
        cursor - rest.len()
    } else if let Some(rest) = trimmed.strip_prefix('!') {
        cursor - rest.len()
    } else {
        lead
    };
    shell_word(&line[shell_start..cursor]).map(|mut word| {
        word.start += shell_start;
        word
    })
}

/// A slash word, or the argument of one that takes an id; `None` for a path such as `/usr/b`.
fn slash_word(text: &str, lead: usize) -> Option<Word> {
    match text.split_once(char::is_whitespace) {
        None => SLASH_WORDS
            .iter()
            .any(|word| word.starts_with(text))
            .then(|| Word {
                start: lead,
                kind: WordKind::Slash,
                typed: text.to_owned(),
                quote: None,
            }),
        Some((command, rest)) => {
            let kind = match command {
                "/job" | "/kill" => WordKind::JobId,
                "/artifact" => WordKind::ArtifactId,
                _ => return None,
            };
            let argument = rest.trim_start();
            if argument.contains(char::is_whitespace) {
                return None;
            }
            Some(Word {
                start: lead + text.len() - argument.len(),
                kind,
                typed: argument.to_owned(),
                quote: None,
            })
        }
    }
}

/// The last word of a shell line that ends at the cursor, as the lexer reads it: the line is
/// read with one more character where the cursor is (so that an empty word after `| ` is a
/// word too), and an open quote closed after it.
fn shell_word(before: &str) -> Option<Word> {
    const MARK: &str = "x";
    let (tokens, quote) = tokenize_unfinished(before, MARK)?;
    let end = before.len() + MARK.len() + quote.map_or(0, char::len_utf8);
    let last: &Token = tokens.iter().rev().find(|token| token.end == end)?;
    let (start, kind) = match last.kind {
        Kind::Word(WordRole::CommandName) => (last.start, WordKind::Command),
        Kind::Word(WordRole::Assignment) => {
            // `A=fi`: the value is a path.
            let eq = before[last.start..].find('=')?;
            (last.start + eq + 1, WordKind::Path)
        }
        Kind::Word(_) => (last.start, WordKind::Path),
        Kind::Redirect { .. } => {
            // `> fi`, `2>fi`: the target after the operator and blanks.
            let text = &before[last.start..];
            let at = text
                .rfind(|c: char| c == '<' || c == '>' || c == '&' || c.is_whitespace())
                .map_or(0, |at| at + 1);
            (last.start + at, WordKind::Path)
        }
        _ => return None,
    };
    let raw = &before[start..];
    let typed = unquote(raw)?;
    // A path-like command name (`./run`, `bin/x`) names a file.
    let kind = if kind == WordKind::Command && typed.contains('/') {
        WordKind::Path
    } else {
        kind
    };
    Some(Word {
        start,
        kind,
        typed,
        quote,
    })
}

/// What may close a line typed so far: an open quote, then an open group or compound command.
const QUOTE_CLOSERS: [&str; 3] = ["", "\"", "'"];
const BLOCK_CLOSERS: [&str; 7] = [
    "",
    ")",
    "; }",
    "; then :; fi",
    "; do :; done",
    "; fi",
    "; done",
];

/// The tokens of `line` as typed so far, read with `mark` after it and, when it is not a whole
/// program yet, the first closers that make it one (an open quote's, an open `if`'s…); the
/// quote closed, if one was.
pub(crate) fn tokenize_unfinished(line: &str, mark: &str) -> Option<(Vec<Token>, Option<char>)> {
    let mut probe = String::with_capacity(line.len() + mark.len() + 16);
    for quote in QUOTE_CLOSERS {
        for block in BLOCK_CLOSERS {
            probe.clear();
            probe.push_str(line);
            probe.push_str(mark);
            probe.push_str(quote);
            probe.push_str(block);
            if let Ok(tokens) = syntax::tokenize(&probe) {
                return Some((tokens, quote.chars().next()));
            }
        }
    }
    None
}

/// A word's text without its quotes and backslashes; `None` when it expands something (`$`,
/// a backquote), whose value only the shell knows.
fn unquote(raw: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    let mut quote: Option<char> = None;
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (_, '`') | (None | Some('"'), '$') => return None,
            (None, '\'' | '"') => quote = Some(c),
            (Some(open), c) if c == open => quote = None,
            (None, '\\') => out.extend(chars.next()),
            (Some('"'), '\\') => match chars.next() {
                Some(next @ ('"' | '\\' | '$' | '`')) => out.push(next),
                Some(next) => out.extend(['\\', next]),
                None => out.push('\\'),
            },
            (_, c) => out.push(c),
        }
    }
    Some(out)
}

/// The text that replaces a word for `name` (a directory's ends in `/` and is left open for
/// more; anything else is closed: its quote, then a blank).
pub(crate) fn replacement(word: &Word, name: &str) -> String {
    quoted(word, name, !name.ends_with('/'))
}

/// The text that replaces a word for the start all candidates share (left open).
pub(crate) fn partial(word: &Word, start: &str) -> String {
    match word.kind {
        WordKind::Slash | WordKind::JobId | WordKind::ArtifactId => start.to_owned(),
        WordKind::Path | WordKind::Command => quoted(word, start, false),
    }
}

/// `name` as the word writes it (escaped, or inside its quote), closed (its quote, a blank)
/// when `close`.
fn quoted(word: &Word, name: &str, close: bool) -> String {
    let open = !close;
    let mut text = String::with_capacity(name.len() + 3);
    match (word.kind, word.quote) {
        (WordKind::Slash | WordKind::JobId | WordKind::ArtifactId, _) => {
            text.push_str(name);
            if !name.ends_with(' ') {
                text.push(' ');
            }
            return text;
        }
        (_, Some(quote)) => {
            text.push(quote);
            for c in name.chars() {
                if quote == '"' && matches!(c, '"' | '\\' | '$' | '`') {
                    text.push('\\');
                } else if quote == '\'' && c == '\'' {
                    text.push_str("'\\'");
                }
                text.push(c);
            }
            if !open {
                text.push(quote);
            }
        }
        (_, None) => {
            for c in name.chars() {
                if c.is_whitespace() || "\\'\"$`!&|;<>()[]*?#~{}".contains(c) {
                    text.push('\\');
                }
                text.push(c);
            }
        }
    }
    if !open {
        text.push(' ');
    }
    text
}

/// Where the names of sorted `names` that start with `prefix` are (a binary search for each
/// end of the run).
pub(crate) fn starting_with(names: &[String], prefix: &str) -> std::ops::Range<usize> {
    let first = names.partition_point(|name| name.as_str() < prefix);
    let run = names[first..].partition_point(|name| name.starts_with(prefix));
    first..first + run
}

/// The longest prefix all `names` share (at a char boundary).
pub(crate) fn common_prefix<'a>(names: &[&'a str]) -> &'a str {
    let Some((first, rest)) = names.split_first() else {
        return "";
    };
    let mut len = first.len();
    for name in rest {
        len = first
            .char_indices()
            .zip(name.chars())
            .find(|((_, a), b)| a != b)
            .map_or(len.min(name.len()), |((at, _), _)| at.min(len));
    }
    &first[..len]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(line: &str) -> Option<(WordKind, String, usize)> {
        word_at(line, line.len()).map(|w| (w.kind, w.typed, w.start))
    }

    #[test]
    fn command_position_is_the_lexers() {
        use WordKind::{Command, Path};
        assert_eq!(word("gi"), Some((Command, "gi".into(), 0)));
        assert_eq!(word("ls | gr"), Some((Command, "gr".into(), 5)));
        assert_eq!(word("ls | "), Some((Command, String::new(), 5)));
        assert_eq!(word("make && "), Some((Command, String::new(), 8)));
        assert_eq!(word("FOO=1 car"), Some((Command, "car".into(), 6)));
        assert_eq!(word("if tr"), Some((Command, "tr".into(), 3)));
        assert_eq!(word("if true; then ec"), Some((Command, "ec".into(), 14)));
        assert_eq!(word("for f in *; do ca"), Some((Command, "ca".into(), 15)));
        assert_eq!(word("{ ls; ec"), Some((Command, "ec".into(), 6)));
        assert_eq!(word("echo $(ca"), None, "inside a substitution");
        assert_eq!(word("cat sr"), Some((Path, "sr".into(), 4)));
        assert_eq!(word("cat src/ma"), Some((Path, "src/ma".into(), 4)));
        assert_eq!(word("cat "), Some((Path, String::new(), 4)));
        assert_eq!(word("echo hi > ou"), Some((Path, "ou".into(), 10)));
        assert_eq!(word("./scr"), Some((Path, "./scr".into(), 0)));
        assert_eq!(word("X=sr"), Some((Path, "sr".into(), 2)));
        // A blank inside quotes does not split the word.
        assert_eq!(word("cat 'my fi"), Some((Path, "my fi".into(), 4)));
        assert_eq!(word("cat my\\ fi"), Some((Path, "my fi".into(), 4)));
        assert_eq!(word("cat $HOME/x"), None, "an expansion");
    }

    #[test]
    fn bangs_and_slash_words() {
        use WordKind::{ArtifactId, Command, JobId, Path, Slash};
        assert_eq!(word("!gi"), Some((Command, "gi".into(), 1)));
        assert_eq!(word("!!ls sr"), Some((Path, "sr".into(), 5)));
        assert_eq!(word("/jo"), Some((Slash, "/jo".into(), 0)));
        assert_eq!(word("/"), Some((Slash, "/".into(), 0)));
        assert_eq!(word("/kill 1"), Some((JobId, "1".into(), 6)));
        assert_eq!(word("/job "), Some((JobId, String::new(), 5)));
        assert_eq!(word("/artifact 4"), Some((ArtifactId, "4".into(), 10)));
        assert_eq!(word("/usr/bi"), Some((Path, "/usr/bi".into(), 0)));
        assert_eq!(word(r#"{"command": "ls"#), None);
        // The word ends at the cursor.
        let line = "cat sr other";
        assert_eq!(
            word_at(line, 6).map(|w| (w.kind, w.typed)),
            Some((Path, "sr".into()))
        );
    }

    #[test]
    fn replacements_are_quoted_as_the_word_was() {
        let bare = word_at("cat fi", 6).expect("word");
        assert_eq!(replacement(&bare, "file name.txt"), "file\\ name.txt ");
        assert_eq!(replacement(&bare, "dir/"), "dir/");
        let quoted = word_at("cat 'fi", 7).expect("word");
        assert_eq!(replacement(&quoted, "file name"), "'file name' ");
        assert_eq!(replacement(&quoted, "it's/"), "'it'\\''s/");
        assert_eq!(partial(&bare, "file n"), "file\\ n");
        assert_eq!(partial(&quoted, "file n"), "'file n");
        let slash = word_at("/ki", 3).expect("word");
        assert_eq!(replacement(&slash, "/kill "), "/kill ");
        assert_eq!(replacement(&slash, "/jobs"), "/jobs ");
    }

    #[test]
    fn names_by_prefix_and_their_common_start() {
        let names: Vec<String> = ["Makefile", "main.rs", "make.d/", "mod.rs", "zz"]
            .map(String::from)
            .to_vec();
        assert_eq!(names[starting_with(&names, "ma")], ["main.rs", "make.d/"]);
        assert!(starting_with(&names, "q").is_empty());
        assert_eq!(starting_with(&names, "").len(), 5);
        assert_eq!(common_prefix(&["make.d/", "makefile"]), "make");
        assert_eq!(common_prefix(&["main.rs"]), "main.rs");
        assert_eq!(common_prefix(&["héllo", "hélp"]), "hél");
        assert_eq!(common_prefix(&["abc", "ab"]), "ab");
    }
}
