//! Which key a serde error is about, how a key path is written (`bash.env."A=B"`,
//! `bash_interceptor.rules[1].pattern`), and a bad value at a key ([`Invalid`]), as the checks
//! of every section report it.
//!
//! serde reports a type error or an unknown field with a byte span but no key. The parsed
//! document keeps the span of every key and value, so the key is the one whose span is the
//! tightest around the error's.

use std::ops::Range;

use toml::de::{DeTable, DeValue};

/// Where in a file a serde error is.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Location {
    /// At a key, written as a dotted path.
    Key(String),
    /// Nowhere a key owns: a 1-based line and column (in characters).
    Position {
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
    },
}

/// Where the error spanning `span` (the whole document when `None`) sits in `text`, whose
/// parsed form is `doc`: the key it is about when one holds it, else its line and column.
pub(super) fn locate(doc: &DeTable<'_>, text: &str, span: Option<Range<usize>>) -> Location {
    let span = span.unwrap_or(0..0);
    key_path_at(doc, &span).map_or_else(
        || {
            let (line, column) = line_column(text, span.start);
            Location::Position { line, column }
        },
        Location::Key,
    )
}

/// 1-based line and column (in characters) of a byte offset.
pub(super) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    )
}

/// One step of a key path.
enum Segment {
    Key(String),
    Index(usize),
}

/// The dotted path of the smallest key or value whose span holds `span`, if any.
fn key_path_at(doc: &DeTable<'_>, span: &Range<usize>) -> Option<String> {
    let mut finder = PathFinder {
        target: span.clone(),
        path: Vec::new(),
        best: None,
    };
    finder.table(doc);
    let (_, path) = finder.best?;
    Some(render_path(&path))
}

struct PathFinder {
    target: Range<usize>,
    path: Vec<Segment>,
    /// Span length and path of the best match so far.
    best: Option<(usize, Vec<Segment>)>,
}

impl PathFinder {
    fn table(&mut self, table: &DeTable<'_>) {
        for (key, value) in table {
            self.path.push(Segment::Key(key.get_ref().to_string()));
            self.consider(&key.span());
            self.value(value);
            self.path.pop();
        }
    }

    fn value(&mut self, value: &toml::Spanned<DeValue<'_>>) {
        self.consider(&value.span());
        match value.get_ref() {
            DeValue::Table(table) => self.table(table),
            DeValue::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    self.path.push(Segment::Index(index));
                    self.value(item);
                    self.path.pop();
                }
            }
            _ => {}
        }
    }

    /// Keeps the current path when its span holds the target and is the tightest so far (on a
    /// tie, the deeper path: a table header spans the same bytes as its first element).
    fn consider(&mut self, span: &Range<usize>) {
        let holds = span.start <= self.target.start && self.target.end <= span.end;
        if !holds || self.path.is_empty() {
            return;
        }
        let len = span.end - span.start;
        let better = match &self.best {
            None => true,
            Some((best_len, best_path)) => {
                len < *best_len || (len == *best_len && self.path.len() > best_path.len())
            }
        };
        if better {
            let copy = self
                .path
                .iter()
                .map(|segment| match segment {
                    Segment::Key(key) => Segment::Key(key.clone()),
                    Segment::Index(index) => Segment::Index(*index),
                })
                .collect();
            self.best = Some((len, copy));
        }
    }
}

fn render_path(path: &[Segment]) -> String {
    let mut out = String::new();
    for segment in path {
        match segment {
            Segment::Key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&display_key(key));
            }
            Segment::Index(index) => {
                out.push('[');
                out.push_str(&index.to_string());
                out.push(']');
            }
        }
    }
    out
}

/// A key as TOML would write it: bare when it can be, quoted otherwise.
pub(super) fn display_key(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if bare {
        key.to_owned()
    } else {
        format!("{key:?}")
    }
}

/// A bad value found after parsing.
pub(super) struct Invalid {
    pub(super) key: String,
    pub(super) reason: String,
}

pub(super) fn invalid(key: &str, reason: impl Into<String>) -> Invalid {
    Invalid {
        key: key.to_owned(),
        reason: reason.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_columns_count_characters() {
        assert_eq!(line_column("ab\ncd", 0), (1, 1));
        assert_eq!(line_column("ab\ncd", 3), (2, 1));
        assert_eq!(line_column("é = x", 2), (1, 2));
        assert_eq!(line_column("ab", 99), (1, 3));
    }
}
