//! The line rule and head/tail windows over text.

/// Counts lines: split at `\n`; a final `\n` ends the last line and does not start an empty one.
///
/// `""` has 0 lines, `"a"` and `"a\n"` have 1, `"a\nb"` and `"a\nb\n"` have 2, `"\n"` has 1.
/// It is the rule every agentsh count follows (the sink's, the result's, the artifact reader's).
///
/// ```
/// use agentsh_bash_normalize::count_lines;
/// assert_eq!(count_lines("a\nb\n"), 2);
/// assert_eq!(count_lines("a\nb"), 2);
/// ```
#[inline]
pub fn count_lines(text: &str) -> u64 {
    agentsh_protocol::count_lines(text)
}

/// Keeps the first `head` lines of `text`, then the last `tail` lines of those, with their line
/// terminators, exactly as `head -n HEAD | tail -n TAIL` would (`None` skips that step).
///
/// The result is always a contiguous part of `text`, so it is returned as a slice.
///
/// ```
/// use agentsh_bash_normalize::apply_head_tail;
/// assert_eq!(apply_head_tail("a\nb\nc\n", Some(2), None), "a\nb\n");
/// assert_eq!(apply_head_tail("a\nb\nc", None, Some(1)), "c");
/// assert_eq!(apply_head_tail("a\nb\nc\nd\n", Some(3), Some(2)), "b\nc\n");
/// ```
pub fn apply_head_tail(text: &str, head: Option<u32>, tail: Option<u32>) -> &str {
    let mut window = text;
    if let Some(head) = head {
        window = &window[..end_of_first_lines(window, to_usize(head))];
    }
    if let Some(tail) = tail {
        window = &window[start_of_last_lines(window, to_usize(tail))..];
    }
    window
}

fn to_usize(n: u32) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// The byte offset just after the `n`th line (the whole text when it has fewer lines).
fn end_of_first_lines(text: &str, n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    memchr::memchr_iter(b'\n', text.as_bytes())
        .nth(n - 1)
        .map_or(text.len(), |i| i + 1)
}

/// The byte offset where the last `n` lines start (0 when the text has no more than `n`).
fn start_of_last_lines(text: &str, n: usize) -> usize {
    if n == 0 {
        return text.len();
    }
    // A final `\n` ends the last line; it does not start another one.
    let body = text.strip_suffix('\n').unwrap_or(text);
    memchr::memrchr_iter(b'\n', body.as_bytes())
        .nth(n - 1)
        .map_or(0, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows() {
        let t = "1\n2\n3\n4\n5\n";
        assert_eq!(apply_head_tail(t, None, None), t);
        assert_eq!(apply_head_tail(t, Some(0), None), "");
        assert_eq!(apply_head_tail(t, None, Some(0)), "");
        assert_eq!(apply_head_tail(t, Some(2), None), "1\n2\n");
        assert_eq!(apply_head_tail(t, Some(9), None), t);
        assert_eq!(apply_head_tail(t, None, Some(2)), "4\n5\n");
        assert_eq!(apply_head_tail(t, None, Some(9)), t);
        assert_eq!(apply_head_tail(t, Some(4), Some(2)), "3\n4\n");
        assert_eq!(apply_head_tail(t, Some(u32::MAX), Some(u32::MAX)), t);
        assert_eq!(apply_head_tail("a\nb", Some(1), None), "a\n");
        assert_eq!(apply_head_tail("a\nb", None, Some(1)), "b");
        assert_eq!(apply_head_tail("\n\n\n", None, Some(1)), "\n");
        assert_eq!(apply_head_tail("", Some(1), Some(1)), "");
        assert_eq!(apply_head_tail("a\r\nb\r\n", None, Some(1)), "b\r\n");
    }
}
