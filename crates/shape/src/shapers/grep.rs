//! grep and rg: every line is kept. Consecutive matches in one file are written under the
//! file's name once (`src/a.rs:` then `  12:text`); with context (`-A`, `-B`, `-C`) under the
//! name without its separator, so that match (`:12:`) and context (`-11-`) lines stay in one
//! group. A list of files (`-l`, `-L`, `-c`, `rg --files`) is grouped by directory. Not shaped
//! when no file names are printed (one file searched, `-h`), or in a format of its own
//! (`--heading`, `-Z`, `-q`). grep and rg print no summary; their messages (`grep: x: No such
//! file or directory`) are kept.

use crate::engine::{Shaper, Verdict};
use crate::select::Target;
use crate::shapers::find::dir_prefix;

/// What the output lines are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `path:text` or `path:12:text`: grouped by file.
    Matches,
    /// As `Matches`, with context lines (`path-11-text`) and `--` separators.
    Context,
    /// One path per line (`path` or `path:3`): grouped by directory.
    Files,
}

/// Options that take a value (short letters, long names): grep's.
const GREP_VALUES: (&str, &[&str]) = (
    "efmABCdD",
    &[
        "regexp",
        "file",
        "max-count",
        "context",
        "after-context",
        "before-context",
        "include",
        "exclude",
        "exclude-dir",
        "exclude-from",
        "label",
        "binary-files",
        "devices",
        "directories",
        "color",
        "colour",
    ],
);

/// Options that take a value (short letters, long names): rg's.
const RG_VALUES: (&str, &[&str]) = (
    "efmABCgtTjMrEd",
    &[
        "regexp",
        "file",
        "max-count",
        "context",
        "after-context",
        "before-context",
        "glob",
        "iglob",
        "type",
        "type-not",
        "type-add",
        "max-depth",
        "threads",
        "encoding",
        "color",
        "colors",
        "max-columns",
        "max-filesize",
        "sort",
        "sortr",
        "context-separator",
        "field-match-separator",
        "path-separator",
        "pre",
        "pre-glob",
        "ignore-file",
    ],
);

pub(crate) fn shaper(target: &Target) -> Option<Box<dyn Shaper>> {
    let rg = target.program == "rg";
    let mut shorts = String::new();
    let mut longs = Vec::new();
    let mut operands = Vec::new();
    let mut after_dashes = false;
    let mut takes_value = false;
    let (short_values, long_values) = if rg { RG_VALUES } else { GREP_VALUES };
    for arg in &target.args {
        if std::mem::take(&mut takes_value) {
            continue;
        }
        if after_dashes || !arg.starts_with('-') || arg == "-" {
            operands.push(arg.as_str());
        } else if arg == "--" {
            after_dashes = true;
        } else if let Some(long) = arg.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or(long);
            takes_value = !long.contains('=') && long_values.contains(&name);
            longs.push(name);
        } else {
            let cluster = &arg[1..];
            // `-m 3`: the value is the next word (`-m3`: attached).
            takes_value = cluster
                .char_indices()
                .find(|(_, c)| short_values.contains(*c))
                .is_some_and(|(at, c)| at + c.len_utf8() == cluster.len());
            shorts.push_str(cluster);
        }
    }
    let long = |names: &[&str]| longs.iter().any(|l| names.contains(l));
    let short = |flags: &str| flags.chars().any(|f| shorts.contains(f));
    // No output, or a format of its own.
    if short("qZ")
        || long(&[
            "quiet",
            "silent",
            "null",
            "heading",
            "pretty",
            "json",
            "no-filename",
            "vimgrep",
            "replace",
        ])
        || (!rg && short("h"))
        || (rg && short("Ip"))
    {
        return None;
    }
    let mode = if short("lLc")
        || long(&["files-with-matches", "files-without-match", "count"])
        || (rg && long(&["files", "count-matches"]))
    {
        Mode::Files
    } else if short("ABC") || long(&["context", "after-context", "before-context"]) {
        Mode::Context
    } else {
        Mode::Matches
    };
    // Whether file names are printed: a search of directories, or of more than one file.
    // (A short option's value, `-e PATTERN`, `-m 3`, is read as an operand: a pattern is one
    // more operand, so the count errs towards shaping, where names are almost always printed.)
    let patterns_given = short("ef") || long(&["regexp", "file"]);
    let files = operands.len() - usize::from(!patterns_given && !operands.is_empty());
    let glob = operands.iter().any(|o| o.contains(['*', '?', '[']));
    let names = if rg {
        mode == Mode::Files
            || files != 1
            || glob
            || operands.last().is_some_and(|p| !looks_like_file(p))
    } else {
        short("rRH")
            || long(&["recursive", "dereference-recursive", "with-filename"])
            || files > 1
            || glob
    };
    (names || mode == Mode::Files).then(|| {
        Box::new(Grep {
            mode,
            prefix: String::new(),
        }) as Box<dyn Shaper>
    })
}

/// Whether an operand of rg looks like one file rather than a directory (`src/main.rs`).
fn looks_like_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    !path.ends_with('/') && name.len() > 1 && name.contains('.') && name != ".."
}

/// grep's or rg's lines, grouped.
struct Grep {
    mode: Mode,
    /// The last line's file prefix: a line that starts with it is in the same file (a path
    /// with a `:` in it is read once, then followed).
    prefix: String,
}

/// The length of `path:` in `path:12:text` (with a line number) or `path:text`, and of
/// `path` alone when `context` (`path-11-text`, `path:12:text`).
fn file_prefix(line: &str, context: bool) -> Option<usize> {
    let bytes = line.as_bytes();
    // A separator followed by a line number and the same separator: `:12:` or `-11-`.
    for (at, &b) in bytes.iter().enumerate() {
        if at == 0 || !(b == b':' || (context && b == b'-')) {
            continue;
        }
        let digits = bytes[at + 1..]
            .iter()
            .take_while(|d| d.is_ascii_digit())
            .count();
        if digits > 0 && bytes.get(at + 1 + digits) == Some(&b) {
            return Some(if context { at } else { at + 1 });
        }
    }
    if context {
        return None;
    }
    line.find(':').filter(|&at| at > 0).map(|at| at + 1)
}

impl Shaper for Grep {
    fn keeps_every_line(&self) -> bool {
        true
    }

    fn line(&mut self, line: &str) -> Verdict<'_> {
        if line == "--" || line.starts_with("grep: ") || line.starts_with("rg: ") {
            return Verdict::Keep;
        }
        match self.mode {
            Mode::Files => {
                let path = match line.rsplit_once(':') {
                    Some((path, count)) if count.bytes().all(|b| b.is_ascii_digit()) => path,
                    _ => line,
                };
                dir_prefix(path).map_or(Verdict::Keep, Verdict::Group)
            }
            Mode::Matches | Mode::Context => {
                let context = self.mode == Mode::Context;
                let same = !self.prefix.is_empty()
                    && line.starts_with(&self.prefix)
                    && (!context || line[self.prefix.len()..].starts_with([':', '-']));
                if !same {
                    let Some(at) = file_prefix(line, context) else {
                        self.prefix.clear();
                        return Verdict::Keep;
                    };
                    line[..at].clone_into(&mut self.prefix);
                }
                Verdict::Group(self.prefix.len())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::select;

    fn shaped(command: &str) -> bool {
        shaper(&select(command).unwrap()).is_some()
    }

    #[test]
    fn only_outputs_with_file_names_are_shaped() {
        for command in [
            "grep -rn foo src",
            "grep -n foo a.rs b.rs",
            "grep foo src/*.rs",
            "grep -l foo a b",
            "grep -c foo a.rs",
            "rg foo",
            "rg -n foo src",
            "rg --files",
            "grep -rn -m 3 foo src",
        ] {
            assert!(shaped(command), "{command}");
        }
        for command in [
            "grep -n foo a.rs",
            "grep -rh foo src",
            "grep -q foo a b",
            "rg foo src/main.rs",
            "rg --heading foo",
            "rg -I foo",
            "grep -m 3 foo a.rs",
            "grep -A 2 -e foo a.rs",
            "rg -g '*.rs' foo src/main.rs",
        ] {
            assert!(!shaped(command), "{command}");
        }
    }

    #[test]
    fn the_file_prefix_ends_at_the_line_number() {
        assert_eq!(file_prefix("src/a.rs:12:let x = 1;", false), Some(9));
        assert_eq!(file_prefix("src/a.rs:let x: u8 = 1;", false), Some(9));
        assert_eq!(file_prefix("a-1.rs:3:x", false), Some(7));
        assert_eq!(file_prefix("src/a-b.rs-11-context", true), Some(10));
        assert_eq!(file_prefix("src/a-b.rs:12:match", true), Some(10));
        assert_eq!(file_prefix("no separator", false), None);
    }

    #[test]
    fn match_and_context_lines_of_one_file_share_a_group() {
        let mut grep = Grep {
            mode: Mode::Context,
            prefix: String::new(),
        };
        assert_eq!(grep.line("src/a-1.rs-11-before"), Verdict::Group(10));
        assert_eq!(grep.line("src/a-1.rs:12:match"), Verdict::Group(10));
        assert_eq!(grep.line("--"), Verdict::Keep);
        assert_eq!(grep.line("src/b.rs-3-x"), Verdict::Group(8));
    }
}
