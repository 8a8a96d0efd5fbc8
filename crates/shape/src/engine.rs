//! The shaping engine: a [`Shaper`] decides each line, the [`Run`] writes what it keeps, the
//! markers for what it leaves out and the path groups of listings — and keeps every
//! diagnostic line, whatever the shaper said.

use std::collections::VecDeque;
use std::sync::LazyLock;

use regex::Regex;

/// How many left-out lines before a kept line a shaper may take back as its context.
pub const MAX_CONTEXT: usize = 4;

/// What a shaper decides about one line of output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict<'a> {
    /// The line is kept.
    Keep,
    /// The line is kept, and with it up to this many (at most [`MAX_CONTEXT`]) of the lines
    /// just before it that were left out: the context of a diagnostic (gcc's `In function`).
    KeepWithContext(usize),
    /// The line is left out; runs of lines left out with the same label become one marker.
    Drop(Label<'a>),
    /// The line is left out with the run before it, whatever that run's label, and is not
    /// one more of its items: the rest of an item (a passing test's details, the blank line
    /// after it). With no run before it, it is left out quietly.
    DropMore,
    /// The line is content whose first `.0` bytes are a path (`src/a.rs:` of a grep match,
    /// `./src/` of a found file): consecutive lines with the same prefix are written as the
    /// prefix once, then each line's rest indented by two spaces.
    Group(usize),
}

/// What a marker says about a run of lines left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label<'a> {
    /// No marker: structure nobody needs to see (git's `Author:` and `Date:` lines, blank
    /// lines between blocks); counted in the closing line like every line left out.
    Quiet,
    /// `[… 12 lines: Compiling …]`: the run described by what its lines are.
    Lines(&'a str),
    /// `[… 37 passing tests …]` (`[… 1 passing test …]`): the run counted as items, singular
    /// and plural.
    Items(&'a str, &'a str),
}

/// A [`Label`] kept while its run of lines is pending.
#[derive(Debug, Clone, PartialEq, Eq)]
enum PendingLabel {
    Quiet,
    Lines(String),
    Items(String, String),
}

impl PendingLabel {
    fn new(label: Label<'_>) -> Self {
        match label {
            Label::Quiet => Self::Quiet,
            Label::Lines(what) => Self::Lines(what.to_owned()),
            Label::Items(one, many) => Self::Items(one.to_owned(), many.to_owned()),
        }
    }

    fn is(&self, label: Label<'_>) -> bool {
        match (self, label) {
            (Self::Quiet, Label::Quiet) => true,
            (Self::Lines(a), Label::Lines(b)) | (Self::Items(a, _), Label::Items(b, _)) => a == b,
            _ => false,
        }
    }

    fn marker(&self, count: u64) -> Option<String> {
        match self {
            Self::Quiet => None,
            Self::Lines(what) if count == 1 => Some(format!("[… 1 line: {what} …]")),
            Self::Lines(what) => Some(format!("[… {count} lines: {what} …]")),
            Self::Items(one, _) if count == 1 => Some(format!("[… 1 {one} …]")),
            Self::Items(_, many) => Some(format!("[… {count} {many} …]")),
        }
    }
}

/// Decides, line by line, what of a program's output the model reads. A shaper sees every
/// line in order (without its `\n`) and may keep state between them; it never writes text of
/// its own.
pub trait Shaper: Send {
    /// Decides one line.
    fn line(&mut self, line: &str) -> Verdict<'_>;

    /// Whether it never leaves a line out (a listing's shaper: it keeps or groups every line).
    fn keeps_every_line(&self) -> bool {
        false
    }
}

/// The words that make a line a diagnostic, whatever program printed it.
static DIAGNOSTIC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(error|warning|warn|fail(ed|ure|ing)?|panic(ked)?|fatal|exception|traceback|assert(ion)?)\b|^\S+:\d+(:\d+)?[: ]",
    )
    .expect("the diagnostic pattern is valid")
});

/// Whether `line` is a diagnostic line: it names an error, warning, failure, panic, fatal
/// condition, exception, traceback or assertion, or starts with a location (`src/a.rs:12:`).
/// Shaping never leaves one out.
pub fn is_diagnostic(line: &str) -> bool {
    DIAGNOSTIC.is_match(line)
}

/// The shaped text of one output and what it counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shaped {
    /// What the model reads, without a final newline.
    pub text: String,
    /// Lines of the raw output.
    pub raw_lines: u64,
    /// Bytes of the raw output.
    pub raw_bytes: u64,
    /// Lines of the raw output the text holds (kept whole, or regrouped under their prefix).
    pub kept_lines: u64,
    /// Whether the text differs from the raw output at all (a line left out, or a group).
    pub changed: bool,
}

impl Shaped {
    /// Lines of the raw output the text does not hold.
    pub fn left_out(&self) -> u64 {
        self.raw_lines - self.kept_lines
    }
}

/// What the engine does with a line, once the shaper's verdict is checked: a diagnostic is
/// kept whatever the verdict; a line left out under a new label starts a new run.
enum Decision {
    /// Kept, with this many lines of context.
    Keep(usize),
    /// Left out; the label of a new run, when it starts one.
    Drop(Option<PendingLabel>),
    /// Left out with the run before it.
    DropMore,
    /// Grouped under its first `.0` bytes.
    Group(usize),
}

fn decide(pending: &Pending, verdict: Verdict<'_>, line: &str) -> Decision {
    match verdict {
        Verdict::Keep => Decision::Keep(0),
        Verdict::KeepWithContext(n) => Decision::Keep(n.min(MAX_CONTEXT)),
        Verdict::Drop(_) | Verdict::DropMore if is_diagnostic(line) => Decision::Keep(0),
        Verdict::DropMore => Decision::DropMore,
        Verdict::Drop(label) => Decision::Drop(match &pending.label {
            Some(run) if run.is(label) => None,
            _ => Some(PendingLabel::new(label)),
        }),
        Verdict::Group(prefix) => Decision::Group(prefix),
    }
}

/// A run of lines left out, not written yet: it becomes a marker when a kept line (or the
/// end) comes, and its last lines can still be taken back as context.
#[derive(Default)]
struct Pending {
    label: Option<PendingLabel>,
    /// Lines of the run.
    count: u64,
    /// Items of the run: its lines but those left out with [`Verdict::DropMore`].
    items: u64,
    /// The last lines of the run (at most [`MAX_CONTEXT`]), each with whether it is an item.
    last: VecDeque<(String, bool)>,
}

/// Consecutive grouped lines with one prefix.
#[derive(Default)]
struct Group {
    prefix: String,
    /// The first line, held until a second one shows the prefix repeats.
    first: Option<String>,
    /// The first line's buffer once written, kept for the next group.
    spare: String,
}

/// The shaped text as it is written: bounded to the last `max_bytes` (at a line boundary),
/// the lines cut from its start counted.
struct Text {
    buf: String,
    max_bytes: usize,
    /// Bytes cut from the start so far: where `buf` starts in everything written.
    cut_bytes: u64,
    /// Lines of the raw output cut from the start because the text was over the limit.
    cut_raw_lines: u64,
    /// Where each written line that holds no raw line (a marker, a group header) starts, in
    /// everything written; every other written line holds one.
    empty_lines: VecDeque<u64>,
    /// The groups written whose header may still be in `buf`, oldest first.
    groups: VecDeque<GroupSpan>,
}

/// Where a written group is: from its header to its end (`None` while it goes on).
struct GroupSpan {
    start: u64,
    end: Option<u64>,
    prefix: String,
}

impl Text {
    /// Writes a line that holds a raw line (`raw`) or not (a marker, a group header).
    fn line(&mut self, line: &str, raw: bool) {
        if !raw {
            self.empty_lines
                .push_back(self.cut_bytes + self.buf.len() as u64);
        }
        self.buf.push_str(line);
        self.buf.push('\n');
        self.bound();
    }

    /// Writes whole raw lines, each ending with `\n`, at once.
    fn raw_lines(&mut self, lines: &str) {
        self.buf.push_str(lines);
        self.bound();
    }

    /// Writes a group member: the rest of a raw line after its group's prefix, indented.
    fn member(&mut self, rest: &str) {
        self.buf.push_str("  ");
        self.buf.push_str(rest);
        self.buf.push('\n');
        self.bound();
    }

    fn bound(&mut self) {
        if self.buf.len() > self.max_bytes.saturating_mul(2).max(64 * 1024) {
            self.cut_to(self.max_bytes);
        }
    }

    /// Where the text written so far ends, in everything written.
    fn end(&self) -> u64 {
        self.cut_bytes + self.buf.len() as u64
    }

    /// Writes a group's header: its members follow.
    fn open_group(&mut self, prefix: &str) {
        self.groups.push_back(GroupSpan {
            start: self.end(),
            end: None,
            prefix: prefix.to_owned(),
        });
        self.line(prefix, false);
    }

    /// The group being written has ended.
    fn close_group(&mut self) {
        let end = self.end();
        if let Some(group) = self.groups.back_mut()
            && group.end.is_none()
        {
            group.end = Some(end);
        }
    }

    /// Where to cut `buf` so that what is left fits `limit` bytes: after a line's `\n`, or
    /// `None` when nothing needs to go (or a last line longer than `limit` would have to).
    fn cut_point(&self, limit: usize) -> Option<usize> {
        let must = self.buf.len().checked_sub(limit).filter(|&n| n > 0)?;
        let end = memchr::memchr(b'\n', &self.buf.as_bytes()[must - 1..])?;
        Some(must + end)
    }

    /// Cuts whole lines from the start until the text fits `limit` bytes (a last line longer
    /// than that stays whole). A group the cut goes through keeps its header: it is written
    /// again first, so its members never stand without it.
    fn cut_to(&mut self, limit: usize) {
        let Some(mut cut) = self.cut_point(limit) else {
            return;
        };
        let mut header = None;
        while let Some(group) = self.groups.front() {
            let cut_to = self.cut_bytes + cut as u64;
            if group.end.is_some_and(|end| end <= cut_to) {
                self.groups.pop_front();
                continue;
            }
            if group.start < cut_to {
                let room = limit.saturating_sub(group.prefix.len() + 1);
                if let Some(further) = self.cut_point(room).filter(|&c| c > cut) {
                    cut = further;
                    // The group may end before the further cut: look again.
                    if group
                        .end
                        .is_some_and(|end| end <= self.cut_bytes + cut as u64)
                    {
                        continue;
                    }
                }
                header = Some(group.prefix.clone());
            }
            break;
        }
        let bytes = self.buf.as_bytes();
        let lines = memchr::memchr_iter(b'\n', &bytes[..cut]).count() as u64;
        let cut_to = self.cut_bytes + cut as u64;
        let mut empty = 0;
        while self.empty_lines.front().is_some_and(|&at| at < cut_to) {
            self.empty_lines.pop_front();
            empty += 1;
        }
        self.cut_raw_lines += lines - empty;
        self.buf.drain(..cut);
        self.cut_bytes = cut_to;
        if let Some(prefix) = header {
            let start = cut_to - (prefix.len() as u64 + 1);
            let mut text = String::with_capacity(prefix.len() + 1 + self.buf.len());
            text.push_str(&prefix);
            text.push('\n');
            text.push_str(&self.buf);
            self.buf = text;
            self.cut_bytes = start;
            self.empty_lines.push_front(start);
            if let Some(group) = self.groups.front_mut() {
                group.start = start;
            }
        }
    }
}

/// One output being shaped: lines go in (as chunks of text, split anywhere), the
/// [`Shaped`] text comes out.
pub struct Run {
    shaper: Box<dyn Shaper>,
    text: Text,
    pending: Pending,
    group: Option<Group>,
    /// A group that ended, its buffers kept for the next.
    spare_group: Option<Group>,
    /// The unfinished line of the last chunk.
    carry: String,
    raw_lines: u64,
    raw_bytes: u64,
    kept_lines: u64,
    /// Lines of a listing before the part pushed ([`Run::skipped_before`]).
    skipped: u64,
    changed: bool,
}

impl Run {
    /// A run of `shaper` whose text keeps at most `max_bytes` (its last part, cut at a line
    /// boundary, when the shaped text is longer).
    pub fn new(shaper: Box<dyn Shaper>, max_bytes: usize) -> Self {
        Self {
            shaper,
            text: Text {
                buf: String::new(),
                max_bytes,
                cut_bytes: 0,
                cut_raw_lines: 0,
                empty_lines: VecDeque::new(),
                groups: VecDeque::new(),
            },
            pending: Pending::default(),
            group: None,
            spare_group: None,
            carry: String::new(),
            raw_lines: 0,
            raw_bytes: 0,
            kept_lines: 0,
            skipped: 0,
            changed: false,
        }
    }

    /// Takes the next piece of the output (sanitised text; a line may be split across pieces).
    pub fn push(&mut self, text: &str) {
        self.raw_bytes += text.len() as u64;
        let mut rest = text;
        if !self.carry.is_empty() {
            let Some(end) = memchr::memchr(b'\n', rest.as_bytes()) else {
                self.carry.push_str(rest);
                return;
            };
            let mut line = std::mem::take(&mut self.carry);
            line.push_str(&rest[..end]);
            self.line(&line);
            rest = &rest[end + 1..];
        }
        // A run of lines kept as they are, with nothing pending before them, is written at
        // once: `kept` is where it starts.
        let mut kept = 0;
        let mut at = 0;
        while let Some(end) = memchr::memchr(b'\n', &rest.as_bytes()[at..]) {
            let line = &rest[at..at + end];
            let next = at + end + 1;
            self.raw_lines += 1;
            let verdict = self.shaper.line(line);
            if verdict == Verdict::Keep && self.pending.label.is_none() && self.group.is_none() {
                self.kept_lines += 1;
                at = next;
                continue;
            }
            let decision = decide(&self.pending, verdict, line);
            if kept < at {
                self.text.raw_lines(&rest[kept..at]);
            }
            self.act(line, decision);
            at = next;
            kept = next;
        }
        if kept < at {
            self.text.raw_lines(&rest[kept..at]);
        }
        self.carry.push_str(&rest[at..]);
    }

    /// Lines of the output the text has cut from its start so far (it was over the limit).
    pub fn cut_lines(&self) -> u64 {
        self.text.cut_raw_lines
    }

    /// Counts `lines` lines (`bytes` bytes) that came before everything pushed and are not
    /// in the text: what a run from the end of an output (a listing's, whose shaper leaves no
    /// line out, once the text was cut) says of the output's start.
    pub fn skipped_before(&mut self, lines: u64, bytes: u64) {
        self.raw_lines += lines;
        self.raw_bytes += bytes;
        self.skipped += lines;
        self.changed = true;
    }

    /// Ends the output and returns its shaped text.
    pub fn finish(mut self) -> Shaped {
        if !self.carry.is_empty() {
            let line = std::mem::take(&mut self.carry);
            self.line(&line);
        }
        self.flush_group();
        self.flush_pending(0);
        let mut text = self.text;
        if text.buf.len() > text.max_bytes {
            text.cut_to(text.max_bytes);
        }
        let kept_lines = self.kept_lines - text.cut_raw_lines;
        let cut = text.cut_raw_lines + self.skipped;
        let mut out = String::with_capacity(text.buf.len() + 64);
        if cut > 0 {
            self.changed = true;
            out = format!(
                "[… {cut} more lines: the shaped text is over the {} limit …]\n",
                agentsh_protocol::format_size(text.max_bytes as u64)
            );
        }
        out.push_str(text.buf.strip_suffix('\n').unwrap_or(&text.buf));
        Shaped {
            text: out,
            raw_lines: self.raw_lines,
            raw_bytes: self.raw_bytes,
            kept_lines,
            changed: self.changed,
        }
    }

    /// One line on its own (the one a chunk's end split, the last one).
    fn line(&mut self, line: &str) {
        self.raw_lines += 1;
        let verdict = self.shaper.line(line);
        let decision = decide(&self.pending, verdict, line);
        self.act(line, decision);
    }

    fn act(&mut self, line: &str, decision: Decision) {
        match decision {
            Decision::Keep(context) => self.keep(line, context),
            Decision::Drop(fresh) => {
                self.flush_group();
                if let Some(fresh) = fresh {
                    self.flush_pending(0);
                    self.pending.label = Some(fresh);
                }
                self.drop_line(line, true);
            }
            Decision::DropMore => {
                self.flush_group();
                if self.pending.label.is_none() {
                    self.pending.label = Some(PendingLabel::Quiet);
                }
                self.drop_line(line, false);
            }
            Decision::Group(prefix) => self.group(line, prefix),
        }
    }

    fn keep(&mut self, line: &str, context: usize) {
        self.flush_group();
        self.flush_pending(context);
        self.write(line);
    }

    fn write(&mut self, line: &str) {
        self.kept_lines += 1;
        self.text.line(line, true);
    }

    fn drop_line(&mut self, line: &str, item: bool) {
        let pending = &mut self.pending;
        pending.count += 1;
        pending.items += u64::from(item);
        if pending.last.len() == MAX_CONTEXT {
            let (mut reused, _) = pending.last.pop_front().unwrap_or_default();
            reused.clear();
            reused.push_str(line);
            pending.last.push_back((reused, item));
        } else {
            pending.last.push_back((line.to_owned(), item));
        }
    }

    /// Writes the pending run: its last `context` lines as kept lines, the rest as a marker —
    /// except one line no longer than its marker, which is kept.
    fn flush_pending(&mut self, context: usize) {
        let Some(label) = self.pending.label.take() else {
            return;
        };
        let mut pending = std::mem::take(&mut self.pending);
        let back = context.min(pending.last.len());
        let mut dropped = pending.count - back as u64;
        let taken_back: Vec<(String, bool)> =
            pending.last.drain(pending.last.len() - back..).collect();
        let items = pending.items - taken_back.iter().filter(|(_, item)| *item).count() as u64;
        // A run counted in items says how many; one counted in lines, how many lines.
        // Items whose item lines were all taken back: the rest goes quietly.
        let label = match label {
            PendingLabel::Items(..) if items == 0 => PendingLabel::Quiet,
            label => label,
        };
        let by_items = matches!(label, PendingLabel::Items(..));
        let counted = |dropped: u64| if by_items { items } else { dropped };
        if dropped == 1 {
            let marker = label.marker(counted(1));
            if let (Some((line, _)), Some(marker)) = (pending.last.back(), marker)
                && line.len() <= marker.len()
            {
                let line = line.clone();
                self.write(&line);
                dropped = 0;
            }
        }
        if dropped > 0 {
            self.changed = true;
            if let Some(marker) = label.marker(counted(dropped)) {
                self.text.line(&marker, false);
            }
        }
        for (line, _) in taken_back {
            self.write(&line);
        }
    }

    fn group(&mut self, line: &str, prefix: usize) {
        let prefix_len = if line.is_char_boundary(prefix) {
            prefix.min(line.len())
        } else {
            0
        };
        if prefix_len == 0 || prefix_len == line.len() {
            self.keep(line, 0);
            return;
        }
        let prefix = &line[..prefix_len];
        let rest = &line[prefix_len..];
        match &mut self.group {
            Some(group) if group.prefix == prefix => {
                if let Some(first) = group.first.take() {
                    // The prefix repeats: the group is written from here on.
                    self.changed = true;
                    self.text.open_group(&group.prefix);
                    self.kept_lines += 1;
                    self.text.member(&first[prefix_len..]);
                }
                self.kept_lines += 1;
                self.text.member(rest);
            }
            _ => {
                self.flush_group();
                self.flush_pending(0);
                // The last group's buffers, reused: most lines of a listing start a group.
                let mut group = self.spare_group.take().unwrap_or_default();
                group.prefix.clear();
                group.prefix.push_str(prefix);
                let mut first = std::mem::take(&mut group.spare);
                first.clear();
                first.push_str(line);
                group.first = Some(first);
                self.group = Some(group);
            }
        }
    }

    fn flush_group(&mut self) {
        if let Some(mut group) = self.group.take() {
            if let Some(first) = group.first.take() {
                self.write(&first);
                group.spare = first;
            } else {
                self.text.close_group();
            }
            self.spare_group = Some(group);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;

    /// Drops lines starting with `-`, groups lines with a `:` by what is before it, keeps the
    /// rest; `!` lines keep two lines of context.
    struct Test;

    impl Shaper for Test {
        fn line(&mut self, line: &str) -> Verdict<'_> {
            if line.starts_with('-') {
                Verdict::Drop(Label::Items("dash", "dashes"))
            } else if line.starts_with('~') {
                Verdict::Drop(Label::Quiet)
            } else if line.starts_with('+') {
                Verdict::DropMore
            } else if line.starts_with('!') {
                Verdict::KeepWithContext(2)
            } else if let Some(at) = line.find(':') {
                Verdict::Group(at + 1)
            } else {
                Verdict::Keep
            }
        }
    }

    fn shape(text: &str) -> Shaped {
        let mut run = Run::new(Box::new(Test), 1 << 20);
        for piece in text.as_bytes().chunks(3) {
            // Pieces split anywhere but inside a character (the test text is ASCII).
            run.push(std::str::from_utf8(piece).unwrap());
        }
        run.finish()
    }

    #[test]
    fn runs_left_out_become_one_marker_each() {
        let shaped = shape("a\n-1\n-2\n-3\nb\n~x\n~y\nc\n");
        assert_eq!(shaped.text, "a\n[… 3 dashes …]\nb\nc");
        assert_eq!(
            (shaped.raw_lines, shaped.kept_lines, shaped.left_out()),
            (8, 3, 5)
        );
        assert!(shaped.changed);
    }

    #[test]
    fn the_rest_of_an_item_joins_its_run_without_counting() {
        let shaped = shape("a\n-1\n+detail\n+more\n-2\n+detail\nb\n+stray\n+stray\nc\n");
        assert_eq!(shaped.text, "a\n[… 2 dashes …]\nb\nc");
        assert_eq!(shaped.left_out(), 7);
        // A diagnostic among them is kept all the same.
        let shaped = shape("-1\n+error: in the details\n-2\n+x\n");
        assert_eq!(shaped.text, "-1\n+error: in the details\n[… 1 dash …]");
    }

    #[test]
    fn a_single_short_line_is_kept_rather_than_marked() {
        let shaped = shape("a\n-1\nb");
        assert_eq!(shaped.text, "a\n-1\nb");
        assert!(!shaped.changed);
        assert_eq!(shaped.left_out(), 0);
    }

    #[test]
    fn diagnostics_are_kept_whatever_the_shaper_says() {
        let shaped = shape("-ok\n-ok\n- error: it broke\n-ok\n-ok\n");
        assert_eq!(
            shaped.text,
            "[… 2 dashes …]\n- error: it broke\n[… 2 dashes …]"
        );
    }

    #[test]
    fn context_is_taken_back_from_the_run_before() {
        let shaped = shape("-1\n-2\n-3\n-4\n!boom\n");
        assert_eq!(shaped.text, "[… 2 dashes …]\n-3\n-4\n!boom");
        assert_eq!(shaped.kept_lines, 3);
    }

    #[test]
    fn a_repeated_prefix_is_written_once() {
        let shaped = shape("a.rs:1:x\na.rs:2:y\nb.rs:3:z\nc\n");
        assert_eq!(shaped.text, "a.rs:\n  1:x\n  2:y\nb.rs:3:z\nc");
        assert_eq!(shaped.kept_lines, 4);
        assert_eq!(shaped.left_out(), 0);
    }

    #[test]
    fn the_text_keeps_its_end_when_over_the_limit() {
        let mut run = Run::new(Box::new(Test), 20);
        run.push("line1\nline2\nline3\nline4\nline5\nline6\n");
        let shaped = run.finish();
        assert_eq!(
            shaped.text,
            "[… 3 more lines: the shaped text is over the 20B limit …]\nline4\nline5\nline6"
        );
        assert_eq!(shaped.kept_lines, 3);
    }

    #[test]
    fn a_group_cut_by_the_limit_keeps_its_header() {
        for max_bytes in [30, 64, 100, 1000] {
            let mut run = Run::new(Box::new(Test), max_bytes);
            let mut raw = String::from("zz\n");
            for n in 0..200 {
                writeln!(raw, "a.rs:{n}").unwrap();
            }
            run.push(&raw);
            let shaped = run.finish();
            let lines: Vec<&str> = shaped.text.lines().collect();
            assert!(lines[0].starts_with("[… "), "{max_bytes}: {}", shaped.text);
            assert_eq!(lines[1], "a.rs:", "{max_bytes}: {}", shaped.text);
            assert!(
                lines[2..].iter().all(|l| l.starts_with("  ")),
                "{}",
                shaped.text
            );
            assert_eq!(lines.last(), Some(&"  199"));
            // What is left fits the limit, the marker aside.
            let body = shaped.text.len() - lines[0].len() - 1;
            assert!(body <= max_bytes.max(8), "{max_bytes}: {body}");
            // Every raw line is counted: kept, or in the marker.
            let marker: u64 = lines[0]["[… ".len()..]
                .split(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert_eq!(shaped.kept_lines, lines.len() as u64 - 2);
            assert_eq!(marker + shaped.kept_lines, 201, "{}", shaped.text);
        }
    }

    #[test]
    fn diagnostic_lines_are_those_the_terms_name() {
        for line in [
            "error[E0425]: cannot find value",
            "WARNING: x",
            "test failed",
            "thread 'main' panicked at",
            "Traceback (most recent call last):",
            "src/main.rs:12:5: note",
            "main.c:3: undefined",
            "assert x == 2",
        ] {
            assert!(is_diagnostic(line), "{line}");
        }
        for line in [
            "test error_handling ... ok",
            "   Compiling foo v0.1.0",
            "Date:   Mon Jan 1",
            "errors are fine here? no: 'errors' is not a term",
            "AssertionError: 1 != 2",
        ] {
            assert!(!is_diagnostic(line), "{line}");
        }
    }
}
