//! User shapers: `[[shape.filters]]` entries of the configuration, for programs agentsh does
//! not know or to replace a built-in shaper. Checked at load: every pattern compiles, every
//! `match` example is a command line the filter applies to, every `not_match` one is not.

use regex::{Regex, RegexSet};
use serde::{Deserialize, Serialize};

use crate::engine::{Label, Shaper, Verdict};
use crate::select::{Target, select};

/// One `[[shape.filters]]` entry as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilterConfig {
    /// The program (its base name: `terraform`).
    pub program: String,
    /// Its subcommand, when the filter is for one only (`plan`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subcommand: Option<String>,
    /// Lines left out without a marker (unless they are diagnostics or match `keep`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drop: Vec<String>,
    /// Lines always kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keep: Vec<String>,
    /// A run of lines matching one of these becomes one marker with its count.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub collapse: Vec<String>,
    /// Outputs smaller than this are not shaped (default 1024).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_bytes: Option<u64>,
    /// Command lines the filter must apply to (checked at load).
    #[serde(default, rename = "match", skip_serializing_if = "Vec::is_empty")]
    pub matches: Vec<String>,
    /// Command lines the filter must not apply to (checked at load).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_match: Vec<String>,
}

/// A filter that cannot be used: the key (`shape.filters[0].drop[1]`) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError {
    /// The key as a dotted path.
    pub key: String,
    /// What is wrong.
    pub reason: String,
}

impl std::fmt::Display for FilterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.key, self.reason)
    }
}

impl std::error::Error for FilterError {}

/// A checked user filter.
#[derive(Debug, Clone)]
pub struct Filter {
    program: String,
    subcommand: Option<String>,
    drop: RegexSet,
    keep: RegexSet,
    /// Each pattern, and the marker text of its runs.
    collapse: Vec<(Regex, String)>,
    min_bytes: u64,
}

impl Filter {
    /// Compiles and checks entry `index` of `[[shape.filters]]`.
    pub fn new(config: &FilterConfig, index: usize) -> Result<Self, FilterError> {
        let key = |field: &str| format!("shape.filters[{index}].{field}");
        if config.program.is_empty() || config.program.contains(['/', ' ']) {
            return Err(FilterError {
                key: key("program"),
                reason: format!(
                    "must be a program's name (no path, no spaces), got {:?}",
                    config.program
                ),
            });
        }
        let set = |field: &str, patterns: &[String]| {
            for (i, pattern) in patterns.iter().enumerate() {
                Regex::new(pattern).map_err(|err| FilterError {
                    key: format!("{}[{i}]", key(field)),
                    reason: format!("not a valid regex: {err}"),
                })?;
            }
            RegexSet::new(patterns).map_err(|err| FilterError {
                key: key(field),
                reason: err.to_string(),
            })
        };
        let drop = set("drop", &config.drop)?;
        let keep = set("keep", &config.keep)?;
        set("collapse", &config.collapse)?;
        let collapse = config
            .collapse
            .iter()
            .map(|pattern| {
                let regex = Regex::new(pattern).expect("checked above");
                (regex, format!("matching {pattern}"))
            })
            .collect();
        let filter = Self {
            program: config.program.clone(),
            subcommand: config.subcommand.clone(),
            drop,
            keep,
            collapse,
            min_bytes: config.min_bytes.unwrap_or(crate::MIN_BYTES),
        };
        for (i, example) in config.matches.iter().enumerate() {
            if !select(example).is_some_and(|t| filter.applies(&t)) {
                return Err(FilterError {
                    key: format!("{}[{i}]", key("match")),
                    reason: format!("the filter does not apply to {example:?}"),
                });
            }
        }
        for (i, example) in config.not_match.iter().enumerate() {
            if select(example).is_some_and(|t| filter.applies(&t)) {
                return Err(FilterError {
                    key: format!("{}[{i}]", key("not_match")),
                    reason: format!("the filter applies to {example:?}"),
                });
            }
        }
        Ok(filter)
    }

    /// Whether the filter shapes what `target` prints. For a program whose global options
    /// agentsh does not know, its subcommand is its first word that is not an option.
    pub fn applies(&self, target: &Target) -> bool {
        let subcommand = target.subcommand.as_deref().or_else(|| {
            target
                .args
                .iter()
                .find(|a| !a.starts_with('-'))
                .map(String::as_str)
        });
        target.program == self.program
            && self
                .subcommand
                .as_deref()
                .is_none_or(|sub| subcommand == Some(sub))
    }

    /// `<program>[ <subcommand>]`, as results name what the filter shaped.
    pub(crate) fn name(&self) -> String {
        match &self.subcommand {
            Some(sub) => format!("{} {sub}", self.program),
            None => self.program.clone(),
        }
    }

    pub(crate) fn min_bytes(&self) -> u64 {
        self.min_bytes
    }

    pub(crate) fn shaper(&self) -> FilterShaper {
        FilterShaper(self.clone())
    }
}

/// A filter at work on one output.
pub(crate) struct FilterShaper(Filter);

impl Shaper for FilterShaper {
    fn line(&mut self, line: &str) -> Verdict<'_> {
        let filter = &self.0;
        if filter.keep.is_match(line) {
            return Verdict::Keep;
        }
        if let Some((_, label)) = filter.collapse.iter().find(|(re, _)| re.is_match(line)) {
            return Verdict::Drop(Label::Lines(label));
        }
        if filter.drop.is_match(line) {
            return Verdict::Drop(Label::Quiet);
        }
        Verdict::Keep
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Shaping, shape_text};

    fn config() -> FilterConfig {
        FilterConfig {
            program: "terraform".into(),
            subcommand: Some("plan".into()),
            drop: vec![r"^\s*$".into()],
            keep: vec![r"^Plan:".into()],
            collapse: vec![r"Refreshing state\.\.\.".into()],
            min_bytes: Some(0),
            matches: vec![
                "terraform plan -out x".into(),
                "cd infra && terraform plan".into(),
            ],
            not_match: vec!["terraform apply".into(), "terraform plan | cat".into()],
        }
    }

    #[test]
    fn a_filter_drops_collapses_and_keeps() {
        let filter = Filter::new(&config(), 0).unwrap();
        let shaping = Shaping::new(vec![filter], Vec::new());
        let output =
            "a: Refreshing state...\nb: Refreshing state...\n\nError: boom\n\nPlan: 1 to add\n";
        let shaped = shape_text(&shaping, "terraform plan", output, 1 << 20).unwrap();
        assert_eq!(
            shaped.text,
            "[… 2 lines: matching Refreshing state\\.\\.\\. …]\nError: boom\nPlan: 1 to add"
        );
        assert_eq!(shaped.left_out(), 4);
    }

    #[test]
    fn examples_are_checked_at_load() {
        let mut bad = config();
        bad.matches.push("terraform apply".into());
        let err = Filter::new(&bad, 2).unwrap_err();
        assert_eq!(err.key, "shape.filters[2].match[2]");
        assert_eq!(
            err.reason,
            "the filter does not apply to \"terraform apply\""
        );

        let mut bad = config();
        bad.not_match.push("terraform plan".into());
        let err = Filter::new(&bad, 0).unwrap_err();
        assert_eq!(err.key, "shape.filters[0].not_match[2]");

        let mut bad = config();
        bad.drop.push("(".into());
        let err = Filter::new(&bad, 0).unwrap_err();
        assert_eq!(err.key, "shape.filters[0].drop[1]");
        assert!(
            err.reason.starts_with("not a valid regex"),
            "{}",
            err.reason
        );

        let mut bad = config();
        bad.program = "/usr/bin/terraform".into();
        assert_eq!(
            Filter::new(&bad, 0).unwrap_err().key,
            "shape.filters[0].program"
        );
    }
}
