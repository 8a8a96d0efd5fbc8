//! git: `log`, `show`, `status`, `diff`, and the progress of `clone`, `fetch`, `pull`, `push`.
//!
//! - `log` and `show`: each commit keeps its `commit <hash>` line (with its decorations) and
//!   its subject; `log` leaves out the body (a marker counts its lines: `git show <hash>` has
//!   it), `show` keeps it. `Author:`, `Date:`, `Merge:`, trailers (`Signed-off-by:`) and blank
//!   lines are left out. `--stat`, `--name-status` lines
//!   are kept; a patch (`-p`, `show`) is shaped as `diff` shapes it.
//! - `diff`: every `diff --git` line, mode and rename line, hunk header and changed line is
//!   kept, with one unchanged line before and after each change (as `-U1` would show);
//!   `index` and `similarity` lines, and `---`/`+++` lines that name what the `diff --git` line
//!   names, are left out (a deleted file's removed lines are kept: what was lost).
//!   The summary forms (`--stat`, `--name-only`, …) and word diffs are not shaped.
//! - `status`: the branch state, every file line (grouped by directory) and the closing line
//!   (`no changes added to commit …`, `nothing to commit …`) are kept; the `(use "git …")`
//!   hints and blank lines are left out. `--short` and `--verbose` are not shaped.
//! - `clone`, `fetch`, `pull`, `push`: the object counting and transfer lines and `hint:`
//!   lines are left out; the ref lines (`* [new branch] …`, `! [rejected] …`), errors and a
//!   pull's diffstat (its summary, `N files changed, …`) are kept.

use crate::engine::{Label, Shaper, Verdict};
use crate::select::Target;
use crate::shapers::blank;

const MESSAGE: Label<'static> = Label::Lines("commit message");
const PROGRESS: Label<'static> = Label::Lines("transfer progress");
const HINT: Label<'static> = Label::Lines("hint");

/// Options of `git diff` (and `log`/`show`) that print a summary or a format of their own
/// instead of hunks: such output is short already, or not in the form the shaper reads.
const DIFF_SUMMARIES: &[&str] = &[
    "--stat",
    "--numstat",
    "--shortstat",
    "--dirstat",
    "--name-only",
    "--name-status",
    "--summary",
    "--compact-summary",
    "--raw",
    "--check",
    "--word-diff",
    "--word-diff-regex",
    "--color-words",
    "--graph",
];

pub(crate) fn shaper(target: &Target) -> Option<Box<dyn Shaper>> {
    let asks = |flags: &[&str]| flags.iter().any(|f| target.has(f));
    match target.subcommand.as_deref()? {
        "log" | "show" | "whatchanged" => {
            // A summary of each commit's changes is kept as it is; a graph is not read.
            if target.has("--graph") || target.has("--word-diff") || target.has("--color-words") {
                return None;
            }
            Some(Box::new(Log {
                keep_body: target.subcommand.as_deref() == Some("show"),
                ..Log::default()
            }))
        }
        "diff" => {
            if asks(DIFF_SUMMARIES) || short_flag(target, 'z') {
                return None;
            }
            Some(Box::new(DiffOnly(Diff::default())))
        }
        "status" => {
            if asks(&["--short", "--verbose", "--porcelain", "--long=false"])
                || short_flag(target, 's')
                || short_flag(target, 'v')
            {
                return None;
            }
            Some(Box::new(Status))
        }
        "clone" | "fetch" | "pull" | "push" => Some(Box::new(Progress)),
        _ => None,
    }
}

/// Whether a short option cluster (`-sb`) holds `flag`.
fn short_flag(target: &Target, flag: char) -> bool {
    target.args.iter().any(|arg| {
        arg.strip_prefix('-')
            .is_some_and(|rest| !rest.starts_with('-') && rest.contains(flag))
    })
}

/// Where `git log`/`git show` output stands.
#[derive(Default, Debug, Clone, Copy, PartialEq, Eq)]
enum LogAt {
    /// Before any commit (`git show <blob>` prints a file): everything is kept.
    #[default]
    Outside,
    /// After a `commit` line, before its message: `Author:`, `Date:`, … left out.
    Header,
    /// The message: indented lines.
    Message,
    /// After the message: a stat, a name list, a patch.
    Changes,
}

/// `git log`, `git show`: commit lines and subjects (and the body, for `show`); patches as
/// [`Diff`] shapes them.
#[derive(Default)]
struct Log {
    at: LogAt,
    /// Whether a message's body is kept (`show`: the commit asked for), or left out (`log`).
    keep_body: bool,
    /// Whether the current message's subject has been seen.
    subject: bool,
    /// Whether a line of the current message's body has been left out (`log`).
    body_dropped: bool,
    diff: Diff,
}

/// Whether `line` is `commit <hash>` (maybe with decorations or `(from …)`).
fn is_commit_line(line: &str) -> bool {
    line.strip_prefix("commit ").is_some_and(|rest| {
        let hash = rest.split(' ').next().unwrap_or("");
        hash.len() >= 7 && hash.bytes().all(|b| b.is_ascii_hexdigit())
    })
}

/// Whether a message line (its indentation removed) is a trailer: `Signed-off-by: …`.
fn is_trailer(text: &str) -> bool {
    let Some((key, value)) = text.split_once(": ") else {
        return false;
    };
    !value.is_empty()
        && key.starts_with(|c: char| c.is_ascii_uppercase())
        && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && (key.ends_with("-by") || key == "Change-Id" || key == "Fixes" || key == "Refs")
}

impl Shaper for Log {
    fn line(&mut self, line: &str) -> Verdict<'_> {
        if let Some(verdict) = self.diff.take(line) {
            return verdict;
        }
        if is_commit_line(line) {
            self.at = LogAt::Header;
            self.subject = false;
            self.body_dropped = false;
            return Verdict::Keep;
        }
        match self.at {
            LogAt::Outside => Verdict::Keep,
            LogAt::Header => {
                if blank(line) {
                    self.at = LogAt::Message;
                    Verdict::Drop(Label::Quiet)
                } else if line.starts_with("Author:")
                    || line.starts_with("Date:")
                    || line.starts_with("Merge:")
                    || line.starts_with("AuthorDate:")
                    || line.starts_with("Commit:")
                    || line.starts_with("CommitDate:")
                {
                    Verdict::Drop(Label::Quiet)
                } else {
                    Verdict::Keep
                }
            }
            // `log`: the body, its blank lines and trailers make one run (one marker).
            LogAt::Message if blank(line) && self.body_dropped => Verdict::Drop(MESSAGE),
            LogAt::Message | LogAt::Changes if blank(line) => Verdict::Drop(Label::Quiet),
            LogAt::Message if line.starts_with("    ") => {
                if !self.subject {
                    self.subject = true;
                    Verdict::Keep
                } else if !self.keep_body {
                    self.body_dropped = true;
                    Verdict::Drop(MESSAGE)
                } else if is_trailer(line.trim_start()) {
                    Verdict::Drop(Label::Quiet)
                } else {
                    Verdict::Keep
                }
            }
            LogAt::Message | LogAt::Changes => {
                self.at = LogAt::Changes;
                Verdict::Keep
            }
        }
    }
}

/// Where a diff stands.
#[derive(Default, Debug, Clone, Copy, PartialEq, Eq)]
enum DiffAt {
    /// Not in a file's diff.
    #[default]
    Outside,
    /// After `diff --git`, before its first hunk.
    Header,
    /// In a hunk: how many lines of the old and of the new side are still to come.
    Hunk { old: u64, new: u64 },
    /// In a hunk of a combined diff (`@@@`), read by the lines' first column.
    Combined,
}

/// The diff of one or more files, as `git diff` prints it (also after a commit of `git log
/// -p` and `git show`).
#[derive(Default)]
struct Diff {
    at: DiffAt,
    /// What follows `diff --git ` on the current file's first line: `a/x b/x`.
    paths: String,
    /// The last hunk line was a change: the unchanged line after it is kept.
    after_change: bool,
}

/// Unchanged lines of a hunk, but the one before and the one after each change (what
/// `git diff -U1` would show).
const UNCHANGED: Label<'static> = Label::Lines("unchanged");

/// The line counts of a hunk header `@@ -a,b +c,d @@ …`.
fn hunk_counts(line: &str) -> Option<(u64, u64)> {
    let mut words = line.strip_prefix("@@ ")?.split(' ');
    let count = |word: Option<&str>, sign: char| -> Option<u64> {
        let range = word?.strip_prefix(sign)?;
        match range.split_once(',') {
            Some((_, n)) => n.parse().ok(),
            None => range.parse::<u64>().ok().map(|_| 1),
        }
    };
    let old = count(words.next(), '-')?;
    let new = count(words.next(), '+')?;
    Some((old, new))
}

impl Diff {
    /// The verdict on `line` when it belongs to a diff (a file's header or hunk), `None`
    /// when it does not.
    fn take(&mut self, line: &str) -> Option<Verdict<'static>> {
        match self.at {
            DiffAt::Hunk { old, new } => {
                let change = Verdict::KeepWithContext(1);
                let (old, new, verdict) = match line.as_bytes().first() {
                    Some(b'+') => (old, new.saturating_sub(1), change),
                    Some(b'-') => (old.saturating_sub(1), new, change),
                    Some(b'\\') => (old, new, Verdict::Keep),
                    _ if self.after_change => {
                        (old.saturating_sub(1), new.saturating_sub(1), Verdict::Keep)
                    }
                    _ => (
                        old.saturating_sub(1),
                        new.saturating_sub(1),
                        Verdict::Drop(UNCHANGED),
                    ),
                };
                self.after_change = matches!(line.as_bytes().first(), Some(b'+' | b'-'));
                self.at = if old == 0 && new == 0 {
                    DiffAt::Header
                } else {
                    DiffAt::Hunk { old, new }
                };
                return Some(verdict);
            }
            DiffAt::Combined if line.starts_with([' ', '+', '-']) => return Some(Verdict::Keep),
            _ => {}
        }
        if let Some(paths) = line.strip_prefix("diff --git ") {
            self.at = DiffAt::Header;
            paths.clone_into(&mut self.paths);
            return Some(Verdict::Keep);
        }
        if line.starts_with("diff --cc ") || line.starts_with("diff --combined ") {
            self.at = DiffAt::Header;
            self.paths.clear();
            return Some(Verdict::Keep);
        }
        if self.at == DiffAt::Outside {
            return None;
        }
        if line.starts_with("@@@") {
            self.at = DiffAt::Combined;
            return Some(Verdict::Keep);
        }
        if let Some((old, new)) = hunk_counts(line) {
            self.after_change = false;
            if old > 0 || new > 0 {
                self.at = DiffAt::Hunk { old, new };
            }
            return Some(Verdict::Keep);
        }
        if self.at == DiffAt::Combined {
            self.at = DiffAt::Header;
        }
        // A file's header (also after its last hunk: `\ No newline at end of file`).
        if line.starts_with('\\') {
            return Some(Verdict::Keep);
        }
        if line.starts_with("index ") || line.starts_with("similarity index ") {
            return Some(Verdict::Drop(Label::Quiet));
        }
        if let Some(path) = line.strip_prefix("--- ") {
            let named = path == "/dev/null"
                || (!self.paths.is_empty()
                    && self
                        .paths
                        .strip_prefix(path)
                        .is_some_and(|rest| rest.starts_with(' ')));
            return Some(if named {
                Verdict::Drop(Label::Quiet)
            } else {
                Verdict::Keep
            });
        }
        if let Some(path) = line.strip_prefix("+++ ") {
            let named = path == "/dev/null"
                || (!self.paths.is_empty()
                    && self
                        .paths
                        .strip_suffix(path)
                        .is_some_and(|rest| rest.ends_with(' ')));
            return Some(if named {
                Verdict::Drop(Label::Quiet)
            } else {
                Verdict::Keep
            });
        }
        let header = [
            "new file mode ",
            "deleted file mode ",
            "old mode ",
            "new mode ",
            "rename from ",
            "rename to ",
            "copy from ",
            "copy to ",
            "dissimilarity index ",
            "Binary files ",
            "GIT binary patch",
        ];
        if header.iter().any(|h| line.starts_with(h)) {
            return Some(Verdict::Keep);
        }
        // Something else: the diff is over (`git log -p`'s blank line before a commit).
        self.at = DiffAt::Outside;
        None
    }
}

/// `git diff`: the [`Diff`], whatever else is printed kept.
struct DiffOnly(Diff);

impl Shaper for DiffOnly {
    fn line(&mut self, line: &str) -> Verdict<'_> {
        self.0.take(line).unwrap_or(Verdict::Keep)
    }
}

/// `git status`: hints and blank lines left out, file lines grouped by their directory.
struct Status;

impl Shaper for Status {
    fn line(&mut self, line: &str) -> Verdict<'_> {
        if blank(line) {
            return Verdict::Drop(Label::Quiet);
        }
        if line.starts_with("  (") && line.ends_with(')') {
            return Verdict::Drop(Label::Quiet);
        }
        if let Some(entry) = line.strip_prefix('\t') {
            if entry.contains(" -> ") {
                return Verdict::Keep;
            }
            // The directory of the path (of an untracked directory's parent: `tests/new/`).
            let path = entry.strip_suffix('/').unwrap_or(entry);
            return match path.rfind('/') {
                Some(slash) => Verdict::Group(1 + slash + 1),
                None => Verdict::Keep,
            };
        }
        Verdict::Keep
    }
}

/// `clone`, `fetch`, `pull`, `push`: the object counting and transfer lines, and hints,
/// left out.
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
            "Checking connectivity",
            "Filtering content:",
        ];
        if progress.iter().any(|p| text.starts_with(p)) {
            Verdict::Drop(PROGRESS)
        } else if line.starts_with("hint:") {
            Verdict::Drop(HINT)
        } else if line.starts_with("remote:") && blank(text) {
            Verdict::Drop(Label::Quiet)
        } else {
            Verdict::Keep
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::select;

    fn verdicts(command: &str, text: &str) -> Vec<String> {
        let mut shaper = shaper(&select(command).unwrap()).unwrap();
        text.lines()
            .map(|line| format!("{:?}", shaper.line(line)))
            .collect()
    }

    #[test]
    fn summary_forms_of_diff_and_short_status_are_not_shaped() {
        for command in [
            "git diff --stat",
            "git diff --name-only HEAD~3",
            "git diff --name-status",
            "git diff --numstat",
            "git diff --shortstat",
            "git diff --word-diff",
            "git status -s",
            "git status -sb",
            "git status --short",
            "git status -v",
            "git log --graph",
            "git branch",
        ] {
            assert!(
                select(command).and_then(|t| shaper(&t)).is_none(),
                "{command}"
            );
        }
        for command in ["git diff", "git diff --cached HEAD~1", "git status -uall"] {
            assert!(
                select(command).and_then(|t| shaper(&t)).is_some(),
                "{command}"
            );
        }
    }

    #[test]
    fn a_removed_line_that_looks_like_a_header_is_hunk_content() {
        let diff = "diff --git a/q.sql b/q.sql\nindex 1..2 100644\n--- a/q.sql\n+++ b/q.sql\n\
                    @@ -1,2 +1,1 @@\n--- a comment\n select 1;\n+++ not a header";
        assert_eq!(
            verdicts("git diff", diff),
            [
                "Keep",
                "Drop(Quiet)",
                "Drop(Quiet)",
                "Drop(Quiet)",
                "Keep",
                "KeepWithContext(1)",
                "Keep",
                "Keep"
            ]
        );
    }

    #[test]
    fn unchanged_lines_keep_one_each_side_of_a_change() {
        let diff = "diff --git a/x b/x\n@@ -1,7 +1,7 @@\n a\n b\n c\n-d\n+D\n e\n f\n g";
        assert_eq!(
            verdicts("git diff", diff),
            [
                "Keep",
                "Keep",
                "Drop(Lines(\"unchanged\"))",
                "Drop(Lines(\"unchanged\"))",
                "Drop(Lines(\"unchanged\"))",
                "KeepWithContext(1)",
                "KeepWithContext(1)",
                "Keep",
                "Drop(Lines(\"unchanged\"))",
                "Drop(Lines(\"unchanged\"))"
            ]
        );
    }

    #[test]
    fn headers_that_name_other_paths_are_kept() {
        // `--- a/x` after `diff --git a/x b/x` says nothing; after a renamed path it would.
        let diff = "diff --git a/x b/y\n--- a/old\n+++ b/y\n@@ -1 +1 @@\n-a\n+b";
        assert_eq!(
            verdicts("git diff", diff),
            [
                "Keep",
                "Keep",
                "Drop(Quiet)",
                "Keep",
                "KeepWithContext(1)",
                "KeepWithContext(1)"
            ]
        );
    }

    #[test]
    fn log_keeps_a_subject_show_its_body_neither_trailers() {
        let commit = "commit 0123456789abcdef0123456789abcdef01234567 (HEAD -> main)\n\
                      Author: A <a@b>\nDate:   now\n\n    subject\n    \n    one\n    \
                      Signed-off-by: A <a@b>\n";
        let body = r#"Drop(Lines("commit message"))"#;
        let quiet = "Drop(Quiet)";
        assert_eq!(
            verdicts("git log", commit),
            ["Keep", quiet, quiet, quiet, "Keep", quiet, body, body]
        );
        assert_eq!(
            verdicts("git show", commit),
            ["Keep", quiet, quiet, quiet, "Keep", quiet, "Keep", quiet]
        );
    }

    #[test]
    fn show_of_a_file_is_kept_as_it_is() {
        let file = "fn main() {\n\n    println!(\"hi\");\n}";
        assert_eq!(
            verdicts("git show HEAD:src/main.rs", file),
            ["Keep", "Keep", "Keep", "Keep"]
        );
    }
}
