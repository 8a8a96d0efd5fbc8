//! Extraction of a trailing `| head` / `| tail` limit.

use std::borrow::Cow;
use std::ops::Range;

use crate::lexer::{self, Kind, Op, Token};

/// Line limits for a command's output: keep the first `head` lines, then the last `tail` of those.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Limits {
    /// Keep only the first `head` lines.
    pub head: Option<u32>,
    /// Keep only the last `tail` lines (of what `head` kept).
    pub tail: Option<u32>,
}

impl Limits {
    /// No limit at all.
    pub const NONE: Self = Self {
        head: None,
        tail: None,
    };

    /// Whether neither limit is set.
    pub fn is_none(&self) -> bool {
        self.head.is_none() && self.tail.is_none()
    }
}

/// A normalised command: the command to run and the limits taken out of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Normalized {
    /// The command to run: trimmed, and without the trailing `| head`/`| tail` when one was
    /// extracted (the producer is then wrapped in `( … )`).
    pub command: String,
    /// The extracted limit: at most one of `head`/`tail` is set.
    pub limits: Limits,
    /// When a limit was extracted: the byte range of the producer inside `command`, between the
    /// `( ` and ` )` normalisation added.
    pub producer: Option<Range<usize>>,
}

impl Normalized {
    /// The command without the subshell normalisation added around the producer:
    /// `cd x && make | tail -5` gives `cd x && make`. Not for running (the producer would lose
    /// its subshell); for matching rules written against what the model typed, such as
    /// interception (`cat f | head -5` must still look like `cat f`).
    ///
    /// ```
    /// let n = agentsh_bash_normalize::normalize("cd x && cat f 2>&1 | head -5");
    /// assert_eq!(n.command, "cd x && ( cat f )");
    /// assert_eq!(n.unwrapped(), "cd x && cat f");
    /// ```
    pub fn unwrapped(&self) -> Cow<'_, str> {
        let Some(producer) = &self.producer else {
            return Cow::Borrowed(&self.command);
        };
        match (
            self.command.get(..producer.start.saturating_sub(2)),
            self.command.get(producer.clone()),
        ) {
            (Some(before), Some(inner)) => Cow::Owned(format!("{before}{inner}")),
            _ => Cow::Borrowed(&self.command),
        }
    }
}

/// Explicit tool arguments win field by field; extracted limits fill in what they leave unset.
///
/// ```
/// use agentsh_bash_normalize::{Limits, merge_limits};
/// let explicit = Limits { head: None, tail: Some(20) };
/// let extracted = Limits { head: Some(5), tail: Some(3) };
/// assert_eq!(merge_limits(explicit, extracted), Limits { head: Some(5), tail: Some(20) });
/// ```
pub fn merge_limits(explicit: Limits, extracted: Limits) -> Limits {
    Limits {
        head: explicit.head.or(extracted.head),
        tail: explicit.tail.or(extracted.tail),
    }
}

/// Normalises a command: trims it and, when its last top-level pipeline ends in
/// `| head -n N`, `| head -nN`, `| head -N` or the same with `tail`, removes that stage and
/// returns the limit.
///
/// The stages before the removed one are wrapped in `( … )`, so they keep the subshell they ran
/// in as part of the pipeline (`cd x && make | tail -n 5` → `cd x && ( make )`). A trailing `2>&1`
/// on the last remaining stage is dropped when that stage has no other redirection of stdout or
/// stderr (the executor merges both streams anyway).
///
/// Never fails: anything it cannot prove safe to rewrite comes back unchanged (but trimmed).
pub fn normalize(command: &str) -> Normalized {
    let command = trim(command);
    match extract(command) {
        Some((command, limits, producer)) => Normalized {
            command,
            limits,
            producer: Some(producer),
        },
        None => Normalized {
            command: command.to_owned(),
            limits: Limits::NONE,
            producer: None,
        },
    }
}

/// Trims spaces, tabs, carriage returns and newlines at both ends. A whitespace character
/// escaped by a trailing backslash is kept: `echo a\ ` must not become `echo a\`.
fn trim(command: &str) -> &str {
    let is_space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\r');
    let start = command.len() - command.trim_start_matches(is_space).len();
    let trimmed = command.trim_end_matches(is_space);
    let mut end = trimmed.len();
    let backslashes = trimmed.bytes().rev().take_while(|&b| b == b'\\').count();
    if backslashes % 2 == 1 && end < command.len() {
        // The byte after the trimmed text is ASCII whitespace, so `end + 1` is a char boundary.
        end += 1;
    }
    if start >= end {
        return "";
    }
    &command[start..end]
}

fn extract(src: &str) -> Option<(String, Limits, Range<usize>)> {
    // Cheap pre-check: the command must end in a digit and mention head or tail.
    if !src.ends_with(|c: char| c.is_ascii_digit())
        || !(src.contains("head") || src.contains("tail"))
    {
        return None;
    }
    let program = lexer::tokenize(src).ok()?;
    let tokens = program.tokens.as_slice();
    let pipeline_start = program.last_pipeline()?;
    let text = |token: &Token| &src[token.start..token.end];
    let is_pipe =
        |token: &Token| token.depth == 0 && matches!(token.kind, Kind::Op(Op::Pipe | Op::PipeAmp));

    // The last stage: the tokens after the last top-level `|`; they must all be plain words
    // (after newlines and comments that may follow the `|`).
    let pipe = pipeline_start + tokens[pipeline_start..].iter().rposition(is_pipe)?;
    if tokens[pipe].kind != Kind::Op(Op::Pipe) {
        return None;
    }
    let stage: Vec<&str> = tokens[pipe + 1..]
        .iter()
        .skip_while(|t| matches!(t.kind, Kind::Op(Op::Newline) | Kind::Comment))
        .map(|t| (matches!(t.kind, Kind::Word(_)) && t.depth == 0).then(|| text(t)))
        .collect::<Option<_>>()?;
    let limits = parse_limit(&stage)?;

    let pipeline = &tokens[pipeline_start..pipe];
    // A negated pipeline's status is the negation of the removed stage's; a heredoc body inside
    // the pipeline would be cut off. Leave both alone.
    let mut leading = pipeline.iter().map(text);
    let negated = match leading.next() {
        Some("!") => true,
        Some("time") => match leading.next() {
            Some("-p") => leading.next() == Some("!"),
            next => next == Some("!"),
        },
        _ => false,
    };
    if negated || pipeline.iter().any(|t| t.kind == Kind::HeredocBody) {
        return None;
    }

    // The last remaining stage, for the `2>&1` rule.
    let last_stage_start = pipeline.iter().rposition(is_pipe).map_or(0, |i| i + 1);
    let last_stage = &pipeline[last_stage_start..];
    let mut producer_end = pipeline.last()?.end;
    if let [.., before, last] = last_stage
        && matches!(last.kind, Kind::Redirect { .. })
        && text(last) == "2>&1"
        && matches!(
            before.kind,
            Kind::Word(_) | Kind::Redirect { .. } | Kind::Arith | Kind::Op(Op::RParen)
        )
        && !last_stage[..last_stage.len() - 1].iter().any(|t| {
            t.depth == 0
                && t.kind
                    == Kind::Redirect {
                        touches_stdout_or_stderr: true,
                    }
        })
    {
        producer_end = before.end;
    }

    let start = pipeline[0].start;
    let mut command = String::with_capacity(producer_end + 4);
    command.push_str(&src[..start]);
    command.push_str("( ");
    let inner_start = command.len();
    command.push_str(&src[start..producer_end]);
    let producer = inner_start..command.len();
    command.push_str(" )");
    Some((command, limits, producer))
}

/// Parses the words of a `head`/`tail` stage: `head -n N`, `head -nN` or `head -N` (and `tail`).
fn parse_limit(stage: &[&str]) -> Option<Limits> {
    let (name, count) = match *stage {
        [name, "-n", count] => (name, count),
        [name, flag] => (
            name,
            flag.strip_prefix("-n").or_else(|| flag.strip_prefix('-'))?,
        ),
        _ => return None,
    };
    if count.is_empty() || !count.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let count: u32 = count.parse().ok()?;
    match name {
        "head" => Some(Limits {
            head: Some(count),
            tail: None,
        }),
        "tail" => Some(Limits {
            head: None,
            tail: Some(count),
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_keeps_escaped_trailing_whitespace() {
        assert_eq!(trim("  ls  \n"), "ls");
        assert_eq!(trim("echo a\\ "), "echo a\\ ");
        assert_eq!(trim("echo a\\  \n"), "echo a\\ ");
        assert_eq!(trim("echo a\\\\ "), "echo a\\\\");
        assert_eq!(trim("ls \\\n"), "ls \\\n");
        assert_eq!(trim(" \t\r\n"), "");
        assert_eq!(trim("é "), "é");
    }

    #[test]
    fn limit_words() {
        let head = |n| {
            Some(Limits {
                head: Some(n),
                tail: None,
            })
        };
        let tail = |n| {
            Some(Limits {
                head: None,
                tail: Some(n),
            })
        };
        assert_eq!(parse_limit(&["head", "-n", "5"]), head(5));
        assert_eq!(parse_limit(&["head", "-n5"]), head(5));
        assert_eq!(parse_limit(&["head", "-5"]), head(5));
        assert_eq!(parse_limit(&["tail", "-007"]), tail(7));
        assert_eq!(parse_limit(&["tail", "-n", "4294967295"]), tail(u32::MAX));
        assert_eq!(parse_limit(&["tail", "-n", "4294967296"]), None);
        assert_eq!(parse_limit(&["tail", "-n"]), None);
        assert_eq!(parse_limit(&["tail", "-"]), None);
        assert_eq!(parse_limit(&["tail", "-n", "+5"]), None);
        assert_eq!(parse_limit(&["tail", "-n", "-5"]), None);
        assert_eq!(parse_limit(&["tail", "-n-5"]), None);
        assert_eq!(parse_limit(&["tail", "+5"]), None);
        assert_eq!(parse_limit(&["tail", "5"]), None);
        assert_eq!(parse_limit(&["tail", "-c5"]), None);
        assert_eq!(parse_limit(&["head", "-n", "5", "f"]), None);
        assert_eq!(parse_limit(&["cat", "-5"]), None);
        assert_eq!(parse_limit(&["head"]), None);
    }

    #[test]
    fn merge_prefers_explicit_per_field() {
        let l = |head, tail| Limits { head, tail };
        assert_eq!(
            merge_limits(l(None, None), l(Some(3), None)),
            l(Some(3), None)
        );
        assert_eq!(
            merge_limits(l(Some(1), None), l(Some(3), None)),
            l(Some(1), None)
        );
        assert_eq!(
            merge_limits(l(None, Some(9)), l(Some(3), None)),
            l(Some(3), Some(9))
        );
        assert_eq!(
            merge_limits(l(Some(0), Some(0)), l(Some(3), Some(4))),
            l(Some(0), Some(0))
        );
        assert!(merge_limits(Limits::NONE, Limits::NONE).is_none());
    }
}
