//! Rule definitions, the default rules, and compilation with diagnostics.

use std::fmt;

use regex::{Regex, RegexBuilder};
use serde::{Deserialize, Serialize};

/// One interception rule as configured (`[[bash_interceptor.rules]]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// A regular expression in the `regex` crate's syntax (no look-around, no back-references).
    pub pattern: String,
    /// The tool the model should use instead; the rule applies only when it is available.
    pub tool: String,
    /// Why, shown to the model after `Blocked: `.
    pub message: String,
    /// Regex flags; only `i` (case-insensitive) is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flags: Option<String>,
}

impl Rule {
    /// A rule without flags.
    pub fn new(pattern: &str, tool: &str, message: &str) -> Self {
        Self {
            pattern: pattern.to_owned(),
            tool: tool.to_owned(),
            message: message.to_owned(),
            flags: None,
        }
    }
}

/// The seven rules that apply when interception is enabled and no user rules are configured.
const DEFAULT_RULES: [(&str, &str, &str); 7] = [
    (
        r"^\s*(cat|head|tail|less|more)\s+",
        "read",
        "Use the `read` tool instead of cat/head/tail. It provides better context and handles binary files.",
    ),
    (
        r"^\s*(grep|rg|ripgrep|ag|ack)\s+",
        "grep",
        "Use the `grep` tool instead of grep/rg. It respects .gitignore and provides structured output.",
    ),
    (
        r"^\s*(find|fd|locate)\s+.*(-name|-iname|-type|--type|-glob)",
        "find",
        "Use the `find` tool instead of find/fd. It respects .gitignore and is faster for glob patterns.",
    ),
    (
        r"^\s*sed\s+(-i|--in-place)",
        "edit",
        "Use the `edit` tool instead of sed -i. It provides diff preview and fuzzy matching.",
    ),
    (
        r"^\s*perl\s+.*-[pn]?i",
        "edit",
        "Use the `edit` tool instead of perl -i. It provides diff preview and fuzzy matching.",
    ),
    (
        r"^\s*awk\s+.*-i\s+inplace",
        "edit",
        "Use the `edit` tool instead of awk -i inplace. It provides diff preview and fuzzy matching.",
    ),
    (
        r"^\s*(echo|printf|cat\s*<<)\s+.*[^|]>\s*\S",
        "write",
        "Use the `write` tool instead of echo/cat redirection. It handles encoding and provides confirmation.",
    ),
];

/// The seven default rules, in order: `cat`/`head`/`tail`/`less`/`more` → `read`,
/// `grep`/`rg`/`ag`/`ack` → `grep`, `find`/`fd`/`locate` with a name or type test → `find`,
/// `sed -i`, `perl -i` and `awk -i inplace` → `edit`, `echo`/`printf`/`cat <<` redirected to a
/// file → `write`.
pub fn default_rules() -> Vec<Rule> {
    DEFAULT_RULES
        .iter()
        .map(|(pattern, tool, message)| Rule::new(pattern, tool, message))
        .collect()
}

/// An invalid rule, skipped and reported as a warning (never a fatal configuration error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleDiagnostic {
    /// Index of the rule in the configured list.
    pub index: usize,
    /// The rule's pattern as configured.
    pub pattern: String,
    /// What is wrong with it.
    pub error: String,
}

impl fmt::Display for RuleDiagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bash_interceptor.rules[{}] (pattern `{}`) skipped: {}",
            self.index, self.pattern, self.error
        )
    }
}

/// A rule whose pattern compiled, with its index in the effective list.
#[derive(Debug, Clone)]
pub(crate) struct CompiledRule {
    pub(crate) index: usize,
    pub(crate) regex: Regex,
    pub(crate) rule: Rule,
}

/// Compiles `rules`, returning the usable ones and a diagnostic for each invalid one.
pub(crate) fn compile(rules: &[Rule]) -> (Vec<CompiledRule>, Vec<RuleDiagnostic>) {
    let mut compiled = Vec::with_capacity(rules.len());
    let mut diagnostics = Vec::new();
    for (index, rule) in rules.iter().enumerate() {
        match compile_one(rule) {
            Ok(regex) => compiled.push(CompiledRule {
                index,
                regex,
                rule: rule.clone(),
            }),
            Err(error) => diagnostics.push(RuleDiagnostic {
                index,
                pattern: rule.pattern.clone(),
                error,
            }),
        }
    }
    (compiled, diagnostics)
}

fn compile_one(rule: &Rule) -> Result<Regex, String> {
    if rule.tool.trim().is_empty() {
        return Err("empty tool name".to_owned());
    }
    let mut case_insensitive = false;
    for flag in rule.flags.as_deref().unwrap_or("").chars() {
        match flag {
            'i' => case_insensitive = true,
            other => return Err(format!("unknown flag `{other}` (only `i` is supported)")),
        }
    }
    RegexBuilder::new(&rule.pattern)
        .case_insensitive(case_insensitive)
        .build()
        .map_err(|err| format!("invalid regex: {err}"))
}
