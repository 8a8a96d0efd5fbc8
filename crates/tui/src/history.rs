//! The input history: `$XDG_STATE_HOME/agentsh/history` (else
//! `~/.local/state/agentsh/history`), private (0600 in a 0700 directory), one entry per line.
//! An entry's newlines and backslashes are escaped (`\n`, `\\`), so a pasted multi-line
//! command stays one entry.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Entries kept in memory and in the file; older ones are dropped when the file is rewritten.
pub(crate) const MAX_ENTRIES: usize = 10_000;

/// The history file's default path, from the environment; `None` when neither
/// `XDG_STATE_HOME` nor `HOME` is set.
pub(crate) fn default_path() -> Option<PathBuf> {
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|dir| Path::new(dir).is_absolute())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".local/state")))?;
    Some(state.join("agentsh").join("history"))
}

/// The history: entries oldest first, and the file they are appended to.
#[derive(Debug, Default)]
pub(crate) struct History {
    entries: Vec<String>,
    file: Option<PathBuf>,
}

impl History {
    /// The history kept in `file` (loaded now; a missing file is an empty history), or in memory
    /// only. A file that cannot be read is an error to report; the history then lives in memory.
    pub(crate) fn open(file: Option<PathBuf>) -> (Self, Option<String>) {
        let Some(path) = file else {
            return (Self::default(), None);
        };
        match load(&path) {
            Ok(entries) => (
                Self {
                    entries,
                    file: Some(path),
                },
                None,
            ),
            Err(err) => (
                Self::default(),
                Some(format!(
                    "history {}: {err}; this session's history is not saved",
                    path.display()
                )),
            ),
        }
    }

    /// The entries, oldest first.
    pub(crate) fn entries(&self) -> &[String] {
        &self.entries
    }

    /// Adds `line` (not a repeat of the newest entry, not blank) and appends it to the file.
    /// Returns the error to report when the file cannot be written (the entry is kept).
    pub(crate) fn push(&mut self, line: &str) -> Option<String> {
        if line.trim().is_empty() || self.entries.last().is_some_and(|last| last == line) {
            return None;
        }
        self.entries.push(line.to_owned());
        let overflow = self.entries.len() > MAX_ENTRIES;
        if overflow {
            self.entries.drain(..self.entries.len() - MAX_ENTRIES);
        }
        let path = self.file.as_ref()?;
        let written = if overflow {
            rewrite(path, &self.entries)
        } else {
            append(path, line)
        };
        let error = written
            .err()
            .map(|err| format!("history {}: {err}; not saved from now on", path.display()));
        if error.is_some() {
            // Reported once; later entries stay in memory.
            self.file = None;
        }
        error
    }
}

/// The newest history entry that starts with what is typed (and is longer), found as typing
/// goes on: the answer for a longer line is never newer than the one for its start, so a
/// keystroke that adds to the line goes on from the last answer instead of from the newest
/// entry.
#[derive(Debug, Default)]
pub(crate) struct Suggester {
    /// The line last asked about, the history's length then, and the answer: an entry's index.
    last: Option<(String, usize, Option<usize>)>,
}

impl Suggester {
    /// The newest entry of `history` that starts with `typed` and is longer than it.
    pub(crate) fn suggest<'h>(&mut self, history: &'h [String], typed: &str) -> Option<&'h str> {
        if typed.is_empty() {
            return None;
        }
        // Only entries below `from` can be the answer.
        let from = match &self.last {
            Some((line, len, found))
                if *len == history.len() && typed.starts_with(line.as_str()) =>
            {
                found.map_or(0, |at| at + 1)
            }
            _ => history.len(),
        };
        let found = history[..from]
            .iter()
            .rposition(|entry| entry.len() > typed.len() && entry.starts_with(typed));
        match &mut self.last {
            Some((line, len, last)) => {
                line.clear();
                line.push_str(typed);
                *len = history.len();
                *last = found;
            }
            None => self.last = Some((typed.to_owned(), history.len(), found)),
        }
        found.map(|at| history[at].as_str())
    }
}

fn load(path: &Path) -> io::Result<Vec<String>> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(err),
    };
    let mut entries = Vec::new();
    for line in BufReader::new(file).split(b'\n') {
        let line = line?;
        let line = String::from_utf8_lossy(&line);
        if !line.is_empty() {
            entries.push(unescape(&line));
        }
    }
    if entries.len() > MAX_ENTRIES {
        entries.drain(..entries.len() - MAX_ENTRIES);
    }
    Ok(entries)
}

/// Opens the file for appending, creating it (0600) and its directory (0700) when missing;
/// an existing file is made private again.
fn open_private(path: &Path, truncate: bool) -> io::Result<File> {
    if let Some(dir) = path.parent() {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let mut options = OpenOptions::new();
    options.create(true).mode(0o600);
    if truncate {
        options.write(true).truncate(true);
    } else {
        options.append(true);
    }
    let file = options.open(path)?;
    file.set_permissions(fs::Permissions::from_mode(0o600))?;
    Ok(file)
}

fn append(path: &Path, line: &str) -> io::Result<()> {
    let mut file = open_private(path, false)?;
    let mut record = escape(line);
    record.push('\n');
    file.write_all(record.as_bytes())
}

/// Writes the kept entries to a private temporary file and renames it over the history.
fn rewrite(path: &Path, entries: &[String]) -> io::Result<()> {
    let temporary = path.with_extension("tmp");
    {
        let mut file = open_private(&temporary, true)?;
        let mut text = String::new();
        for entry in entries {
            text.push_str(&escape(entry));
            text.push('\n');
        }
        file.write_all(text.as_bytes())?;
    }
    fs::rename(&temporary, path)
}

fn escape(entry: &str) -> String {
    let mut out = String::with_capacity(entry.len());
    for c in entry.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out
}

fn unescape(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_survive_a_restart_escaped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("state/agentsh/history");
        let (mut history, error) = History::open(Some(path.clone()));
        assert_eq!(error, None);
        assert_eq!(history.push("echo one"), None);
        assert_eq!(history.push("printf 'a\\nb'\nsecond line"), None);
        assert_eq!(
            history.push("printf 'a\\nb'\nsecond line"),
            None,
            "a repeat"
        );
        let (reopened, _) = History::open(Some(path.clone()));
        assert_eq!(
            reopened.entries(),
            [
                "echo one".to_owned(),
                "printf 'a\\nb'\nsecond line".to_owned()
            ]
        );
        let mode = |p: &Path| fs::metadata(p).expect("metadata").permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().expect("dir")), 0o700);
    }

    #[test]
    fn only_the_newest_entries_are_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("history");
        let (mut history, _) = History::open(Some(path.clone()));
        for n in 0..=MAX_ENTRIES + 5 {
            history.push(&format!("echo {n}"));
        }
        let (reopened, _) = History::open(Some(path));
        assert_eq!(reopened.entries().len(), MAX_ENTRIES);
        assert_eq!(reopened.entries()[0], "echo 6");
        assert_eq!(
            reopened.entries().last().map(String::as_str),
            Some(format!("echo {}", MAX_ENTRIES + 5).as_str())
        );
    }

    #[test]
    fn the_suggestion_is_the_newest_longer_entry_with_the_typed_start() {
        let history: Vec<String> = ["git status", "git stash pop", "cargo test", "git st"]
            .map(String::from)
            .to_vec();
        let mut suggester = Suggester::default();
        assert_eq!(suggester.suggest(&history, "g"), Some("git st"));
        assert_eq!(
            suggester.suggest(&history, "git st"),
            Some("git stash pop"),
            "longer only"
        );
        assert_eq!(
            suggester.suggest(&history, "git sta"),
            Some("git stash pop")
        );
        assert_eq!(suggester.suggest(&history, "git stat"), Some("git status"));
        assert_eq!(suggester.suggest(&history, "git statu"), Some("git status"));
        assert_eq!(suggester.suggest(&history, "git status"), None);
        assert_eq!(suggester.suggest(&history, "git status -s"), None);
        // Shorter again (a Backspace): from the newest.
        assert_eq!(suggester.suggest(&history, "git s"), Some("git st"));
        assert_eq!(suggester.suggest(&history, "ca"), Some("cargo test"));
        assert_eq!(suggester.suggest(&history, ""), None);
        // A new entry is seen.
        let mut newer = history.clone();
        newer.push("cargo build".into());
        assert_eq!(suggester.suggest(&newer, "ca"), Some("cargo build"));
    }

    #[test]
    fn an_unwritable_history_is_reported_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        // A directory where the file should be: it can be neither read as lines nor appended to.
        let path = dir.path().join("history");
        fs::create_dir(&path).expect("mkdir");
        let (mut history, error) = History::open(Some(path));
        assert!(error.is_some_and(|e| e.contains("history")));
        assert_eq!(history.push("ls"), None, "in memory only after the error");
        assert_eq!(history.entries(), ["ls".to_owned()]);
    }
}
