//! What a UI shows of a session's status line, as plain data ([`SessionStatus`]). In JSON
//! (camelCase) it is the `data` of the RPC `status` request, through which the interactive
//! mode shows a far side.

use crate::job::JobSummary;

/// A session as a status line shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct SessionStatus {
    /// The session's working directory.
    pub cwd: String,
    /// The shell its commands run in (a path).
    pub shell: String,
    /// Its sandbox; `None` when it runs without one.
    pub sandbox: Option<SandboxStatus>,
    /// Its jobs, oldest first.
    pub jobs: Vec<JobSummary>,
}

/// A sandbox as a status line shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct SandboxStatus {
    /// The mode (`workspace-write`, …), as the configuration spells it.
    pub mode: String,
    /// Whether commands may use the network (all of it).
    pub network: bool,
    /// The hosts commands may reach through the sandbox's proxy, when the network is a list
    /// (`network` is then false).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub hosts: Option<Vec<String>>,
}

/// What a UI draws a session with from the configuration: the theme, the output limit its
/// notices name, and the sandbox it shows before the session has said (a far side enforces the
/// sandbox this side's settings asked for).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewSettings {
    /// `ui.theme`.
    pub theme: crate::Theme,
    /// `output.max_bytes`.
    pub output_max_bytes: u64,
    /// `sandbox.mode` and `sandbox.network`; `None` when the sandbox is off.
    pub sandbox: Option<SandboxStatus>,
}

impl Default for ViewSettings {
    fn default() -> Self {
        Self {
            theme: crate::Theme::default(),
            output_max_bytes: crate::DEFAULT_OUTPUT_MAX_BYTES,
            sandbox: None,
        }
    }
}
