//! The sandbox line of a result: what a failed command's output shows when the sandbox denied
//! it something, and the line that names the sandbox (its mode, writable roots and network,
//! and the hosts the allowlist refused).

use std::sync::LazyLock;

use agentsh_process::sandbox::{SandboxNetwork, SandboxSpec};
use regex::Regex;

/// What a failed sandboxed command's output shows when the sandbox denied it something,
/// as the tools print it (`strerror` texts, resolver and curl messages):
///
/// - files: `Permission denied` (EACCES, what Landlock answers), `Read-only file system`
///   (EROFS), `Operation not permitted` (EPERM: seccomp's `socket(AF_UNIX, …)`, `unshare`,
///   `mount`, `setpriv`, `nsenter`);
/// - name lookups in a network namespace with only loopback: glibc's `Temporary failure in
///   name resolution` (EAI_AGAIN) and `Name or service not known` (EAI_NONAME), musl's and
///   Python's `Name does not resolve`, curl's `Could not resolve host`, git's `Could not
///   resolve hostname`, Go's `no such host`;
/// - connects: `Network is unreachable` (ENETUNREACH: no route but loopback),
///   `Connection refused` (ECONNREFUSED: a port on the private loopback where nothing
///   listens, e.g. a proxy on 127.0.0.1 outside), `Cannot assign requested address`
///   (EADDRNOTAVAIL), `No route to host` (EHOSTUNREACH).
///
/// Matched as plain substrings, case-sensitive (tools print them in this case; `permission
/// denied` in lower case is how Go and Rust print EACCES, hence the second spelling).
pub const DENIAL_MARKERS: &[&str] = &[
    "Permission denied",
    "permission denied",
    "Read-only file system",
    "read-only file system",
    "Operation not permitted",
    "operation not permitted",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Name does not resolve",
    "Could not resolve host",
    "no such host",
    "Network is unreachable",
    "network is unreachable",
    "Connection refused",
    "connection refused",
    "Cannot assign requested address",
    "No route to host",
];

/// Whether `text` (a failed command's output) shows a denial: one of [`DENIAL_MARKERS`].
pub fn shows_denial(text: &str) -> bool {
    // One pass for all the markers (a job's output is watched as it streams).
    static MARKERS: LazyLock<Regex> = LazyLock::new(|| {
        let alternatives: Vec<String> = DENIAL_MARKERS.iter().map(|m| regex::escape(m)).collect();
        Regex::new(&alternatives.join("|")).expect("escaped literals form a valid regex")
    });
    MARKERS.is_match(text)
}

/// Watches a stream of text (a job's output, piece by piece) for a denial, so that
/// the result that reports the job's failure gets the sandbox line even when the denial was
/// in output an earlier result showed. A marker split between two pieces is found too.
pub struct DenialWatch {
    policy: SandboxSpec,
    seen: bool,
    /// The end of the text so far: one byte shorter than the longest marker.
    carry: String,
}

impl DenialWatch {
    /// A watch of the output of a command run under `policy`.
    pub fn new(policy: SandboxSpec) -> Self {
        Self {
            policy,
            seen: false,
            carry: String::new(),
        }
    }

    /// Takes the next piece of the stream.
    pub fn push(&mut self, text: &str) {
        if self.seen || text.is_empty() {
            return;
        }
        let keep = DENIAL_MARKERS.iter().map(|m| m.len()).max().unwrap_or(1) - 1;
        // A marker that starts in the carry ends within the first `keep` bytes of `text`.
        let mut head = keep.min(text.len());
        while !text.is_char_boundary(head) {
            head += 1;
        }
        let mut joined = std::mem::take(&mut self.carry);
        joined.push_str(&text[..head]);
        self.seen = shows_denial(&joined) || shows_denial(text);
        let source = if text.len() >= keep { text } else { &joined };
        let mut start = source.len().saturating_sub(keep);
        while !source.is_char_boundary(start) {
            start -= 1;
        }
        source[start..].clone_into(&mut self.carry);
    }

    /// The sandbox line for the stream's command when it `failed` and the stream showed a
    /// denial, or when the allowlist refused connections of its (`blocked`).
    pub fn line(&self, failed: bool, blocked: &[String]) -> Option<String> {
        line_when(&self.policy, failed && self.seen, blocked)
    }
}

/// The line a failed sandboxed command's result gets when its output shows a denial:
/// `[sandbox: <mode>; writable: <roots>; network off]` (`network on` when allowed,
/// `network: <hosts>` with an allowlist), the roots comma-separated as resolved.
///
/// ```
/// use std::path::PathBuf;
/// use agentsh_sandbox::{SandboxMode, SandboxNetwork, SandboxSpec, sandbox_denial_line};
///
/// let policy = SandboxSpec {
///     mode: SandboxMode::WorkspaceWrite,
///     writable: vec![PathBuf::from("/src/app"), PathBuf::from("/tmp/agentsh-sandbox-x")],
///     read_only: Vec::new(),
///     network: SandboxNetwork::Off,
///     temp_dir: None,
///     temp_fs: None,
/// };
/// assert_eq!(
///     sandbox_denial_line(&policy),
///     "[sandbox: workspace-write; writable: /src/app, /tmp/agentsh-sandbox-x; network off]"
/// );
/// ```
pub fn sandbox_denial_line(policy: &SandboxSpec) -> String {
    sandbox_line(policy, &[])
}

/// The sandbox line naming the `host:port`s the allowlist refused (`blocked`), after the
/// allowed hosts: `[sandbox: <mode>; writable: <roots>; network: <hosts>; blocked <host:port>,
/// …]`. Without blocked hosts, [`sandbox_denial_line`].
///
pub(crate) fn sandbox_line(policy: &SandboxSpec, blocked: &[String]) -> String {
    let roots: Vec<String> = policy
        .writable
        .iter()
        .map(|root| root.display().to_string())
        .collect();
    let network = match &policy.network {
        SandboxNetwork::Off => "network off".to_owned(),
        SandboxNetwork::On => "network on".to_owned(),
        SandboxNetwork::Allowlist(proxy) => {
            let mut text = format!("network: {}", proxy.hosts.join(", "));
            if !blocked.is_empty() {
                text.push_str("; blocked ");
                text.push_str(&blocked.join(", "));
            }
            text
        }
    };
    format!(
        "[sandbox: {}; writable: {}; {network}]",
        policy.mode,
        roots.join(", ")
    )
}

/// The sandbox line a result gets, if any: the command ran under `sandbox` and either the
/// allowlist refused connections of its namespace while it ran (`blocked`, whether or not it
/// failed), or it failed (`failed`: a non-zero exit or no exit status) and its output
/// (`outputs`: every text of it the result was built from) shows a denial.
pub fn denial_line_for(
    sandbox: Option<&SandboxSpec>,
    failed: bool,
    outputs: &[&str],
    blocked: &[String],
) -> Option<String> {
    let policy = sandbox?;
    line_when(
        policy,
        failed && outputs.iter().any(|text| shows_denial(text)),
        blocked,
    )
}

/// The sandbox line of a result under `policy`: when it `failed_with_denial`, or when the
/// allowlist refused connections of its namespace (`blocked`), whether or not it failed.
fn line_when(policy: &SandboxSpec, failed_with_denial: bool, blocked: &[String]) -> Option<String> {
    let refused = !blocked.is_empty() && policy.network.proxy().is_some();
    (refused || failed_with_denial).then(|| sandbox_line(policy, blocked))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use agentsh_process::sandbox::SandboxMode;

    use super::*;

    #[test]
    fn a_denial_split_between_pieces_is_seen() {
        let policy = SandboxSpec {
            mode: SandboxMode::ReadOnly,
            writable: vec![PathBuf::from("/tmp/t")],
            read_only: Vec::new(),
            network: SandboxNetwork::Off,
            temp_dir: None,
            temp_fs: None,
        };
        let watched = |pieces: &[&str]| {
            let mut watch = DenialWatch::new(policy.clone());
            for piece in pieces {
                watch.push(piece);
            }
            watch.line(true, &[]).is_some()
        };
        assert!(watched(&["touch: x: Permission denied\n"]));
        assert!(watched(&["touch: x: Permiss", "ion denied\n"]));
        // Split across several short pieces, and after long ones.
        assert!(watched(&["Per", "mis", "sion", " de", "nied"]));
        assert!(watched(&[&"a".repeat(100), "Read-only file sy", "stem"]));
        // Multi-byte text around the cut is no problem.
        assert!(watched(&["ééééé Operation not perm", "itted ééé"]));
        assert!(!watched(&["Permission", "\ndenied"]));
        assert!(!watched(&["all good\n", "é".repeat(40).as_str()]));
        // Only a failure gets the line.
        let mut watch = DenialWatch::new(policy.clone());
        watch.push("Permission denied");
        assert_eq!(watch.line(false, &[]), None);
        assert_eq!(watch.line(true, &[]), Some(sandbox_denial_line(&policy)));
        assert_eq!(
            sandbox_line(&policy, &[]),
            "[sandbox: read-only; writable: /tmp/t; network off]"
        );
    }
}
