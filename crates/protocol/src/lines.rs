//! The line rule, shared by the counts of a sink and of a tool result.

/// Counts lines: split at `\n`; a final `\n` ends the last line and does not start an empty one.
///
/// `""` has 0 lines, `"a"` and `"a\n"` have 1, `"a\nb"` and `"a\nb\n"` have 2, `"\n"` has 1.
///
/// ```
/// assert_eq!(agentsh_protocol::count_lines("a\nb\n"), 2);
/// assert_eq!(agentsh_protocol::count_lines("a\nb"), 2);
/// ```
pub fn count_lines(text: &str) -> u64 {
    let newlines = memchr::memchr_iter(b'\n', text.as_bytes()).count() as u64;
    newlines + u64::from(!text.is_empty() && !text.ends_with('\n'))
}

/// The lines of `text` by the same rule as [`count_lines`], without their `\n`: as many as
/// `count_lines` counts, so a final `\n` starts no empty line.
///
/// ```
/// let lines: Vec<&str> = agentsh_protocol::lines_of("a\n\nb\n").collect();
/// assert_eq!(lines, ["a", "", "b"]);
/// assert_eq!(agentsh_protocol::lines_of("").count(), 0);
/// ```
pub fn lines_of(text: &str) -> impl DoubleEndedIterator<Item = &str> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let empty = text.is_empty();
    body.split('\n').filter(move |_| !empty)
}

/// The last at most `max` bytes of `text`, starting at a character boundary (so up to three
/// bytes fewer when `max` falls inside a character).
///
/// ```
/// assert_eq!(agentsh_protocol::tail_of("abcdef", 3), "def");
/// assert_eq!(agentsh_protocol::tail_of("é", 1), "");
/// ```
pub fn tail_of(text: &str, max: usize) -> &str {
    let mut cut = text.len().saturating_sub(max);
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    &text[cut..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_count_follows_the_spec_rule() {
        assert_eq!(count_lines(""), 0);
        assert_eq!(count_lines("a"), 1);
        assert_eq!(count_lines("a\n"), 1);
        assert_eq!(count_lines("a\nb"), 2);
        assert_eq!(count_lines("a\nb\n"), 2);
        assert_eq!(count_lines("\n"), 1);
        assert_eq!(count_lines("\n\n"), 2);
        assert_eq!(count_lines("a\r\nb\r\n"), 2);
    }

    #[test]
    fn lines_of_gives_as_many_lines_as_counted() {
        for text in ["", "a", "a\n", "a\nb", "a\nb\n", "\n", "\n\n", "a\n\n"] {
            assert_eq!(lines_of(text).count() as u64, count_lines(text), "{text:?}");
        }
        assert_eq!(lines_of("\n").collect::<Vec<_>>(), [""]);
    }
}
