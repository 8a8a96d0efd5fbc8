//! node's test runner (`node --test`), in both of its default reporters: TAP (what node
//! before 23 prints on a pipe) and spec (node 23 on, and on a terminal). Passing and skipped
//! tests are left out (in TAP with their `# Subtest:` line and YAML block); failing tests are
//! kept with their details, but for node's internal stack frames; the output of test files
//! (a file that fails to load) is kept.
//!
//! Summary lines: TAP's `# tests 23`, `# pass 18`, `# fail 3`, … and spec's `ℹ tests 23`,
//! `ℹ pass 18`, `ℹ fail 3`, …, and spec's `✖ failing tests:` section.

use crate::engine::{Label, Shaper, Verdict};
use crate::select::Target;
use crate::shapers::blank;

const PASSING: Label<'static> = Label::Items("passing test", "passing tests");
const SKIPPED: Label<'static> = Label::Items("skipped test", "skipped tests");
const INTERNAL: Label<'static> = Label::Lines("node internal frames");

pub(crate) fn shaper(target: &Target) -> Option<Box<dyn Shaper>> {
    // Only the test runner: `node --test`, `node --test test/`, `node --test-only`.
    let runs_tests = target
        .args
        .iter()
        .take_while(|arg| arg.starts_with('-'))
        .any(|arg| arg == "--test" || arg.starts_with("--test-"));
    runs_tests.then(|| Box::new(NodeTest::default()) as Box<dyn Shaper>)
}

/// The summary counters node prints after `# ` (TAP) or `ℹ ` (spec).
const COUNTERS: &[&str] = &[
    "tests ",
    "suites ",
    "pass ",
    "fail ",
    "cancelled ",
    "skipped ",
    "todo ",
    "duration_ms ",
];

#[derive(Default)]
struct NodeTest {
    /// In the YAML block (or the nested subtests) of a failing TAP test: kept.
    failing: bool,
    /// The label of the TAP test whose lines come now (its YAML block, the next
    /// `# Subtest:` line), when it passed or was skipped.
    item: Option<Label<'static>>,
    /// The line before was a `# Subtest:` line left out.
    after_subtest: bool,
}

/// A stack frame of node itself: `at Test.run (node:internal/test_runner/test:796:25)`,
/// TAP's `Test.run (node:internal/…)`, and the like.
fn is_internal_frame(trimmed: &str) -> bool {
    let frame = trimmed.trim_start_matches("# ").trim_start();
    (frame.contains("(node:") || frame.starts_with("at node:")) && frame.ends_with(')')
        || frame.starts_with("at node:")
        || frame.contains("(node:") && frame.ends_with(") {")
}

impl Shaper for NodeTest {
    fn line(&mut self, line: &str) -> Verdict<'_> {
        let after_subtest = std::mem::take(&mut self.after_subtest);
        let trimmed = line.trim_start();
        if blank(line) {
            return Verdict::DropMore;
        }
        // TAP.
        if line.starts_with("TAP version ") {
            return Verdict::Drop(Label::Quiet);
        }
        if trimmed.starts_with("# Subtest: ") {
            self.after_subtest = true;
            // A nested subtest of a failing suite stays in the suite's block.
            if !line.starts_with(' ') {
                self.failing = false;
            }
            // It joins the run of the test before; the first one, or one after a failure, is
            // left out quietly (a failing test's `not ok` takes it back).
            return Verdict::DropMore;
        }
        if let Some(rest) = trimmed.strip_prefix("ok ")
            && rest.starts_with(|c: char| c.is_ascii_digit())
        {
            let label = if rest.contains(" # SKIP") {
                SKIPPED
            } else {
                PASSING
            };
            self.item = Some(label);
            return Verdict::Drop(label);
        }
        if let Some(rest) = trimmed.strip_prefix("not ok ")
            && rest.starts_with(|c: char| c.is_ascii_digit())
        {
            self.item = None;
            self.failing = true;
            return Verdict::KeepWithContext(usize::from(after_subtest));
        }
        if let Some(counter) = line.strip_prefix("# ").or_else(|| line.strip_prefix("ℹ "))
            && COUNTERS.iter().any(|c| counter.starts_with(c))
        {
            self.item = None;
            return Verdict::Keep;
        }
        if let Some(plan) = trimmed.strip_prefix("1..")
            && plan.bytes().all(|b| b.is_ascii_digit())
        {
            return Verdict::DropMore;
        }
        if is_internal_frame(trimmed) {
            return Verdict::Drop(INTERNAL);
        }
        if self.item.is_some() {
            // The YAML block of a passing TAP test: the rest of its item.
            if line.starts_with(' ') {
                return Verdict::DropMore;
            }
            self.item = None;
        }
        if self.failing && line.starts_with(' ') {
            let yaml = trimmed.trim_end();
            if yaml == "---" || yaml == "..." || yaml.starts_with("duration_ms: ") {
                return Verdict::Drop(Label::Quiet);
            }
            return Verdict::Keep;
        }
        // Spec.
        if let Some(rest) = trimmed.strip_prefix("✔ ") {
            // `✔ name (0.2ms)`, `✔ name (0.1ms) # TODO`; a suite's `▶ name` comes before.
            if rest.ends_with(')') || rest.ends_with("# TODO") {
                return Verdict::Drop(PASSING);
            }
        }
        if trimmed.starts_with("▶ ") {
            // A passing suite's line: with its tests, no test of its own.
            return Verdict::DropMore;
        }
        if trimmed.starts_with("﹣ ") && trimmed.ends_with("# SKIP") {
            return Verdict::Drop(SKIPPED);
        }
        Verdict::Keep
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdicts(lines: &[&str]) -> Vec<String> {
        let mut node = NodeTest::default();
        lines
            .iter()
            .map(|line| format!("{:?}", node.line(line)))
            .collect()
    }

    #[test]
    fn a_passing_tap_test_is_left_out_whole_and_a_failing_one_kept() {
        let got = verdicts(&[
            "# Subtest: a",
            "ok 1 - a",
            "  ---",
            "  duration_ms: 0.1",
            "  ...",
            "# Subtest: b",
            "not ok 2 - b",
            "  ---",
            "  error: 'boom'",
            "    Test.run (node:internal/test_runner/test:796:25)",
            "  ...",
            "# Subtest: c",
            "ok 3 - c # SKIP",
            "  ---",
        ]);
        let passing = format!("{:?}", Verdict::Drop(PASSING));
        let quiet = format!("{:?}", Verdict::Drop(Label::Quiet));
        let skipped = format!("{:?}", Verdict::Drop(SKIPPED));
        let more = "DropMore";
        assert_eq!(got[0], more, "the first subtest line is left out quietly");
        assert_eq!(got[1], passing, "one passing test: its `ok` line");
        assert_eq!(got[2..5], [more; 3], "the rest of the test, not counted");
        assert_eq!(got[5], more);
        assert_eq!(got[6], "KeepWithContext(1)");
        assert_eq!(got[7], quiet);
        assert_eq!(got[8], "Keep");
        assert_eq!(got[9], format!("{:?}", Verdict::Drop(INTERNAL)));
        assert_eq!(got[10], quiet);
        assert_eq!(got[11], more, "the next subtest line ends the failure");
        assert_eq!(got[12], skipped);
        assert_eq!(got[13], more);
    }

    #[test]
    fn only_the_test_runner_is_shaped() {
        let target = |args: &[&str]| Target {
            program: "node".into(),
            subcommand: None,
            args: args.iter().map(|a| (*a).to_owned()).collect(),
        };
        assert!(shaper(&target(&["--test"])).is_some());
        assert!(shaper(&target(&["--test-only", "test/"])).is_some());
        assert!(shaper(&target(&["server.js"])).is_none());
        assert!(shaper(&target(&["app.js", "--test"])).is_none());
    }
}
