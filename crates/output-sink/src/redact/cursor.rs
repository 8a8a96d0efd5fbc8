//! The line a program is still writing at a terminal's cursor: the start of a value there is
//! hidden until the value is complete (and then replaced by name) or the cursor moves on.

use std::borrow::Cow;

use super::Redactor;

/// How many of a value's first bytes a terminal line may show while a program is still
/// writing it: where the text before the cursor ends with more of them (and not the whole
/// value), they are replaced with [`UNFINISHED_VALUE_REPLACEMENT`] (see
/// [`Redactor::redact_at_cursor`]). Three bytes say next to nothing about a value; a value
/// printed slowly would otherwise show all but its last byte.
pub const SHOWN_VALUE_START_BYTES: usize = 3;

/// What stands for the start of a value a program is still writing at a terminal's cursor.
pub const UNFINISHED_VALUE_REPLACEMENT: &str = "[REDACTED…]";

impl Redactor {
    /// What to hide in `text`, a terminal's line that a program may still be writing, with
    /// its cursor at byte `cursor` (`None`: the cursor is not on this line): every secret, as
    /// [`find_all`](Self::find_all) finds them, with the text that replaces it; and, when
    /// `text[..cursor]` ends with more than [`SHOWN_VALUE_START_BYTES`] of a value's first
    /// bytes outside them (see [`unfinished_value`](Self::unfinished_value)), those bytes,
    /// replaced with [`UNFINISHED_VALUE_REPLACEMENT`]. In order, not overlapping.
    pub fn find_at_cursor(
        &self,
        text: &str,
        cursor: Option<usize>,
    ) -> Vec<(std::ops::Range<usize>, String)> {
        let found = self.find_all(text);
        let mut hidden: Vec<(std::ops::Range<usize>, String)> = Vec::with_capacity(found.len());
        let mut unfinished = None;
        if let Some(cursor) = cursor {
            let mut cursor = cursor.min(text.len());
            while !text.is_char_boundary(cursor) {
                cursor -= 1;
            }
            // A secret around the cursor is replaced whole already.
            if !found
                .iter()
                .any(|(range, _)| range.start < cursor && cursor < range.end)
            {
                let from = found
                    .iter()
                    .map(|(range, _)| range.end)
                    .filter(|&end| end <= cursor)
                    .max()
                    .unwrap_or(0);
                unfinished = self
                    .unfinished_value(&text[from..cursor])
                    .map(|start| from + start..cursor);
            }
        }
        for (range, name) in found {
            if let Some(held) = unfinished.take_if(|held| held.end <= range.start) {
                hidden.push((held, UNFINISHED_VALUE_REPLACEMENT.to_owned()));
            }
            hidden.push((range, Self::replacement(&name)));
        }
        hidden.extend(unfinished.map(|held| (held, UNFINISHED_VALUE_REPLACEMENT.to_owned())));
        hidden
    }

    /// `text` with what [`find_at_cursor`](Self::find_at_cursor) finds replaced: every secret,
    /// and the start of a value still being written at `cursor`.
    ///
    /// ```
    /// use agentsh_output_sink::Redactor;
    ///
    /// let redactor = Redactor::new([("API_KEY".into(), "Kzy6kRk9ODOLs1k6".into())], Vec::new());
    /// // A program is still printing the value: its start is hidden at the cursor.
    /// assert_eq!(redactor.redact_at_cursor("key=Kzy6kR", Some(10)), "key=[REDACTED…]");
    /// // Three bytes are shown; the whole value is replaced by name.
    /// assert_eq!(redactor.redact_at_cursor("key=Kzy", Some(7)), "key=Kzy");
    /// let line = "key=Kzy6kRk9ODOLs1k6";
    /// assert_eq!(redactor.redact_at_cursor(line, Some(20)), "key=[REDACTED:API_KEY]");
    /// ```
    pub fn redact_at_cursor<'t>(&self, text: &'t str, cursor: Option<usize>) -> Cow<'t, str> {
        let hidden = self.find_at_cursor(text, cursor);
        if hidden.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut pos = 0;
        for (range, replacement) in hidden {
            out.push_str(&text[pos..range.start]);
            out.push_str(&replacement);
            pos = range.end;
        }
        out.push_str(&text[pos..]);
        Cow::Owned(out)
    }

    /// Where the start of a value begins that `text` ends with: more than
    /// [`SHOWN_VALUE_START_BYTES`] of its first bytes, but not all of it (a whole value is a
    /// match). The longest such end of `text`; `None` when there is none. Values only: the
    /// start of a token pattern (`ghp_`) names no secret yet.
    pub fn unfinished_value(&self, text: &str) -> Option<usize> {
        let bytes = text.as_bytes();
        let mut earliest: Option<usize> = None;
        for value in &self.literals {
            let value = value.as_bytes();
            if value.len() <= SHOWN_VALUE_START_BYTES + 1 {
                // Every part short of the whole value may be shown.
                continue;
            }
            // Where a start of this value that is not all of it may begin.
            let window = bytes.len() - bytes.len().min(value.len() - 1);
            let first = &value[..=SHOWN_VALUE_START_BYTES];
            for at in memchr::memmem::find_iter(&bytes[window..], first) {
                let start = window + at;
                if earliest.is_some_and(|earliest| earliest <= start) {
                    break;
                }
                if value.starts_with(&bytes[start..]) && text.is_char_boundary(start) {
                    earliest = Some(start);
                    break;
                }
            }
        }
        earliest
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SecretPattern;

    fn hunter() -> Redactor {
        Redactor::new(
            [("DB_PASSWORD".to_owned(), "hunter2hunter2".to_owned())],
            Vec::new(),
        )
    }

    /// The 32-byte value of the prefix rule's cases.
    const KEY: &str = "Kzy6kRk9ODOLs1k6rk0aZ3pQ8xWm2Lh7";

    /// `text` redacted with the cursor at its end (`|` marks another place and is removed).
    #[track_caller]
    fn check_at_cursor(text: &str, expected: &str) {
        let r = Redactor::new(
            [
                ("MY_API_KEY".to_owned(), KEY.to_owned()),
                ("OVERLAP".to_owned(), "abababXYZ12345".to_owned()),
                ("UMLAUT".to_owned(), "pässwörd-geheim".to_owned()),
            ],
            SecretPattern::defaults(),
        );
        let (text, cursor) = match text.split_once('|') {
            Some((before, after)) => (format!("{before}{after}"), before.len()),
            None => (text.to_owned(), text.len()),
        };
        assert_eq!(
            r.redact_at_cursor(&text, Some(cursor)),
            expected,
            "{text:?}"
        );
    }

    #[test]
    fn no_more_than_three_of_a_values_first_bytes_show_at_the_cursor() {
        assert_eq!(KEY.len(), 32);
        for n in 0..=KEY.len() {
            let text = format!("key={}", &KEY[..n]);
            let expected = match n {
                0..=SHOWN_VALUE_START_BYTES => text.clone(),
                32 => "key=[REDACTED:MY_API_KEY]".to_owned(),
                _ => "key=[REDACTED…]".to_owned(),
            };
            check_at_cursor(&text, &expected);
        }
    }

    #[test]
    fn the_start_of_a_value_is_hidden_only_where_it_ends_at_the_cursor() {
        for (text, expected) in [
            // Bytes after the cursor do not end the value's start (nor do they show it).
            ("key=Kzy6kR|", "key=[REDACTED…]"),
            ("key=Kzy6kR| and more", "key=[REDACTED…] and more"),
            ("key=Kzy6kR |", "key=Kzy6kR "),
            ("key=|Kzy6kR", "key=Kzy6kR"),
            // The longest start the text ends with.
            ("xababab", "x[REDACTED…]"),
            ("abababXYZ1234", "[REDACTED…]"),
            ("aba", "aba"),
            // Bytes, not characters: `pä` is 3 bytes, `päs` 4.
            ("pä", "pä"),
            ("päs", "[REDACTED…]"),
            // A whole value before it, another around the cursor.
            (
                "Kzy6kRk9ODOLs1k6rk0aZ3pQ8xWm2Lh7Kzy6",
                "[REDACTED:MY_API_KEY][REDACTED…]",
            ),
            ("Kzy6kRk9ODOLs1|k6rk0aZ3pQ8xWm2Lh7", "[REDACTED:MY_API_KEY]"),
            // A pattern's start names no secret yet.
            ("token ghp_ABCDEFGH", "token ghp_ABCDEFGH"),
        ] {
            check_at_cursor(text, expected);
        }
        // Without the cursor on the line, only whole secrets.
        assert_eq!(
            hunter().redact_at_cursor("hunter2hunt", None),
            "hunter2hunt"
        );
        assert_eq!(
            hunter().redact_at_cursor("hunter2hunt", Some(11)),
            "[REDACTED…]"
        );
    }
}
