//! Helpers shared by the test modules: policies written as TOML, judgements rendered as text.

use agentsh_bash_policy::{Judgement, Policy, PolicyConfig, PolicyError, TierKind, TierSource};
use serde::Deserialize;

/// A tier from the text of its file (a `[policy]` table), named `<kind>.toml`.
pub fn tier(kind: TierKind, text: &str) -> TierSource {
    #[derive(Deserialize)]
    struct File {
        policy: PolicyConfig,
    }
    let file: File = toml::from_str(text).unwrap_or_else(|err| panic!("bad test TOML: {err}"));
    TierSource {
        kind,
        origin: format!("{kind}.toml"),
        policy: file.policy,
    }
}

/// Loads `tiers`, which must be valid.
pub fn policy(tiers: &[(TierKind, &str)]) -> Policy {
    load(tiers).unwrap_or_else(|err| panic!("the test policy must load: {err}"))
}

/// Loads `tiers`.
pub fn load(tiers: &[(TierKind, &str)]) -> Result<Policy, PolicyError> {
    Policy::new(tiers.iter().map(|(kind, text)| tier(*kind, text)).collect())
}

/// `decision: words=decision; …`, a `?` after the words of an unknown segment.
pub fn render(judgement: &Judgement) -> String {
    let segments: Vec<String> = judgement
        .segments
        .iter()
        .map(|s| {
            let unknown = if s.unknown { "?" } else { "" };
            format!("{}{unknown}={}", s.words, s.decision)
        })
        .collect();
    format!("{}: {}", judgement.decision, segments.join("; "))
}
