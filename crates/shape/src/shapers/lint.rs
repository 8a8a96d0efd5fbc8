//! Linters: eslint (its default `stylish` format) and `ruff check`.
//!
//! eslint: every line of its report is content — a file's header line, the indented
//! `line:col  error  message  rule` lines of its problems — and is kept; only blank lines are
//! left out. Summary lines: `✖ 15 problems (10 errors, 5 warnings)`, the `… potentially
//! fixable with the --fix option.` line after it, `ESLint found too many warnings`.
//!
//! ruff: in its full format (the default since 0.5) each diagnostic's header line
//! (`F401 [*] `os` imported but unused`, `invalid-syntax: …`) and its `--> file:line:col`
//! location are kept; the snippet under them, the suggested fix (`help: …` and its diff) and
//! `note:` lines are left out. The concise format's `file:line:col: CODE message` lines are
//! grouped by file. Summary lines: `Found 12 errors.`, `[*] 7 fixable with the `--fix`
//! option.`, `All checks passed!`.

use crate::engine::{Label, Shaper, Verdict};
use crate::select::Target;
use crate::shapers::blank;

pub(crate) fn eslint(target: &Target) -> Option<Box<dyn Shaper>> {
    // `-f json` and the like: a format asked for; `--print-config` and `--init` are not
    // reports.
    if [
        "-f",
        "--print-config",
        "--init",
        "--help",
        "-h",
        "--version",
        "-v",
    ]
    .iter()
    .any(|flag| target.has(flag))
    {
        return None;
    }
    Some(Box::new(Eslint))
}

pub(crate) fn ruff(target: &Target) -> Option<Box<dyn Shaper>> {
    // `ruff check` (old versions: `ruff <path>`); not `format`, `rule F401`, …
    let first = target.args.iter().find(|a| !a.starts_with('-'));
    if first.is_some_and(|a| {
        matches!(
            a.as_str(),
            "format"
                | "rule"
                | "config"
                | "linter"
                | "clean"
                | "server"
                | "version"
                | "analyze"
                | "help"
                | "generate-shell-completion"
        )
    }) {
        return None;
    }
    if ["--statistics", "--show-settings", "--show-files", "--watch"]
        .iter()
        .any(|flag| target.has(flag))
    {
        return None;
    }
    Some(Box::new(Ruff::default()))
}

/// eslint's stylish report: only its blank lines are left out.
struct Eslint;

impl Shaper for Eslint {
    fn line(&mut self, line: &str) -> Verdict<'_> {
        if blank(line) {
            Verdict::Drop(Label::Quiet)
        } else {
            Verdict::Keep
        }
    }
}

#[derive(Default)]
struct Ruff {
    /// After a diagnostic's header: its snippet and fix are left out, its location kept.
    in_diagnostic: bool,
}

impl Shaper for Ruff {
    fn line(&mut self, line: &str) -> Verdict<'_> {
        if blank(line) {
            return Verdict::Drop(Label::Quiet);
        }
        if is_header(line) {
            self.in_diagnostic = true;
            return Verdict::Keep;
        }
        if let Some(prefix) = concise_location(line) {
            self.in_diagnostic = false;
            return Verdict::Group(prefix);
        }
        if line.starts_with("Found ")
            || line.starts_with("[*] ")
            || line.starts_with("All checks passed")
            || line.starts_with("No fixes available")
        {
            self.in_diagnostic = false;
            return Verdict::Keep;
        }
        if self.in_diagnostic {
            if line.trim_start().starts_with("--> ") {
                return Verdict::Keep;
            }
            return Verdict::Drop(Label::Quiet);
        }
        Verdict::Keep
    }
}

/// The first line of a diagnostic in ruff's full format: `F401 [*] `os` imported but
/// unused`, `UP035 …`, `invalid-syntax: Expected `:`, found newline`.
fn is_header(line: &str) -> bool {
    let Some((word, _)) = line.split_once(' ') else {
        return false;
    };
    let letters = word.bytes().take_while(u8::is_ascii_uppercase).count();
    let digits = word[letters..]
        .bytes()
        .take_while(u8::is_ascii_digit)
        .count();
    let code = (1..=4).contains(&letters) && digits > 0 && letters + digits == word.len();
    code || matches!(
        word,
        "invalid-syntax:" | "SyntaxError:" | "error:" | "warning:"
    )
}

/// The length of `app/models.py:` in the concise format's `app/models.py:1:8: F401 …`.
fn concise_location(line: &str) -> Option<usize> {
    let (path, rest) = line.split_once(':')?;
    if path.is_empty() || path.contains(char::is_whitespace) {
        return None;
    }
    let mut numbers = rest.splitn(3, ':');
    let numeric =
        |n: Option<&str>| n.is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    (numeric(numbers.next())
        && numeric(numbers.next())
        && numbers.next().is_some_and(|r| r.starts_with(' ')))
    .then_some(path.len() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::select;

    #[test]
    fn ruff_headers_and_concise_lines() {
        assert!(is_header("F401 [*] `os` imported but unused"));
        assert!(is_header("UP035 `typing.Dict` is deprecated"));
        assert!(is_header("invalid-syntax: Expected `:`, found newline"));
        assert!(!is_header("1 | import os"));
        assert!(!is_header("help: Remove unused import"));
        assert!(!is_header("Found 12 errors."));
        assert_eq!(
            concise_location("app/models.py:1:8: F401 [*] `os` imported but unused"),
            Some(14)
        );
        assert_eq!(concise_location(" --> app/models.py:1:8"), None);
    }

    #[test]
    fn a_ruff_diagnostic_keeps_its_header_and_location() {
        let mut ruff = Ruff::default();
        let kept: Vec<bool> = [
            "F401 [*] `os` imported but unused",
            " --> app/models.py:1:8",
            "  |",
            "1 | import os",
            "help: Remove unused import: `os`",
            "  - import os",
            "",
            "Found 12 errors.",
            "[*] 7 fixable with `--fix`.",
        ]
        .iter()
        .map(|l| !matches!(ruff.line(l), Verdict::Drop(_)))
        .collect();
        assert_eq!(
            kept,
            [true, true, false, false, false, false, false, true, true]
        );
    }

    #[test]
    fn which_command_lines_are_reports() {
        let shaped = |c: &str| {
            let target = select(c).unwrap();
            match target.program.as_str() {
                "ruff" => ruff(&target).is_some(),
                _ => eslint(&target).is_some(),
            }
        };
        assert!(shaped("ruff check ."));
        assert!(shaped("python -m ruff check app"));
        assert!(shaped("ruff ."));
        assert!(!shaped("ruff format ."));
        assert!(!shaped("ruff check --statistics"));
        assert!(shaped("npx eslint src --max-warnings 0"));
        assert!(!shaped("npx eslint -f json ."));
    }
}
