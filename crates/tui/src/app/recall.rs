//! The history as a person recalls it: Ctrl+R's fuzzy reverse search, and the dimmed
//! suggestion after the cursor (the newest entry that starts with the line), taken with → or
//! End.

use agentsh_renderer::Renderer;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::App;
use crate::search::{HistorySearch, matcher};

impl<R: Renderer> App<R> {
    /// Ctrl+R: opens the search (the line kept for Esc); in it, the next older match.
    pub(crate) fn reverse_search(&mut self) {
        self.completing = None;
        let matcher = self.matcher.get_or_insert_with(|| Box::new(matcher()));
        if let Some(search) = &mut self.search {
            search.older(self.history.entries(), matcher);
        } else {
            let saved = (self.line.text().to_owned(), self.line.cursor());
            self.search = Some(HistorySearch::new(self.history.entries().len(), saved));
        }
    }

    /// A key while the search is open (it takes every key); returns whether one was open.
    pub(crate) fn search_key(&mut self, key: &KeyEvent) -> bool {
        let Some(search) = &mut self.search else {
            return false;
        };
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let entries = self.history.entries();
        let len = entries.len();
        let matcher = self.matcher.get_or_insert_with(|| Box::new(matcher()));
        // Esc (or Ctrl+C, Ctrl+G): the line as it was.
        if key.code == KeyCode::Esc || ctrl && matches!(key.code, KeyCode::Char('c' | 'g')) {
            let (text, cursor) = std::mem::take(&mut search.saved);
            self.line.set(&text, cursor);
            self.search = None;
            return true;
        }
        match key.code {
            KeyCode::Char('r') if ctrl => search.older(entries, matcher),
            KeyCode::Up => search.older(entries, matcher),
            KeyCode::Down => search.newer(),
            KeyCode::Enter | KeyCode::Tab | KeyCode::Right | KeyCode::End => {
                if let Some(chosen) = search.chosen(entries, matcher) {
                    let chosen = chosen.to_owned();
                    self.line.set(&chosen, chosen.len());
                } else {
                    let (text, cursor) = std::mem::take(&mut search.saved);
                    self.line.set(&text, cursor);
                }
                self.search = None;
            }
            KeyCode::Backspace => search.pop(len),
            KeyCode::Char(c) if !ctrl => {
                let mut buf = [0; 4];
                search.push(c.encode_utf8(&mut buf), len);
            }
            _ => {}
        }
        true
    }

    /// Text pasted while the search is open goes into its query.
    pub(crate) fn search_paste(&mut self, text: &str) -> bool {
        let len = self.history.entries().len();
        let Some(search) = &mut self.search else {
            return false;
        };
        search.push(&text.replace(['\r', '\n'], " "), len);
        true
    }

    /// The suggestion's part after the line: the newest entry that starts with the line, when
    /// the cursor is at its end and nothing else is open.
    pub(crate) fn suggestion_tail(&mut self) -> Option<&str> {
        let text = self.line.text();
        if self.search.is_some()
            || self.completing.is_some()
            || self.line.cursor() != text.len()
            || text.contains('\n')
        {
            return None;
        }
        let entries = self.history.entries();
        self.suggester
            .suggest(entries, text)
            .map(|entry| &entry[text.len()..])
    }

    /// → or End at the line's end with a suggestion shown: takes it; returns whether it did.
    pub(crate) fn accept_suggestion(&mut self) -> bool {
        let Some(tail) = self.suggestion_tail().map(str::to_owned) else {
            return false;
        };
        self.line.end();
        self.line.insert(&tail);
        true
    }
}
