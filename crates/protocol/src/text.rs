//! Every user-visible text the specification fixes, one place each.

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
const GIB: u64 = 1024 * MIB;

/// Body text of a result whose command printed nothing.
pub const NO_OUTPUT: &str = "(no output)";
/// Annotation of a command stopped by an abort, shown as the first line of its output in
/// brackets ([`annotation_line`]).
pub const CANCELLED_ANNOTATION: &str = "Command cancelled";
/// Outcome line of a tool call aborted by its caller.
pub const COMMAND_ABORTED: &str = "Command aborted";
/// Outcome line of a command whose exit status could not be obtained.
pub const MISSING_EXIT_STATUS: &str = "Command failed: missing exit status";

/// Formats a byte count as `B`, `x.xKB`, `x.xMB` or `x.xGB` (binary units, one decimal).
///
/// ```
/// use agentsh_protocol::format_size;
/// assert_eq!(format_size(1023), "1023B");
/// assert_eq!(format_size(1536), "1.5KB");
/// assert_eq!(format_size(3 * 1024 * 1024), "3.0MB");
/// ```
pub fn format_size(bytes: u64) -> String {
    if bytes < KIB {
        format!("{bytes}B")
    } else if bytes < MIB {
        format!("{:.1}KB", bytes as f64 / KIB as f64)
    } else if bytes < GIB {
        format!("{:.1}MB", bytes as f64 / MIB as f64)
    } else {
        format!("{:.1}GB", bytes as f64 / GIB as f64)
    }
}

/// Formats a number of seconds: whole numbers without decimals (`300`), others with one (`1.5`).
pub fn format_seconds(seconds: f64) -> String {
    if seconds.fract() == 0.0 {
        format!("{seconds:.0}")
    } else {
        format!("{seconds:.1}")
    }
}

/// Annotation of a command stopped by its timeout: `Command timed out after N seconds`, shown
/// as the first line of its output in brackets ([`annotation_line`]).
pub fn timeout_annotation(seconds: f64) -> String {
    format!(
        "Command timed out after {} seconds",
        format_seconds(seconds)
    )
}

/// The line an annotation is shown as, before the output it explains: `[<annotation>]\n`.
pub fn annotation_line(annotation: &str) -> String {
    format!("[{annotation}]\n")
}

/// Outcome line of a command that exited non-zero: `Command exited with code N`.
pub fn exit_code_text(code: i32) -> String {
    format!("Command exited with code {code}")
}

/// The outcome line an exit status gives, when it gives one: `Command exited with code N`
/// for a non-zero code, `Command failed: missing exit status` without one, nothing for 0.
pub fn exit_outcome(exit_code: Option<i32>) -> Option<String> {
    match exit_code {
        None => Some(MISSING_EXIT_STATUS.to_owned()),
        Some(0) => None,
        Some(code) => Some(exit_code_text(code)),
    }
}

/// Where the whole output of a truncated result is, as its notice says
/// ([`truncation_notice`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FullOutput<'a> {
    /// In the artifact with this id: the notice ends `. Full: artifact://ID]`.
    Artifact(&'a str),
    /// Writing the artifact failed for this reason: the notice ends
    /// `. Full output not saved: <reason>]`.
    NotSaved(&'a str),
    /// Nowhere: no artifact was allocated (no store, or allocation failed); the notice says
    /// nothing more.
    Nowhere,
}

impl<'a> FullOutput<'a> {
    /// From an output summary's `artifactId` and `artifactError`: the artifact when there is
    /// one, else the error, else nowhere.
    ///
    /// ```
    /// use agentsh_protocol::FullOutput;
    /// assert_eq!(FullOutput::new(Some("7"), None), FullOutput::Artifact("7"));
    /// assert_eq!(FullOutput::new(None, Some("disk full")), FullOutput::NotSaved("disk full"));
    /// assert_eq!(FullOutput::new(None, None), FullOutput::Nowhere);
    /// ```
    pub fn new(artifact_id: Option<&'a str>, artifact_error: Option<&'a str>) -> Self {
        match (artifact_id, artifact_error) {
            (Some(id), _) => Self::Artifact(id),
            (None, Some(reason)) => Self::NotSaved(reason),
            (None, None) => Self::Nowhere,
        }
    }
}

/// The notice shown whenever the byte limit left output out:
/// `[Showing lines A-B of T (50.0KB limit). Full: artifact://ID]`, ending
/// `. Full output not saved: <reason>]` instead when the artifact could not be written, and
/// without either when there is no artifact.
pub fn truncation_notice(
    first_line: u64,
    last_line: u64,
    total_lines: u64,
    limit_bytes: u64,
    full: FullOutput<'_>,
) -> String {
    let limit = format_size(limit_bytes);
    let shown = format!("Showing lines {first_line}-{last_line} of {total_lines} ({limit} limit)");
    match full {
        FullOutput::Artifact(id) => format!("[{shown}. Full: artifact://{id}]"),
        FullOutput::NotSaved(reason) => format!("[{shown}. Full output not saved: {reason}]"),
        FullOutput::Nowhere => format!("[{shown}]"),
    }
}

/// The answer to a call of a tool that does not exist: ``Unknown tool `x`: the tools are `a`,
/// `b` and `c` ``.
///
/// ```
/// assert_eq!(
///     agentsh_protocol::unknown_tool_text("x", &["a", "b", "c"]),
///     "Unknown tool `x`: the tools are `a`, `b` and `c`"
/// );
/// ```
pub fn unknown_tool_text(name: &str, tools: &[&str]) -> String {
    let quoted: Vec<String> = tools.iter().map(|tool| format!("`{tool}`")).collect();
    let list = match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => "none".to_owned(),
    };
    format!("Unknown tool `{name}`: the tools are {list}")
}

/// Text of a command blocked by the interceptor.
pub fn blocked_text(message: &str, command: &str) -> String {
    format!("Blocked: {message}\n\nOriginal command: {command}")
}

/// Error text of a `cwd` argument that does not exist; `path` is the resolved path.
pub fn cwd_missing_text(path: &str) -> String {
    format!("Working directory does not exist: {path}")
}

/// Error text of a `cwd` argument that is not a directory.
pub fn cwd_not_directory_text(path: &str) -> String {
    format!("Working directory is not a directory: {path}")
}

/// Error text of a `cwd` argument that is a directory the user cannot enter (no search
/// permission); `reason` is the system's word for it (`Permission denied`).
pub fn cwd_cannot_enter_text(path: &str, reason: &str) -> String {
    format!("Working directory cannot be entered: {path} ({reason})")
}

/// The line a command gets when a program that needs a terminal (`vim`) was ended on a run
/// without one: how to run it, for the model (`for_model`, a tool call) or a person (a bang
/// command).
pub fn needs_terminal_line(program: &str, for_model: bool) -> String {
    if for_model {
        format!(
            "[{program} needs a terminal: run it with run_in_background: true and pty: true, then drive it with job_input]"
        )
    } else {
        format!("[{program} needs a terminal: run it in a terminal]")
    }
}

/// The closing line of a result whose shell ended or was replaced during the call (the command
/// ran `exit`, `exec` or killed its shell, the shell crashed, or a stop could not keep it).
pub const SHELL_ENDED_LINE: &str = "[The shell ended: the next command runs in a new shell, without the variables, functions, aliases and options set by earlier commands]";

/// The closing line of the first result after a far side's session was lost and a new one made.
pub const RECONNECTED_LINE: &str = "[Reconnected: this command ran in a new session; variables, functions and jobs from earlier calls are gone]";

/// Closing lines that come after the shell-ended (or reconnected) line: the yield and job
/// lines, the hidden-input line, job notices (all `[job …` or the two yield texts).
const LATER_CLOSING_LINES: [&str; 3] = [
    "[job ",
    "[Running in the background as job ",
    "[The next command runs in a new shell",
];

/// `text` (a tool result's text) with the closing `line` put where the shell-ended line goes:
/// after the body, outcome, notice, sandbox and limit lines, before the yield, job and notice
/// lines — for a side that learns of it after the text was made (a far side's result).
pub fn insert_session_line(text: &str, line: &str) -> String {
    // The trailing run of later closing lines, found from the end: a body line that looks
    // like one is followed by the outcome or notice, never at the end.
    let mut at = text.len();
    while let Some(start) = text[..at].rfind("\n\n") {
        let block = &text[start + 2..at];
        if !LATER_CLOSING_LINES.iter().any(|p| block.starts_with(p)) {
            break;
        }
        at = start;
    }
    format!("{}\n\n{line}{}", &text[..at], &text[at..])
}

/// The error of a user's (bang) command started while another one of the session runs.
pub const BANG_ALREADY_RUNNING: &str = "A bash command is already running";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_line_goes_before_the_job_lines() {
        assert_eq!(
            insert_session_line("out\n\nCommand exited with code 1", RECONNECTED_LINE),
            format!("out\n\nCommand exited with code 1\n\n{RECONNECTED_LINE}")
        );
        let text = "(no output)\n\n[Running in the background as job 1. Read it with job_output, stop it with job_kill.]\n\n[job 1: running]";
        let got = insert_session_line(text, RECONNECTED_LINE);
        assert_eq!(
            got,
            format!(
                "(no output)\n\n{RECONNECTED_LINE}{}",
                &text["(no output)".len()..]
            )
        );
        // A body line that merely looks like a job line is not a closing line.
        let text = "[job 1: running]\n\nCommand exited with code 2";
        assert_eq!(
            insert_session_line(text, SHELL_ENDED_LINE),
            format!("{text}\n\n{SHELL_ENDED_LINE}")
        );
    }

    #[test]
    fn sizes_cross_each_unit_boundary() {
        let cases: &[(u64, &str)] = &[
            (0, "0B"),
            (1023, "1023B"),
            (1024, "1.0KB"),
            (51_200, "50.0KB"),
            (1_048_575, "1024.0KB"),
            (1_048_576, "1.0MB"),
            (1_073_741_823, "1024.0MB"),
            (1_073_741_824, "1.0GB"),
            (5 * 1_073_741_824 + 536_870_912, "5.5GB"),
        ];
        for &(bytes, want) in cases {
            assert_eq!(format_size(bytes), want, "format_size({bytes})");
        }
    }

    #[test]
    fn seconds_are_whole_or_one_decimal() {
        assert_eq!(format_seconds(300.0), "300");
        assert_eq!(format_seconds(1.0), "1");
        assert_eq!(format_seconds(1.5), "1.5");
        assert_eq!(format_seconds(3600.0), "3600");
        assert_eq!(
            timeout_annotation(2.5),
            "Command timed out after 2.5 seconds"
        );
        assert_eq!(
            timeout_annotation(300.0),
            "Command timed out after 300 seconds"
        );
    }

    #[test]
    fn notice_with_and_without_artifact() {
        assert_eq!(
            truncation_notice(1, 20, 20_000, 51_200, FullOutput::Nowhere),
            "[Showing lines 1-20 of 20000 (50.0KB limit)]"
        );
        assert_eq!(
            truncation_notice(5, 9, 9, 1024, FullOutput::Artifact("12")),
            "[Showing lines 5-9 of 9 (1.0KB limit). Full: artifact://12]"
        );
        assert_eq!(
            truncation_notice(
                5,
                9,
                9,
                1024,
                FullOutput::NotSaved("cannot write artifact 3: No space left on device")
            ),
            "[Showing lines 5-9 of 9 (1.0KB limit). Full output not saved: cannot write artifact 3: No space left on device]"
        );
    }

    #[test]
    fn outcome_texts() {
        assert_eq!(exit_code_text(2), "Command exited with code 2");
        assert_eq!(exit_outcome(Some(0)), None);
        assert_eq!(
            exit_outcome(Some(3)).as_deref(),
            Some("Command exited with code 3")
        );
        assert_eq!(
            exit_outcome(None).as_deref(),
            Some("Command failed: missing exit status")
        );
        assert_eq!(
            blocked_text("Use read.", "cat x"),
            "Blocked: Use read.\n\nOriginal command: cat x"
        );
        assert_eq!(
            cwd_missing_text("/nope"),
            "Working directory does not exist: /nope"
        );
        assert_eq!(
            cwd_not_directory_text("/etc/passwd"),
            "Working directory is not a directory: /etc/passwd"
        );
    }
}
