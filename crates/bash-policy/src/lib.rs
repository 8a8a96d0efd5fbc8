#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

use std::collections::HashSet;
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

mod arg;
mod command;
mod glob;
mod judge;
pub mod program;
mod reading;
mod rules;
mod segment;
mod table;

/// The default `ask_timeout`: 300 s.
pub const DEFAULT_ASK_TIMEOUT: Duration = Duration::from_secs(300);

/// The reason given for a segment decided by a tier's `default`.
pub const DEFAULT_REASON: &str = "no rule allows it";
/// The reason given for a segment decided by a tier's `unknown`.
pub const UNKNOWN_REASON: &str = "its command name is only known when it runs";
/// The reason given for a segment decided by a tier's `unknown` because a word a rule compares
/// (a subcommand, an operand) is only known when it runs (`git $x`, `git "$@"`, `… | xargs git`).
pub const UNKNOWN_WORD_REASON: &str = "a word its rules compare is only known when it runs";
/// The reason given for a segment every tier abstained on (it is allowed).
pub const ABSTAIN_REASON: &str = "no policy decides it";
/// The reason given for an asked segment allowed for the session.
pub const SESSION_REASON: &str = "allowed for this session";

/// What a rule, a tier or the policy decides: ordered from the most lenient to the strictest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// It runs.
    Allow,
    /// A person must say yes first.
    Ask,
    /// It never runs.
    Deny,
}

impl Decision {
    /// `allow`, `ask` or `deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Deny => "deny",
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which tier a policy file belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TierKind {
    /// `/etc/agentsh/policy.toml` (and `AGENTSH_MANAGED_POLICY`): set by an administrator.
    Managed,
    /// The user's configuration file.
    User,
    /// The project's `.agentsh/policy.toml`: may only tighten.
    Project,
}

impl TierKind {
    /// `managed`, `user` or `project`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Managed => "managed",
            Self::User => "user",
            Self::Project => "project",
        }
    }
}

impl fmt::Display for TierKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `[policy]` table as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PolicyConfig {
    /// What a command no rule matches gets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Decision>,
    /// What a command whose name cannot be known before it runs gets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown: Option<Decision>,
    /// Seconds an approval request waits before it is denied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ask_timeout: Option<u64>,
    /// The rules, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<RuleConfig>,
}

/// One `[[policy.rules]]` entry as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleConfig {
    /// The command's first words; a word may be a glob.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<Vec<String>>,
    /// A regex over the command's words joined by single spaces, anchored at the start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<String>,
    /// What a matching command gets.
    pub decision: Decision,
    /// Why, as the model and the person are told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Command lines the rule must match (checked at load).
    #[serde(default, rename = "match", skip_serializing_if = "Vec::is_empty")]
    pub matches: Vec<String>,
    /// Command lines the rule must not match (checked at load).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_match: Vec<String>,
}

/// One policy file (or the user's configuration) with its tier.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TierSource {
    /// The tier.
    pub kind: TierKind,
    /// Where it was read from, as errors and `policy check` name it (a file path).
    pub origin: String,
    /// The `[policy]` table.
    pub policy: PolicyConfig,
}

/// A policy that cannot be used: the key (`policy.rules[1].match[0]`) and why. The caller
/// names the file ([`PolicyError::origin`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {reason}")]
pub struct PolicyError {
    /// The file (the [`TierSource::origin`]).
    pub origin: String,
    /// The key as a dotted path.
    pub key: String,
    /// What is wrong.
    pub reason: String,
}

/// Which tier and rule decided a segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecidedBy {
    /// The tier.
    pub tier: TierKind,
    /// The tier's file.
    pub origin: String,
    /// The index of the rule in its tier; `None` when the tier's `default` or `unknown` decided.
    pub rule: Option<usize>,
}

/// One simple command of a line, judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// The segment as written in the command line.
    pub text: String,
    /// Its words after quote removal and unwrapping, joined by single spaces (what rules see).
    pub words: String,
    /// Its decision.
    pub decision: Decision,
    /// Whether its command cannot be known before it runs.
    pub unknown: bool,
    /// The rule's reason, [`DEFAULT_REASON`], or [`UNKNOWN_REASON`].
    pub reason: String,
    /// Who decided; `None` when every tier abstained (allowed).
    pub decided_by: Option<DecidedBy>,
    /// The global options set aside before its words were compared with `prefix` rules
    /// (`-C dir` of `git -C dir push`), as written; empty for a program the policy does not
    /// read by meaning.
    pub global_options: Vec<String>,
}

impl Segment {
    /// What decided it, as the audit log and `policy check` name it: `<tier> <file> rules[N]`,
    /// or `… unknown` / `… default` for a tier's setting; `None` when every tier abstained.
    pub fn decided_by_name(&self) -> Option<String> {
        let by = self.decided_by.as_ref()?;
        let what = match by.rule {
            Some(index) => format!("rules[{index}]"),
            None if self.unknown => "unknown".to_owned(),
            None => "default".to_owned(),
        };
        Some(format!("{} {} {what}", by.tier, by.origin))
    }
}

/// A judged command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    /// The strictest of the segments' decisions (allow for a line with none).
    pub decision: Decision,
    /// Every segment, in the order they appear.
    pub segments: Vec<Segment>,
    /// Functions and aliases the line defines, each with whether its body held an unknown or
    /// asked segment.
    pub definitions: Vec<(String, bool)>,
}

impl Judgement {
    /// The first denied segment.
    pub fn first_denied(&self) -> Option<&Segment> {
        self.segments.iter().find(|s| s.decision == Decision::Deny)
    }

    /// The segments that need a yes.
    pub fn asked(&self) -> impl Iterator<Item = &Segment> {
        self.segments.iter().filter(|s| s.decision == Decision::Ask)
    }
}

/// What a session remembers between lines: segments allowed for the session, and the names of
/// functions and aliases defined with unknown or asked bodies.
#[derive(Debug, Clone, Default)]
pub struct SessionMemory {
    allowed: HashSet<String>,
    tainted: HashSet<String>,
}

impl SessionMemory {
    /// An empty memory.
    pub fn new() -> Self {
        Self::default()
    }

    /// After an "allow for the session" answer: the asked segments of `judgement` that are not
    /// unknown are allowed without asking until the session ends.
    pub fn allow_for_session(&mut self, judgement: &Judgement) {
        for segment in judgement.asked().filter(|s| !s.unknown) {
            self.allowed.insert(segment.text.clone());
        }
    }

    /// After a line was allowed to run: remembers the functions and aliases it defines.
    pub fn record(&mut self, judgement: &Judgement) {
        for (name, tainted) in &judgement.definitions {
            if *tainted {
                self.tainted.insert(name.clone());
            } else {
                self.tainted.remove(name);
            }
        }
    }

    /// Whether `segment` was allowed for the session.
    pub fn is_allowed(&self, segment: &str) -> bool {
        self.allowed.contains(segment)
    }

    /// Whether `name` is a function or alias defined with an unknown or asked body.
    pub fn is_tainted(&self, name: &str) -> bool {
        self.tainted.contains(name)
    }
}

/// A loaded policy: its tiers, compiled and checked.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    tiers: Vec<TierSource>,
    compiled: Vec<rules::Tier>,
    ask_timeout: Option<Duration>,
}

impl Policy {
    /// Compiles and checks `tiers` (rules, project restrictions, `match`/`not_match` examples).
    ///
    /// # Errors
    ///
    /// The first problem found, naming its tier's file, the key and the reason.
    pub fn new(tiers: Vec<TierSource>) -> Result<Self, PolicyError> {
        let compiled = tiers.iter().map(rules::compile).collect::<Result<_, _>>()?;
        let ask_timeout = tiers
            .iter()
            .filter_map(|t| t.policy.ask_timeout)
            .min()
            .map(Duration::from_secs);
        Ok(Self {
            tiers,
            compiled,
            ask_timeout,
        })
    }

    /// A policy with no tiers: everything is allowed.
    pub fn empty() -> Self {
        Self::default()
    }

    /// Whether no tier is loaded (every line is allowed without judging).
    pub fn is_empty(&self) -> bool {
        self.tiers.is_empty()
    }

    /// The tiers as loaded (what a far side is sent).
    pub fn tiers(&self) -> &[TierSource] {
        &self.tiers
    }

    /// How long an approval request waits (the shortest of the tiers', else 300 s).
    pub fn ask_timeout(&self) -> Duration {
        self.ask_timeout.unwrap_or(DEFAULT_ASK_TIMEOUT)
    }

    /// Judges `line`, with what the session remembers.
    pub fn judge(&self, line: &str, memory: &SessionMemory) -> Judgement {
        judge::judge(&self.compiled, line, memory)
    }
}
