//! Redaction of secrets in the sanitised stream: values given by name (the session's secret
//! environment variables) and token patterns, each occurrence replaced by
//! `[REDACTED:<name>]`, whatever the chunking.
//!
//! Literal values are found with one Aho-Corasick automaton (leftmost-longest), the patterns
//! with one `regex` alternation (whose literal prefixes make its prefilter); where both match
//! at the same place the longer match wins, and on equal spans the value's name. Matching runs
//! on sanitised text, so escape sequences or control bytes inside a value cannot hide it.
//!
//! Streaming holds back only what a match could still need: nothing after a newline (values and
//! single-line patterns cannot span one, and the sanitiser commits whole lines), the longest
//! possible match less one byte inside a line the sanitiser had to cut, and a private-key block
//! from its `-----BEGIN … PRIVATE KEY-----` line until the `-----END` line that closes it (at
//! most its bound; an `-----END` line that closes nothing releases nothing).
//!
//! A terminal's screen is not a stream: it shows a line while the program still writes it.
//! There the start of a value before the cursor is hidden as well (`cursor`).

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use aho_corasick::{AhoCorasick, MatchKind};
use regex::Regex;

mod cursor;

pub use cursor::{SHOWN_VALUE_START_BYTES, UNFINISHED_VALUE_REPLACEMENT};

/// Values shorter than this many bytes are not redacted (too likely to be ordinary words).
pub const MIN_SECRET_BYTES: usize = 8;

/// A built-in token pattern: its name, its regular expression, its longest match in bytes,
/// and the literal texts every match starts with (the prefilter: the expression runs only
/// where one of them is found).
#[derive(Debug, Clone, Copy)]
pub struct BuiltinPattern {
    /// The name its matches are replaced with.
    pub name: &'static str,
    /// The expression.
    pub regex: &'static str,
    /// Its longest match, in bytes.
    pub max_bytes: usize,
    /// What every match starts with.
    pub starts: &'static [&'static str],
}

/// The built-in token patterns. Prefixes as distinctive as `ghp_` or `xoxb-` match anywhere;
/// `AKIA…` and `sk-…` only as words of their own (`sk-` ends many ordinary words). Word
/// boundaries are ASCII ones (`(?-u:\b)`); a private-key
/// block's length is bounded by the stream's holding (16 KiB), not the expression.
pub const DEFAULT_PATTERNS: &[BuiltinPattern] = &[
    BuiltinPattern {
        name: "github-token",
        regex: r"(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,244})(?-u:\b)",
        max_bytes: 255,
        starts: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
    },
    BuiltinPattern {
        name: "aws-access-key-id",
        regex: r"(?-u:\b)(?:AKIA|ASIA)[A-Z0-9]{16}(?-u:\b)",
        max_bytes: 20,
        starts: &["AKIA", "ASIA"],
    },
    BuiltinPattern {
        name: "slack-token",
        regex: r"xox[abprs]-[A-Za-z0-9-]{10,250}",
        max_bytes: 255,
        starts: &["xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-"],
    },
    BuiltinPattern {
        name: "api-key",
        regex: r"(?-u:\b)sk-(?:ant-)?[A-Za-z0-9_-]{20,247}",
        max_bytes: 255,
        starts: &["sk-"],
    },
    BuiltinPattern {
        name: "private-key",
        regex: r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY-----(?s:.*?)-----END[A-Z0-9 ]{0,40} PRIVATE KEY-----",
        max_bytes: 16 * 1024,
        starts: &["-----BEGIN"],
    },
];

/// Where a multi-line pattern's block starts: a stream holds everything from here until the
/// block ends or passes its bound.
const BLOCK_START: &str = "-----BEGIN";

/// A named pattern of secret text with a bounded match length.
#[derive(Clone)]
pub struct SecretPattern {
    name: String,
    regex: Regex,
    max_bytes: usize,
    /// A private-key block, which spans lines.
    block: bool,
    /// What every match starts with; empty: unknown (the expression searches on its own).
    starts: Vec<String>,
    /// What a block's first line must start with (anchored): a `-----BEGIN` line without it
    /// starts no block, and is not held.
    header: Option<Regex>,
}

impl SecretPattern {
    /// A pattern `name` matching `regex` (within a line), never longer than `max_bytes`.
    ///
    /// # Errors
    ///
    /// The regular expression does not compile.
    pub fn new(
        name: impl Into<String>,
        regex: &str,
        max_bytes: usize,
    ) -> Result<Self, regex::Error> {
        Ok(Self {
            name: name.into(),
            regex: Regex::new(regex)?,
            max_bytes: max_bytes.max(1),
            block: false,
            starts: Vec::new(),
            header: None,
        })
    }

    /// The built-in patterns ([`DEFAULT_PATTERNS`]).
    pub fn defaults() -> Vec<Self> {
        DEFAULT_PATTERNS
            .iter()
            .map(|builtin| Self {
                name: builtin.name.to_owned(),
                regex: Regex::new(builtin.regex).expect("the built-in patterns compile"),
                max_bytes: builtin.max_bytes,
                block: builtin.regex.starts_with(BLOCK_START),
                starts: builtin.starts.iter().map(|&s| s.to_owned()).collect(),
                header: builtin.regex.starts_with(BLOCK_START).then(|| {
                    let header = builtin.regex.split("(?s:").next().unwrap_or_default();
                    Regex::new(&format!("^(?:{header})")).expect("a block header compiles")
                }),
            })
            .collect()
    }

    /// The name its matches are replaced with.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Debug for SecretPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretPattern")
            .field("name", &self.name)
            .field("max_bytes", &self.max_bytes)
            .finish_non_exhaustive()
    }
}

/// The secrets of a session, compiled once and shared by all its sinks.
pub struct Redactor {
    /// The values, in one automaton (leftmost-longest).
    values: Option<AhoCorasick>,
    /// The values (sanitised), kept to make a redactor with one more.
    literals: Vec<String>,
    /// The name of each value, by its index in `values`.
    literal_names: Vec<String>,
    patterns: Vec<SecretPattern>,
    /// The start texts of the patterns that have them: where a pattern may match. Apart from
    /// `values`: two small automatons search faster than one large one (the bench shows it).
    starts: Option<AhoCorasick>,
    /// The pattern of each start text, by its index in `starts`.
    start_patterns: Vec<usize>,
    /// The patterns without start texts, searched by their expressions.
    unanchored: Vec<usize>,
    /// The longest match that cannot span lines.
    longest_in_line: usize,
    /// Some value holds a newline (it can span lines).
    values_span_lines: bool,
}

impl fmt::Debug for Redactor {
    /// Names only: the values themselves are never printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redactor")
            .field("values", &self.literal_names)
            .field("patterns", &self.patterns)
            .finish_non_exhaustive()
    }
}

/// One match: where, and the name it is replaced with.
struct Found<'a> {
    start: usize,
    end: usize,
    name: &'a str,
}

impl Redactor {
    /// A redactor for `values` (name, value; values under [`MIN_SECRET_BYTES`] are left out,
    /// a value given twice keeps its first name) and `patterns`.
    pub fn new(
        values: impl IntoIterator<Item = (String, String)>,
        patterns: Vec<SecretPattern>,
    ) -> Self {
        let mut literal_names = Vec::new();
        let mut literals: Vec<String> = Vec::new();
        for (name, value) in values {
            add_literal(
                &mut literals,
                &mut literal_names,
                name,
                &value,
                MIN_SECRET_BYTES,
            );
        }
        Self::compile(literals, literal_names, patterns)
    }

    /// This redactor with one more value, `value` named `name`, when it is at least
    /// `min_bytes` long (once sanitised) and not among the values yet; `None` otherwise.
    pub fn with_value(&self, name: &str, value: &str, min_bytes: usize) -> Option<Self> {
        let mut literals = self.literals.clone();
        let mut literal_names = self.literal_names.clone();
        add_literal(
            &mut literals,
            &mut literal_names,
            name.to_owned(),
            value,
            min_bytes.max(1),
        )
        .then(|| Self::compile(literals, literal_names, self.patterns.clone()))
    }

    /// The automatons and bounds of `literals` (named by `literal_names`) and `patterns`.
    fn compile(
        literals: Vec<String>,
        literal_names: Vec<String>,
        patterns: Vec<SecretPattern>,
    ) -> Self {
        let values_span_lines = literals.iter().any(|value| value.contains('\n'));
        let longest_value = literals.iter().map(String::len).max().unwrap_or(0);
        let longest_pattern = patterns
            .iter()
            .filter(|pattern| !pattern.block)
            .map(|pattern| pattern.max_bytes)
            .max()
            .unwrap_or(0);
        let mut start_texts = Vec::new();
        let mut start_patterns = Vec::new();
        let mut unanchored = Vec::new();
        for (index, pattern) in patterns.iter().enumerate() {
            if pattern.starts.is_empty() {
                unanchored.push(index);
            }
            for start in &pattern.starts {
                start_texts.push(start.clone());
                start_patterns.push(index);
            }
        }
        let automaton = |needles: &[String], kind: MatchKind| {
            (!needles.is_empty()).then(|| {
                AhoCorasick::builder()
                    .match_kind(kind)
                    .build(needles)
                    .expect("an automaton of a few literal texts builds")
            })
        };
        Self {
            values: automaton(&literals, MatchKind::LeftmostLongest),
            literals,
            literal_names,
            patterns,
            starts: automaton(&start_texts, MatchKind::LeftmostFirst),
            start_patterns,
            unanchored,
            longest_in_line: longest_value.max(longest_pattern),
            values_span_lines,
        }
    }

    /// Whether there is nothing to redact.
    pub fn is_empty(&self) -> bool {
        self.literal_names.is_empty() && self.patterns.is_empty()
    }

    /// Where the secrets in `text` are (byte ranges, in order, not overlapping), each with the
    /// name its replacement carries: for texts laid out elsewhere, such as a terminal's cells.
    pub fn find_all(&self, text: &str) -> Vec<(std::ops::Range<usize>, String)> {
        let mut found = Vec::new();
        let mut pos = 0;
        while let Some(m) = self.next_match(text, pos) {
            if m.end <= m.start {
                break;
            }
            found.push((m.start..m.end, m.name.to_owned()));
            pos = m.end;
        }
        found
    }

    /// The text a secret named `name` is replaced with: `[REDACTED:<name>]`.
    pub fn replacement(name: &str) -> String {
        let mut out = String::new();
        push_replacement(&mut out, name);
        out
    }

    /// `text` with every secret in it redacted (for whole texts: a screen, a command line).
    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        if !self.may_match(text.as_bytes()) || self.next_match(text, 0).is_none() {
            return Cow::Borrowed(text);
        }
        let mut out = Vec::with_capacity(text.len());
        self.redact_into(text, text.len(), &mut |piece| out.extend_from_slice(piece));
        Cow::Owned(String::from_utf8(out).unwrap_or_default())
    }

    /// Hands `text` to `out` with every match that starts before `hold` replaced, up to `hold`
    /// or the end of the last such match, whichever is later; returns that place. The one loop
    /// of whole texts and streams.
    fn redact_into(&self, text: &str, hold: usize, out: &mut dyn FnMut(&[u8])) -> usize {
        let mut pos = 0;
        let mut replacement = String::new();
        while let Some(found) = self.next_match(text, pos) {
            if found.start >= hold || found.end == found.start {
                break;
            }
            if found.start > pos {
                out(&text.as_bytes()[pos..found.start]);
            }
            replacement.clear();
            push_replacement(&mut replacement, found.name);
            out(replacement.as_bytes());
            pos = found.end;
        }
        let kept = hold.max(pos);
        if kept > pos {
            out(&text.as_bytes()[pos..kept]);
        }
        kept
    }

    /// The leftmost match at or after `from`: the longest there, a value's on equal spans.
    fn next_match(&self, text: &str, from: usize) -> Option<Found<'_>> {
        let mut best: Option<Found<'_>> = None;
        for &index in &self.unanchored {
            let pattern = &self.patterns[index];
            if let Some(m) = pattern
                .regex
                .find_at(text, from)
                .filter(|m| m.end() > m.start())
            {
                best = Some(leftmost_longest(
                    best,
                    found(m.start(), m.end(), &pattern.name),
                    false,
                ));
            }
        }
        if let Some(values) = &self.values
            && let Some(m) = values.find(aho_corasick::Input::new(text).span(from..text.len()))
        {
            let name = &self.literal_names[m.pattern().as_usize()];
            best = Some(leftmost_longest(
                best,
                found(m.start(), m.end(), name),
                true,
            ));
        }
        let Some(starts) = &self.starts else {
            return best;
        };
        let mut at = from;
        while at < text.len() {
            let Some(hit) = starts.find(aho_corasick::Input::new(text).span(at..text.len())) else {
                break;
            };
            if best.as_ref().is_some_and(|b| b.start < hit.start()) {
                break;
            }
            let pattern = &self.patterns[self.start_patterns[hit.pattern().as_usize()]];
            // Anchored at the hit, within the pattern's bound (the text before it stays in view
            // for a leading word boundary).
            let mut end = (hit.start() + pattern.max_bytes).min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            if let Some(m) = pattern
                .regex
                .find_at(&text[..end], hit.start())
                .filter(|m| m.start() == hit.start() && m.end() > m.start())
            {
                return Some(leftmost_longest(
                    best,
                    found(m.start(), m.end(), &pattern.name),
                    false,
                ));
            }
            at = hit.start() + 1;
            while !text.is_char_boundary(at) {
                at += 1;
            }
        }
        best
    }

    /// Whether `text` holds a value or a pattern's start text (always, with a pattern that has
    /// no start text): where it does not, nothing in it matches and no block starts in it.
    fn may_match(&self, text: &[u8]) -> bool {
        !self.unanchored.is_empty()
            || self
                .values
                .as_ref()
                .is_some_and(|values| values.is_match(text))
            || self
                .starts
                .as_ref()
                .is_some_and(|starts| starts.is_match(text))
    }

    /// Where the part of `text` that more text could still change begins, for matches within
    /// a line: nothing after a newline, else the longest match less one byte.
    fn hold_in_line(&self, text: &[u8]) -> usize {
        if !self.values_span_lines && text.last() == Some(&b'\n') {
            return text.len();
        }
        let mut hold = text
            .len()
            .saturating_sub(self.longest_in_line.saturating_sub(1));
        // Back to a character's start (not a UTF-8 continuation byte).
        while hold > 0 && hold < text.len() && (text[hold] & 0xC0) == 0x80 {
            hold -= 1;
        }
        hold
    }

    /// Where the part of `text` that more text could still change begins: a match may start
    /// there and not be complete yet.
    fn hold_from(&self, text: &str) -> usize {
        let mut hold = self.hold_in_line(text.as_bytes());
        for pattern in self.patterns.iter().filter(|pattern| pattern.block) {
            // The first block still open: everything after it may yet be part of it (a later
            // `-----BEGIN` included, and an `-----END` line that does not close it).
            if let Some(start) = memchr::memmem::find_iter(text.as_bytes(), BLOCK_START.as_bytes())
                .find(|&start| pattern.block_open_at(text, start))
            {
                hold = hold.min(start);
            }
        }
        while !text.is_char_boundary(hold) {
            hold -= 1;
        }
        hold
    }
}

impl SecretPattern {
    /// Whether the block pattern may match at `start` (a `-----BEGIN` of `text`) once more
    /// text comes: it does not match there yet, is within its bound, and its header is there
    /// or may still come (the line is not over).
    fn block_open_at(&self, text: &str, start: usize) -> bool {
        let rest = &text[start..];
        if rest.len() >= self.max_bytes {
            return false;
        }
        if self
            .regex
            .find_at(text, start)
            .is_some_and(|m| m.start() == start)
        {
            return false;
        }
        match rest.find('\n') {
            Some(end) => self
                .header
                .as_ref()
                .is_none_or(|header| header.is_match(&rest[..end])),
            None => true,
        }
    }
}

/// A match of `name` over `start..end`.
fn found(start: usize, end: usize, name: &str) -> Found<'_> {
    Found { start, end, name }
}

/// Of the match so far and `next`, the one that starts first, the longer on a tie; on a full
/// tie the one so far, unless `next` is a value (a variable's name wins over a pattern's; a
/// pattern found later never replaces a value on a full tie, being the one so far's rival).
fn leftmost_longest<'a>(best: Option<Found<'a>>, next: Found<'a>, value: bool) -> Found<'a> {
    match best {
        Some(b)
            if b.start < next.start
                || (b.start == next.start
                    && (b.end > next.end || (b.end == next.end && !value))) =>
        {
            b
        }
        _ => next,
    }
}

fn push_replacement(out: &mut String, name: &str) {
    out.push_str("[REDACTED:");
    out.push_str(name);
    out.push(']');
}

/// Adds `value` (sanitised: matching runs on sanitised text) named `name` to the values, when
/// it is `min_bytes` or longer and not there yet; whether it was added.
fn add_literal(
    literals: &mut Vec<String>,
    names: &mut Vec<String>,
    name: String,
    value: &str,
    min_bytes: usize,
) -> bool {
    let value = sanitised(value);
    if value.len() < min_bytes || literals.contains(&value) {
        return false;
    }
    literals.push(value);
    names.push(name);
    true
}

/// `value` as the sanitiser would commit it.
fn sanitised(value: &str) -> String {
    let mut sanitizer = crate::Sanitizer::new();
    let mut text = String::new();
    sanitizer.push(value.as_bytes(), |piece| text.push_str(piece));
    sanitizer.finish(|piece| text.push_str(piece));
    text
}

/// One stream's redaction: the committed text, with what may still be part of a match held
/// back until more comes (or the stream ends). It follows its [`Secrets`]: a value added while
/// the stream runs is redacted from the next piece on.
pub(crate) struct RedactStream {
    secrets: Arc<Secrets>,
    /// The secrets' redactor as of `generation`.
    redactor: Arc<Redactor>,
    generation: u64,
    pending: String,
}

impl RedactStream {
    pub(crate) fn new(secrets: Arc<Secrets>) -> Self {
        let (redactor, generation) = secrets.current_with_generation();
        Self {
            secrets,
            redactor,
            generation,
            pending: String::new(),
        }
    }

    pub(crate) fn secrets(&self) -> &Arc<Secrets> {
        &self.secrets
    }

    /// Takes the next committed piece (whole characters); hands the redacted text that can no
    /// longer change to `out`.
    pub(crate) fn push(&mut self, piece: &[u8], out: &mut dyn FnMut(&[u8])) {
        if self.secrets.generation() != self.generation {
            (self.redactor, self.generation) = self.secrets.current_with_generation();
        }
        if self.pending.is_empty() {
            if self.redactor.is_empty() {
                out(piece);
                return;
            }
            // Most pieces hold nothing that could start a match: handed on after the two
            // searches, without even reading them as text (the sanitiser's are whole
            // characters, and the place held is a character's start).
            if !self.redactor.may_match(piece) {
                let hold = self.redactor.hold_in_line(piece);
                if hold > 0 {
                    out(&piece[..hold]);
                }
                self.pending
                    .push_str(std::str::from_utf8(&piece[hold..]).unwrap_or_default());
                return;
            }
            let text = std::str::from_utf8(piece).unwrap_or_default();
            let kept = self.scan(text, false, out);
            self.pending.push_str(&text[kept..]);
        } else {
            self.pending
                .push_str(std::str::from_utf8(piece).unwrap_or_default());
            let text = std::mem::take(&mut self.pending);
            let kept = self.scan(&text, false, out);
            self.pending.push_str(&text[kept..]);
        }
    }

    /// Ends the stream: everything held is matched as final and handed on.
    pub(crate) fn finish(&mut self, out: &mut dyn FnMut(&[u8])) {
        let text = std::mem::take(&mut self.pending);
        self.scan(&text, true, out);
    }

    /// Redacts `text` up to where it must hold (all of it when `last`); returns that place.
    fn scan(&self, text: &str, last: bool, out: &mut dyn FnMut(&[u8])) -> usize {
        let redactor = &self.redactor;
        // Nothing that could start a match: no block to hold either (its start text is one of
        // the starts).
        if !redactor.may_match(text.as_bytes()) {
            let hold = if last {
                text.len()
            } else {
                redactor.hold_in_line(text.as_bytes())
            };
            if hold > 0 {
                out(&text.as_bytes()[..hold]);
            }
            return hold;
        }
        let hold = if last {
            text.len()
        } else {
            redactor.hold_from(text)
        };
        redactor.redact_into(text, hold, out)
    }
}

/// A session's secrets, shared by all its sinks and terminals: the [`Redactor`] they use, to
/// which values can be added while they run (a password a person typed at a prompt). Every
/// stream picks an added value up at its next piece; what was handed on before stays as it
/// was.
pub struct Secrets {
    current: std::sync::RwLock<Arc<Redactor>>,
    /// Bumped on each added value (read on every piece, so one atomic load).
    generation: std::sync::atomic::AtomicU64,
}

impl Secrets {
    /// Secrets starting with `redactor`'s.
    pub fn new(redactor: Redactor) -> Self {
        Self {
            current: std::sync::RwLock::new(Arc::new(redactor)),
            generation: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// The redactor now.
    pub fn current(&self) -> Arc<Redactor> {
        self.current_with_generation().0
    }

    /// Whether there is nothing to redact now.
    pub fn is_empty(&self) -> bool {
        self.current().is_empty()
    }

    /// Adds `value`, named `name`, when it is at least `min_bytes` long and not known yet;
    /// whether it was added. Later pieces of every stream are redacted with it.
    pub fn add(&self, name: &str, value: &str, min_bytes: usize) -> bool {
        let mut current = self
            .current
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(more) = current.with_value(name, value, min_bytes) else {
            return false;
        };
        *current = Arc::new(more);
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::Release);
        true
    }

    fn generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::Acquire)
    }

    fn current_with_generation(&self) -> (Arc<Redactor>, u64) {
        let current = self
            .current
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        (Arc::clone(&current), self.generation())
    }
}

impl fmt::Debug for Secrets {
    /// Names only, as the redactor's.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Secrets").field(&self.current()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redactor() -> Redactor {
        Redactor::new(
            [
                ("GITHUB_TOKEN".to_owned(), "s3cr3t-value-1234".to_owned()),
                ("SHORT".to_owned(), "1234567".to_owned()),
                ("DB_PASSWORD".to_owned(), "hunter2hunter2".to_owned()),
            ],
            SecretPattern::defaults(),
        )
    }

    #[test]
    fn values_and_patterns_are_replaced_by_name() {
        let r = redactor();
        for (text, expected) in [
            (
                "token=s3cr3t-value-1234\n",
                "token=[REDACTED:GITHUB_TOKEN]\n",
            ),
            ("short 1234567 stays\n", "short 1234567 stays\n"),
            (
                "a ghp_abcdefghijklmnopqrstuvwxyz0123456789 b",
                "a [REDACTED:github-token] b",
            ),
            ("AKIAABCDEFGHIJKLMNOP", "[REDACTED:aws-access-key-id]"),
            ("xoxb-1234567890-abcdef", "[REDACTED:slack-token]"),
            (
                "key sk-ant-abcdefghijklmnopqrstuvwxyz",
                "key [REDACTED:api-key]",
            ),
            (
                "x\n-----BEGIN RSA PRIVATE KEY-----\nMIIabc\n-----END RSA PRIVATE KEY-----\ny",
                "x\n[REDACTED:private-key]\ny",
            ),
            ("hunter2hunter2hunter2", "[REDACTED:DB_PASSWORD]hunter2"),
            ("no secrets here", "no secrets here"),
        ] {
            assert_eq!(r.redact(text), expected, "{text:?}");
        }
    }

    #[test]
    fn a_value_that_is_also_a_token_takes_the_variable_name() {
        let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
        let r = Redactor::new(
            [("GH_TOKEN".to_owned(), token.to_owned())],
            SecretPattern::defaults(),
        );
        assert_eq!(r.redact(&format!("[{token}]")), "[[REDACTED:GH_TOKEN]]");
    }

    #[test]
    fn the_debug_form_names_no_value() {
        let shown = format!("{:?}", redactor());
        assert!(shown.contains("GITHUB_TOKEN"), "{shown}");
        assert!(!shown.contains("s3cr3t"), "{shown}");
    }
}
