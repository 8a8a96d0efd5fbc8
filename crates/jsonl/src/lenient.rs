//! What JSON allows but `serde_json` refuses, and the `id` of a line as its client wrote it:
//! the lenient reading of request lines that the RPC and MCP servers share.
//!
//! Two things a client may well send are valid JSON text that `serde_json` rejects:
//!
//! - a lone surrogate escape (`"\ud800"`; a JavaScript client writes one for half of a cut
//!   emoji). [`repair`] turns it into `\ufffd`, U+FFFD, as a lossy UTF-16 decoder would;
//! - a number beyond `f64` (`1e999`). [`repair`] turns it into `±1e308`, so that a timeout
//!   clamps (to its maximum, or its minimum for `-1e999`) like any other huge value.
//!
//! Each replacement has the length of what it replaces (a number is padded with spaces), so
//! the line and column of a later parse error still point into the line as sent. A UTF-8
//! byte-order mark at the start of a line is not JSON either: [`strip_bom`] drops it, as JSON's
//! RFC 8259 allows a reader to.
//!
//! A numeric `id` is echoed as it was written: [`id_token`] finds the `id`'s token in the line,
//! and [`written_id`] keeps it beside the value `serde_json` read (which may be rounded:
//! `1e-400`, `18446744073719551617`).
//!
//! [`recover_id`] reads the `id` of a request line that is still not JSON, so that its failure
//! can be answered with the `id` a client waits for. It tokenises the line the way JSON does
//! (strings with their escapes, brackets, `:` and `,`) without requiring it to be well formed,
//! and takes the value of a key `id` of the outermost object only: an `"id"` inside a string
//! or a nested object is never taken.
//!
//! All of them work on the bytes between tokens, which are ASCII (`"`, brackets, `:`, `,`,
//! whitespace), so every position they slice at is a character boundary.

use agentsh_protocol::wire::RequestId;
use serde_json::Value;

/// What replaces a number beyond `f64`: the largest power of ten that `serde_json` reads.
const HUGE: &str = "1e308";
/// What replaces a lone surrogate escape.
const REPLACEMENT_ESCAPE: &str = "\\ufffd";
/// The length of a `\uXXXX` escape.
const ESCAPE_LEN: usize = 6;
/// A UTF-8 byte-order mark (U+FEFF).
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// How much of the request line [`recover_id`] sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extent {
    /// The whole line.
    Whole,
    /// Its first bytes only (the rest was too long to keep): a value that reaches the end of
    /// the text may be cut, and is not taken.
    Prefix,
}

/// `text` with each lone surrogate escape in a string replaced by `\ufffd` and each number
/// beyond `f64` by `±1e308` (padded to its length); `None` when there is neither.
pub fn repair(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut copied = 0;
    let mut replace = |start: usize, end: usize, with: &str| {
        out.push_str(&text[copied..start]);
        out.push_str(with);
        copied = end;
    };
    for token in Tokens::new(text) {
        match token {
            Token::String { start, end, .. } => {
                for at in lone_surrogates(&text.as_bytes()[start..end]) {
                    replace(start + at, start + at + ESCAPE_LEN, REPLACEMENT_ESCAPE);
                }
            }
            Token::Scalar { start, end } => {
                if let Some(clamped) = clamp_number(&text[start..end]) {
                    replace(start, end, &clamped);
                }
            }
            Token::Open | Token::Close | Token::Colon | Token::Comma => {}
        }
    }
    if copied == 0 {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// Whether `line` is blank: empty, or only JSON's whitespace (space, tab, `\r`, `\n`). A
/// blank line is no request and gets no answer; any other line does, a form feed or a
/// no-break space alone included (JSON does not count them as whitespace).
pub fn is_blank(line: &[u8]) -> bool {
    line.iter()
        .all(|byte| matches!(byte, b' ' | b'\t' | b'\r' | b'\n'))
}

/// `line` without a UTF-8 byte-order mark at its start (any other byte-order mark, and one
/// further in, is left: it is no JSON).
pub fn strip_bom(line: &[u8]) -> &[u8] {
    line.strip_prefix(UTF8_BOM).unwrap_or(line)
}

/// The token of the `id` of the outermost object of `text` (its first key `id`), as written,
/// when it is a scalar: a number (`1e-400`), `true`, `false`, `null` (or garbage). `None` for a
/// string or a nested value, or when there is no such key.
pub fn id_token(text: &str) -> Option<&str> {
    match top_level_id(text)? {
        Token::Scalar { start, end } => Some(&text[start..end]),
        _ => None,
    }
}

/// `value`, the `id` that `serde_json` read from the request line `text`, as a [`RequestId`]
/// that is written back as `text` has it when it is a number: `1e-400` stays `1e-400`, where
/// `value` holds `0.0`. (`text` is the line as sent, before a [`repair`].)
pub fn written_id(text: &str, value: Value) -> RequestId {
    if value.is_number()
        && let Some(token) = id_token(text)
        // Not another `id` key's (the value is the last one's, the token the first one's).
        && scalar_value(token).as_ref() == Some(&value)
    {
        return RequestId::written_as(value, token);
    }
    RequestId::from(value)
}

/// The `id` of the outermost object of a line that may not be JSON: the value of its first key
/// `id` when that is a whole string, number or boolean (a number as written). `None` when the
/// line does not start an object, has no such key at the top level, or its value cannot be
/// read (`null` counts as absent, as it does for a valid request).
pub fn recover_id(text: &str, extent: Extent) -> Option<RequestId> {
    read_value(text, top_level_id(text)?, extent)
}

/// The token of the value of the first key `id` of the outermost object `text` starts with.
fn top_level_id(text: &str) -> Option<Token> {
    let mut tokens = Tokens::new(text);
    if tokens.next()? != Token::Open {
        return None;
    }
    let mut depth = 1_usize;
    let mut previous = Token::Open;
    while let Some(token) = tokens.next() {
        match token {
            Token::Open => depth += 1,
            Token::Close => {
                depth -= 1;
                if depth == 0 {
                    return None;
                }
            }
            Token::String { start, end, closed }
                if depth == 1
                    && matches!(previous, Token::Open | Token::Comma)
                    && closed
                    && string_value(&text[start..end]).as_deref() == Some("id") =>
            {
                if tokens.next() != Some(Token::Colon) {
                    return None;
                }
                return tokens.next();
            }
            _ => {}
        }
        previous = token;
    }
    None
}

/// The value of the `id` key, from its token.
fn read_value(text: &str, token: Token, extent: Extent) -> Option<RequestId> {
    match token {
        Token::String {
            start,
            end,
            closed: true,
        } => string_value(&text[start..end]).map(RequestId::from),
        // A scalar at the end of a prefix may be the start of a longer one.
        Token::Scalar { end, .. } if extent == Extent::Prefix && end == text.len() => None,
        Token::Scalar { start, end } => {
            let token = &text[start..end];
            match scalar_value(token)? {
                value @ Value::Number(_) => Some(RequestId::written_as(value, token)),
                value @ Value::Bool(_) => Some(RequestId::from(value)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The value of a scalar token (a number beyond `f64` clamped, as [`repair`] does).
fn scalar_value(token: &str) -> Option<Value> {
    let clamped = clamp_number(token);
    serde_json::from_str(clamped.as_deref().unwrap_or(token)).ok()
}

/// The text of a whole JSON string token (quotes included), lone surrogates made U+FFFD.
fn string_value(token: &str) -> Option<String> {
    let repaired;
    let token = if lone_surrogates(token.as_bytes()).next().is_some() {
        repaired = repair(token)?;
        &repaired
    } else {
        token
    };
    serde_json::from_str(token).ok()
}

/// `±1e308`, padded with spaces to the length of `token`, when `token` is a JSON number beyond
/// the range of `f64`.
fn clamp_number(token: &str) -> Option<String> {
    if !is_json_number(token) || !token.parse::<f64>().is_ok_and(f64::is_infinite) {
        return None;
    }
    let clamped = if token.starts_with('-') {
        format!("-{HUGE}")
    } else {
        HUGE.to_owned()
    };
    // The shortest number beyond f64 (`2e308`, `-2e308`) is as long as its replacement.
    Some(format!("{clamped:<width$}", width = token.len()))
}

/// Whether `token` is a number by JSON's grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
fn is_json_number(token: &str) -> bool {
    fn digits(bytes: &[u8]) -> usize {
        bytes
            .iter()
            .take_while(|byte| byte.is_ascii_digit())
            .count()
    }
    let bytes = token.as_bytes();
    let mut at = usize::from(bytes.first() == Some(&b'-'));
    let int = digits(&bytes[at..]);
    if int == 0 || (int > 1 && bytes[at] == b'0') {
        return false;
    }
    at += int;
    if bytes.get(at) == Some(&b'.') {
        let fraction = digits(&bytes[at + 1..]);
        if fraction == 0 {
            return false;
        }
        at += 1 + fraction;
    }
    if matches!(bytes.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(bytes.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        let exponent = digits(&bytes[at..]);
        if exponent == 0 {
            return false;
        }
        at += exponent;
    }
    at == bytes.len()
}

/// Offsets (in `string`, a string token's bytes) of the `\uXXXX` escapes that are lone
/// surrogates: a high one not followed by a low one, or a low one not preceded by a high one.
fn lone_surrogates(string: &[u8]) -> impl Iterator<Item = usize> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < string.len() {
            if string[at] != b'\\' {
                at += 1;
                continue;
            }
            let Some(unit) = escaped_unit(string, at) else {
                // Any other escape: the backslash and the character it escapes.
                at += 2;
                continue;
            };
            let here = at;
            at += ESCAPE_LEN;
            match unit {
                0xD800..=0xDBFF => {
                    if escaped_unit(string, at)
                        .is_some_and(|next| (0xDC00..=0xDFFF).contains(&next))
                    {
                        at += ESCAPE_LEN;
                    } else {
                        return Some(here);
                    }
                }
                0xDC00..=0xDFFF => return Some(here),
                _ => {}
            }
        }
        None
    })
}

/// The code unit of a `\uXXXX` escape at `at`, if there is one.
fn escaped_unit(bytes: &[u8], at: usize) -> Option<u32> {
    let escape = bytes.get(at..at + ESCAPE_LEN)?;
    if escape[0] != b'\\' || escape[1] != b'u' {
        return None;
    }
    let hex = std::str::from_utf8(&escape[2..]).ok()?;
    if !hex.bytes().all(|byte| byte.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(hex, 16).ok()
}

/// A token of JSON text, by byte range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    /// `{` or `[`.
    Open,
    /// `}` or `]`.
    Close,
    Colon,
    Comma,
    /// A string, quotes included; `closed` is false when the text ends inside it.
    String {
        start: usize,
        end: usize,
        closed: bool,
    },
    /// Anything else up to the next delimiter: a number, `true`, `null`, or garbage.
    Scalar {
        start: usize,
        end: usize,
    },
}

/// The tokens of a text that may not be JSON.
struct Tokens<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Tokens<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            bytes: text.as_bytes(),
            at: 0,
        }
    }
}

impl Iterator for Tokens<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        let bytes = self.bytes;
        while bytes.get(self.at).is_some_and(|&byte| is_whitespace(byte)) {
            self.at += 1;
        }
        let start = self.at;
        let token = match *bytes.get(start)? {
            b'{' | b'[' => Token::Open,
            b'}' | b']' => Token::Close,
            b':' => Token::Colon,
            b',' => Token::Comma,
            b'"' => {
                let mut at = start + 1;
                let closed = loop {
                    match bytes.get(at) {
                        None => break false,
                        Some(b'\\') => at += 2,
                        Some(b'"') => break true,
                        Some(_) => at += 1,
                    }
                };
                self.at = if closed { at + 1 } else { bytes.len() };
                return Some(Token::String {
                    start,
                    end: self.at,
                    closed,
                });
            }
            _ => {
                let len = bytes[start..]
                    .iter()
                    .take_while(|&&byte| !is_whitespace(byte) && !is_delimiter(byte))
                    .count();
                self.at = start + len;
                return Some(Token::Scalar {
                    start,
                    end: self.at,
                });
            }
        };
        self.at += 1;
        Some(token)
    }
}

/// JSON's whitespace.
fn is_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

/// The bytes that end a scalar.
fn is_delimiter(byte: u8) -> bool {
    matches!(byte, b'{' | b'}' | b'[' | b']' | b':' | b',' | b'"')
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn repaired(text: &str) -> String {
        repair(text).unwrap_or_else(|| text.to_owned())
    }

    #[test]
    fn lone_surrogates_become_the_replacement_character() {
        let cases = [
            (r#"{"a":"\ud800"}"#, r#"{"a":"\ufffd"}"#),
            (r#"{"a":"x\uDBFFy"}"#, r#"{"a":"x\ufffdy"}"#),
            (r#"{"a":"\udc00"}"#, r#"{"a":"\ufffd"}"#),
            // A high surrogate before another escape, or before a second high one.
            (r#"["\ud800\u0041"]"#, r#"["\ufffd\u0041"]"#),
            (r#"["\ud83d\ud83d\ude00"]"#, r#"["\ufffd\ud83d\ude00"]"#),
            // A half-cut emoji at the end of a string.
            (r#"["ok \ud83d"]"#, r#"["ok \ufffd"]"#),
        ];
        for (text, want) in cases {
            assert_eq!(repaired(text), want, "{text}");
            assert_eq!(repaired(text).len(), text.len(), "{text}: same length");
            serde_json::from_str::<Value>(want).expect("valid after repair");
        }
        assert_eq!(
            serde_json::from_str::<Value>(&repaired(r#"{"a":"\ud800!"}"#)).expect("json"),
            json!({"a": "\u{FFFD}!"})
        );
    }

    #[test]
    fn what_is_not_a_lone_surrogate_is_left_alone() {
        for text in [
            r#"{"a":"\ud83d\ude00"}"#,
            r#"{"a":"\\ud800"}"#,
            r#"{"a":"\u00e9 \n \" \\"}"#,
            r#"{"a":1e308,"b":-1.5e-999,"c":"1e999"}"#,
            r#"{"a":1e999x}"#,
            r#"{"a":01e999}"#,
            "not json at all",
            "",
        ] {
            assert_eq!(repair(text), None, "{text}");
        }
    }

    #[test]
    fn numbers_beyond_f64_clamp_to_1e308_keeping_the_length() {
        let digits = "9".repeat(400);
        let cases = [
            (r#"{"t":1e999}"#, r#"{"t":1e308}"#.to_owned()),
            (r#"{"t":-1e999}"#, r#"{"t":-1e308}"#.to_owned()),
            (r#"{"t":2E+308,"u":1}"#, r#"{"t":1e308 ,"u":1}"#.to_owned()),
            (
                &format!(r#"{{"t":{digits}}}"#) as &str,
                format!(r#"{{"t":1e308{}}}"#, " ".repeat(395)),
            ),
        ];
        for (text, want) in cases {
            assert_eq!(repaired(text), want, "{text}");
            assert_eq!(want.len(), text.len());
            serde_json::from_str::<Value>(&want).expect("valid after repair");
        }
    }

    #[test]
    fn the_json_number_grammar() {
        for good in ["0", "-0", "12", "1.5", "1e5", "1E+5", "-1.25e-3"] {
            assert!(is_json_number(good), "{good}");
        }
        for bad in ["", "-", "01", "1.", ".5", "1e", "1e+", "+1", "1x", "--1"] {
            assert!(!is_json_number(bad), "{bad}");
        }
    }

    #[test]
    fn the_id_of_a_broken_line_is_read_from_the_top_level() {
        let cases: &[(&str, Option<Value>)] = &[
            (r#"{"id": "18", "type": "bash""#, Some(json!("18"))),
            (r#"{"id":7,"type":"#, Some(json!(7))),
            (
                r#"{"type":"bash","command":"echo \ud800", "id":"late" x"#,
                Some(json!("late")),
            ),
            (r#"{"id":"\ud83d","type":"#, Some(json!("\u{FFFD}"))),
            (r#"{"\u0069d":"escaped key","#, Some(json!("escaped key"))),
            (r#" { "id" : true , "#, Some(json!(true))),
            (r#"{"id": -1e999, "#, Some(json!(-1e308))),
            // Not fooled by "id" in a string, a nested object or an array.
            (r#"{"command":"echo \"id\": 5", "type": "#, None),
            (
                r#"{"command":"\"id\":\"x\"", "id": "real", "#,
                Some(json!("real")),
            ),
            (r#"{"arguments":{"id":"inner"},"type":"#, None),
            (
                r#"{"arguments":{"id":"inner"},"id":"outer","#,
                Some(json!("outer")),
            ),
            (r#"{"names":["id", "x"], "#, None),
            (r#"{"a": "id": "x""#, None),
            // After the outermost object ends, nothing counts.
            (r#"{"type":"x"} {"id":"after"}"#, None),
            // Values that cannot be read, or are absent.
            (r#"{"id":"unterminated"#, None),
            (r#"{"id":null,"#, None),
            (r#"{"id":{"a":1},"#, None),
            (r#"{"id" "x""#, None),
            (r#"{"id":"#, None),
            (r#"{"id":12abc,"#, None),
            (r#"["id", "x"]"#, None),
            (r#""id":"x""#, None),
            ("", None),
        ];
        for (text, want) in cases {
            let id = recover_id(text, Extent::Whole);
            assert_eq!(id.as_ref().map(RequestId::value), want.as_ref(), "{text}");
        }
    }

    #[test]
    fn a_recovered_number_is_written_as_sent() {
        for (text, written) in [
            (r#"{"id": -1e999, "#, "-1e999"),
            (r#"{"id":1e-400,"type":"#, "1e-400"),
            (r#"{"id":18446744073719551617 x"#, "18446744073719551617"),
            (r#"{"id":"\u0061","#, r#""a""#),
            (r#"{"id":true,"#, "true"),
        ] {
            let id = recover_id(text, Extent::Whole).expect("an id");
            assert_eq!(id.to_json(), written, "{text}");
        }
    }

    #[test]
    fn the_id_token_is_the_top_level_scalar_as_written() {
        let cases = [
            (r#"{"id":1e-400,"method":"ping"}"#, Some("1e-400")),
            (
                r#"{ "id" : 18446744073719551617 }"#,
                Some("18446744073719551617"),
            ),
            (r#"{"a":{"id":1},"id":-0}"#, Some("-0")),
            (r#"{"id":true}"#, Some("true")),
            (r#"{"id":null}"#, Some("null")),
            (r#"{"id":"1"}"#, None),
            (r#"{"id":{"a":1}}"#, None),
            (r#"{"id":[1]}"#, None),
            (r#"{"params":{"id":1}}"#, None),
            (r#"[{"id":1}]"#, None),
        ];
        for (text, want) in cases {
            assert_eq!(id_token(text), want, "{text}");
        }
    }

    #[test]
    fn a_numeric_id_keeps_its_token() {
        let written = |text: &str| {
            let repaired = repair(text);
            let json = repaired.as_deref().unwrap_or(text);
            let value: Value = serde_json::from_str(json).expect("JSON");
            written_id(text, value["id"].clone()).to_json()
        };
        let cases = [
            (r#"{"id":1e-400}"#, "1e-400"),
            (r#"{"id":18446744073719551617}"#, "18446744073719551617"),
            (r#"{"id":1e999}"#, "1e999"),
            (r#"{"id":-0,"x":1}"#, "-0"),
            (r#"{"id":1.50}"#, "1.50"),
            (r#"{"id":7}"#, "7"),
            (r#"{"id":"\ud800"}"#, "\"\u{FFFD}\""),
            (r#"{"id":true}"#, "true"),
            // Two `id` keys: serde_json keeps the last one; the first one's token is not its.
            (r#"{"id":1.0,"id":2.50}"#, "2.5"),
        ];
        for (text, want) in cases {
            assert_eq!(written(text), want, "{text}");
        }
    }

    #[test]
    fn a_byte_order_mark_is_dropped_at_the_start_only() {
        assert_eq!(strip_bom(b"\xEF\xBB\xBF{}"), b"{}");
        assert_eq!(strip_bom(b"{}"), b"{}");
        assert_eq!(strip_bom(b"\xEF\xBB\xBF\xEF\xBB\xBF{}"), b"\xEF\xBB\xBF{}");
        assert_eq!(strip_bom(b" \xEF\xBB\xBF{}"), b" \xEF\xBB\xBF{}");
        assert_eq!(strip_bom(b"\xEF\xBB"), b"\xEF\xBB");
        assert_eq!(strip_bom(b""), b"");
    }

    #[test]
    fn a_number_at_the_end_of_a_prefix_may_be_cut() {
        let recovered = |text, extent| recover_id(text, extent).map(|id| id.to_json());
        assert_eq!(
            recovered(r#"{"id":12"#, Extent::Whole).as_deref(),
            Some("12")
        );
        assert_eq!(recovered(r#"{"id":12"#, Extent::Prefix), None);
        assert_eq!(
            recovered(r#"{"id":12 "#, Extent::Prefix).as_deref(),
            Some("12")
        );
        assert_eq!(
            recovered(r#"{"id":"a","command":"xxxx"#, Extent::Prefix).as_deref(),
            Some(r#""a""#)
        );
    }
}
