//! cargo: `build`, `check`, `clippy`, `test`, `nextest run`. Progress lines (`Compiling`,
//! `Downloaded`, …) and passing tests are left out; warnings keep their first line and location,
//! errors and failures keep their whole block; summaries (`Finished`, `test result:`,
//! `error: could not compile`, nextest's `Summary`) are kept.

use crate::engine::{Label, Shaper, Verdict};
use crate::select::Target;
use crate::shapers::blank;

const COMPILING: Label<'static> = Label::Lines("Compiling");
const DOWNLOADING: Label<'static> = Label::Lines("Downloading");
const PASSING: Label<'static> = Label::Items("passing test", "passing tests");
const IGNORED: Label<'static> = Label::Items("ignored test", "ignored tests");
const FRAMES: Label<'static> = Label::Lines("std and core frames of a backtrace");

pub(crate) fn shaper(target: &Target) -> Option<Box<dyn Shaper>> {
    match target.subcommand.as_deref()? {
        "build" | "b" | "check" | "c" | "clippy" | "test" | "t" | "nextest" | "run" | "r"
        | "bench" | "doc" | "install" => Some(Box::new(Cargo::default())),
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
    /// A compiler error, a failing test's output, the `failures:` list: kept whole.
    Failure,
}

#[derive(Default)]
struct Cargo {
    block: Block,
}

/// The status words cargo right-aligns before a crate's name.
fn status(line: &str) -> Option<&str> {
    let trimmed = line.trim_start();
    if trimmed.len() == line.len() {
        return None;
    }
    let word = trimmed.split(' ').next()?;
    Some(word)
}

impl Shaper for Cargo {
    fn line(&mut self, line: &str) -> Verdict<'_> {
        let trimmed = line.trim_start();
        // Block starts.
        if line.starts_with("warning") && !line.starts_with("warning: `") {
            self.block = Block::Warning;
            return Verdict::Keep;
        }
        if line.starts_with("error") || line.starts_with("failures:") || line.starts_with("---- ") {
            self.block = Block::Failure;
            return Verdict::Keep;
        }
        if line.starts_with("thread '") {
            self.block = Block::Failure;
            return Verdict::Keep;
        }
        // Summaries end a block and are kept.
        if trimmed.starts_with("test result:")
            || trimmed.starts_with("Finished ")
            || trimmed.starts_with("Summary [")
            || line.starts_with("warning: `")
        {
            self.block = Block::Top;
            return Verdict::Keep;
        }
        // Test lines: a new test ends a failure block.
        if let Some(rest) = line.strip_prefix("test ") {
            if rest.ends_with(" ... ok") || rest.ends_with("... ok") {
                self.block = Block::Top;
                return Verdict::Drop(PASSING);
            }
            if rest.ends_with(" ... ignored") || rest.contains(" ... ignored, ") {
                self.block = Block::Top;
                return Verdict::Drop(IGNORED);
            }
        }
        match status(line) {
            Some("PASS") => return Verdict::Drop(PASSING),
            Some("SKIP") => return Verdict::Drop(IGNORED),
            Some("Compiling" | "Checking" | "Fresh" | "Documenting" | "Scraping" | "Blocking")
                if self.block != Block::Failure =>
            {
                self.block = Block::Top;
                return Verdict::Drop(COMPILING);
            }
            Some(
                "Downloaded" | "Downloading" | "Updating" | "Locking" | "Adding" | "Unpacking"
                | "Installing" | "Installed" | "Replacing" | "Replaced",
            ) if self.block != Block::Failure => {
                return Verdict::Drop(DOWNLOADING);
            }
            Some("Building") if line.contains('[') => return Verdict::Drop(COMPILING),
            _ => {}
        }
        if trimmed.starts_with("running ") && trimmed.ends_with(" tests")
            || trimmed == "running 1 test"
        {
            return Verdict::Drop(Label::Quiet);
        }
        if blank(line) {
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
            Block::Failure => {
                // Backtrace frames of the standard library say nothing about the failure.
                if is_std_frame(trimmed) {
                    Verdict::Drop(FRAMES)
                } else {
                    Verdict::Keep
                }
            }
            Block::Top => Verdict::Keep,
        }
    }
}

/// `  12: std::panicking::…`, `at /rustc/…/library/core/src/…`, and the like.
fn is_std_frame(trimmed: &str) -> bool {
    let frame = trimmed
        .split_once(": ")
        .filter(|(n, _)| n.bytes().all(|b| b.is_ascii_digit()))
        .map(|(_, f)| f);
    match frame {
        Some(f) => {
            f.starts_with("std::")
                || f.starts_with("core::")
                || f.starts_with("alloc::")
                || f.starts_with("test::")
                || f.starts_with('<')
                || f.starts_with("__rust")
                || f.starts_with("rust_begin_unwind")
                || f.starts_with("__libc")
                || f.starts_with("_start")
                || f == "<unknown>"
        }
        None => trimmed.starts_with("at /rustc/") || trimmed.contains("/library/std/src/"),
    }
}
