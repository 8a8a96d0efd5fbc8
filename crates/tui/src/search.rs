//! Ctrl+R: a reverse search over the history, matched fuzzily by nucleo's matcher, newest
//! first. Matches are found lazily, from the newest entry back, only as far as the rows shown
//! need: a keystroke costs the entries scanned to fill the list, not the whole history.

use std::collections::HashSet;

use nucleo_matcher::pattern::{AtomKind, CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};

/// Matches shown under the search line.
pub(crate) const SEARCH_ROWS: usize = 5;

/// One search, from Ctrl+R to Enter or Esc.
pub(crate) struct HistorySearch {
    /// What is typed.
    query: String,
    /// The input line as it was (its text and cursor), for Esc.
    pub saved: (String, usize),
    /// Matching entries found so far, newest first, each text once: indices into the history.
    matches: Vec<usize>,
    /// The texts of `matches`, so a repeated entry is listed once.
    seen: HashSet<String>,
    /// The history entries not looked at yet: `..next` (scanned from the newest down).
    next: usize,
    /// The match chosen (an index into `matches`).
    selected: usize,
    pattern: Pattern,
    buffer: Vec<char>,
}

impl HistorySearch {
    /// A search over a history of `len` entries, the input line `saved` kept for Esc.
    pub(crate) fn new(len: usize, saved: (String, usize)) -> Self {
        Self {
            query: String::new(),
            saved,
            matches: Vec::new(),
            seen: HashSet::new(),
            next: len,
            selected: 0,
            pattern: pattern(""),
            buffer: Vec::new(),
        }
    }

    /// What is typed.
    pub(crate) fn query(&self) -> &str {
        &self.query
    }

    /// Types `text` into the query (the search starts again from the newest entry).
    pub(crate) fn push(&mut self, text: &str, len: usize) {
        self.query.push_str(text);
        self.restart(len);
    }

    /// Deletes the query's last character.
    pub(crate) fn pop(&mut self, len: usize) {
        self.query.pop();
        self.restart(len);
    }

    fn restart(&mut self, len: usize) {
        self.pattern = pattern(&self.query);
        self.matches.clear();
        self.seen.clear();
        self.next = len;
        self.selected = 0;
    }

    /// The next older match (Ctrl+R again, Up); stays at the oldest.
    pub(crate) fn older(&mut self, history: &[String], matcher: &mut Matcher) {
        self.find(history, matcher, self.selected + 2);
        if self.selected + 1 < self.matches.len() {
            self.selected += 1;
        }
    }

    /// The next newer match (Down).
    pub(crate) fn newer(&mut self) {
        self.selected = self.selected.saturating_sub(1);
    }

    /// The matches in view (at most [`SEARCH_ROWS`], around the chosen one) and which of them
    /// is chosen, found as far as needed.
    pub(crate) fn shown<'h>(
        &mut self,
        history: &'h [String],
        matcher: &mut Matcher,
    ) -> (Vec<&'h str>, Option<usize>) {
        let first = self.selected.saturating_sub(SEARCH_ROWS - 1);
        self.find(history, matcher, first + SEARCH_ROWS);
        let rows = self
            .matches
            .iter()
            .skip(first)
            .take(SEARCH_ROWS)
            .filter_map(|&at| history.get(at).map(String::as_str))
            .collect::<Vec<_>>();
        let chosen = (!rows.is_empty()).then_some(self.selected - first);
        (rows, chosen)
    }

    /// The chosen match's text.
    pub(crate) fn chosen<'h>(
        &mut self,
        history: &'h [String],
        matcher: &mut Matcher,
    ) -> Option<&'h str> {
        self.find(history, matcher, self.selected + 1);
        self.matches
            .get(self.selected)
            .and_then(|&at| history.get(at))
            .map(String::as_str)
    }

    /// Scans older entries until `want` matches are known or the history is exhausted.
    fn find(&mut self, history: &[String], matcher: &mut Matcher, want: usize) {
        self.next = self.next.min(history.len());
        while self.matches.len() < want && self.next > 0 {
            self.next -= 1;
            let entry = &history[self.next];
            if self.seen.contains(entry.as_str()) {
                continue;
            }
            let haystack = Utf32Str::new(entry, &mut self.buffer);
            if self.pattern.score(haystack, matcher).is_some() {
                self.seen.insert(entry.clone());
                self.matches.push(self.next);
            }
        }
    }
}

/// The matcher a search uses (made once: it holds its scratch space).
pub(crate) fn matcher() -> Matcher {
    Matcher::new(Config::DEFAULT)
}

/// The query as one fuzzy pattern (no special syntax: `^`, `!` and `'` are matched as typed);
/// smart case: an upper-case letter makes the match case-sensitive.
fn pattern(query: &str) -> Pattern {
    Pattern::new(
        query,
        CaseMatching::Smart,
        Normalization::Smart,
        AtomKind::Fuzzy,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history(entries: &[&str]) -> Vec<String> {
        entries.iter().map(|&e| e.to_owned()).collect()
    }

    fn shown(search: &mut HistorySearch, history: &[String], matcher: &mut Matcher) -> Vec<String> {
        let (rows, _) = search.shown(history, matcher);
        rows.into_iter().map(str::to_owned).collect()
    }

    #[test]
    fn fuzzy_matches_newest_first_each_text_once() {
        let history = history(&[
            "cargo build --release",
            "git status",
            "cargo test -p tui",
            "ls -la",
            "cargo build --release",
        ]);
        let mut matcher = matcher();
        let mut search = HistorySearch::new(history.len(), (String::new(), 0));
        search.push("cgo", history.len());
        assert_eq!(
            shown(&mut search, &history, &mut matcher),
            ["cargo build --release", "cargo test -p tui"],
            "newest first; the repeat once"
        );
        search.older(&history, &mut matcher);
        assert_eq!(
            search.chosen(&history, &mut matcher),
            Some("cargo test -p tui")
        );
        search.older(&history, &mut matcher);
        assert_eq!(
            search.chosen(&history, &mut matcher),
            Some("cargo test -p tui"),
            "stays"
        );
        search.newer();
        assert_eq!(
            search.chosen(&history, &mut matcher),
            Some("cargo build --release")
        );
    }

    #[test]
    fn an_empty_query_lists_the_newest_and_a_miss_lists_nothing() {
        let history = history(&["one", "two", "three"]);
        let mut matcher = matcher();
        let mut search = HistorySearch::new(history.len(), ("typed".into(), 5));
        assert_eq!(
            shown(&mut search, &history, &mut matcher),
            ["three", "two", "one"]
        );
        search.push("zzz", history.len());
        assert!(shown(&mut search, &history, &mut matcher).is_empty());
        assert_eq!(search.chosen(&history, &mut matcher), None);
        search.pop(history.len());
        search.pop(history.len());
        search.pop(history.len());
        assert_eq!(search.query(), "");
        assert_eq!(search.chosen(&history, &mut matcher), Some("three"));
        assert_eq!(search.saved, ("typed".to_owned(), 5));
    }

    #[test]
    fn smart_case() {
        let history = history(&["Make all", "make test"]);
        let mut matcher = matcher();
        let mut search = HistorySearch::new(history.len(), (String::new(), 0));
        search.push("make", history.len());
        assert_eq!(shown(&mut search, &history, &mut matcher).len(), 2);
        search.pop(history.len());
        search.pop(history.len());
        search.pop(history.len());
        search.pop(history.len());
        search.push("Make", history.len());
        assert_eq!(shown(&mut search, &history, &mut matcher), ["Make all"]);
    }
}
