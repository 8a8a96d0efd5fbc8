//! pytest (`pytest`, `python -m pytest`, `uv run pytest`): the session header (`platform`,
//! `rootdir`, `plugins`, …) and the progress of passing tests (`tests/test_a.py ....  [ 40%]`,
//! `-v`'s `PASSED` lines) are left out; progress lines that show a failure (`F`, `E`), the
//! `FAILURES` and `ERRORS` sections (each `____ test ____` block whole but for blank lines,
//! caret underlines and the code lines of library frames), the warnings summary and the
//! short test summary are kept.
//!
//! Summary lines: the closing `=== 2 failed, 57 passed in 0.12s ===` (`-q`: without the `=`),
//! `!!! Interrupted: 1 error during collection !!!`, and the `short test summary info` lines.

use crate::engine::{Label, Shaper, Verdict};
use crate::select::Target;
use crate::shapers::blank;

const PROGRESS: Label<'static> = Label::Lines("progress of passing tests");
const PASSING: Label<'static> = Label::Items("passing test", "passing tests");
const SKIPPED: Label<'static> = Label::Items("skipped test", "skipped tests");
const LIBRARY: Label<'static> = Label::Lines("library frames");
const PASSES: Label<'static> = Label::Lines("output of passing tests");

pub(crate) fn shaper(target: &Target) -> Option<Box<dyn Shaper>> {
    // Listings and help are short or for reading whole.
    let lists = [
        "--collect-only",
        "--co",
        "--help",
        "-h",
        "--version",
        "--fixtures",
    ];
    if lists.iter().any(|flag| target.has(flag)) {
        return None;
    }
    Some(Box::new(Pytest::default()))
}

/// The part of pytest's output a line is in, from the `=== title ===` lines.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Section {
    /// `test session starts`: platform, rootdir, plugins, `collected N items`.
    Header,
    /// Progress: `tests/test_a.py ..F.` or `-v`'s `test_a.py::test_x PASSED`.
    #[default]
    Progress,
    /// `FAILURES` or `ERRORS`: tracebacks, kept.
    Failures,
    /// `PASSES` (`-rP`): the output of passing tests.
    Passes,
    /// `short test summary info`: one line per failure, kept; the rest of a multi-line
    /// message (under `CI`, a whole assertion diff) repeats the failure's block above.
    ShortSummary,
    /// `warnings summary` and the other sections: kept.
    Kept,
}

/// The rest of a failure's message in the short summary: its block above has it.
const REPEATED: Label<'static> = Label::Lines("the message again, as in its failure above");

#[derive(Default)]
struct Pytest {
    section: Section,
    /// In a traceback, the code lines under a frame of a library (site-packages, the
    /// standard library, `<frozen …>`).
    library_frame: bool,
    /// A `FAILURES` or `ERRORS` section was printed: the short summary's messages repeat it.
    failures_shown: bool,
}

/// The title of a `===== title =====` section line.
fn section_title(line: &str) -> Option<&str> {
    let inner = line.strip_prefix("==")?.strip_suffix("==")?;
    let title = inner.trim_matches('=');
    (title.len() < inner.len()).then(|| title.trim())
}

/// A progress line of the default or `-q` output: an optional test file, then one status
/// character per test, then an optional `[ 40%]`. Returns the status characters.
fn progress_statuses(line: &str) -> Option<&str> {
    let mut rest = line.trim_end();
    if let Some(open) = rest.rfind('[') {
        let percent = rest[open + 1..].strip_suffix("%]")?;
        if !percent.trim().bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        rest = rest[..open].trim_end();
    }
    let statuses = match rest.rsplit_once(' ') {
        Some((file, statuses))
            if file
                .rsplit_once('.')
                .is_some_and(|(_, ext)| ext.eq_ignore_ascii_case("py"))
                || file.contains("::") =>
        {
            statuses
        }
        Some(_) => return None,
        None => rest,
    };
    let valid = !statuses.is_empty() && statuses.bytes().all(|b| b".FEsxXP".contains(&b));
    valid.then_some(statuses)
}

/// A traceback frame's location line in a library: `…/site-packages/x.py:12: in f`,
/// `/usr/lib/python3.12/importlib/__init__.py:90: in import_module`, `<frozen …>:1: in f`.
fn is_library_frame(line: &str) -> bool {
    let Some((path, _)) = line.split_once(": in ") else {
        return false;
    };
    path.starts_with("<frozen ")
        || path.contains("/site-packages/")
        || path.contains("/dist-packages/")
        || path.contains("/lib/python3")
        || path.contains("/lib/python2")
}

/// A traceback frame's location line (`tests/test_a.py:12: in helper`, `calc.py:3: ValueError`).
fn is_frame(line: &str) -> bool {
    !line.starts_with(' ') && (line.contains(": in ") || is_library_frame(line))
}

impl Shaper for Pytest {
    fn line(&mut self, line: &str) -> Verdict<'_> {
        if let Some(title) = section_title(line) {
            self.library_frame = false;
            let (section, verdict) = match title {
                "test session starts" => (Section::Header, Verdict::Drop(Label::Quiet)),
                "FAILURES" | "ERRORS" => {
                    self.failures_shown = true;
                    (Section::Failures, Verdict::Keep)
                }
                "PASSES" => (Section::Passes, Verdict::Drop(PASSES)),
                "short test summary info" => (Section::ShortSummary, Verdict::Keep),
                // `warnings summary`, the closing counts.
                _ => (Section::Kept, Verdict::Keep),
            };
            self.section = section;
            return verdict;
        }
        if blank(line) {
            // A blank line ends the header; elsewhere it only separates.
            if self.section == Section::Header {
                self.section = Section::Progress;
            }
            return Verdict::Drop(Label::Quiet);
        }
        match self.section {
            Section::Header => header_line(line),
            Section::Progress => progress_line(line),
            Section::Failures => self.failure_line(line),
            Section::Passes => Verdict::Drop(PASSES),
            Section::ShortSummary if self.failures_shown && line.starts_with(' ') => {
                Verdict::Drop(REPEATED)
            }
            Section::ShortSummary | Section::Kept => {
                if line.starts_with("-- Docs: ") {
                    Verdict::Drop(Label::Quiet)
                } else if line.starts_with("PASSED ") {
                    // `-rA` lists every passing test again.
                    Verdict::Drop(PASSING)
                } else {
                    Verdict::Keep
                }
            }
        }
    }
}

/// A line of the session header: the environment is left out quietly; `collected` is kept
/// when it says more than a count (`/ 3 errors`, `/ 40 deselected`).
fn header_line(line: &str) -> Verdict<'static> {
    let environment = [
        "platform ",
        "cachedir: ",
        "rootdir: ",
        "configfile: ",
        "inifile: ",
        "testpaths: ",
        "plugins: ",
        "Using --randomly-seed",
        "hypothesis profile ",
        "benchmark: ",
        "asyncio: ",
        "django: ",
        "created: ",
    ];
    if environment.iter().any(|p| line.starts_with(p)) {
        return Verdict::Drop(Label::Quiet);
    }
    let collected = line
        .strip_prefix("collecting ... ")
        .unwrap_or(line)
        .starts_with("collected ");
    if collected && !line.contains(" / ") {
        return Verdict::Drop(Label::Quiet);
    }
    Verdict::Keep
}

/// A line of progress: passing tests left out, failures kept.
fn progress_line(line: &str) -> Verdict<'static> {
    if let Some(statuses) = progress_statuses(line) {
        return if statuses.contains(['F', 'E']) {
            Verdict::Keep
        } else {
            Verdict::Drop(PROGRESS)
        };
    }
    // `-v`: `tests/test_a.py::test_x PASSED   [ 10%]`; xdist: `[gw0] [ 10%] PASSED tests/…`.
    let verbose = line.contains("::") || line.starts_with("[gw");
    if verbose {
        let words = || line.split_whitespace();
        if words().any(|w| w == "PASSED") {
            return Verdict::Drop(PASSING);
        }
        if words().any(|w| w == "SKIPPED") {
            return Verdict::Drop(SKIPPED);
        }
    }
    Verdict::Keep
}

impl Pytest {
    /// A line of the `FAILURES` or `ERRORS` section: kept, but for the code under library
    /// frames, caret underlines and the `_ _ _` lines between frames.
    fn failure_line(&mut self, line: &str) -> Verdict<'static> {
        if is_frame(line) {
            self.library_frame = is_library_frame(line);
            return if self.library_frame {
                Verdict::Drop(LIBRARY)
            } else {
                Verdict::Keep
            };
        }
        if !line.starts_with(' ') {
            // `E   …`, a test's `____ name ____` line, `>   code`, a captured-output header.
            self.library_frame = false;
        }
        if self.library_frame {
            return Verdict::Drop(LIBRARY);
        }
        let trimmed = line.trim();
        if trimmed
            .bytes()
            .all(|b| matches!(b, b'^' | b'~' | b'-' | b'+'))
            && trimmed.contains('^')
        {
            return Verdict::Drop(Label::Quiet);
        }
        if trimmed.starts_with("_ _ ") && trimmed.bytes().all(|b| b == b'_' || b == b' ') {
            return Verdict::Drop(Label::Quiet);
        }
        Verdict::Keep
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_are_told_from_other_lines() {
        assert_eq!(
            progress_statuses("tests/test_a.py ....F.   [ 50%]"),
            Some("....F.")
        );
        assert_eq!(progress_statuses("....s.....  [100%]"), Some("....s....."));
        assert_eq!(progress_statuses("tests/test_a.py .."), Some(".."));
        assert_eq!(progress_statuses("collected 3 items"), None);
        assert_eq!(progress_statuses("E   assert 2 == 3"), None);
        assert_eq!(progress_statuses("see notes [ 50%]"), None);
    }

    #[test]
    fn section_titles_are_read() {
        assert_eq!(section_title("===== FAILURES ====="), Some("FAILURES"));
        assert_eq!(
            section_title("=== 2 failed, 57 passed in 0.12s ==="),
            Some("2 failed, 57 passed in 0.12s")
        );
        assert_eq!(section_title("=== a ==="), Some("a"));
        assert_eq!(section_title("E   =="), None);
    }

    #[test]
    fn a_short_summary_message_repeated_from_its_failure_is_left_out() {
        let summary = [
            "=========================== short test summary info ============================",
            "FAILED tests/test_a.py::test_x - AssertionError: assert {'a': 1} == {'a': 2}",
            "  Differing items:",
            "  {'a': 1} != {'a': 2}",
            "FAILED tests/test_a.py::test_y - KeyError: 'k'",
        ];
        let after_failures = {
            let mut pytest = Pytest {
                failures_shown: true,
                ..Pytest::default()
            };
            summary.map(|line| format!("{:?}", pytest.line(line)))
        };
        assert_eq!(
            after_failures.map(|v| v.starts_with("Drop")),
            [false, false, true, true, false]
        );
        // With `--tb=no` the summary is the only place the message is: kept.
        let mut alone = Pytest::default();
        assert!(summary.iter().all(|line| alone.line(line) == Verdict::Keep));
    }

    #[test]
    fn library_frames_end_at_the_next_unindented_line() {
        let mut pytest = Pytest {
            section: Section::Failures,
            ..Pytest::default()
        };
        let verdicts: Vec<bool> = [
            "<frozen importlib._bootstrap>:1204: in _gcd_import",
            "    ???",
            "../venv/lib/python3.11/site-packages/_pytest/python.py:528: in importtestmodule",
            "    mod = import_path(",
            "tests/test_a.py:4: in helper",
            "    return parse(text)",
            "E   ValueError: boom",
        ]
        .iter()
        .map(|line| matches!(pytest.failure_line(line), Verdict::Keep))
        .collect();
        assert_eq!(verdicts, [false, false, false, false, true, true, true]);
    }

    #[test]
    fn verbose_lines_of_passing_and_skipped_tests_are_left_out() {
        let verdict = progress_line("tests/test_a.py::test_x[1-2] PASSED         [  1%]");
        assert_eq!(verdict, Verdict::Drop(PASSING));
        let verdict = progress_line("[gw1] [ 50%] PASSED tests/test_a.py::test_y");
        assert_eq!(verdict, Verdict::Drop(PASSING));
        let verdict = progress_line("tests/test_a.py::test_z SKIPPED (not yet)    [ 98%]");
        assert_eq!(verdict, Verdict::Drop(SKIPPED));
        let verdict = progress_line("tests/test_a.py::test_w FAILED               [ 99%]");
        assert_eq!(verdict, Verdict::Keep);
    }
}
