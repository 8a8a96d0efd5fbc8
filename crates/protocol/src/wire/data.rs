//! The `data` of the responses that have one.

use serde::{Deserialize, Serialize};

use crate::result::BashResult;

/// `data` of a `bash` response: the [`BashResult`]'s fields, then `text`, the result as the
/// model's context gets it (the fenced output, the outcome, the sandbox line when a sandboxed
/// command failed with a denial, the notice).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BashData {
    /// The command's result.
    #[serde(flatten)]
    pub result: BashResult,
    /// The context text.
    pub text: String,
}

/// `data` of a `read_artifact` response: lines of an artifact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactData {
    /// The lines asked for, each with its `\n` (the file's last line may have none).
    pub text: String,
    /// Lines of the whole artifact.
    pub total_lines: u64,
    /// The artifact's file, on the side that keeps it.
    pub path: String,
}

/// `data` of a `list_artifacts` response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ArtifactList {
    /// The session's artifacts, newest first.
    pub artifacts: Vec<ListedArtifact>,
}

/// One artifact of a `list_artifacts` response: `{"id": "42", "size", "modifiedMs"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListedArtifact {
    /// Its id (digits).
    pub id: String,
    /// Its size in bytes.
    pub size: u64,
    /// When it was last written: milliseconds since the Unix epoch (0 for a time before it).
    pub modified_ms: u64,
}

/// `data` of a `complete` response: the names the word may become, sorted.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Completions {
    /// For a path, entries of the word's directory whose names start with the rest of the
    /// word (a directory's name ends in `/`; names starting with `.` only when the rest does);
    /// for a command, the names of the session's functions and aliases (as its rc snapshot
    /// has them) and of programs on its shells' `PATH` that start with the word. At most
    /// [`COMPLETIONS_MAX`].
    pub names: Vec<String>,
    /// More names matched than were returned.
    pub more: bool,
}

/// The most names a `complete` response holds.
pub const COMPLETIONS_MAX: usize = 20_000;

/// `data` of a `hello` response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HelloData {
    /// The answering agentsh's version.
    pub agentsh: String,
    /// The protocol it speaks.
    pub protocol: u64,
}
