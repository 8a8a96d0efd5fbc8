//! make, with the compilers it runs (gcc, clang): the commands make echoes (`gcc -c …`, `cc …`,
//! `ar rcs …`, `make -C lib`, automake's `  CC  foo.o`) and `make[1]: Entering/Leaving
//! directory` are left out; so is the snippet of a warning (its source line and caret: the
//! warning's own line has the location). Kept: every diagnostic with its context (`In function
//! 'x':`, `At top level:`, `In file included from …`), an error's snippet, the linker's
//! messages, and everything make does not echo as a command.
//!
//! Summary lines: `make: *** [Makefile:9: x.o] Error 1` (with the `Leaving directory` line
//! right after a sub-make's, which says where it failed), `make: Nothing to be done for …`,
//! `make: 'x' is up to date.`, clang's `2 warnings and 1 error generated.`, collect2's
//! `ld returned 1 exit status`.

use crate::engine::{Label, Shaper, Verdict};
use crate::select::Target;
use crate::shapers::blank;

const COMMANDS: Label<'static> = Label::Lines("commands");

/// Tools whose command lines make echoes (a cross prefix such as `x86_64-linux-gnu-` and a
/// version suffix such as `-12` aside).
const TOOLS: &[&str] = &[
    "gcc", "g++", "cc", "c++", "clang", "clang++", "ld", "ld.lld", "ld.gold", "ar", "ranlib", "as",
    "nasm", "strip", "objcopy", "libtool", "make", "gmake", "rm", "mkdir", "cp", "mv", "ln",
    "install", "touch", "nvcc", "gfortran", "ccache",
];

pub(crate) fn shaper(target: &Target) -> Option<Box<dyn Shaper>> {
    // `make -n` prints the commands it would run: they are the output asked for.
    if [
        "-n",
        "--dry-run",
        "--just-print",
        "--recon",
        "-p",
        "--print-data-base",
    ]
    .iter()
    .any(|flag| target.has(flag))
    {
        return None;
    }
    Some(Box::new(Make::default()))
}

/// Where in make's output a line stands.
#[derive(Default, PartialEq, Eq, Clone, Copy)]
enum Block {
    #[default]
    Top,
    /// After a compiler warning: its snippet is left out.
    Warning,
    /// Just after a warning's line: clang's source line without a gutter may follow.
    WarningHeader,
    /// After a compiler error: its snippet is kept.
    Error,
}

#[derive(Default)]
struct Make {
    block: Block,
    /// The last line was a sub-make's `make[N]: *** … Error`.
    sub_make_failed: bool,
}

impl Shaper for Make {
    fn line(&mut self, line: &str) -> Verdict<'_> {
        let sub_make_failed = std::mem::take(&mut self.sub_make_failed);
        if let Some(rest) = make_message(line) {
            self.block = Block::Top;
            if rest.starts_with("Entering directory ") {
                return Verdict::Drop(Label::Quiet);
            }
            if rest.starts_with("Leaving directory ") {
                // Kept after a sub-make's error: it says where the error was.
                return if sub_make_failed {
                    Verdict::Keep
                } else {
                    Verdict::Drop(Label::Quiet)
                };
            }
            self.sub_make_failed = rest.starts_with("*** ") && line.starts_with("make[");
            return Verdict::Keep;
        }
        if is_command(line) {
            self.block = Block::Top;
            return Verdict::Drop(COMMANDS);
        }
        if let Some(severity) = compiler_severity(line) {
            match severity {
                "warning" => self.block = Block::WarningHeader,
                "error" | "fatal error" => self.block = Block::Error,
                // A note belongs to the diagnostic before it.
                _ if self.block == Block::Warning => self.block = Block::WarningHeader,
                _ => {}
            }
            return Verdict::Keep;
        }
        if is_context(line) {
            self.block = Block::Top;
            return Verdict::Keep;
        }
        if blank(line) {
            return Verdict::Drop(Label::Quiet);
        }
        let header = self.block == Block::WarningHeader;
        if header {
            self.block = Block::Warning;
        }
        if self.block == Block::Warning && (is_snippet(line) || header) {
            return Verdict::Drop(Label::Quiet);
        }
        if self.block == Block::Warning {
            self.block = Block::Top;
        }
        Verdict::Keep
    }
}

/// What make says of itself: `make: *** …`, `make[1]: Entering directory '…'`.
fn make_message(line: &str) -> Option<&str> {
    let (head, rest) = line.split_once(": ")?;
    let name = head.rsplit('/').next().unwrap_or(head);
    let name = name.split_once('[').map_or(
        name,
        |(name, level)| {
            if level.ends_with(']') { name } else { "" }
        },
    );
    matches!(name, "make" | "gmake").then_some(rest)
}

/// A command line make echoed before running it: `gcc -Wall -c a.c -o a.o`, `make -C lib`,
/// automake's and kbuild's `  CC       src/a.o`.
fn is_command(line: &str) -> bool {
    let Some(first) = line.split_whitespace().next() else {
        return false;
    };
    if !line.starts_with(' ') {
        // A message (`gcc: error: …`) or a lone word is not a command.
        if first.ends_with(':') || line.len() == first.len() {
            return false;
        }
        let name = first.rsplit('/').next().unwrap_or(first);
        // A version suffix: `gcc-12`, `clang-17`.
        let name = match name.rsplit_once('-') {
            Some((tool, version)) if version.bytes().all(|b| b.is_ascii_digit() || b == b'.') => {
                tool
            }
            _ => name,
        };
        return TOOLS.iter().any(|tool| {
            name == *tool
                || name
                    .strip_suffix(tool)
                    .is_some_and(|prefix| prefix.len() > 1 && prefix.ends_with('-'))
        });
    }
    // `  CC       src/a.o`, `  CCLD     prog`, `  CC [M]  drivers/x.o`.
    let mut words = line.split_whitespace();
    let tag = words.next().unwrap_or("");
    let mut target = words.next();
    if target == Some("[M]") {
        target = words.next();
    }
    line.starts_with("  ")
        && (2..=8).contains(&tag.len())
        && tag
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        && target.is_some()
        && words.next().is_none()
}

/// The severity of a compiler's diagnostic line: `a.c:5:9: warning: …` → `warning`.
fn compiler_severity(line: &str) -> Option<&str> {
    let mut parts = line.splitn(5, ": ");
    let location = parts.next()?;
    let (_, number) = location.rsplit_once(':')?;
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let severity = parts.next()?;
    ["warning", "error", "fatal error", "note"]
        .into_iter()
        .find(|s| severity == *s)
}

/// The lines gcc prints before a diagnostic to place it: `a.c: In function 'x':`, `a.c: At
/// top level:`, `In file included from a.h:3,`, `                 from b.c:1:`.
fn is_context(line: &str) -> bool {
    let trimmed = line.trim_start();
    trimmed.starts_with("In file included from ")
        || trimmed.starts_with("from ") && line.starts_with("   ") && line.ends_with([',', ':'])
        || line.split_once(": ").is_some_and(|(_, rest)| {
            (rest.starts_with("In function ")
                || rest.starts_with("In member function ")
                || rest.starts_with("In constructor ")
                || rest.starts_with("In destructor ")
                || rest.starts_with("In instantiation of ")
                || rest.starts_with("In lambda function")
                || rest.starts_with("At top level"))
                && rest.ends_with(':')
        })
}

/// A line of a diagnostic's snippet: `    5 |     int unused;`, `      |         ^~~~~~`,
/// clang's caret line `        ^~~~`.
fn is_snippet(line: &str) -> bool {
    let trimmed = line.trim_start();
    let after_number = trimmed.trim_start_matches(|c: char| c.is_ascii_digit());
    after_number.trim_start().starts_with('|')
        || trimmed
            .chars()
            .all(|c| matches!(c, '^' | '~' | ' ' | '|' | '_' | '+'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(lines: &[&str]) -> Vec<bool> {
        let mut make = Make::default();
        lines
            .iter()
            .map(|l| !matches!(make.line(l), Verdict::Drop(_)))
            .collect()
    }

    #[test]
    fn echoed_commands_are_recognised() {
        for line in [
            "gcc -Wall -O2 -c add.c -o add.o",
            "cc -c -o a.o a.c",
            "/usr/bin/clang++ -std=c++17 -c x.cc",
            "x86_64-linux-gnu-gcc-12 -c a.c",
            "ar rcs libcalc.a add.o",
            "make -C lib",
            "  CC       src/a.o",
            "  CC [M]  drivers/x.o",
        ] {
            assert!(is_command(line), "{line}");
        }
        for line in [
            "gcc: error: a.c: No such file or directory",
            "collect2: error: ld returned 1 exit status",
            "/usr/bin/ld: main.o: in function `main':",
            "  All tests passed",
            "make: *** [Makefile:10: app] Error 2",
            "ccache",
        ] {
            assert!(!is_command(line), "{line}");
        }
    }

    #[test]
    fn a_warnings_snippet_is_left_out_an_errors_kept() {
        let lines = [
            "div.c: In function ‘divide’:",
            "div.c:5:9: warning: unused variable ‘unused’ [-Wunused-variable]",
            "    5 |     int unused;",
            "      |         ^~~~~~",
            "report.c:13:19: error: incompatible types",
            "   13 |     char *label = mean(&value, 1);",
            "      |                   ^~~~",
            "report.c:14:55: note: each undeclared identifier is reported only once",
            "a.c:3:1: warning: x",
            "    int x;",
            "        ^",
            "output of a program",
        ];
        assert_eq!(
            kept(&lines),
            [
                true, true, false, false, true, true, true, true, true, false, false, true
            ]
        );
    }

    #[test]
    fn leaving_directory_is_kept_after_a_sub_makes_error_only() {
        let lines = [
            "make[1]: Entering directory '/w/lib'",
            "make[1]: Leaving directory '/w/lib'",
            "make[1]: *** [Makefile:9: report.o] Error 1",
            "make[1]: Leaving directory '/w/src'",
            "make: *** [Makefile:10: app] Error 2",
        ];
        assert_eq!(kept(&lines), [false, false, true, true, true]);
    }
}
