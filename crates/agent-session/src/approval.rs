//! The approval policy at the session: every command the model runs (and every user command
//! that arrived where any process could send it) is judged before anything runs, in the order
//! the calls arrived; a command the policy asks about waits for whoever drives the session.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use agentsh_bash_policy::{Decision, Judgement, Policy, SessionMemory};
use agentsh_protocol::{
    ApprovalDecision, ApprovalRequest, ApprovalResolution, AskedSegment, approval_declined_text,
    approval_timeout_text, approval_unavailable_text, policy_denied_text,
};
use agentsh_seam::Approver;
use agentsh_shell_executor::CancellationToken;

/// The session's policy and what it remembers between lines.
pub(crate) struct ApprovalGate {
    policy: Arc<Policy>,
    /// Held while a line is judged and its approval request waits: calls are judged in the
    /// order they arrived (tokio's mutex is fair), and an "allow for the session" answer
    /// applies to the calls after it.
    memory: tokio::sync::Mutex<SessionMemory>,
    next_request: AtomicU64,
}

/// What the policy let run, for the audit log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Verdict {
    /// The policy's decision on the line (before any answer).
    pub decision: Decision,
    /// The rule that decided the strictest segment, as `policy check` names it.
    pub rule: Option<String>,
    /// How its approval request ended, when it was asked.
    pub answer: Option<ApprovalResolution>,
}

impl Verdict {
    /// The verdict on a command the policy does not judge (a person's own): allowed.
    pub(crate) fn unjudged() -> Self {
        Self {
            decision: Decision::Allow,
            rule: None,
            answer: None,
        }
    }
}

/// Why a command did not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Denied (by the policy, the person, a timeout, or nobody to ask): the tool result's text.
    Denied { text: String, verdict: Verdict },
    /// The call was aborted while its approval request waited.
    Aborted { verdict: Verdict },
}

impl Refusal {
    /// What the policy decided, for the audit log.
    pub(crate) fn verdict(&self) -> &Verdict {
        match self {
            Self::Denied { verdict, .. } | Self::Aborted { verdict } => verdict,
        }
    }

    /// The text the caller is answered with: the denial's, or `Command aborted`.
    pub(crate) fn into_text(self) -> String {
        match self {
            Self::Denied { text, .. } => text,
            Self::Aborted { .. } => agentsh_protocol::COMMAND_ABORTED.to_owned(),
        }
    }
}

impl ApprovalGate {
    pub(crate) fn new(policy: Policy) -> Self {
        Self {
            policy: Arc::new(policy),
            memory: tokio::sync::Mutex::new(SessionMemory::new()),
            next_request: AtomicU64::new(1),
        }
    }

    /// The policy.
    pub(crate) fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Judges `command` (`shown` is how the model wrote it, for the texts and the request) of
    /// call `call_id`; asks `approver` when the policy says ask. `Ok` when it may run.
    pub(crate) async fn check(
        &self,
        call_id: &str,
        command: &str,
        shown: &str,
        approver: Option<&Arc<dyn Approver>>,
        cancel: &CancellationToken,
    ) -> Result<Verdict, Refusal> {
        if self.policy.is_empty() {
            return Ok(Verdict::unjudged());
        }
        let mut memory = tokio::select! {
            memory = self.memory.lock() => memory,
            () = cancel.cancelled() => {
                return Err(Refusal::Aborted { verdict: Verdict::unjudged() });
            }
        };
        let judgement = self.policy.judge(command, &memory);
        let mut verdict = Verdict {
            decision: judgement.decision,
            rule: deciding_rule(&judgement),
            answer: None,
        };
        match judgement.decision {
            Decision::Allow => {
                memory.record(&judgement);
                Ok(verdict)
            }
            Decision::Deny => {
                let segment = judgement
                    .first_denied()
                    .map_or((shown, ""), |s| (s.text.as_str(), s.reason.as_str()));
                Err(Refusal::Denied {
                    text: policy_denied_text(segment.0, segment.1),
                    verdict,
                })
            }
            Decision::Ask => {
                let unavailable = || {
                    let segment = judgement
                        .asked()
                        .next()
                        .map_or((shown, ""), |s| (s.text.as_str(), s.reason.as_str()));
                    approval_unavailable_text(segment.0, segment.1)
                };
                let Some(approver) = approver else {
                    return Err(Refusal::Denied {
                        text: unavailable(),
                        verdict,
                    });
                };
                let request = ApprovalRequest {
                    request_id: format!(
                        "approval-{}",
                        self.next_request.fetch_add(1, Ordering::Relaxed)
                    ),
                    tool_call_id: call_id.to_owned(),
                    command: shown.to_owned(),
                    segments: judgement
                        .asked()
                        .map(|segment| AskedSegment {
                            command: segment.text.clone(),
                            reason: segment.reason.clone(),
                        })
                        .collect(),
                };
                let timeout = self.policy.ask_timeout();
                let asked = approver.ask(&request);
                let resolution = tokio::select! {
                    answer = asked => answer.map(ApprovalResolution::Answered),
                    () = tokio::time::sleep(timeout) => Some(ApprovalResolution::TimedOut),
                    () = cancel.cancelled() => Some(ApprovalResolution::Aborted),
                };
                // `None`: everyone who could have answered went away.
                let resolution = resolution.unwrap_or(ApprovalResolution::Unanswered);
                approver.resolved(&request.request_id, resolution);
                verdict.answer = Some(resolution);
                match resolution {
                    ApprovalResolution::Answered(answer) => match answer.decision {
                        ApprovalDecision::Allow => {
                            memory.record(&judgement);
                            Ok(verdict)
                        }
                        ApprovalDecision::AllowSession => {
                            memory.allow_for_session(&judgement);
                            memory.record(&judgement);
                            Ok(verdict)
                        }
                        ApprovalDecision::Deny => Err(Refusal::Denied {
                            text: approval_declined_text(shown),
                            verdict,
                        }),
                    },
                    ApprovalResolution::TimedOut => Err(Refusal::Denied {
                        text: approval_timeout_text(duration_seconds(timeout), shown),
                        verdict,
                    }),
                    ApprovalResolution::Aborted => Err(Refusal::Aborted { verdict }),
                    ApprovalResolution::Unanswered => Err(Refusal::Denied {
                        text: unavailable(),
                        verdict,
                    }),
                }
            }
        }
    }
}

/// Whole seconds of `timeout`, at least 1.
fn duration_seconds(timeout: Duration) -> u64 {
    timeout.as_secs().max(1)
}

/// The rule that decided the line: that of the first segment with the line's decision.
fn deciding_rule(judgement: &Judgement) -> Option<String> {
    judgement
        .segments
        .iter()
        .find(|segment| segment.decision == judgement.decision)?
        .decided_by_name()
}
