//! The input line: the text being typed, its cursor, and walking the history.

/// An editable line with a cursor (a byte offset on a `char` boundary) and a position in the
/// history (`Up`/`Down`).
#[derive(Debug, Default, Clone)]
pub(crate) struct LineEditor {
    text: String,
    cursor: usize,
    /// Which history entry is shown (counted from the newest, 1-based); `None` when editing
    /// the line's own text, which `draft` keeps while the history is shown.
    browsing: Option<usize>,
    draft: String,
}

impl LineEditor {
    /// The text.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The cursor's byte offset.
    pub(crate) fn cursor(&self) -> usize {
        self.cursor
    }

    /// Whether nothing is typed.
    pub(crate) fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Takes the text, leaving an empty line.
    pub(crate) fn take(&mut self) -> String {
        self.browsing = None;
        self.draft.clear();
        self.cursor = 0;
        std::mem::take(&mut self.text)
    }

    /// Clears the line.
    pub(crate) fn clear(&mut self) {
        self.take();
    }

    /// Inserts `text` at the cursor (a typed character or a paste; `\r\n` and `\r` become `\n`).
    pub(crate) fn insert(&mut self, text: &str) {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        self.text.insert_str(self.cursor, &text);
        self.cursor += text.len();
        self.browsing = None;
    }

    /// Replaces bytes `start..end` (on `char` boundaries) with `text`; the cursor goes after it.
    pub(crate) fn replace(&mut self, start: usize, end: usize, text: &str) {
        self.text.replace_range(start..end, text);
        self.cursor = start + text.len();
        self.browsing = None;
    }

    /// Sets the whole line, the cursor at `cursor` (clamped to a `char` boundary).
    pub(crate) fn set(&mut self, text: &str, cursor: usize) {
        self.text.clear();
        self.text.push_str(text);
        let mut cursor = cursor.min(self.text.len());
        while !self.text.is_char_boundary(cursor) {
            cursor -= 1;
        }
        self.cursor = cursor;
        self.browsing = None;
    }

    /// Deletes the character before the cursor.
    pub(crate) fn backspace(&mut self) {
        if let Some(previous) = self.previous_boundary() {
            self.text.replace_range(previous..self.cursor, "");
            self.cursor = previous;
        }
    }

    /// Deletes the character under the cursor.
    pub(crate) fn delete(&mut self) {
        if let Some(next) = self.next_boundary() {
            self.text.replace_range(self.cursor..next, "");
        }
    }

    /// Moves one character left.
    pub(crate) fn left(&mut self) {
        if let Some(previous) = self.previous_boundary() {
            self.cursor = previous;
        }
    }

    /// Moves one character right.
    pub(crate) fn right(&mut self) {
        if let Some(next) = self.next_boundary() {
            self.cursor = next;
        }
    }

    /// Moves to the start of the line.
    pub(crate) fn home(&mut self) {
        self.cursor = 0;
    }

    /// Moves to the end of the line.
    pub(crate) fn end(&mut self) {
        self.cursor = self.text.len();
    }

    /// Deletes from the start of the line to the cursor (ctrl+u).
    pub(crate) fn kill_to_start(&mut self) {
        self.text.replace_range(..self.cursor, "");
        self.cursor = 0;
    }

    /// Deletes from the cursor to the end (ctrl+k).
    pub(crate) fn kill_to_end(&mut self) {
        self.text.truncate(self.cursor);
    }

    /// Deletes the word before the cursor (ctrl+w): blanks, then non-blanks.
    pub(crate) fn delete_word(&mut self) {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end_matches(char::is_whitespace);
        let start = trimmed.rfind(char::is_whitespace).map_or(0, |at| {
            at + trimmed[at..].chars().next().map_or(1, char::len_utf8)
        });
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Shows the next older history entry (`Up`); the typed text is kept as the draft.
    pub(crate) fn history_older(&mut self, history: &[String]) {
        let next = self.browsing.map_or(1, |n| n + 1);
        if next > history.len() {
            return;
        }
        if self.browsing.is_none() {
            self.draft = std::mem::take(&mut self.text);
        }
        self.show_entry(history, next);
    }

    /// Shows the next newer entry (`Down`), then the draft again.
    pub(crate) fn history_newer(&mut self, history: &[String]) {
        match self.browsing {
            None => {}
            Some(1) => {
                self.text = std::mem::take(&mut self.draft);
                self.cursor = self.text.len();
                self.browsing = None;
            }
            Some(n) => self.show_entry(history, n - 1),
        }
    }

    fn show_entry(&mut self, history: &[String], from_newest: usize) {
        self.text.clone_from(&history[history.len() - from_newest]);
        self.cursor = self.text.len();
        self.browsing = Some(from_newest);
    }

    fn previous_boundary(&self) -> Option<usize> {
        self.text[..self.cursor]
            .char_indices()
            .next_back()
            .map(|(at, _)| at)
    }

    fn next_boundary(&self) -> Option<usize> {
        self.text[self.cursor..]
            .chars()
            .next()
            .map(|c| self.cursor + c.len_utf8())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(text: &str) -> LineEditor {
        let mut line = LineEditor::default();
        line.insert(text);
        line
    }

    #[test]
    fn edits_at_the_cursor_by_characters() {
        let mut line = typed("héllo");
        line.left();
        line.left();
        line.backspace();
        assert_eq!(line.text(), "hélo");
        line.home();
        line.delete();
        assert_eq!(line.text(), "élo");
        line.right();
        line.insert("→");
        assert_eq!(line.text(), "é→lo");
        line.end();
        assert_eq!(line.cursor(), line.text().len());
        line.kill_to_start();
        assert_eq!(line.text(), "");
    }

    #[test]
    fn ctrl_w_deletes_a_word_and_its_blanks() {
        let mut line = typed("git commit  -m ");
        line.delete_word();
        assert_eq!(line.text(), "git commit  ");
        line.delete_word();
        assert_eq!(line.text(), "git ");
        line.delete_word();
        assert_eq!(line.text(), "");
    }

    #[test]
    fn history_walks_back_and_returns_to_the_draft() {
        let history = vec!["one".to_owned(), "two".to_owned()];
        let mut line = typed("dra");
        line.history_older(&history);
        assert_eq!(line.text(), "two");
        line.history_older(&history);
        assert_eq!(line.text(), "one");
        line.history_older(&history);
        assert_eq!(line.text(), "one", "stays at the oldest");
        line.history_newer(&history);
        assert_eq!(line.text(), "two");
        line.history_newer(&history);
        assert_eq!(line.text(), "dra");
        line.history_newer(&history);
        assert_eq!(line.text(), "dra");
    }

    #[test]
    fn pasted_carriage_returns_become_newlines() {
        assert_eq!(typed("a\r\nb\rc").text(), "a\nb\nc");
    }
}
