//! jest and vitest (`jest`, `npx jest`, `vitest`, `vitest run`): test files that pass (`PASS
//! file` with what `--verbose` lists under it; vitest's `✓ file (4 tests)`) and passing or
//! skipped tests in a failing file (`✓ name`, `○ skipped name`, `↓ name`) are left out;
//! failing files keep their `●` blocks (jest) and `FAIL file > test` blocks (vitest) whole but
//! for blank lines, separators, stack frames in `node_modules` or node itself, and the context
//! lines of code frames: of an excerpt of the source, only the failing line is kept (jest's
//! `> 12 |` line; vitest's line of the `❯ file:12:37` location above it), since the location
//! says where to read the rest.
//!
//! Summary lines: jest's `Test Suites: 3 failed, 3 passed, 6 total`, `Tests: 4 failed, 41
//! passed, 46 total`, `Snapshots:`, `Time:`, `Ran all test suites.`; vitest's `Test Files  3
//! failed | 3 passed (6)`, `Tests  4 failed | 41 passed (46)`, `Duration`.

use crate::engine::{Label, Shaper, Verdict};
use crate::select::Target;
use crate::shapers::blank;

const PASSING_FILES: Label<'static> = Label::Lines("passing test files");
const PASSING: Label<'static> = Label::Items("passing test", "passing tests");
const SKIPPED: Label<'static> = Label::Items("skipped test", "skipped tests");
const FRAMES: Label<'static> = Label::Lines("node_modules and node frames");

pub(crate) fn shaper(target: &Target) -> Option<Box<dyn Shaper>> {
    let sub = target.args.iter().find(|arg| !arg.starts_with('-'));
    if target.program == "vitest" {
        // `vitest` (watch mode ends only when run without a terminal), `vitest run`.
        match sub.map(String::as_str) {
            None | Some("run" | "related") => {}
            Some(other) if other.contains('/') || other.contains('.') => {}
            Some(_) => return None,
        }
    }
    let listing = [
        "--listTests",
        "--showConfig",
        "--help",
        "--version",
        "--list",
    ];
    if listing.iter().any(|flag| target.has(flag)) {
        return None;
    }
    Some(Box::new(Jest::default()))
}

/// Where in the output a line stands.
#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum Block {
    #[default]
    Top,
    /// A passing test file and what is listed under it: left out.
    PassingFile,
    /// A failing test file, a failure's details: kept.
    Failing,
}

#[derive(Default)]
struct Jest {
    block: Block,
    /// The line of vitest's last `❯ file:12:37` location: the line of its code frame kept.
    focus: Option<u32>,
}

/// A passing test or file line of vitest or jest's `--verbose`: `✓ name (3 ms)`.
fn passing_mark(trimmed: &str) -> bool {
    trimmed.starts_with("✓ ") || trimmed.starts_with("√ ")
}

/// vitest's line for a whole test file: `✓ sum.test.js (4 tests) 3ms`.
fn is_vitest_file(trimmed: &str) -> bool {
    trimmed.split_once(" (").is_some_and(|(_, rest)| {
        rest.starts_with(|c: char| c.is_ascii_digit()) && rest.contains(" test")
    })
}

/// A stack frame in a dependency or in node: `at x (node_modules/…)`, `at node:internal/…`,
/// `at Array.map (<anonymous>)`.
fn is_library_frame(trimmed: &str) -> bool {
    let Some(frame) = trimmed.strip_prefix("at ") else {
        return false;
    };
    frame.contains("node_modules/")
        || frame.contains("(node:")
        || frame.starts_with("node:")
        || frame.ends_with("(<anonymous>)")
}

/// A line of a code frame: jest's `    > 12 |   code` (marked: `true`) and `      10 | code`,
/// vitest's `     12|   code`, and the caret line under the failing one (`|    ^`: no
/// number).
fn code_frame(trimmed: &str) -> Option<(bool, Option<u32>)> {
    let (marked, rest) = match trimmed.strip_prefix("> ") {
        Some(rest) => (true, rest.trim_start()),
        None => (false, trimmed),
    };
    if let Some(caret) = rest.strip_prefix('|') {
        let caret = caret.trim();
        return (caret.is_empty() || caret.bytes().all(|b| b == b'^' || b == b'~'))
            .then_some((marked, None));
    }
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || !rest[digits..].trim_start().starts_with('|') {
        return None;
    }
    Some((marked, rest[..digits].parse().ok()))
}

/// The line of a vitest location: `❯ add.test.js:8:46`, `❯ check parse.test.js:4:10` → 8, 4.
fn location_line(trimmed: &str) -> Option<u32> {
    let location = trimmed.strip_prefix("❯ ")?.rsplit(' ').next()?;
    let mut parts = location.rsplitn(3, ':');
    let _column = parts.next()?;
    parts.next()?.parse().ok()
}

/// A summary line of jest or vitest.
fn is_summary(trimmed: &str) -> bool {
    [
        "Test Suites:",
        "Tests:",
        "Snapshots:",
        "Time:",
        "Ran all test suites",
        "Test Files ",
        "Tests ",
        "Duration ",
        "Summary of all failing tests",
    ]
    .iter()
    .any(|p| trimmed.starts_with(p))
}

impl Jest {
    fn classify(&mut self, line: &str) -> Verdict<'static> {
        let trimmed = line.trim();
        if blank(line) {
            // A blank line joins the run before it, as no item of its own.
            return Verdict::DropMore;
        }
        if line.starts_with("PASS ") {
            self.block = Block::PassingFile;
            return Verdict::Drop(PASSING_FILES);
        }
        if line.starts_with("FAIL ") {
            self.block = Block::Failing;
            return Verdict::Keep;
        }
        if is_summary(trimmed) {
            self.block = Block::Top;
            return Verdict::Keep;
        }
        if trimmed.starts_with("Start at ") || trimmed.starts_with("RUN ") {
            return Verdict::Drop(Label::Quiet);
        }
        // vitest.
        let file = trimmed
            .strip_prefix("✓ ")
            .filter(|rest| is_vitest_file(rest) && !line.starts_with("   "));
        if file.is_some() {
            self.block = Block::PassingFile;
            return Verdict::Drop(PASSING_FILES);
        }
        if trimmed
            .strip_prefix("❯ ")
            .is_some_and(|rest| is_vitest_file(rest) && !line.starts_with("   "))
        {
            self.block = Block::Failing;
            return Verdict::Keep;
        }
        if trimmed.starts_with("FAIL ") || trimmed.starts_with("⎯") {
            self.block = Block::Failing;
            // `⎯⎯⎯[1/4]⎯` separators between failures say nothing.
            if trimmed.starts_with('⎯') && !trimmed.contains(char::is_alphabetic) {
                return Verdict::Drop(Label::Quiet);
            }
            return Verdict::Keep;
        }
        match self.block {
            Block::PassingFile => Verdict::Drop(PASSING_FILES),
            Block::Failing | Block::Top => {
                if let Some(line) = location_line(trimmed) {
                    self.focus = Some(line);
                    return Verdict::Keep;
                }
                if self.block == Block::Failing
                    && let Some((marked, number)) = code_frame(trimmed)
                {
                    let failing = marked || number.is_some() && number == self.focus;
                    return if failing {
                        Verdict::Keep
                    } else {
                        Verdict::Drop(Label::Quiet)
                    };
                }
                if passing_mark(trimmed) {
                    return Verdict::Drop(PASSING);
                }
                if trimmed.starts_with("○ ") || trimmed.starts_with("↓ ") {
                    return Verdict::Drop(SKIPPED);
                }
                if is_library_frame(trimmed) {
                    return Verdict::Drop(FRAMES);
                }
                Verdict::Keep
            }
        }
    }
}

impl Shaper for Jest {
    fn line(&mut self, line: &str) -> Verdict<'_> {
        self.classify(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_passing_file_is_left_out_with_what_is_listed_under_it() {
        let mut jest = Jest::default();
        let got: Vec<Verdict<'_>> = [
            "PASS ./sum.test.js",
            "  sum",
            "    ✓ of [1,2] (2 ms)",
            "",
            "FAIL ./div.test.js",
            "  div",
            "    ✓ exact (1 ms)",
            "    ✕ negative (3 ms)",
            "    ○ skipped quoted",
            "",
            "  ● div › negative",
        ]
        .iter()
        .map(|line| jest.classify(line))
        .collect();
        assert_eq!(got[..3], [Verdict::Drop(PASSING_FILES); 3]);
        assert_eq!(
            got[3],
            Verdict::DropMore,
            "a blank line joins the run before it"
        );
        assert_eq!(got[4..6], [Verdict::Keep; 2]);
        assert_eq!(got[6], Verdict::Drop(PASSING));
        assert_eq!(got[7], Verdict::Keep);
        assert_eq!(got[8], Verdict::Drop(SKIPPED));
        assert_eq!(
            got[9],
            Verdict::DropMore,
            "a blank line joins the skipped test's run, as no test of its own"
        );
        assert_eq!(got[10], Verdict::Keep);
    }

    #[test]
    fn only_the_failing_line_of_a_code_frame_is_kept() {
        assert_eq!(
            code_frame("> 12 |     expect(x).toBe(1);"),
            Some((true, Some(12)))
        );
        assert_eq!(code_frame("10 |   });"), Some((false, Some(10))));
        assert_eq!(code_frame("|     ^"), Some((false, None)));
        assert_eq!(
            code_frame("8|   test('floats', () => {"),
            Some((false, Some(8)))
        );
        assert_eq!(code_frame("4 |"), Some((false, Some(4))));
        assert_eq!(code_frame("- Expected  - 1"), None);
        assert_eq!(code_frame("| a | b |"), None);
        assert_eq!(location_line("❯ add.test.js:8:46"), Some(8));
        assert_eq!(location_line("❯ check parse.test.js:4:10"), Some(4));
        assert_eq!(
            location_line("❯ add.test.js (17 tests | 1 failed) 10ms"),
            None
        );
    }

    #[test]
    fn vitest_file_lines_are_told_from_test_lines() {
        assert!(is_vitest_file("max.test.js (4 tests) 3ms"));
        assert!(is_vitest_file(
            "parse.test.js (11 tests | 2 failed | 1 skipped) 26ms"
        ));
        assert!(!is_vitest_file("parses a=1 6ms"));
        assert!(!is_vitest_file("commutes (a, b) 0ms"));
    }
}
