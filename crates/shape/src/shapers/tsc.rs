//! tsc (also as `npx tsc`), with or without `--noEmit`: every diagnostic is kept, with the
//! lines that go on explaining it (`  Types of property 'x' are incompatible.`).
//!
//! The plain format's `src/a.ts(9,7): error TS2322: …` lines are grouped by file. In the
//! pretty format (a terminal, or `"pretty": true` in older versions), the source line under a
//! diagnostic is kept and the squiggle under it (`   ~~~~`) left out, as are blank lines and
//! the table of error counts per file after the summary (`Errors  Files`, `     4
//! src/a.ts:9`). Watch mode's `Starting compilation` and `File change detected` lines are
//! left out.
//!
//! Summary lines: `Found 9 errors in 3 files.`, `Found 1 error in src/a.ts:9`, watch mode's
//! `Found 0 errors. Watching for file changes.`

use crate::engine::{Label, Shaper, Verdict};
use crate::select::Target;
use crate::shapers::blank;

const TABLE: Label<'static> = Label::Lines("errors per file");

/// Options whose output is what the caller asked for, not a compilation's diagnostics.
const LISTINGS: &[&str] = &[
    "--listFiles",
    "--listFilesOnly",
    "--listEmittedFiles",
    "--explainFiles",
    "--showConfig",
    "--traceResolution",
    "--extendedDiagnostics",
    "--diagnostics",
    "--generateTrace",
    "--help",
    "-h",
    "--all",
    "--version",
    "-v",
    "--init",
];

pub(crate) fn shaper(target: &Target) -> Option<Box<dyn Shaper>> {
    if LISTINGS.iter().any(|flag| target.has(flag)) {
        return None;
    }
    Some(Box::new(Tsc::default()))
}

#[derive(Default)]
struct Tsc {
    /// After `Errors  Files`: the table of counts per file.
    in_table: bool,
}

impl Shaper for Tsc {
    fn line(&mut self, line: &str) -> Verdict<'_> {
        if line.starts_with("Errors  Files") {
            self.in_table = true;
            return Verdict::Drop(TABLE);
        }
        if self.in_table && line.starts_with(' ') {
            return Verdict::Drop(TABLE);
        }
        self.in_table = false;
        if blank(line) {
            return Verdict::Drop(Label::Quiet);
        }
        if is_squiggle(line) {
            return Verdict::Drop(Label::Quiet);
        }
        if let Some(prefix) = plain_location(line) {
            return Verdict::Group(prefix);
        }
        // Watch mode: `[10:41:02 AM] Starting compilation in watch mode...`.
        if let Some((_, message)) = line.strip_prefix('[').and_then(|l| l.split_once("] "))
            && (message.starts_with("Starting compilation")
                || message.starts_with("Starting incremental compilation")
                || message.starts_with("File change detected"))
        {
            return Verdict::Drop(Label::Quiet);
        }
        Verdict::Keep
    }
}

/// The length of `src/a.ts` in the plain format's `src/a.ts(9,7): error TS2322: …`.
fn plain_location(line: &str) -> Option<usize> {
    let open = line.find('(')?;
    let path = &line[..open];
    if path.is_empty() || path.contains(char::is_whitespace) {
        return None;
    }
    let (position, rest) = line[open + 1..].split_once("): ")?;
    let numeric = position
        .split(',')
        .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    let kind = ["error ", "warning ", "message "]
        .iter()
        .any(|k| rest.starts_with(k));
    (numeric && kind).then_some(open)
}

/// The pretty format's squiggle under the source: `        ~~~`.
fn is_squiggle(line: &str) -> bool {
    let trimmed = line.trim();
    !trimmed.is_empty() && trimmed.bytes().all(|b| b == b'~')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::select;

    #[test]
    fn plain_locations_are_found() {
        assert_eq!(
            plain_location("src/cart.ts(9,7): error TS2322: Type 'string'"),
            Some(11)
        );
        assert_eq!(
            plain_location("tsconfig.json(6,5): error TS5011: x"),
            Some(13)
        );
        assert_eq!(plain_location("  Types of property (a): error x"), None);
        assert_eq!(plain_location("src/cart.ts:9:7 - error TS2322"), None);
        assert_eq!(plain_location("f(a): error x"), None);
    }

    #[test]
    fn the_table_after_the_summary_is_left_out_and_listings_not_shaped() {
        let mut tsc = Tsc::default();
        let kept: Vec<bool> = [
            "Found 9 errors in 3 files.",
            "",
            "Errors  Files",
            "     4  src/cart.ts:9",
            "src/a.ts:3:1 - error TS1: x",
            "3 let x = 1;",
            "  ~",
        ]
        .iter()
        .map(|l| !matches!(tsc.line(l), Verdict::Drop(_)))
        .collect();
        assert_eq!(kept, [true, false, false, false, true, true, false]);
        assert!(shaper(&select("npx tsc --listFiles").unwrap()).is_none());
        assert!(shaper(&select("npx tsc --noEmit").unwrap()).is_some());
    }
}
