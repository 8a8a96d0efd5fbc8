//! Judging a line: each segment, as the segmenter finds it, by every tier; the strictest
//! decision wins; session memory turns asked segments allowed for the session into allowed
//! ones, and makes calls of tainted functions and aliases unknown.

use std::collections::HashMap;

use crate::rules::Tier;
use crate::segment::{RawSegment, Segmenter, Sink};
use crate::{
    ABSTAIN_REASON, DecidedBy, Decision, Judgement, SESSION_REASON, Segment, SessionMemory,
};

/// Judges `line` under `tiers`, with what the session remembers.
pub(crate) fn judge(tiers: &[Tier], line: &str, memory: &SessionMemory) -> Judgement {
    let mut judge = Judge {
        tiers,
        memory,
        segments: Vec::new(),
        definitions: Vec::new(),
        defined: HashMap::new(),
    };
    Segmenter::new(&mut judge).program(line);
    let decision = judge
        .segments
        .iter()
        .map(|s| s.decision)
        .max()
        .unwrap_or(Decision::Allow);
    Judgement {
        decision,
        segments: judge.segments,
        definitions: judge.definitions,
    }
}

struct Judge<'a> {
    tiers: &'a [Tier],
    memory: &'a SessionMemory,
    segments: Vec<Segment>,
    definitions: Vec<(String, bool)>,
    /// Functions and aliases this line defined so far: whether each is tainted (these override
    /// what the session remembers for later calls in the same line).
    defined: HashMap<String, bool>,
}

impl Sink for Judge<'_> {
    fn segment(&mut self, raw: RawSegment) {
        let mut best: Option<(Decision, &str, DecidedBy)> = None;
        let mut unknown = raw.unknown;
        for tier in self.tiers {
            let Some(decided) = tier.decide(&raw) else {
                continue;
            };
            unknown |= decided.unknown;
            if best.as_ref().is_none_or(|(b, _, _)| decided.decision > *b) {
                let by = DecidedBy {
                    tier: tier.kind,
                    origin: tier.origin.clone(),
                    rule: decided.rule,
                };
                best = Some((decided.decision, decided.reason, by));
            }
        }
        let (mut decision, mut reason, mut decided_by) = match best {
            Some((decision, reason, by)) => (decision, reason, Some(by)),
            None => (Decision::Allow, ABSTAIN_REASON, None),
        };
        if decision == Decision::Ask && !unknown && self.memory.is_allowed(&raw.text) {
            decision = Decision::Allow;
            reason = SESSION_REASON;
            decided_by = None;
        }
        let global_options = raw
            .reading
            .map(|reading| reading.set_aside)
            .unwrap_or_default();
        self.segments.push(Segment {
            text: raw.text,
            words: raw.joined,
            decision,
            unknown,
            reason: reason.to_owned(),
            decided_by,
            global_options,
        });
    }

    fn is_tainted(&self, name: &str) -> bool {
        self.defined
            .get(name)
            .copied()
            .unwrap_or_else(|| self.memory.is_tainted(name))
    }

    fn mark(&self) -> usize {
        self.segments.len()
    }

    fn define(&mut self, name: &str, since: usize) {
        let tainted = self.segments[since..]
            .iter()
            .any(|s| s.unknown || s.decision != Decision::Allow);
        self.defined.insert(name.to_owned(), tainted);
        self.definitions.push((name.to_owned(), tainted));
    }
}
