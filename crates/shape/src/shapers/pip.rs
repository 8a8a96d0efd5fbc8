//! pip (`pip install`, `pip3 install`, `python -m pip install`; `download`, `wheel`): the
//! resolution and download lines (`Collecting`, `Downloading`, `Using cached`, progress bars,
//! wheel building that succeeds, `Requirement already satisfied`: one marker) and the
//! uninstalling of replaced versions are left out with markers; `[notice]` lines quietly; errors with all
//! that follows them (a build's output, pip's `note:` and `hint:` lines) are kept.
//!
//! Summary lines: `Successfully installed …`, `Would install …` (`--dry-run`), `ERROR: …`.

use crate::engine::{Label, Shaper, Verdict};
use crate::select::Target;
use crate::shapers::blank;

/// Resolving, fetching and building: `Collecting`, `Downloading`, `Requirement already
/// satisfied`, … (one label, so that one marker stands for the whole resolution).
const COLLECTING: Label<'static> = Label::Lines("Collecting, Downloading, already satisfied");
const REPLACING: Label<'static> = Label::Lines("uninstalling replaced versions");

pub(crate) fn shaper(target: &Target) -> Option<Box<dyn Shaper>> {
    match target.subcommand.as_deref()? {
        "install" | "download" | "wheel" => Some(Box::new(Pip::default())),
        _ => None,
    }
}

#[derive(Default)]
struct Pip {
    /// An error was printed: all that follows is kept.
    failed: bool,
    /// Under `Installing collected packages`: the uninstall lines of replaced versions.
    replacing: bool,
}

/// The lines of resolving and fetching a package, and of building its wheel.
fn is_collecting(trimmed: &str) -> bool {
    const STARTS: &[&str] = &[
        "Collecting ",
        "Downloading ",
        "Using cached ",
        "Obtaining ",
        "Processing ",
        "File was already downloaded ",
        "Saved ",
        "Preparing metadata ",
        "Installing build dependencies ",
        "Getting requirements to build ",
        "Building wheels for collected packages",
        "Building wheel for ",
        "Created wheel for ",
        "Stored in directory: ",
        "Successfully built ",
        "Installing collected packages: ",
        "Running setup.py ",
        "Link requires a different Python",
        "Looking in indexes: ",
        "Looking in links: ",
    ];
    STARTS.iter().any(|p| trimmed.starts_with(p)) || is_progress_bar(trimmed)
}

/// pip's progress bar: `━━━━━━━━━━ 1.3/1.3 MB 43.2 MB/s eta 0:00:00`.
fn is_progress_bar(trimmed: &str) -> bool {
    trimmed.starts_with('━') || trimmed.starts_with('╸') || trimmed.starts_with("|█")
}

impl Shaper for Pip {
    fn line(&mut self, line: &str) -> Verdict<'_> {
        let trimmed = line.trim();
        if self.failed {
            return Verdict::Keep;
        }
        if line.starts_with("ERROR:")
            || line.starts_with("error:")
            || trimmed.starts_with("× ")
            || line.contains("did not run successfully")
        {
            self.failed = true;
            return Verdict::Keep;
        }
        if blank(line) {
            return Verdict::Drop(Label::Quiet);
        }
        if line.starts_with("[notice] ") {
            return Verdict::Drop(Label::Quiet);
        }
        if trimmed.starts_with("Requirement already satisfied: ") {
            return Verdict::Drop(COLLECTING);
        }
        if line.starts_with("Installing collected packages: ") {
            self.replacing = true;
            return Verdict::Drop(COLLECTING);
        }
        if self.replacing && line.starts_with("  ") {
            return Verdict::Drop(REPLACING);
        }
        self.replacing = false;
        if is_collecting(trimmed) {
            return Verdict::Drop(COLLECTING);
        }
        Verdict::Keep
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_keeps_all_that_follows() {
        let mut pip = Pip::default();
        assert_eq!(pip.line("Collecting numpy"), Verdict::Drop(COLLECTING));
        assert_eq!(
            pip.line("  × Building wheel for numpy (pyproject.toml) did not run successfully."),
            Verdict::Keep
        );
        assert_eq!(pip.line("  │ exit code: 1"), Verdict::Keep);
        assert_eq!(pip.line("  Building wheel for x ... done"), Verdict::Keep);
    }

    #[test]
    fn the_uninstall_of_a_replaced_version_goes_with_the_install() {
        let mut pip = Pip::default();
        assert_eq!(
            pip.line("Installing collected packages: pip"),
            Verdict::Drop(COLLECTING)
        );
        assert_eq!(
            pip.line("  Attempting uninstall: pip"),
            Verdict::Drop(REPLACING)
        );
        assert_eq!(
            pip.line("      Successfully uninstalled pip-23.2.1"),
            Verdict::Drop(REPLACING)
        );
        assert_eq!(pip.line("Successfully installed pip-26.3"), Verdict::Keep);
    }
}
