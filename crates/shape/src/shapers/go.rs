//! go: `test`, `build`, `install`, `vet`, and the module downloads of `mod` and `get`.
//!
//! `go test`: `=== RUN`/`PAUSE`/`CONT`/`NAME` and `--- PASS` lines (subtests' too), the `PASS`
//! line, the `ok  pkg 0.01s` lines of passing packages and the `?  pkg [no test files]` lines
//! are left out, as are the runtime and testing frames of a panic's goroutine stack (with
//! their file lines). Kept: `--- FAIL` lines, whatever a test printed (`    a_test.go:12:
//! want 3`), panics, `--- SKIP` lines. `go build -v` (and `install`, `vet`): the names of the
//! packages it builds are left out. Everywhere: `go: downloading …` lines are left out, and
//! the compiler's and vet's `file.go:12:3: …` lines are grouped by file.
//!
//! Summary lines: `FAIL\tpkg\t0.01s`, `FAIL\tpkg [build failed]`, the last `FAIL`, the `# pkg`
//! header before a package's errors.

use crate::engine::{Label, Shaper, Verdict};
use crate::select::Target;
use crate::shapers::blank;

const RUN_PASS: Label<'static> = Label::Lines("=== RUN and --- PASS");
const PASSING_PACKAGES: Label<'static> = Label::Items("passing package", "passing packages");
const NO_TESTS: Label<'static> =
    Label::Items("package without test files", "packages without test files");
const FRAMES: Label<'static> = Label::Lines("runtime and testing frames");
const DOWNLOADING: Label<'static> = Label::Lines("go: downloading");
const PACKAGES: Label<'static> = Label::Lines("packages built");

pub(crate) fn shaper(target: &Target) -> Option<Box<dyn Shaper>> {
    // `-json` is a format asked for; `-x` and `-n` print the commands asked for.
    if ["-json", "-x", "-n"].iter().any(|flag| target.has(flag)) {
        return None;
    }
    let verbose = target.has("-v");
    match target.subcommand.as_deref()? {
        "test" | "mod" | "get" => Some(Box::new(Go::default())),
        "build" | "install" | "vet" => Some(Box::new(Go {
            lists_packages: verbose,
            ..Go::default()
        })),
        _ => None,
    }
}

#[derive(Default)]
struct Go {
    /// `-v` of `build`, `install`, `vet`: the packages built are listed, one a line.
    lists_packages: bool,
    /// A goroutine frame's function was left out: its file line goes with it.
    frame_dropped: bool,
}

impl Shaper for Go {
    fn line(&mut self, line: &str) -> Verdict<'_> {
        let frame_dropped = std::mem::take(&mut self.frame_dropped);
        if frame_dropped && line.starts_with('\t') {
            return Verdict::Drop(FRAMES);
        }
        if is_runtime_frame(line) {
            self.frame_dropped = true;
            return Verdict::Drop(FRAMES);
        }
        let trimmed = line.trim_start();
        if ["=== RUN ", "=== PAUSE ", "=== CONT ", "=== NAME "]
            .iter()
            .any(|p| line.starts_with(p))
            || trimmed.starts_with("--- PASS: ")
        {
            return Verdict::Drop(RUN_PASS);
        }
        if line == "PASS" || blank(line) {
            return Verdict::Drop(Label::Quiet);
        }
        if line.starts_with("ok  \t") || line.starts_with("ok  ") && !line.contains(": ") {
            return Verdict::Drop(PASSING_PACKAGES);
        }
        if line.starts_with('?') && line.ends_with("[no test files]") {
            return Verdict::Drop(NO_TESTS);
        }
        if let Some(rest) = line.strip_prefix("go: ")
            && ["downloading ", "finding ", "extracting "]
                .iter()
                .any(|p| rest.starts_with(p))
        {
            return Verdict::Drop(DOWNLOADING);
        }
        if let Some(prefix) = source_location(line) {
            return Verdict::Group(prefix);
        }
        if self.lists_packages && is_package_path(line) {
            return Verdict::Drop(PACKAGES);
        }
        Verdict::Keep
    }
}

/// The length of `path/a.go:` at the start of a compiler's or vet's `path/a.go:12:3: msg`.
fn source_location(line: &str) -> Option<usize> {
    let at = line.find(".go:")? + ".go:".len();
    let path = &line[..at - 1];
    if path.contains(char::is_whitespace) {
        return None;
    }
    let rest = &line[at..];
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    (digits > 0 && rest[digits..].starts_with([':', ' '])).then_some(at)
}

/// A frame of a goroutine's stack in the runtime or the testing package:
/// `testing.tRunner(0xc00009b520, 0x530408)`, `panic({0x509da0, 0x5ffa90})`,
/// `created by testing.(*T).Run`.
fn is_runtime_frame(line: &str) -> bool {
    let function = line.strip_prefix("created by ").unwrap_or(line);
    (function.starts_with("testing.") || function.starts_with("runtime."))
        && (function.ends_with(')') || line.starts_with("created by "))
        || line.starts_with("panic(") && line.ends_with(')')
}

/// A package's import path as `go build -v` lists it: `example.com/shop/cart`, `errors`.
fn is_package_path(line: &str) -> bool {
    !line.is_empty()
        && !line.starts_with('#')
        && line
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'-' | b'_' | b'~'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::select;

    fn kept(command: &str, lines: &[&str]) -> Vec<bool> {
        let mut go = shaper(&select(command).unwrap()).unwrap();
        lines
            .iter()
            .map(|l| !matches!(go.line(l), Verdict::Drop(_)))
            .collect()
    }

    #[test]
    fn runtime_frames_go_with_their_file_lines_the_tests_stay() {
        let lines = [
            "goroutine 18 [running]:",
            "testing.tRunner.func1.2({0x509da0, 0x5ffa90})",
            "\t/usr/lib/go-1.19/src/testing/testing.go:1396 +0x24e",
            "panic({0x509da0, 0x5ffa90})",
            "\t/usr/lib/go-1.19/src/runtime/panic.go:884 +0x212",
            "example.com/shop/cart.(*Cart).Total(...)",
            "\t/tmp/work/gomod/cart/cart.go:20",
            "created by testing.(*T).Run",
            "\t/usr/lib/go-1.19/src/testing/testing.go:1493 +0x35f",
        ];
        assert_eq!(
            kept("go test ./...", &lines),
            [true, false, false, false, false, true, true, false, false]
        );
    }

    #[test]
    fn a_failing_tests_output_stays_passing_lines_go() {
        let lines = [
            "=== RUN   TestDiscount/#02",
            "    price_test.go:130: Discount(99, 50) = 50, want 49",
            "--- FAIL: TestDiscount (0.00s)",
            "    --- PASS: TestDiscount/#00 (0.00s)",
            "    --- FAIL: TestDiscount/#02 (0.00s)",
            "PASS",
            "ok  \texample.com/shop/store\t0.001s",
            "ok  \texample.com/shop/store\t(cached)",
            "FAIL\texample.com/shop/price\t0.011s",
        ];
        assert_eq!(
            kept("go test -v ./...", &lines),
            [false, true, true, false, true, false, false, false, true]
        );
    }

    #[test]
    fn compiler_locations_and_package_lists() {
        assert_eq!(source_location("cart/cart.go:4:2: imported"), Some(13));
        assert_eq!(source_location("./a.go:4: x"), Some(7));
        assert_eq!(source_location("    a_test.go:4: x"), None);
        assert_eq!(source_location("a.go: x"), None);
        assert_eq!(
            kept(
                "go build -v ./...",
                &["example.com/shop/price", "# example.com/shop/cart"]
            ),
            [false, true]
        );
        assert_eq!(kept("go build ./...", &["example.com/shop/price"]), [true]);
        assert!(shaper(&select("go test -json ./...").unwrap()).is_none());
    }
}
