//! Error messages as `bash -c '<command>'` prints them, never naming the private command file.
//!
//! The loop sources each command from a file in the shell's private directory (see
//! `bootstrap`: sourcing keeps `declare`, aliases and the unwinding of a stopped command as if
//! typed), so the shell names that file in its messages:
//! `/dev/shm/agentsh-96VypT/command: line 1: nosuchcmd: command not found`. A model may try to
//! open it, and its name changes with every shell. [`ErrorNames`] rewrites those prefixes in
//! the output stream to what the same command prints under `<shell> -c`:
//!
//! | shell | sourced | as `-c` prints it |
//! |---|---|---|
//! | bash | `<file>: line 3: foo: command not found` | `bash: line 3: foo: command not found` |
//! | bash, a syntax error | `<file>: line 1: syntax error near …` | `bash: -c: line 1: syntax error near …` |
//! | zsh | `<file>:1: command not found: foo` | `zsh:1: command not found: foo` |
//! | sh (dash) | `sh: 1: <file>: foo: not found` | `sh: 1: foo: not found` |
//!
//! bash names the parser's messages (and the offending line it echoes after one) with the
//! input's name, `-c`, and every other message without it; the two kinds are told apart by
//! the parser's fixed phrases. Bash has no way to source a file under another name (the name is
//! `BASH_SOURCE[0]`, which assignments do not change), and evaluating the text instead (`eval`)
//! would lose the unwinding, hence a rewrite of the stream. It works on the raw bytes as they
//! come, whatever the chunking: only a true partial match of the file's path at the end of a
//! chunk is held back (until the next chunk or the end), so nothing else is delayed. The path
//! is random per shell: no other output contains it by chance.

use std::path::Path;

use agentsh_process::shell::ShellKind;
use memchr::memmem::Finder;

use super::run::Output;

/// The phrases bash's parser starts its messages with (bash 5: `parse.y`).
const PARSER_PHRASES: [&[u8]; 6] = [
    b"syntax error",
    b"unexpected EOF while looking for matching",
    b"unexpected token",
    b"unexpected argument",
    b"conditional binary operator expected",
    b"expected `)'",
];

/// What to do with the bytes at a match of the file's path.
#[derive(Debug, PartialEq, Eq)]
enum Decision {
    /// The message's prefix ends beyond the bytes at hand: wait for more.
    Incomplete,
    /// Replace this many bytes with the text.
    Rewrite(usize, Vec<u8>),
    /// Not a message prefix: pass the path on as it is.
    Keep,
}

/// An [`Output`] that rewrites the shell's messages naming its command file (see the module
/// docs) before passing the bytes on to `out`. Call [`finish`](Self::finish) at the end.
pub(super) struct ErrorNames<'a> {
    out: &'a mut dyn Output,
    kind: ShellKind,
    /// The command file's path, as the shell prints it.
    path: Vec<u8>,
    finder: Finder<'static>,
    /// A partial match held back from the end of the last chunk.
    held: Vec<u8>,
    /// The last rewritten message was a parser error: its echoed line may follow.
    after_syntax_error: bool,
}

impl<'a> ErrorNames<'a> {
    /// Rewrites messages of a `kind` shell that name `file` (its command file).
    pub(super) fn new(out: &'a mut dyn Output, kind: ShellKind, file: &Path) -> Self {
        use std::os::unix::ffi::OsStrExt as _;
        let path = file.as_os_str().as_bytes().to_vec();
        Self {
            out,
            kind,
            finder: Finder::new(&path).into_owned(),
            path,
            held: Vec::new(),
            after_syntax_error: false,
        }
    }

    /// Passes on what is still held back (the stream ended).
    pub(super) fn finish(&mut self) {
        let held = std::mem::take(&mut self.held);
        self.scan(&held, true);
    }

    fn scan(&mut self, data: &[u8], at_end: bool) {
        let mut pos = 0;
        while pos < data.len() {
            let Some(found) = self.finder.find(&data[pos..]) else {
                let rest = &data[pos..];
                let keep = if at_end {
                    0
                } else {
                    partial_match_len(rest, &self.path)
                };
                self.emit(&rest[..rest.len() - keep]);
                self.held.extend_from_slice(&rest[rest.len() - keep..]);
                return;
            };
            let at = pos + found;
            self.emit(&data[pos..at]);
            match self.decide(&data[at..], at_end) {
                Decision::Incomplete => {
                    self.held.extend_from_slice(&data[at..]);
                    return;
                }
                Decision::Rewrite(len, text) => {
                    self.emit(&text);
                    pos = at + len;
                }
                Decision::Keep => {
                    let len = self.path.len();
                    self.emit(&data[at..at + len]);
                    pos = at + len;
                }
            }
        }
    }

    fn emit(&mut self, bytes: &[u8]) {
        if !bytes.is_empty() {
            self.out.chunk(bytes);
        }
    }

    /// What to do with `rest`, which starts with the path; `at_end`: no more bytes will come.
    fn decide(&mut self, rest: &[u8], at_end: bool) -> Decision {
        let after = &rest[self.path.len()..];
        let incomplete = |sep: &[u8]| !at_end && after.len() < sep.len() && sep.starts_with(after);
        match self.kind {
            ShellKind::Zsh => {
                if incomplete(b":") {
                    Decision::Incomplete
                } else if after.starts_with(b":") {
                    Decision::Rewrite(self.path.len(), b"zsh".to_vec())
                } else {
                    Decision::Keep
                }
            }
            ShellKind::Sh => {
                if incomplete(b": ") {
                    Decision::Incomplete
                } else if after.starts_with(b": ") {
                    Decision::Rewrite(self.path.len() + 2, Vec::new())
                } else {
                    Decision::Keep
                }
            }
            ShellKind::Bash => self.decide_bash(after, at_end),
        }
    }

    /// `after` follows the path: `: line <N>: <message>` becomes `bash: line <N>: ` or, for the
    /// parser's messages, `bash: -c: line <N>: `.
    fn decide_bash(&mut self, after: &[u8], at_end: bool) -> Decision {
        const LINE: &[u8] = b": line ";
        if after.len() < LINE.len() {
            return if !at_end && LINE.starts_with(after) {
                Decision::Incomplete
            } else {
                Decision::Keep
            };
        }
        if !after.starts_with(LINE) {
            return Decision::Keep;
        }
        let number = &after[LINE.len()..];
        let digits = number.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == number.len() {
            return if !at_end && digits < 20 {
                Decision::Incomplete
            } else {
                Decision::Keep
            };
        }
        let sep = &number[digits..];
        if digits == 0 || !sep.starts_with(b": ") {
            return if !at_end && sep == b":" && digits > 0 {
                Decision::Incomplete
            } else {
                Decision::Keep
            };
        }
        let message = &sep[2..];
        let line_end = memchr::memchr(b'\n', message).unwrap_or(message.len());
        let first = &message[..line_end];
        let may_grow = !at_end && line_end == message.len();
        if may_grow
            && PARSER_PHRASES
                .iter()
                .any(|phrase| phrase.len() > first.len() && phrase.starts_with(first))
        {
            return Decision::Incomplete;
        }
        let echoed = self.after_syntax_error && first.starts_with(b"`");
        let parser = echoed
            || PARSER_PHRASES
                .iter()
                .any(|phrase| first.starts_with(phrase));
        self.after_syntax_error = parser && !echoed;
        let mut text = if parser {
            b"bash: -c: line ".to_vec()
        } else {
            b"bash: line ".to_vec()
        };
        text.extend_from_slice(&number[..digits]);
        text.extend_from_slice(b": ");
        let consumed = self.path.len() + LINE.len() + digits + 2;
        Decision::Rewrite(consumed, text)
    }
}

impl Output for ErrorNames<'_> {
    fn chunk(&mut self, bytes: &[u8]) {
        if self.held.is_empty() {
            self.scan(bytes, false);
        } else {
            let mut data = std::mem::take(&mut self.held);
            data.extend_from_slice(bytes);
            self.scan(&data, false);
        }
    }

    fn head_satisfied(&self) -> bool {
        self.out.head_satisfied()
    }
}

/// The length of the longest end of `data` that is a proper start of `path`.
fn partial_match_len(data: &[u8], path: &[u8]) -> usize {
    let Some(&first) = path.first() else {
        return 0;
    };
    let window = data.len().min(path.len() - 1);
    let tail = &data[data.len() - window..];
    memchr::memchr_iter(first, tail)
        .map(|at| &tail[at..])
        .find(|end| path.starts_with(end))
        .map_or(0, <[u8]>::len)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "/dev/shm/agentsh-Ab12Cd/command";

    #[derive(Default)]
    struct Collect(Vec<u8>);

    impl Output for Collect {
        fn chunk(&mut self, bytes: &[u8]) {
            self.0.extend_from_slice(bytes);
        }
        fn head_satisfied(&self) -> bool {
            false
        }
    }

    /// The stream rewritten in pieces of `size` bytes.
    fn rewrite(kind: ShellKind, input: &str, size: usize) -> String {
        let mut out = Collect::default();
        let mut names = ErrorNames::new(&mut out, kind, Path::new(FILE));
        for piece in input.as_bytes().chunks(size.max(1)) {
            names.chunk(piece);
        }
        names.finish();
        String::from_utf8(out.0).expect("utf-8")
    }

    fn check(kind: ShellKind, input: &str, want: &str) {
        for size in [1, 2, 3, 7, 16, 64, input.len().max(1)] {
            assert_eq!(
                rewrite(kind, input, size),
                want,
                "{input:?} in pieces of {size}"
            );
        }
    }

    #[test]
    fn bash_messages_read_as_bash_c_prints_them() {
        let f = FILE;
        check(
            ShellKind::Bash,
            &format!("{f}: line 1: nosuchcmd: command not found\n"),
            "bash: line 1: nosuchcmd: command not found\n",
        );
        check(
            ShellKind::Bash,
            &format!(
                "{f}: line 12: syntax error near unexpected token `newline'\n{f}: line 12: `echo ('\n"
            ),
            "bash: -c: line 12: syntax error near unexpected token `newline'\nbash: -c: line 12: `echo ('\n",
        );
        check(
            ShellKind::Bash,
            &format!("{f}: line 2: syntax error: unexpected end of file"),
            "bash: -c: line 2: syntax error: unexpected end of file",
        );
        check(
            ShellKind::Bash,
            &format!("out{f}: line 3: cd: /x: No such file or directory\nmore\n"),
            "outbash: line 3: cd: /x: No such file or directory\nmore\n",
        );
        // A runtime message starting with a backtick is not an echoed line.
        check(
            ShellKind::Bash,
            &format!("{f}: line 1: `a=b': not a valid identifier\n"),
            "bash: line 1: `a=b': not a valid identifier\n",
        );
    }

    #[test]
    fn other_mentions_of_the_path_and_near_misses_pass_unchanged() {
        for input in [
            format!("{FILE}\n"),
            format!("{FILE}: not a line\n"),
            format!("{FILE}: line x: y\n"),
            format!("{FILE}: line 3 oops\n"),
            "/dev/shm/agentsh-Ab12Cd/comman".to_owned(),
            "/dev/shm/agentsh-Ab12Cd/commandeer: line 1: x\n".to_owned(),
            "plain output with no path at all\n".to_owned(),
            String::new(),
        ] {
            check(ShellKind::Bash, &input, &input);
        }
    }

    #[test]
    fn zsh_and_sh_messages_lose_the_path() {
        check(
            ShellKind::Zsh,
            &format!(
                "{FILE}:1: command not found: foo\n{FILE}:cd:1: no such file or directory: /x\n"
            ),
            "zsh:1: command not found: foo\nzsh:cd:1: no such file or directory: /x\n",
        );
        check(
            ShellKind::Sh,
            &format!("sh: 1: {FILE}: foo: not found\n"),
            "sh: 1: foo: not found\n",
        );
    }

    #[test]
    fn partial_matches_are_the_longest_proper_start() {
        assert_eq!(partial_match_len(b"abc/dev/sh", FILE.as_bytes()), 7);
        assert_eq!(partial_match_len(b"abc", FILE.as_bytes()), 0);
        assert_eq!(partial_match_len(b"x/", FILE.as_bytes()), 1);
        assert_eq!(partial_match_len(b"", FILE.as_bytes()), 0);
    }
}
