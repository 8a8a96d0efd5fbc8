//! Approval requests answered by the client through elicitation: a client that declared the
//! `elicitation` capability (form mode) gets an `elicitation/create` request naming the command
//! and why it needs a yes, with a one-field form (`decision`: `allow`, `allow_session`,
//! `deny`). Declining or cancelling the form denies the command. A request that the session
//! resolves otherwise (its timeout, the call's abort) is withdrawn with
//! `notifications/cancelled`, so the client closes its form.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use agentsh_protocol::{
    Answerer, ApprovalAnswer, ApprovalDecision, ApprovalRequest, ApprovalResolution,
};
use agentsh_seam::{Approver, BoxFuture, lock};
use rmcp::model::{
    CancelledNotificationParam, ClientResult, ConstTitle, ElicitRequest, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationSchema, EnumSchema, LegacyEnumSchema,
    PrimitiveSchemaDefinition, ProtocolVersion, RequestId, ServerRequest, SingleSelectEnumSchema,
    TitledSingleSelectEnumSchema,
};
use rmcp::service::{PeerRequestOptions, RequestContext};
use rmcp::{Peer, RoleServer};
use serde_json::Value;

/// The form's one field.
const DECISION_FIELD: &str = "decision";

/// The answers the form offers, with the titles a client shows for them.
const CHOICES: [(ApprovalDecision, &str); 3] = [
    (ApprovalDecision::Allow, "Allow once"),
    (ApprovalDecision::AllowSession, "Allow for this session"),
    (ApprovalDecision::Deny, "Deny"),
];

/// The client of one call, asked through elicitation.
pub(crate) struct Elicitation {
    peer: Peer<RoleServer>,
    /// Whether the client reads titled enums (`oneOf` of `const`/`title`, protocol
    /// 2025-11-25); older ones read `enum` with `enumNames`.
    titled: bool,
    /// The elicitation request of each approval request that waits for the client.
    waiting: Arc<Mutex<HashMap<String, RequestId>>>,
}

impl Elicitation {
    /// The approver of a call: `None` when the client did not declare form elicitation, or
    /// speaks a protocol on which a server sends no requests.
    pub(crate) fn for_call(context: &RequestContext<RoleServer>) -> Option<Arc<dyn Approver>> {
        let version = context.protocol_version()?;
        if version >= ProtocolVersion::V_2026_07_28 {
            return None;
        }
        let info = context.peer.peer_info()?;
        let elicitation = info.capabilities.elicitation.as_ref()?;
        // A capability that names no mode is form mode (the first protocol with elicitation
        // had only that one).
        let form = elicitation.form.is_some() || elicitation.url.is_none();
        form.then(|| {
            Arc::new(Self {
                peer: context.peer.clone(),
                titled: version >= ProtocolVersion::V_2025_11_25,
                waiting: Arc::new(Mutex::new(HashMap::new())),
            }) as Arc<dyn Approver>
        })
    }
}

impl Approver for Elicitation {
    fn ask(&self, request: &ApprovalRequest) -> BoxFuture<'static, Option<ApprovalAnswer>> {
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message(request),
            requested_schema: form(self.titled),
        };
        let peer = self.peer.clone();
        let waiting = Arc::clone(&self.waiting);
        let request_id = request.request_id.clone();
        Box::pin(async move {
            let sent = peer
                .send_cancellable_request(
                    ServerRequest::ElicitRequest(ElicitRequest::new(params)),
                    PeerRequestOptions::no_options(),
                )
                .await;
            let handle = match sent {
                Ok(handle) => handle,
                Err(err) => {
                    tracing::warn!("could not send the approval request to the MCP client: {err}");
                    return None;
                }
            };
            lock(&waiting).insert(request_id.clone(), handle.id.clone());
            let response = handle.await_response().await;
            lock(&waiting).remove(&request_id);
            match response {
                Ok(ClientResult::ElicitResult(result)) => Some(ApprovalAnswer {
                    decision: decision(&result),
                    answered_by: Answerer::Mcp,
                }),
                Ok(other) => {
                    tracing::warn!("the MCP client answered an elicitation with {other:?}");
                    None
                }
                Err(err) => {
                    tracing::warn!("the MCP client did not answer the approval request: {err}");
                    None
                }
            }
        })
    }

    fn resolved(&self, request_id: &str, resolution: ApprovalResolution) {
        // Answered by the client itself: nothing waits. Otherwise its form is withdrawn.
        let Some(elicitation) = lock(&self.waiting).remove(request_id) else {
            return;
        };
        let reason = match resolution {
            ApprovalResolution::TimedOut => "the approval request timed out",
            ApprovalResolution::Aborted => "the call was aborted",
            ApprovalResolution::Answered(_) | ApprovalResolution::Unanswered => {
                "the approval request was resolved"
            }
        };
        let peer = self.peer.clone();
        let param = CancelledNotificationParam::new(Some(elicitation), Some(reason.to_owned()));
        tokio::spawn(async move {
            let _ = peer.notify_cancelled(param).await;
        });
    }
}

/// What the client shows: the command, then each segment that needs a yes and why.
fn message(request: &ApprovalRequest) -> String {
    let mut text = format!(
        "Allow agentsh to run this command?\n\n{}\n",
        request.command
    );
    if !request.segments.is_empty() {
        text.push_str("\nIt needs approval because:\n");
        for segment in &request.segments {
            // Writing to a String cannot fail.
            let _ = writeln!(text, "- {}: {}", segment.command, segment.reason);
        }
    }
    text
}

/// The form: one required field, `decision`.
fn form(titled: bool) -> ElicitationSchema {
    let values = CHOICES
        .iter()
        .map(|(decision, _)| decision.as_str().to_owned());
    let field = if titled {
        let mut field = TitledSingleSelectEnumSchema::new(
            CHOICES
                .iter()
                .map(|(decision, title)| ConstTitle::new(decision.as_str(), *title))
                .collect(),
        );
        field.title = Some("Decision".into());
        EnumSchema::Single(SingleSelectEnumSchema::Titled(field))
    } else {
        let mut field = LegacyEnumSchema::new(values.collect());
        field.title = Some("Decision".into());
        field.enum_names = Some(
            CHOICES
                .iter()
                .map(|(_, title)| (*title).to_owned())
                .collect(),
        );
        EnumSchema::Legacy(field)
    };
    ElicitationSchema::new(BTreeMap::from([(
        DECISION_FIELD.to_owned(),
        PrimitiveSchemaDefinition::Enum(field),
    )]))
    .with_required(vec![DECISION_FIELD.to_owned()])
}

/// The decision an elicitation result gives: the form's `decision` when accepted; decline and
/// cancel deny, and so does an accepted form without a decision agentsh knows (a yes must be
/// given).
fn decision(result: &ElicitResult) -> ApprovalDecision {
    if result.action != ElicitationAction::Accept {
        return ApprovalDecision::Deny;
    }
    let chosen = result
        .content
        .as_ref()
        .and_then(|content| content.get(DECISION_FIELD))
        .and_then(Value::as_str);
    CHOICES
        .iter()
        .map(|(decision, _)| *decision)
        .find(|decision| Some(decision.as_str()) == chosen)
        .unwrap_or(ApprovalDecision::Deny)
}

#[cfg(test)]
mod tests {
    use agentsh_protocol::AskedSegment;
    use serde_json::json;

    use super::*;

    fn result(action: ElicitationAction, content: Option<Value>) -> ElicitResult {
        let result = ElicitResult::new(action);
        match content {
            Some(content) => result.with_content(content),
            None => result,
        }
    }

    #[test]
    fn an_accepted_form_gives_its_decision_and_anything_else_denies() {
        let accepted = |content| decision(&result(ElicitationAction::Accept, Some(content)));
        assert_eq!(
            accepted(json!({"decision": "allow"})),
            ApprovalDecision::Allow
        );
        assert_eq!(
            accepted(json!({"decision": "allow_session"})),
            ApprovalDecision::AllowSession
        );
        assert_eq!(
            accepted(json!({"decision": "deny"})),
            ApprovalDecision::Deny
        );
        assert_eq!(accepted(json!({"decision": "yes"})), ApprovalDecision::Deny);
        assert_eq!(accepted(json!({})), ApprovalDecision::Deny);
        for action in [ElicitationAction::Decline, ElicitationAction::Cancel] {
            let content = Some(json!({"decision": "allow"}));
            assert_eq!(decision(&result(action, content)), ApprovalDecision::Deny);
        }
    }

    #[test]
    fn the_form_has_one_required_decision_with_titles() {
        let titled = serde_json::to_value(form(true)).expect("serialises");
        assert_eq!(titled["required"], json!(["decision"]));
        assert_eq!(
            titled["properties"]["decision"]["oneOf"],
            json!([
                {"const": "allow", "title": "Allow once"},
                {"const": "allow_session", "title": "Allow for this session"},
                {"const": "deny", "title": "Deny"},
            ])
        );
        let legacy = serde_json::to_value(form(false)).expect("serialises");
        let field = &legacy["properties"]["decision"];
        assert_eq!(field["enum"], json!(["allow", "allow_session", "deny"]));
        assert_eq!(
            field["enumNames"],
            json!(["Allow once", "Allow for this session", "Deny"])
        );
    }

    #[test]
    fn the_message_names_the_command_and_each_reason() {
        let request = ApprovalRequest {
            request_id: "approval-1".into(),
            tool_call_id: "mcp".into(),
            command: "git push && rm -rf build".into(),
            segments: vec![
                AskedSegment {
                    command: "git push".into(),
                    reason: "Pushing publishes work.".into(),
                },
                AskedSegment {
                    command: "rm -rf build".into(),
                    reason: "no rule allows it".into(),
                },
            ],
        };
        assert_eq!(
            message(&request),
            "Allow agentsh to run this command?\n\ngit push && rm -rf build\n\n\
             It needs approval because:\n\
             - git push: Pushing publishes work.\n\
             - rm -rf build: no rule allows it\n"
        );
    }
}
