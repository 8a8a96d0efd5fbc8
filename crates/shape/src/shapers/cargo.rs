//! cargo: `build`, `check`, `clippy`, `test`, `nextest run` (and `run`, `bench`, `doc`,
//! `install` for their cargo lines).
//!
//! Left out: progress (`Compiling`, `Checking`, `Downloaded`, …), passing and ignored tests
//! (libtest's `test x ... ok`, nextest's `PASS [0.004s] …`), the lines that only frame a test
//! unit (`Running unittests …`, `Doc-tests x`, `running 9 tests`), the snippet of a warning
//! (its header line and `-->` location are kept), frames of std, core and the test harness in
//! a backtrace, and hints (`note: run with RUST_BACKTRACE=…`). Kept whole: a compiler error, a
//! failing test's output (`---- x stdout ----` to the next test; nextest's `FAIL` line with its
//! `stdout`/`stderr` blocks), but for the empty gutter lines of a snippet (`  |`). libtest's
//! `failures:` lists are left out: every failing test has its `... FAILED` line.
//!
//! Summary lines: `Finished …`, `test result: …`, `warning: `x` (lib) generated N warnings`,
//! `error: could not compile …`, `error: test failed, to rerun pass …`, nextest's `Starting N
//! tests …` and `Summary […] …` with the `FAIL` lines after it. `cargo run` keeps everything
//! after its `Running `…`` line: that is the program's own output.

use crate::engine::{Label, Shaper, Verdict};
use crate::select::Target;
use crate::shapers::blank;

const COMPILING: Label<'static> = Label::Lines("Compiling");
const CHECKING: Label<'static> = Label::Lines("Checking");
const DOWNLOADING: Label<'static> = Label::Lines("Downloading");
const PASSING: Label<'static> = Label::Items("passing test", "passing tests");
const IGNORED: Label<'static> = Label::Items("ignored test", "ignored tests");
const FRAMES: Label<'static> = Label::Lines("std frames");
const SLOW: Label<'static> = Label::Lines("SLOW");

pub(crate) fn shaper(target: &Target) -> Option<Box<dyn Shaper>> {
    match target.subcommand.as_deref()? {
        "build" | "b" | "check" | "c" | "clippy" | "test" | "t" | "bench" | "doc" | "install" => {
            Some(Box::new(Cargo::default()))
        }
        "run" | "r" => Some(Box::new(Cargo {
            run: true,
            ..Cargo::default()
        })),
        "nextest" => match target.args.first().map(String::as_str) {
            Some("run" | "r") => Some(Box::new(Cargo::default())),
            _ => None,
        },
        _ => None,
    }
}

/// Where in cargo's output a line stands.
#[derive(Default, PartialEq, Eq)]
enum Block {
    #[default]
    Top,
    /// A compiler warning: its header and location are kept, its snippet left out.
    Warning,
    /// A compiler error, a failing test's output: kept whole.
    Failure,
    /// After libtest's `failures:`: the names of the failing tests, left out.
    FailureList,
    /// The output of a test nextest reports failed (after its `FAIL` line): kept whole but
    /// for the lines of libtest's own report of the one test.
    NextestFailure,
    /// `cargo run`'s program output: kept whole.
    Program,
}

#[derive(Default)]
struct Cargo {
    block: Block,
    /// `cargo run`: the program's output follows cargo's `Running` line.
    run: bool,
    /// The last backtrace frame's function, to see the test's closure frame after it.
    last_frame: String,
    /// A frame was left out: its `at …` line goes with it.
    frame_dropped: bool,
    /// The test nextest reports failed, as libtest names it (`tests::adds`).
    nextest_test: String,
}

/// The status word cargo (or nextest) right-aligns at the start of a line.
fn status(line: &str) -> Option<&str> {
    let trimmed = line.trim_start();
    if trimmed.len() == line.len() {
        return None;
    }
    trimmed.split(' ').next()
}

/// nextest's status of a test: `PASS [   0.004s] ( 1/45) crate tests::a`.
fn nextest_status(line: &str) -> Option<&str> {
    let word = status(line)?;
    let rest = line.trim_start()[word.len()..].trim_start();
    let upper = !word.is_empty() && word.bytes().all(|b| b.is_ascii_uppercase() || b == b'-');
    (upper && rest.starts_with('[')).then_some(word)
}

impl Shaper for Cargo {
    fn line(&mut self, line: &str) -> Verdict<'_> {
        if self.block == Block::Program {
            return Verdict::Keep;
        }
        let trimmed = line.trim_start();
        if let Some(verdict) = self.frame(trimmed) {
            return verdict;
        }
        // Block starts.
        if line.starts_with("warning") && !line.starts_with("warning: `") {
            self.block = Block::Warning;
            return Verdict::Keep;
        }
        if line.starts_with("error") || line.starts_with("---- ") {
            self.block = Block::Failure;
            return Verdict::Keep;
        }
        // libtest's `failures:` before the failures' output, and again before their names:
        // each failing test is already named by its `... FAILED` line.
        if line == "failures:" {
            self.block = Block::FailureList;
            return Verdict::Drop(Label::Quiet);
        }
        if self.block == Block::FailureList && line.starts_with("    ") && !line[4..].contains(' ')
        {
            return Verdict::Drop(Label::Quiet);
        }
        if line.starts_with("thread '") {
            if self.block != Block::NextestFailure {
                self.block = Block::Failure;
            }
            return Verdict::Keep;
        }
        // Summaries end a block and are kept.
        if trimmed.starts_with("test result:") && self.block != Block::NextestFailure
            || trimmed.starts_with("Finished ")
            || trimmed.starts_with("Summary [")
            || trimmed.starts_with("Starting ") && trimmed.contains(" test")
            || line.starts_with("warning: `")
        {
            self.block = Block::Top;
            return Verdict::Keep;
        }
        // Test lines: a new test ends a failure block.
        if let Some(rest) = line.strip_prefix("test ") {
            if rest.ends_with(" ... ok") {
                self.block = Block::Top;
                return Verdict::Drop(PASSING);
            }
            if rest.ends_with(" ... ignored") || rest.contains(" ... ignored, ") {
                self.block = Block::Top;
                return Verdict::Drop(IGNORED);
            }
        }
        if let Some(word) = nextest_status(line) {
            return match word {
                "PASS" => {
                    self.block = Block::Top;
                    Verdict::Drop(PASSING)
                }
                "SKIP" => {
                    self.block = Block::Top;
                    Verdict::Drop(IGNORED)
                }
                "SLOW" => Verdict::Drop(SLOW),
                _ => {
                    // FAIL, TIMEOUT, SIGSEGV, LEAK, …: the test's output follows.
                    line.rsplit(' ')
                        .next()
                        .unwrap_or("")
                        .clone_into(&mut self.nextest_test);
                    self.block = Block::NextestFailure;
                    Verdict::Keep
                }
            };
        }
        match status(line) {
            Some(
                word @ ("Compiling" | "Checking" | "Fresh" | "Documenting" | "Scraping"
                | "Blocking"),
            ) if self.block != Block::Failure => {
                self.block = Block::Top;
                return Verdict::Drop(match word {
                    "Checking" => CHECKING,
                    "Documenting" => Label::Lines("Documenting"),
                    _ => COMPILING,
                });
            }
            Some(
                "Downloaded" | "Downloading" | "Updating" | "Locking" | "Adding" | "Unpacking"
                | "Installing" | "Installed" | "Replacing" | "Replaced",
            ) if self.block != Block::Failure => {
                return Verdict::Drop(DOWNLOADING);
            }
            Some("Building") if line.contains('[') => return Verdict::Drop(COMPILING),
            Some("Running") if self.run && trimmed.starts_with("Running `") => {
                self.block = Block::Program;
                return Verdict::Keep;
            }
            // A test unit starts: `Running unittests src/lib.rs (…)`, `Doc-tests x`.
            Some("Running" | "Doc-tests") => {
                self.block = Block::Top;
                return Verdict::Drop(Label::Quiet);
            }
            _ => {}
        }
        if blank(line)
            || is_test_count(trimmed)
            || trimmed.starts_with("all doctests ran in ")
            || trimmed.starts_with("note: Some details are omitted, run with `RUST_BACKTRACE=")
            || trimmed.starts_with("note: run with `RUST_BACKTRACE=")
            || trimmed.starts_with("Nextest run ID ")
            || trimmed.chars().all(|c| c == '─')
        {
            return Verdict::Drop(Label::Quiet);
        }
        match self.block {
            Block::Warning => {
                if trimmed.starts_with("--> ") {
                    Verdict::Keep
                } else {
                    Verdict::Drop(Label::Quiet)
                }
            }
            Block::NextestFailure => {
                // nextest's `stdout ───` headers, and libtest's report of the one test it ran
                // (its `failures:` lists, the test's name in them).
                let report = trimmed
                    .strip_suffix(" ───")
                    .is_some_and(|stream| matches!(stream, "stdout" | "stderr" | "output"))
                    || trimmed == "failures:"
                    || trimmed == self.nextest_test;
                if report {
                    Verdict::Drop(Label::Quiet)
                } else {
                    Verdict::Keep
                }
            }
            // The empty gutter lines of a snippet (`  |`).
            Block::Failure if trimmed == "|" => Verdict::Drop(Label::Quiet),
            Block::Top | Block::Failure | Block::FailureList | Block::Program => Verdict::Keep,
        }
    }
}

impl Cargo {
    /// A backtrace frame (`  12: std::panicking::…`) or its `at …` line: std, core and test
    /// harness frames are left out with their `at` lines; `None` when the line is neither.
    fn frame(&mut self, trimmed: &str) -> Option<Verdict<'static>> {
        if trimmed.starts_with("at ") {
            let dropped = std::mem::take(&mut self.frame_dropped);
            if dropped || trimmed.starts_with("at /rustc/") {
                return Some(Verdict::Drop(FRAMES));
            }
            return None;
        }
        self.frame_dropped = false;
        let (number, function) = trimmed.split_once(": ")?;
        if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        // The test's own closure, right after the test's frame: the harness calling it.
        let closure = function
            .strip_suffix("::{{closure}}")
            .is_some_and(|f| f == self.last_frame);
        function.clone_into(&mut self.last_frame);
        if closure || is_std_frame(function) {
            self.frame_dropped = true;
            return Some(Verdict::Drop(FRAMES));
        }
        None
    }
}

/// libtest's `running 9 tests` (`running 1 test`).
fn is_test_count(trimmed: &str) -> bool {
    trimmed
        .strip_prefix("running ")
        .and_then(|rest| {
            rest.strip_suffix(" tests")
                .or_else(|| rest.strip_suffix(" test"))
        })
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The function of a frame of the standard library, the runtime or the test harness:
/// `std::panicking::…`, `<core::… as …>::…`, `__rustc::rust_begin_unwind`.
fn is_std_frame(function: &str) -> bool {
    let function = function.strip_prefix('<').unwrap_or(function);
    [
        "std::",
        "core::",
        "alloc::",
        "test::",
        "__rust",
        "rust_begin_unwind",
        "__libc",
        "_start",
        "fn() -> core::",
        "F as core::",
    ]
    .iter()
    .any(|p| function.starts_with(p))
        || function == "unknown>"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::select;

    fn shaper_for(command: &str) -> Option<Box<dyn Shaper>> {
        shaper(&select(command).unwrap())
    }

    #[test]
    fn nextest_is_shaped_for_its_run_only() {
        assert!(shaper_for("cargo nextest run --no-fail-fast").is_some());
        assert!(shaper_for("cargo nextest list").is_none());
        assert!(shaper_for("cargo fmt").is_none());
        assert_eq!(
            select("cargo nextest run").unwrap().subcommand.as_deref(),
            Some("nextest")
        );
    }

    fn verdicts(command: &str, lines: &[&str]) -> Vec<bool> {
        let mut shaper = shaper_for(command).unwrap();
        lines
            .iter()
            .map(|l| !matches!(shaper.line(l), Verdict::Drop(_)))
            .collect()
    }

    #[test]
    fn the_test_closure_frame_goes_with_its_at_line_and_std_frames() {
        let kept = verdicts(
            "cargo test",
            &[
                "---- tests::a stdout ----",
                "   3: calc::div",
                "             at ./src/lib.rs:7:5",
                "   4: calc::tests::a",
                "             at ./src/lib.rs:18:36",
                "   5: calc::tests::a::{{closure}}",
                "             at ./src/lib.rs:18:33",
                "   6: core::ops::function::FnOnce::call_once",
                "             at /rustc/x/library/core/src/ops/function.rs:250:5",
                "   7: <fn() -> core::result::Result<(), alloc::string::String> as core::ops::function::FnOnce<()>>::call_once",
                "   8: other::thing::{{closure}}",
            ],
        );
        assert_eq!(
            kept,
            [
                true, true, true, true, true, false, false, false, false, false, true
            ]
        );
    }

    #[test]
    fn a_failure_block_ends_at_the_next_test_and_a_warning_keeps_its_location() {
        let kept = verdicts(
            "cargo test",
            &[
                "---- tests::a stdout ----",
                "some output the test printed",
                "test tests::b ... ok",
                "   Compiling x v0.1.0",
                "warning: unused variable: `x`",
                " --> src/lib.rs:2:9",
                "  |",
                "2 |     let x = 3;",
            ],
        );
        assert_eq!(kept, [true, true, false, false, true, true, false, false]);
    }

    #[test]
    fn nextest_failure_output_keeps_all_but_libtests_report() {
        let kept = verdicts(
            "cargo nextest run",
            &[
                "        PASS [   0.005s] ( 1/45) eval tests::adds_0",
                "        FAIL [   0.149s] (40/45) eval tests::adds_empty",
                "  stdout ───",
                "    running 1 test",
                "    failures:",
                "        tests::adds_empty",
                "    what the test printed",
                "        PASS [   0.005s] ( 41/45) eval tests::adds_9",
                "    tests::adds_empty",
            ],
        );
        assert_eq!(
            kept,
            [false, true, false, false, false, false, true, false, true]
        );
    }

    #[test]
    fn cargo_run_keeps_the_programs_output() {
        let kept = verdicts(
            "cargo run",
            &[
                "   Compiling x v0.1.0",
                "     Running `target/debug/x`",
                "test a ... ok",
                "   Compiling nothing",
            ],
        );
        assert_eq!(kept, [false, true, true, true]);
    }
}
