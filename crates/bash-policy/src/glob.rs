//! The glob a prefix word may be: `*` (any text), `?` (one character), `[…]` (one of a set, with
//! ranges; `[!…]` or `[^…]` for none of it), `\` to take the next character as it is. A word
//! without them is compared as text.

/// How a rule compares with a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Compared {
    /// It does not apply.
    No,
    /// It would apply or not depending on words only known when the command runs.
    Unknown,
    /// It applies.
    Yes,
}

/// One word of a `prefix`, compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WordPattern {
    /// No glob characters: the word must be this text.
    Exact(String),
    /// A glob.
    Glob(Vec<Token>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Token {
    Char(char),
    /// `?`
    One,
    /// `*`
    Star,
    /// `[…]`: inclusive ranges (a single character is a range of one).
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

impl Token {
    fn matches(&self, c: char) -> bool {
        match self {
            Token::Char(want) => *want == c,
            Token::One => true,
            Token::Star => false,
            Token::Class { negated, ranges } => {
                ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != *negated
            }
        }
    }
}

impl WordPattern {
    /// Compiles `pattern`. A `[` without a closing `]` is an ordinary character, as in the shell.
    pub(crate) fn new(pattern: &str) -> Self {
        if !pattern.contains(['*', '?', '[', '\\']) {
            return Self::Exact(pattern.to_owned());
        }
        let chars: Vec<char> = pattern.chars().collect();
        let mut tokens = Vec::new();
        let mut i = 0;
        while let Some(&c) = chars.get(i) {
            i += 1;
            match c {
                '*' => {
                    if tokens.last() != Some(&Token::Star) {
                        tokens.push(Token::Star);
                    }
                }
                '?' => tokens.push(Token::One),
                '\\' => {
                    // A trailing backslash stands for itself.
                    let escaped = chars.get(i).copied().unwrap_or('\\');
                    i += 1;
                    tokens.push(Token::Char(escaped));
                }
                '[' => match class(&chars[i..]) {
                    Some((token, used)) => {
                        tokens.push(token);
                        i += used;
                    }
                    None => tokens.push(Token::Char('[')),
                },
                c => tokens.push(Token::Char(c)),
            }
        }
        Self::Glob(tokens)
    }

    /// Whether some word starting with `prefix` matches.
    pub(crate) fn could_start_with(&self, prefix: &str) -> bool {
        match self {
            Self::Exact(text) => text.starts_with(prefix),
            Self::Glob(tokens) => {
                let mut tokens = tokens.iter();
                for c in prefix.chars() {
                    match tokens.next() {
                        // The `*` takes the rest of the prefix; a suffix matches what follows.
                        Some(Token::Star) => return true,
                        Some(token) if token.matches(c) => {}
                        // The pattern ends first, or this character differs.
                        None | Some(_) => return false,
                    }
                }
                true
            }
        }
    }

    /// How a word only known when it runs (`value` as written, expansions kept) compares: it
    /// matches when the pattern matches its text (`/tmp/$x` by `/*`), may match when a word
    /// starting with its literal head could, else not.
    pub(crate) fn compare_unknown(&self, value: &str) -> Compared {
        if self.matches(value) {
            return Compared::Yes;
        }
        // Up to the first expansion, or `{}` (which `xargs -I{}` replaces).
        let end = [value.find(['$', '`']), value.find("{}")]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(value.len());
        let head = &value[..end];
        if self.could_start_with(head) {
            Compared::Unknown
        } else {
            Compared::No
        }
    }

    /// Whether `word` matches.
    pub(crate) fn matches(&self, word: &str) -> bool {
        match self {
            Self::Exact(text) => text == word,
            Self::Glob(tokens) => glob_matches(tokens, word),
        }
    }
}

/// The class after a `[`: its token and how many characters it used (the closing `]`
/// included), or `None` when no `]` closes it.
fn class(chars: &[char]) -> Option<(Token, usize)> {
    let mut i = 0;
    let negated = matches!(chars.first(), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut ranges = Vec::new();
    let mut first = true;
    loop {
        let c = *chars.get(i)?;
        if c == ']' && !first {
            return Some((Token::Class { negated, ranges }, i + 1));
        }
        first = false;
        let lo = if c == '\\' {
            i += 1;
            *chars.get(i)?
        } else {
            c
        };
        i += 1;
        if chars.get(i) == Some(&'-') && chars.get(i + 1).is_some_and(|&c| c != ']') {
            let hi = chars[i + 1];
            ranges.push((lo, hi));
            i += 2;
        } else {
            ranges.push((lo, lo));
        }
    }
}

/// Linear-time glob matching: on a mismatch, the last `*` takes one more character.
fn glob_matches(tokens: &[Token], word: &str) -> bool {
    let (mut t, mut i) = (0, 0);
    // The last `*` seen (token index after it) and where in `word` its match ends so far.
    let mut star: Option<(usize, usize)> = None;
    loop {
        if let Some(token) = tokens.get(t) {
            if *token == Token::Star {
                star = Some((t + 1, i));
                t += 1;
                continue;
            }
            if let Some(c) = word[i..].chars().next()
                && token.matches(c)
            {
                t += 1;
                i += c.len_utf8();
                continue;
            }
        } else if i == word.len() {
            return true;
        }
        match star {
            Some((after, from)) if from < word.len() => {
                let c = word[from..].chars().next().map_or(1, char::len_utf8);
                star = Some((after, from + c));
                t = after;
                i = from + c;
            }
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Compared, WordPattern};

    #[track_caller]
    fn check(pattern: &str, word: &str, expect: bool) {
        assert_eq!(
            WordPattern::new(pattern).matches(word),
            expect,
            "{pattern:?} against {word:?}"
        );
    }

    #[test]
    fn words_only_known_when_they_run() {
        let root = WordPattern::new("/*");
        assert_eq!(root.compare_unknown("$d"), Compared::Unknown);
        assert_eq!(root.compare_unknown("/tmp/$d"), Compared::Yes);
        assert_eq!(root.compare_unknown("./$d"), Compared::No);
        let push = WordPattern::new("push");
        assert_eq!(push.compare_unknown("$x"), Compared::Unknown);
        assert_eq!(push.compare_unknown("pu$x"), Compared::Unknown);
        assert_eq!(push.compare_unknown("st$x"), Compared::No);
        assert!(WordPattern::new("--force*").could_start_with("--fo"));
        assert!(!WordPattern::new("-[rR]").could_start_with("-f"));
    }

    #[test]
    fn globs() {
        check("git", "git", true);
        check("git", "gitx", false);
        check("*", "", true);
        check("*", "anything", true);
        check("--force*", "--force", true);
        check("--force*", "--force-with-lease", true);
        check("--force*", "-f", false);
        check("?", "a", true);
        check("?", "", false);
        check("?", "é", true);
        check("a*b*c", "abc", true);
        check("a*b*c", "aXbYbZc", true);
        check("a*b*c", "aXbYc!", false);
        check("*.rs", "main.rs", true);
        check("*.rs", "main.rsx", false);
        check("[abc]", "b", true);
        check("[abc]", "d", false);
        check("[!abc]", "d", true);
        check("[^abc]", "a", false);
        check("[a-c]x", "bx", true);
        check("[a-c]x", "dx", false);
        check("[]]", "]", true);
        check("[a-]", "-", true);
        check("[", "[", true);
        check("a[b", "a[b", true);
        check("\\*", "*", true);
        check("\\*", "x", false);
        check("a\\", "a\\", true);
        check("**", "x", true);
    }
}
