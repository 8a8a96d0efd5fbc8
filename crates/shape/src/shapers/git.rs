//! git: `log`, `show`, `status`, `diff`, and the progress of `clone`, `fetch`, `pull`, `push`.

use crate::engine::{Label, Shaper, Verdict};
use crate::select::Target;
use crate::shapers::blank;

/// Lines of a commit message kept after its subject.
const BODY_LINES: usize = 3;

const MESSAGE: Label<'static> = Label::Lines("commit message");
const PROGRESS: Label<'static> = Label::Lines("transfer progress");

pub(crate) fn shaper(target: &Target) -> Option<Box<dyn Shaper>> {
    match target.subcommand.as_deref()? {
        "log" => Some(Box::new(Log::default())),
        "clone" | "fetch" | "pull" | "push" => Some(Box::new(Progress)),
        _ => None,
    }
}

/// `git log`: the `commit` line and the subject kept, with the first lines of the body;
/// `Author:`, `Date:` and blank lines left out.
#[derive(Default)]
struct Log {
    /// Message lines seen in the current commit.
    message_lines: usize,
}

impl Shaper for Log {
    fn line(&mut self, line: &str) -> Verdict<'_> {
        if line.starts_with("commit ") {
            self.message_lines = 0;
            return Verdict::Keep;
        }
        if line.starts_with("Author: ")
            || line.starts_with("Date: ")
            || line.starts_with("Merge: ")
            || line.starts_with("AuthorDate: ")
            || line.starts_with("Commit: ")
            || line.starts_with("CommitDate: ")
            || blank(line)
        {
            return Verdict::Drop(Label::Quiet);
        }
        if line.starts_with("    ") {
            self.message_lines += 1;
            return if self.message_lines <= 1 + BODY_LINES {
                Verdict::Keep
            } else {
                Verdict::Drop(MESSAGE)
            };
        }
        Verdict::Keep
    }
}

/// `clone`, `fetch`, `pull`, `push`: the object counting and transfer lines left out.
struct Progress;

impl Shaper for Progress {
    fn line(&mut self, line: &str) -> Verdict<'_> {
        let text = line.strip_prefix("remote: ").unwrap_or(line);
        let progress = [
            "Enumerating objects:",
            "Counting objects:",
            "Compressing objects:",
            "Receiving objects:",
            "Resolving deltas:",
            "Writing objects:",
            "Delta compression",
            "Total ",
            "Unpacking objects:",
            "Updating files:",
        ];
        if progress.iter().any(|p| text.starts_with(p)) {
            Verdict::Drop(PROGRESS)
        } else {
            Verdict::Keep
        }
    }
}
