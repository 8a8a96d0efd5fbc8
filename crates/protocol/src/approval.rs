//! Approval requests as plain data: what a session asks whoever drives it before a command the
//! policy says `ask` runs, the answers, and the texts of a command that did not run.

/// One segment of a command that needs a yes, with the rule's reason.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AskedSegment {
    /// The segment as written in the command.
    pub command: String,
    /// Why it needs a yes.
    pub reason: String,
}

/// What a session asks: `approval_request` on the RPC wire.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ApprovalRequest {
    /// The request's id, unique within the session.
    pub request_id: String,
    /// The call the command belongs to (a `bash` request's own id for a user's command).
    pub tool_call_id: String,
    /// The whole command line.
    pub command: String,
    /// The segments that need a yes.
    pub segments: Vec<AskedSegment>,
}

/// An answer to an approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum ApprovalDecision {
    /// Run it, this once.
    Allow,
    /// Run it, and the same segments without asking until the session ends.
    AllowSession,
    /// Do not run it.
    Deny,
}

impl ApprovalDecision {
    /// `allow`, `allow_session` or `deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::AllowSession => "allow_session",
            Self::Deny => "deny",
        }
    }
}

/// Who answered an approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Answerer {
    /// An RPC client (also the local client of a far side).
    Rpc,
    /// An MCP client, through elicitation.
    Mcp,
    /// The person at the interactive mode.
    Interactive,
}

impl Answerer {
    /// `rpc`, `mcp` or `interactive`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Rpc => "rpc",
            Self::Mcp => "mcp",
            Self::Interactive => "interactive",
        }
    }
}

/// An answer and who gave it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApprovalAnswer {
    /// The answer.
    pub decision: ApprovalDecision,
    /// Who gave it.
    pub answered_by: Answerer,
}

/// How an approval request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalResolution {
    /// Someone answered.
    Answered(ApprovalAnswer),
    /// Nobody answered within the policy's `ask_timeout`: denied.
    TimedOut,
    /// The call was aborted while it waited: nothing ran.
    Aborted,
    /// Everyone asked went away without an answer (a client that disconnected): denied.
    Unanswered,
}

impl ApprovalResolution {
    /// The `decision` of the `approval_resolved` event: the answer, `timeout` or `aborted`.
    pub fn decision_str(self) -> &'static str {
        match self {
            Self::Answered(answer) => answer.decision.as_str(),
            Self::TimedOut => "timeout",
            Self::Aborted => "aborted",
            Self::Unanswered => "unanswered",
        }
    }

    /// The resolution an `approval_resolved` event's `decision` and `answeredBy` name; `None`
    /// for names it does not know.
    pub fn from_names(decision: &str, answered_by: Option<&str>) -> Option<Self> {
        let answerer = match answered_by {
            Some("rpc") => Some(Answerer::Rpc),
            Some("mcp") => Some(Answerer::Mcp),
            Some("interactive") => Some(Answerer::Interactive),
            _ => None,
        };
        let answered = |decision| {
            answerer.map(|answered_by| {
                Self::Answered(ApprovalAnswer {
                    decision,
                    answered_by,
                })
            })
        };
        match decision {
            "allow" => answered(ApprovalDecision::Allow),
            "allow_session" => answered(ApprovalDecision::AllowSession),
            "deny" => answered(ApprovalDecision::Deny),
            "timeout" => Some(Self::TimedOut),
            "aborted" => Some(Self::Aborted),
            "unanswered" => Some(Self::Unanswered),
            _ => None,
        }
    }

    /// Who answered, when someone did.
    pub fn answered_by(self) -> Option<Answerer> {
        match self {
            Self::Answered(answer) => Some(answer.answered_by),
            Self::TimedOut | Self::Aborted | Self::Unanswered => None,
        }
    }
}

/// The line that closes a refusal the model should not work around.
const DO_NOT_RETRY: &str = "Do not retry it in another form; tell the user what you wanted to run.";

/// The text of a command the policy denied: `segment` is the first denied segment as written.
pub fn policy_denied_text(segment: &str, reason: &str) -> String {
    format!("Command denied by policy: {segment} ({reason})\n{DO_NOT_RETRY}")
}

/// The text of a command the person declined.
pub fn approval_declined_text(command: &str) -> String {
    format!("The user declined to run: {command}")
}

/// The text of a command whose approval request timed out after `seconds`.
pub fn approval_timeout_text(seconds: u64, command: &str) -> String {
    format!("No answer to the approval request within {seconds} s: {command}")
}

/// The text of a command that needs approval where nobody can be asked (`exec`, a client without
/// the capability, every approver gone): refused like a deny, with the first segment that needs
/// a yes as written and its reason.
pub fn approval_unavailable_text(segment: &str, reason: &str) -> String {
    format!(
        "Command needs approval and nobody can be asked in this session: {segment} ({reason})\n\
         {DO_NOT_RETRY}"
    )
}
