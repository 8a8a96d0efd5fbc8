//! Tiers compiled at load: rules with their matchers and reasons, checked (shape, project
//! restrictions, `ask_timeout`, regexes, `match`/`not_match` examples) before anything is judged.

use std::collections::HashMap;

use regex::Regex;

use crate::glob::WordPattern;
use crate::segment::{RawSegment, segments};
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
    Prefix(Vec<WordPattern>),
    Regex(Regex),
}

impl Matcher {
    /// The plain text the first word must be, when there is one.
    fn name(&self) -> Option<&str> {
        match self {
            Self::Prefix(words) => match words.first() {
                Some(WordPattern::Exact(name)) => Some(name),
                _ => None,
            },
            Self::Regex(_) => None,
        }
    }
}

impl Matcher {
    /// Whether the words (`first` then `rest`, or `joined` by single spaces) match.
    fn matches(&self, first: &str, rest: &[String], joined: &str) -> bool {
        match self {
            Self::Prefix(words) => {
                let Some((head, tail)) = words.split_first() else {
                    return false;
                };
                tail.len() <= rest.len()
                    && head.matches(first)
                    && tail.iter().zip(rest).all(|(p, w)| p.matches(w))
            }
            Self::Regex(regex) => regex.is_match(joined),
        }
    }
}

impl Rule {
    /// Whether the rule applies to `segment`. A path is matched as written and by its base name,
    /// but an allow rule takes the base name only for a path in a system directory; an allow
    /// rule never applies to an unknown segment (what it runs is not what its words say).
    pub(crate) fn applies(&self, segment: &RawSegment) -> bool {
        if segment.unknown && self.decision == Decision::Allow {
            return false;
        }
        let Some((first, rest)) = segment.words.split_first() else {
            return false;
        };
        if self.matcher.matches(first, rest, &segment.joined) {
            return true;
        }
        match &segment.base {
            Some(base) if base.system || self.decision != Decision::Allow => {
                self.matcher.matches(&base.name, rest, &base.joined)
            }
            _ => false,
        }
    }
}

impl Tier {
    /// The tier's decision on `segment`: the strictest matching rule (the first of equals),
    /// else its `unknown` (or `default`) for an unknown segment, else its `default`; `None`
    /// when it abstains. Returns the decision, the reason and the rule's index.
    pub(crate) fn decide(&self, segment: &RawSegment) -> Option<(Decision, &str, Option<usize>)> {
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
        for &i in candidates {
            let rule = &self.rules[i];
            let better = best.is_none_or(|b| {
                let current = self.rules[b].decision;
                rule.decision > current || (rule.decision == current && i < b)
            });
            if better && rule.applies(segment) {
                best = Some(i);
            }
        }
        if let Some(i) = best {
            let rule = &self.rules[i];
            return Some((rule.decision, &rule.reason, Some(i)));
        }
        if segment.wrapper {
            return None;
        }
        if segment.unknown {
            let decision = self.unknown.or(self.default)?;
            return Some((decision, crate::UNKNOWN_REASON, None));
        }
        self.default
            .map(|decision| (decision, crate::DEFAULT_REASON, None))
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
                Matcher::Prefix(prefix.iter().map(|w| WordPattern::new(w)).collect())
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
