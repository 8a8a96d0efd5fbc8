//! Who answers a session's approval requests: the [`Approver`] a surface gives a call, and
//! [`FirstAnswer`], several of them asked at once (the interactive mode and a `--listen`
//! client: the first answer wins).

use std::sync::Arc;

use agentsh_protocol::{ApprovalAnswer, ApprovalRequest, ApprovalResolution};

use crate::BoxFuture;

/// Whoever can answer a call's approval requests: an RPC client that said
/// `capabilities.approvals`, an MCP client with elicitation, the person at the interactive
/// mode, or the local client of a far side.
pub trait Approver: Send + Sync {
    /// Asks `request`. The future ends with the answer, or `None` when this approver cannot
    /// answer after all (its client went away, declined to show the question). The session
    /// drops the future when the request is resolved otherwise (a timeout, an abort, another
    /// approver's answer), and then calls [`resolved`](Self::resolved).
    fn ask(&self, request: &ApprovalRequest) -> BoxFuture<'static, Option<ApprovalAnswer>>;

    /// Request `request_id` was resolved: answered (by anyone), timed out, or its call aborted.
    /// Called once per request asked, after the future of [`ask`](Self::ask) ended or was
    /// dropped.
    fn resolved(&self, request_id: &str, resolution: ApprovalResolution);
}

/// Several approvers asked at once: the first answer wins, and every one of them learns the
/// resolution. An approver whose future ends with `None` drops out; when all have, nobody
/// answered (`None`).
#[derive(Clone, Default)]
pub struct FirstAnswer(pub Vec<Arc<dyn Approver>>);

impl FirstAnswer {
    /// One approver from `approvers`: `None` when there are none, the one itself when there is
    /// one, else all of them, the first answer winning.
    pub fn of(approvers: Vec<Arc<dyn Approver>>) -> Option<Arc<dyn Approver>> {
        match approvers.len() {
            0 => None,
            1 => approvers.into_iter().next(),
            _ => Some(Arc::new(Self(approvers))),
        }
    }
}

impl Approver for FirstAnswer {
    fn ask(&self, request: &ApprovalRequest) -> BoxFuture<'static, Option<ApprovalAnswer>> {
        let mut pending: Vec<_> = self
            .0
            .iter()
            .map(|approver| approver.ask(request))
            .collect();
        Box::pin(async move {
            while !pending.is_empty() {
                let (answer, index) = std::future::poll_fn(|cx| {
                    for (index, future) in pending.iter_mut().enumerate() {
                        if let std::task::Poll::Ready(answer) = future.as_mut().poll(cx) {
                            return std::task::Poll::Ready((answer, index));
                        }
                    }
                    std::task::Poll::Pending
                })
                .await;
                if answer.is_some() {
                    return answer;
                }
                drop(pending.swap_remove(index));
            }
            None
        })
    }

    fn resolved(&self, request_id: &str, resolution: ApprovalResolution) {
        for approver in &self.0 {
            approver.resolved(request_id, resolution);
        }
    }
}

impl std::fmt::Debug for FirstAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FirstAnswer({} approvers)", self.0.len())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use agentsh_protocol::{Answerer, ApprovalDecision};

    use super::*;

    /// Answers after `delay_ms` with `answer`, and records what it was told.
    struct Fixed {
        delay_ms: u64,
        answer: Option<ApprovalAnswer>,
        resolved: Mutex<Vec<(String, ApprovalResolution)>>,
    }

    impl Approver for Fixed {
        fn ask(&self, _request: &ApprovalRequest) -> BoxFuture<'static, Option<ApprovalAnswer>> {
            let (delay, answer) = (self.delay_ms, self.answer);
            Box::pin(async move {
                tokio::time::sleep(std::time::Duration::from_millis(delay)).await;
                answer
            })
        }

        fn resolved(&self, request_id: &str, resolution: ApprovalResolution) {
            crate::lock(&self.resolved).push((request_id.to_owned(), resolution));
        }
    }

    fn fixed(delay_ms: u64, answer: Option<(ApprovalDecision, Answerer)>) -> Arc<Fixed> {
        Arc::new(Fixed {
            delay_ms,
            answer: answer.map(|(decision, answered_by)| ApprovalAnswer {
                decision,
                answered_by,
            }),
            resolved: Mutex::new(Vec::new()),
        })
    }

    fn request() -> ApprovalRequest {
        ApprovalRequest {
            request_id: "r1".into(),
            tool_call_id: "c1".into(),
            command: "git push".into(),
            segments: Vec::new(),
        }
    }

    #[tokio::test]
    async fn the_first_answer_wins_and_every_approver_learns_it() {
        let slow = fixed(50, Some((ApprovalDecision::Deny, Answerer::Rpc)));
        let fast = fixed(10, Some((ApprovalDecision::Allow, Answerer::Interactive)));
        let both = FirstAnswer(vec![slow.clone(), fast.clone()]);
        let answer = both.ask(&request()).await.expect("answered");
        assert_eq!(answer.decision, ApprovalDecision::Allow);
        assert_eq!(answer.answered_by, Answerer::Interactive);
        both.resolved("r1", ApprovalResolution::Answered(answer));
        for approver in [&slow, &fast] {
            assert_eq!(
                *crate::lock(&approver.resolved),
                [("r1".to_owned(), ApprovalResolution::Answered(answer))]
            );
        }
    }

    #[tokio::test]
    async fn an_approver_that_gives_up_leaves_the_others_to_answer() {
        let gone = fixed(1, None);
        let person = fixed(
            30,
            Some((ApprovalDecision::AllowSession, Answerer::Interactive)),
        );
        let answer = FirstAnswer(vec![gone, person]).ask(&request()).await;
        assert_eq!(
            answer.map(|a| a.decision),
            Some(ApprovalDecision::AllowSession)
        );
        let nobody = FirstAnswer(vec![fixed(1, None), fixed(2, None)]);
        assert_eq!(nobody.ask(&request()).await, None);
    }
}
