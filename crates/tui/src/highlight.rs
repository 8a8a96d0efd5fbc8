//! The input line's colours, from the lexer: command words, reserved words, assignments,
//! strings, operators and redirections, `$(…)` and `$VAR`, comments. A line the lexer cannot
//! follow yet (an open quote while typing) is read with the quote closed; one it cannot follow
//! at all stays plain.

use agentsh_bash_normalize::syntax::{Kind, WordRole};

use crate::complete::tokenize_unfinished;
use ratatui::style::{Color, Modifier, Style};

/// A styled byte range of the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Styled {
    /// Where it starts (a byte offset).
    pub start: usize,
    /// Where it ends (exclusive).
    pub end: usize,
    /// Its style.
    pub style: Style,
}

/// A command name.
const COMMAND: Style = Style::new().fg(Color::Green).add_modifier(Modifier::BOLD);
/// A reserved word (`if`, `for`, `{`).
const RESERVED: Style = Style::new().fg(Color::Magenta);
/// `A=1` before a command.
const ASSIGNMENT: Style = Style::new().fg(Color::Blue);
/// Control operators and redirections.
const OPERATOR: Style = Style::new().fg(Color::Yellow);
/// Quoted text.
const STRING: Style = Style::new().fg(Color::Cyan);
/// `$(…)`, backquotes and `$VAR`.
const EXPANSION: Style = Style::new().fg(Color::LightMagenta);
/// A comment.
const COMMENT: Style = Style::new().fg(Color::DarkGray);

/// The styled ranges of `line`, a shell command line (a bang's text, or a model's command), in
/// order and not overlapping; unstyled text has none.
pub(crate) fn highlight(line: &str) -> Vec<Styled> {
    // Read as typed so far: an open quote or compound command closed after it, a word after
    // a dangling operator.
    let Some((tokens, _)) = tokenize_unfinished(line, "")
        .or_else(|| tokenize_unfinished(line, " x"))
        .or_else(|| tokenize_unfinished(line, ")"))
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for token in tokens {
        let end = token.end.min(line.len());
        if token.start >= end {
            continue;
        }
        match token.kind {
            Kind::Word(WordRole::CommandName) => word(line, token.start, end, COMMAND, &mut out),
            Kind::Word(WordRole::Reserved) => push(&mut out, token.start, end, RESERVED),
            Kind::Word(WordRole::Assignment) => {
                word(line, token.start, end, ASSIGNMENT, &mut out);
            }
            Kind::Word(_) => word(line, token.start, end, Style::new(), &mut out),
            Kind::Op(_) | Kind::Redirect { .. } => push(&mut out, token.start, end, OPERATOR),
            Kind::Comment => push(&mut out, token.start, end, COMMENT),
            Kind::Arith | Kind::HeredocBody => push(&mut out, token.start, end, STRING),
        }
    }
    out
}

fn push(out: &mut Vec<Styled>, start: usize, end: usize, style: Style) {
    if start < end && style != Style::new() {
        out.push(Styled { start, end, style });
    }
}

/// One word: its quoted parts as strings, its expansions as expansions, the rest in `base`.
fn word(line: &str, start: usize, end: usize, base: Style, out: &mut Vec<Styled>) {
    let text = &line[start..end];
    let bytes = text.as_bytes();
    let mut plain_from = 0;
    let mut at = 0;
    while at < bytes.len() {
        let (span_end, style) = match bytes[at] {
            b'\\' => {
                at = (at + 2).min(bytes.len());
                continue;
            }
            b'\'' => (closing(bytes, at + 1, b'\''), STRING),
            b'"' => (closing(bytes, at + 1, b'"'), STRING),
            b'`' => (closing(bytes, at + 1, b'`'), EXPANSION),
            b'$' if bytes.get(at + 1) == Some(&b'(') => (parenthesised(bytes, at + 2), EXPANSION),
            b'$' if bytes
                .get(at + 1)
                .is_some_and(|b| b.is_ascii_alphanumeric() || b"_{?@#*!$-".contains(b)) =>
            {
                let name_end = if bytes[at + 1] == b'{' {
                    closing(bytes, at + 2, b'}')
                } else {
                    at + 1
                        + bytes[at + 1..]
                            .iter()
                            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
                            .count()
                            .max(1)
                };
                (name_end, EXPANSION)
            }
            _ => {
                at += 1;
                continue;
            }
        };
        push(out, start + plain_from, start + at, base);
        push(out, start + at, start + span_end, style);
        at = span_end;
        plain_from = span_end;
    }
    push(out, start + plain_from, end, base);
}

/// The end (exclusive) of a span closed by `close` from `from` on; the text's end when open.
fn closing(bytes: &[u8], from: usize, close: u8) -> usize {
    let mut at = from;
    while at < bytes.len() {
        if bytes[at] == b'\\' && close != b'\'' {
            at += 2;
            continue;
        }
        if bytes[at] == close {
            return at + 1;
        }
        at += 1;
    }
    bytes.len()
}

/// The end of a `$(…)` whose inside starts at `from`, nested parentheses counted.
fn parenthesised(bytes: &[u8], from: usize) -> usize {
    let mut depth = 1;
    let mut at = from;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 1,
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return at + 1;
                }
            }
            _ => {}
        }
        at += 1;
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each styled range as `(text, style)`.
    fn spans(line: &str) -> Vec<(&str, Style)> {
        highlight(line)
            .into_iter()
            .map(|s| (&line[s.start..s.end], s.style))
            .collect()
    }

    #[test]
    fn commands_strings_operators_and_substitutions() {
        assert_eq!(
            spans(r#"FOO=1 grep "a b" $(cat list) | wc -l > out"#),
            [
                ("FOO=1", ASSIGNMENT),
                ("grep", COMMAND),
                ("\"a b\"", STRING),
                ("$(cat list)", EXPANSION),
                ("|", OPERATOR),
                ("wc", COMMAND),
                ("> out", OPERATOR),
            ]
        );
        assert_eq!(
            spans("if true; then echo $HOME; fi # done"),
            [
                ("if", RESERVED),
                ("true", COMMAND),
                (";", OPERATOR),
                ("then", RESERVED),
                ("echo", COMMAND),
                ("$HOME", EXPANSION),
                (";", OPERATOR),
                ("fi", RESERVED),
                ("# done", COMMENT),
            ]
        );
    }

    #[test]
    fn an_open_quote_while_typing_is_a_string_to_the_end() {
        assert_eq!(
            spans("echo 'not closed"),
            [("echo", COMMAND), ("'not closed", STRING)]
        );
        assert_eq!(spans("ls |"), [("ls", COMMAND), ("|", OPERATOR)]);
    }
}
