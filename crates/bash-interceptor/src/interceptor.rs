//! Matching a command against compiled rules.

use std::sync::LazyLock;

use agentsh_protocol::{InterceptionDetails, blocked_text};

use crate::rules::{CompiledRule, Rule, RuleDiagnostic, compile, default_rules};

/// A set of compiled interception rules. Build it once per configuration and reuse it.
#[derive(Debug, Clone)]
pub struct Interceptor {
    rules: Vec<CompiledRule>,
}

/// Why a command was blocked: the matching rule and what to tell the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interception {
    /// Index of the rule in the effective list (the user's rules, or the defaults).
    pub rule: usize,
    /// The rule's pattern as configured.
    pub pattern: String,
    /// The tool the model should use instead.
    pub suggested_tool: String,
    /// The rule's message.
    pub message: String,
}

impl Interception {
    /// The tool error text: `Blocked: <message>\n\nOriginal command: <command>`.
    pub fn text(&self, command: &str) -> String {
        blocked_text(&self.message, command)
    }

    /// The structured `details.interception` value.
    pub fn details(&self) -> InterceptionDetails {
        InterceptionDetails {
            rule: self.rule,
            pattern: self.pattern.clone(),
            suggested_tool: self.suggested_tool.clone(),
        }
    }
}

static DEFAULT: LazyLock<Interceptor> = LazyLock::new(|| {
    let (rules, diagnostics) = compile(&default_rules());
    debug_assert!(diagnostics.is_empty(), "default rules must compile");
    Interceptor { rules }
});

impl Interceptor {
    /// Compiles the user's rules; with none configured, the default rules apply.
    ///
    /// Invalid rules are skipped and returned as diagnostics for the caller to report as
    /// warnings; the remaining rules keep their configured indices.
    pub fn new(user_rules: &[Rule]) -> (Self, Vec<RuleDiagnostic>) {
        if user_rules.is_empty() {
            return (Self::with_default_rules(), Vec::new());
        }
        let (rules, diagnostics) = compile(user_rules);
        (Self { rules }, diagnostics)
    }

    /// The default rules, compiled once per process.
    pub fn with_default_rules() -> Self {
        DEFAULT.clone()
    }

    /// Checks `command` against the rules. Pass the normalised command without its added
    /// subshell (`Normalized::unwrapped` of agentsh-bash-normalize), so `cat f | head -5` is still seen as `cat f`.
    ///
    /// A rule blocks when its regex matches the whole command or the first pipeline stage of any
    /// top-level list element, **and** its tool is among `tool_names`. Rules are tried in order;
    /// the first match wins.
    pub fn check<S: AsRef<str>>(&self, command: &str, tool_names: &[S]) -> Option<Interception> {
        let candidates = candidates(command);
        self.rules
            .iter()
            .filter(|compiled| {
                tool_names
                    .iter()
                    .any(|name| name.as_ref() == compiled.rule.tool)
            })
            .find(|compiled| candidates.iter().any(|text| compiled.regex.is_match(text)))
            .map(|compiled| Interception {
                rule: compiled.index,
                pattern: compiled.rule.pattern.clone(),
                suggested_tool: compiled.rule.tool.clone(),
                message: compiled.rule.message.clone(),
            })
    }
}

/// The texts a rule is matched against: the command itself, then the first pipeline stage of
/// each top-level list element.
fn candidates(command: &str) -> Vec<&str> {
    let mut texts = vec![command];
    for element in agentsh_bash_normalize::list_elements(command) {
        if !texts.contains(&element) {
            texts.push(element);
        }
    }
    texts
}
