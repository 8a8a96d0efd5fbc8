//! Tiers compiled at load: rules with their matchers and reasons, checked (shape, project
//! restrictions, `ask_timeout`, regexes, `match`/`not_match` examples) before anything is judged.

use std::collections::HashMap;

use regex::Regex;

use crate::glob::{Compared, WordPattern};
use crate::reading::RuleReading;
use crate::segment::{RawSegment, segments};
use crate::table;
use crate::{Decision, PolicyError, RuleConfig, TierKind, TierSource};

/// The longest `ask_timeout`, in seconds (a day).
const MAX_ASK_TIMEOUT: u64 = 86_400;

/// What a project tier may not say.
const ONLY_TIGHTEN: &str = "a project policy may only tighten: allow is not allowed here";

/// A tier, compiled.
#[derive(Debug, Clone)]
pub(crate) struct Tier {
    pub kind: TierKind,
    pub origin: String,
    pub default: Option<Decision>,
    pub unknown: Option<Decision>,
    pub rules: Vec<Rule>,
    /// The prefix rules whose first word is plain text, by that text (indexes into `rules`, in
    /// order): a segment is only tried against the rules for its command name.
    by_name: HashMap<String, Vec<usize>>,
    /// The other rules (a glob first word, a regex), in order.
    others: Vec<usize>,
}

/// A rule, compiled.
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    matcher: Matcher,
    pub decision: Decision,
    /// Its reason, or one naming it.
    pub reason: String,
}

#[derive(Debug, Clone)]
enum Matcher {
    /// The words; for a program in the table, the rule's words read as the program reads them.
    Prefix(Vec<WordPattern>, Option<RuleReading>),
    Regex(Regex),
}

impl Matcher {
    /// The plain text the first word must be, when there is one.
    fn name(&self) -> Option<&str> {
        match self {
            Self::Prefix(words, _) => match words.first() {
                Some(WordPattern::Exact(name)) => Some(name),
                _ => None,
            },
            Self::Regex(_) => None,
        }
    }

    /// How the rule compares with `segment` when its command name is `first` (as written, or
    /// its base name) and its words are `joined`.
    fn compare(&self, first: &str, segment: &RawSegment, joined: &str) -> Compared {
        match self {
            Self::Prefix(words, reading) => {
                let Some((head, tail)) = words.split_first() else {
                    return Compared::No;
                };
                if !head.matches(first) {
                    return Compared::No;
                }
                match (reading, &segment.reading) {
                    // By meaning; the words as written may still match (`git --no-pager log`
                    // written into a rule).
                    (Some(rule), Some(read)) => match rule.compare(read, segment.open) {
                        Compared::Yes => Compared::Yes,
                        _ if word_for_word(tail, segment) == Compared::Yes => Compared::Yes,
                        by_meaning => by_meaning,
                    },
                    _ => word_for_word(tail, segment),
                }
            }
            Self::Regex(regex) => {
                if regex.is_match(joined) {
                    Compared::Yes
                } else {
                    Compared::No
                }
            }
        }
    }
}

/// A rule's words after the first compared with the segment's, one by one: a word that is not
/// literal where the rule wants a word (but `*`) makes it unknown, as do words still to come
/// from input.
fn word_for_word(tail: &[WordPattern], segment: &RawSegment) -> Compared {
    let mut unknown = false;
    for (i, pattern) in tail.iter().enumerate() {
        match segment.words.get(i + 1) {
            None if segment.open => unknown = true,
            None => return Compared::No,
            Some(word) => {
                if segment.literal.get(i + 1).copied().unwrap_or(true) {
                    if !pattern.matches(word) {
                        return Compared::No;
                    }
                } else {
                    match pattern.compare_unknown(word) {
                        Compared::No => return Compared::No,
                        Compared::Unknown => unknown = true,
                        Compared::Yes => {}
                    }
                }
            }
        }
    }
    if unknown {
        Compared::Unknown
    } else {
        Compared::Yes
    }
}

impl Rule {
    /// How the rule compares with `segment`. A path is matched as written and by its base name,
    /// but an allow rule takes the base name only for a path in a system directory; an allow
    /// rule never applies to an unknown segment (what it runs is not what its words say), and
    /// applies or not, never "unknown".
    pub(crate) fn compare(&self, segment: &RawSegment) -> Compared {
        let allow = self.decision == Decision::Allow;
        if segment.unknown && allow {
            return Compared::No;
        }
        let Some(first) = segment.words.first() else {
            return Compared::No;
        };
        let mut got = self.matcher.compare(first, segment, &segment.joined);
        if got != Compared::Yes
            && let Some(base) = &segment.base
            && (base.system || !allow)
        {
            got = got.max(self.matcher.compare(&base.name, segment, &base.joined));
        }
        if allow && got == Compared::Unknown {
            return Compared::No;
        }
        got
    }

    /// Whether the rule applies to `segment` (for `match`/`not_match` examples).
    pub(crate) fn applies(&self, segment: &RawSegment) -> bool {
        self.compare(segment) == Compared::Yes
    }
}

/// A tier's decision on a segment.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TierDecision<'t> {
    pub decision: Decision,
    pub reason: &'t str,
    /// The rule's index; `None` for the tier's `default` or `unknown`.
    pub rule: Option<usize>,
    /// A rule compared a word only known when it runs: the segment is unknown.
    pub unknown: bool,
}

impl Tier {
    /// The tier's decision on `segment`: the strictest matching rule (the first of equals),
    /// else its `unknown` (or `default`) for an unknown segment, else its `default`; `None`
    /// when it abstains. A segment an ask or deny rule might match depending on words only
    /// known when it runs is unknown: its allow rules no longer apply, and it gets the
    /// strictest of its matching rules and the tier's `unknown`.
    pub(crate) fn decide(&self, segment: &RawSegment) -> Option<TierDecision<'_>> {
        let by_name = |name: Option<&str>| {
            name.and_then(|name| self.by_name.get(name))
                .map_or(&[][..], Vec::as_slice)
        };
        let first = segment.words.first().map(String::as_str);
        let base = segment.base.as_ref().map(|b| b.name.as_str());
        let candidates = self
            .others
            .iter()
            .chain(by_name(first))
            .chain(by_name(base));
        // The strictest rule that applies; the first of equals.
        let mut best: Option<usize> = None;
        let mut unknown = false;
        for &i in candidates {
            let rule = &self.rules[i];
            let better = best.is_none_or(|b| {
                let current = self.rules[b].decision;
                rule.decision > current || (rule.decision == current && i < b)
            });
            let may_be_unknown = !unknown && rule.decision != Decision::Allow;
            if !better && !may_be_unknown {
                continue;
            }
            match rule.compare(segment) {
                Compared::Yes if better => best = Some(i),
                Compared::Unknown => unknown = true,
                _ => {}
            }
        }
        let rule_decision = |i: usize| {
            let rule = &self.rules[i];
            TierDecision {
                decision: rule.decision,
                reason: &rule.reason,
                rule: Some(i),
                unknown,
            }
        };
        if unknown && !segment.unknown {
            let best = best.filter(|&i| self.rules[i].decision != Decision::Allow);
            let setting = self.unknown.or(self.default);
            // The rule when it is at least as strict as the tier's `unknown`.
            if let Some(i) = best
                && setting.is_none_or(|setting| setting <= self.rules[i].decision)
            {
                return Some(rule_decision(i));
            }
            return setting.map(|decision| TierDecision {
                decision,
                reason: crate::UNKNOWN_WORD_REASON,
                rule: None,
                unknown,
            });
        }
        if let Some(i) = best {
            return Some(rule_decision(i));
        }
        if segment.wrapper {
            return None;
        }
        let (decision, reason) = if segment.unknown {
            (self.unknown.or(self.default)?, crate::UNKNOWN_REASON)
        } else {
            (self.default?, crate::DEFAULT_REASON)
        };
        Some(TierDecision {
            decision,
            reason,
            rule: None,
            unknown: false,
        })
    }
}

/// Compiles and checks one tier.
pub(crate) fn compile(source: &TierSource) -> Result<Tier, PolicyError> {
    let error = |key: String, reason: String| PolicyError {
        origin: source.origin.clone(),
        key,
        reason,
    };
    let policy = &source.policy;
    let project = source.kind == TierKind::Project;
    if let Some(seconds) = policy.ask_timeout
        && !(1..=MAX_ASK_TIMEOUT).contains(&seconds)
    {
        return Err(error(
            "policy.ask_timeout".into(),
            format!("must be between 1 and {MAX_ASK_TIMEOUT} seconds, not {seconds}"),
        ));
    }
    for (key, value) in [("default", policy.default), ("unknown", policy.unknown)] {
        if project && value == Some(Decision::Allow) {
            return Err(error(format!("policy.{key}"), ONLY_TIGHTEN.into()));
        }
    }
    let mut rules = Vec::with_capacity(policy.rules.len());
    for (i, rule) in policy.rules.iter().enumerate() {
        let key = format!("policy.rules[{i}]");
        let matcher = match (&rule.prefix, &rule.regex) {
            (Some(_), Some(_)) => {
                return Err(error(key, "a rule has prefix or regex, not both".into()));
            }
            (None, None) => return Err(error(key, "a rule needs prefix or regex".into())),
            (Some(prefix), None) => {
                if prefix.is_empty() {
                    return Err(error(
                        format!("{key}.prefix"),
                        "must hold at least one word".into(),
                    ));
                }
                let reading = table::program(&prefix[0])
                    .map(|program| RuleReading::new(program, &prefix[1..]));
                Matcher::Prefix(
                    prefix.iter().map(|w| WordPattern::new(w)).collect(),
                    reading,
                )
            }
            (None, Some(regex)) => match Regex::new(&format!("^(?:{regex})")) {
                Ok(regex) => Matcher::Regex(regex),
                Err(err) => {
                    return Err(error(
                        format!("{key}.regex"),
                        format!("invalid regex: {err}"),
                    ));
                }
            },
        };
        if project && rule.decision == Decision::Allow {
            return Err(error(format!("{key}.decision"), ONLY_TIGHTEN.into()));
        }
        let reason = rule
            .reason
            .clone()
            .unwrap_or_else(|| format!("matches rule {} of the {} policy", i + 1, source.kind));
        rules.push(Rule {
            matcher,
            decision: rule.decision,
            reason,
        });
    }
    for (i, (config, rule)) in policy.rules.iter().zip(&rules).enumerate() {
        check_examples(i, config, rule).map_err(|(key, reason)| error(key, reason))?;
    }
    let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
    let mut others = Vec::new();
    for (i, rule) in rules.iter().enumerate() {
        match rule.matcher.name() {
            Some(name) => by_name.entry(name.to_owned()).or_default().push(i),
            None => others.push(i),
        }
    }
    Ok(Tier {
        kind: source.kind,
        origin: source.origin.clone(),
        default: policy.default,
        unknown: policy.unknown,
        rules,
        by_name,
        others,
    })
}

/// Checks rule `i`'s `match` and `not_match` examples: a `match` line must have a segment the
/// rule applies to, a `not_match` line none. Returns the key and the reason of the first that
/// does not behave.
fn check_examples(i: usize, config: &RuleConfig, rule: &Rule) -> Result<(), (String, String)> {
    let name = match (&config.prefix, &config.regex) {
        (Some(prefix), _) => format!("rule {} (prefix {prefix:?})", i + 1),
        (_, Some(regex)) => format!("rule {} (regex {regex:?})", i + 1),
        (None, None) => format!("rule {}", i + 1),
    };
    let quoted = |segments: &[RawSegment]| {
        segments
            .iter()
            .map(|s| format!("`{}`", s.joined))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (j, example) in config.matches.iter().enumerate() {
        let segments = segments(example);
        if !segments.iter().any(|s| rule.applies(s)) {
            let got = if segments.is_empty() {
                "it runs no command".to_owned()
            } else {
                format!("matched none of its segments ({})", quoted(&segments))
            };
            return Err((
                format!("policy.rules[{i}].match[{j}]"),
                format!("{name} should match `{example}` but {got}"),
            ));
        }
    }
    for (j, example) in config.not_match.iter().enumerate() {
        let segments = segments(example);
        if let Some(hit) = segments.iter().find(|s| rule.applies(s)) {
            return Err((
                format!("policy.rules[{i}].not_match[{j}]"),
                format!(
                    "{name} should not match `{example}` but matched its segment `{}`",
                    hit.joined
                ),
            ));
        }
    }
    Ok(())
}
