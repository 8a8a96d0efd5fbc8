//! Background jobs as plain data: a job's state, its `details.job`, and the texts
//! its tools answer with.

use std::fmt;
use std::time::Duration;

use crate::screen::Screen;
use crate::text::format_size;

/// Where a background job is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum JobState {
    /// The command runs.
    Running,
    /// A PTY job's program waits for input on its terminal (as `/proc` tells).
    WaitingForInput,
    /// The command itself returned; `exitCode` is its status.
    Exited,
    /// It was stopped: `job_kill`, its timeout, or the end of its session.
    Killed,
}

impl JobState {
    /// Whether the command has returned or was stopped.
    pub fn is_over(self) -> bool {
        matches!(self, Self::Exited | Self::Killed)
    }
}

impl fmt::Display for JobState {
    /// The state as job lines write it: `running`, `waiting for input`, `exited`, `killed`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Running => "running",
            Self::WaitingForInput => "waiting for input",
            Self::Exited => "exited",
            Self::Killed => "killed",
        })
    }
}

/// `details.job` of a result about a job.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct JobDetails {
    /// The job's id within its session: `"1"` first.
    pub id: String,
    /// Where it is.
    pub state: JobState,
    /// Its command's exit status, once it exited.
    pub exit_code: Option<i32>,
    /// Whether it runs on a terminal.
    pub pty: bool,
    /// Whether it waits for hidden input: a password or passphrase prompt (its terminal's echo
    /// is off and its line mode on). Left out of the JSON when false.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "std::ops::Not::not")
    )]
    pub hidden: bool,
}

/// A PTY job asks for hidden input (a password or passphrase): what a person who answers it
/// is shown. Never holds the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct InputRequest {
    /// The job.
    pub job_id: String,
    /// The prompt: the text before the cursor on its terminal's line (`Password: `).
    pub prompt: String,
    /// The command line of the program that asks (the terminal's foreground process), else
    /// the job's command.
    pub command: String,
}

/// Something a session tells every surface, whether or not a call runs. The RPC server writes
/// each as its wire event and a far side's client reads it back (`wire::Message::event` and
/// `wire::Message::into_event` are the one place the two forms meet), so a new event is added
/// here and where it is made and shown, and forwarded without more code.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionEvent {
    /// A PTY job began to wait for hidden input (a password or passphrase prompt): a person
    /// answers it with the session's `secret_input`. Sent once per prompt.
    InputRequest(InputRequest),
    /// A background job ended (exited, or was killed): sent at once, for every job.
    JobEnd(JobEnd),
}

impl SessionEvent {
    /// Whether only a subscriber that answers hidden input gets it (a client that said
    /// `capabilities.secretInput`, the interactive mode).
    pub fn for_answerers_only(&self) -> bool {
        matches!(self, Self::InputRequest(_))
    }
}

/// A background job ended (exited or killed): what its `job_end` event says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobEnd {
    /// The job.
    pub job_id: String,
    /// `exited` or `killed`.
    pub state: JobState,
    /// Its command's exit status, when it exited.
    pub exit_code: Option<i32>,
    /// How long it ran.
    pub run_time: Duration,
    /// The resource limit its processes passed, when one ended it (or refused it forks).
    pub reason: Option<crate::LimitHit>,
}

impl JobEnd {
    /// How it ended, as notices say it: `exited with code C after <run time>` or `was killed
    /// after <run time>`.
    fn how(&self) -> String {
        let after = run_time_text(self.run_time);
        match (self.state, self.exit_code) {
            (JobState::Killed, _) => format!("was killed after {after}"),
            (_, Some(code)) => format!("exited with code {code} after {after}"),
            (_, None) => format!("exited after {after}"),
        }
    }

    /// The notice a later tool result closes with:
    /// `[job N (<command>) exited with code C after <run time>; job_output N shows its last output]`.
    pub fn notice(&self, command: &str) -> String {
        let id = &self.job_id;
        format!(
            "[job {id} ({}) {}; job_output {id} shows its last output]",
            notice_command(command),
            self.how()
        )
    }

    /// The line a UI shows: `job N (<command>) exited with code C after <run time>`, without
    /// the command when it is not known.
    pub fn line(&self, command: Option<&str>) -> String {
        match command {
            Some(command) => format!(
                "job {} ({}) {}",
                self.job_id,
                notice_command(command),
                self.how()
            ),
            None => format!("job {} {}", self.job_id, self.how()),
        }
    }
}

/// The notice for a job that has used a full core for `minutes` without output:
/// `[job N (<command>) has used a full core for <M> min without output]`.
pub fn job_busy_notice(id: &str, command: &str, minutes: u64) -> String {
    format!(
        "[job {id} ({}) has used a full core for {minutes} min without output]",
        notice_command(command)
    )
}

/// A job's command as notices name it: its first 60 characters (Unicode scalar values),
/// newlines as spaces, `…` when cut.
pub fn notice_command(command: &str) -> String {
    const SHOWN: usize = 60;
    let mut shown: String = command
        .chars()
        .take(SHOWN)
        .map(|c| if matches!(c, '\n' | '\r') { ' ' } else { c })
        .collect();
    if command.chars().nth(SHOWN).is_some() {
        shown.push('…');
    }
    shown
}

/// The last line of a `job_input` result whose text went to a hidden prompt (a password or
/// passphrase): the model is reminded that it answered one.
pub fn hidden_input_sent_line(id: &str) -> String {
    format!(
        "[job {id} was asking for hidden input: the text was typed at a password or passphrase prompt]"
    )
}

/// The closing line of a result about a job that asks for hidden input, when a person can
/// answer it through agentsh (`answerable`), or else when only a terminal can.
pub fn hidden_input_line(id: &str, answerable: bool) -> String {
    let how = if answerable {
        "the user must type it into agentsh"
    } else {
        "ask the user to answer it in a terminal"
    };
    format!(
        "[job {id} is asking for hidden input (a password or passphrase): {how}; do not ask for it in the chat]"
    )
}

/// The line a result ends with when its call left a job running:
/// `[Running in the background as job N. Read it with job_output, stop it with job_kill.]`.
pub fn job_started_line(id: &str) -> String {
    format!(
        "[Running in the background as job {id}. Read it with job_output, stop it with job_kill.]"
    )
}

/// The second line of a yield result: the session's next call runs in a new shell.
pub const NEXT_CALL_NEW_SHELL: &str =
    "[The next command runs in a new shell: variables and functions from earlier calls are gone.]";

/// What `job_output` shows when no earlier result missed anything.
pub const NO_NEW_OUTPUT: &str = "(no new output)";

/// What `job_list` shows without jobs.
pub const NO_JOBS: &str = "(no jobs)";

/// The state line every job tool ends with: `[job N: running]`, `[job N: waiting for input]`,
/// `[job N: exited with code C]`, `[job N: killed]`.
pub fn job_state_line(id: &str, state: JobState, exit_code: Option<i32>) -> String {
    match (state, exit_code) {
        (JobState::Exited, Some(code)) => format!("[job {id}: exited with code {code}]"),
        (state, _) => format!("[job {id}: {state}]"),
    }
}

/// A tool's answer to an id no job has: `No job N. Jobs: 1, 2` (`none` without jobs).
pub fn no_such_job_text(id: &str, ids: &[String]) -> String {
    let ids = if ids.is_empty() {
        "none".to_owned()
    } else {
        ids.join(", ")
    };
    format!("No job {id}. Jobs: {ids}")
}

/// The error of one job too many.
pub fn too_many_jobs_text(running: usize) -> String {
    format!("Too many background jobs ({running} running): stop one with job_kill first")
}

/// `job_input` to a job without a terminal.
pub fn job_has_no_terminal_text(id: &str) -> String {
    format!("Job {id} has no terminal: start it with pty: true to send input")
}

/// `job_input` to a job that has ended.
pub fn job_has_ended_text(id: &str) -> String {
    format!("Job {id} has ended")
}

/// One job as a list shows it: `job_list`'s lines, the renderer's job line and a status line
/// are drawn from this. In JSON (the RPC `status` request) it is camelCase, `runTime` in
/// seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct JobSummary {
    /// The job's id within its session.
    pub id: String,
    /// Where it is.
    pub state: JobState,
    /// Its command's exit status, once it exited.
    pub exit_code: Option<i32>,
    /// Whether it runs on a terminal.
    pub pty: bool,
    /// The command as given.
    pub command: String,
    /// How long it has run (until it ended, for an ended job).
    #[cfg_attr(feature = "serde", serde(with = "seconds"))]
    pub run_time: Duration,
    /// Bytes of output it has printed so far.
    pub output_bytes: u64,
    /// What its process tree uses, where the job runs (not sent over the wire).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub usage: Option<JobUsage>,
}

/// What a job's process tree uses, as `job_list` shows it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JobUsage {
    /// CPU over the last 10 s, in percent of one core (more than 100 with several cores).
    pub cpu_percent: u32,
    /// Resident memory of the whole tree, in bytes.
    pub rss_bytes: u64,
    /// Whole minutes it has used more than 90% of a core with no output, once that passed
    /// the mark's threshold (10 minutes).
    pub busy_minutes: Option<u64>,
    /// `limits.memory`: the memory its tree may hold, shown beside what it holds.
    pub memory_limit: Option<u64>,
}

/// A [`Duration`] as seconds (a JSON number); a negative or non-finite one reads as zero.
#[cfg(feature = "serde")]
mod seconds {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(
        run: &Duration,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(run.as_secs_f64())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Duration, D::Error> {
        let secs = f64::deserialize(deserializer)?;
        Ok(Duration::try_from_secs_f64(secs).unwrap_or_default())
    }
}

impl JobSummary {
    /// `job_list`'s line: `job N · <state> · <run time> · cpu <P>% · <RSS>[ of <limit>] ·
    /// <output size> · $ <command>`, the state written `exited with code C` once the command returned, and
    /// `· busy without output for <M> min` before the command once it has been; without
    /// [`usage`](Self::usage), no cpu and RSS fields.
    pub fn list_line(&self) -> String {
        let state = match (self.state, self.exit_code) {
            (JobState::Exited, Some(code)) => format!("exited with code {code}"),
            (state, _) => state.to_string(),
        };
        use std::fmt::Write as _;
        let mut line = format!(
            "job {} · {state} · {}",
            self.id,
            run_time_text(self.run_time)
        );
        if let Some(usage) = &self.usage {
            let _ = write!(
                line,
                " · cpu {}% · {}",
                usage.cpu_percent,
                format_size(usage.rss_bytes)
            );
            if let Some(limit) = usage.memory_limit {
                let _ = write!(line, " of {}", format_size(limit));
            }
        }
        let _ = write!(line, " · {}", format_size(self.output_bytes));
        if let Some(minutes) = self.usage.and_then(|usage| usage.busy_minutes) {
            let _ = write!(line, " · busy without output for {minutes} min");
        }
        let _ = write!(line, " · $ {}", self.command);
        line
    }
}

/// A look at one job for a UI (`/job N`): what it printed last, or its terminal's screen,
/// taken without moving what `job_output` returns next or where its `until` looks. In JSON
/// (the `data` of the RPC `job_view`), camelCase, the summary as `job` and the screen as its
/// rows' text.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct JobView {
    /// The job as lists show it.
    #[cfg_attr(feature = "serde", serde(rename = "job"))]
    pub summary: JobSummary,
    /// The last lines of its output (sanitised, as its log holds it) that fit in the byte
    /// bound asked for; when the last line alone is longer, its end. Empty without output.
    pub output: String,
    /// Lines of its whole output so far.
    pub total_lines: u64,
    /// Its log artifact, once it has one: the whole output (`artifact://ID`).
    pub artifact_id: Option<String>,
    /// A PTY job's terminal screen as it is now; `None` for a job without a terminal.
    #[cfg_attr(feature = "serde", serde(with = "crate::screen::rows"))]
    pub screen: Option<Screen>,
}

/// A job's run time as lists write it: `12s`, `3m 04s`, `1h 02m`.
pub fn run_time_text(run: Duration) -> String {
    let secs = run.as_secs();
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m {:02}s", secs / 60, secs % 60),
        _ => format!("{}h {:02}m", secs / 3600, secs / 60 % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_end_notices_name_the_command_cut_at_60_characters() {
        let end = JobEnd {
            job_id: "4".into(),
            state: JobState::Exited,
            exit_code: Some(3),
            run_time: Duration::from_secs(2),
            reason: None,
        };
        assert_eq!(
            end.notice("sleep 2; exit 3"),
            "[job 4 (sleep 2; exit 3) exited with code 3 after 2s; job_output 4 shows its last output]"
        );
        let killed = JobEnd {
            state: JobState::Killed,
            exit_code: None,
            run_time: Duration::from_secs(75),
            ..end
        };
        let long = format!("echo a\n{}", "é".repeat(70));
        let shown = format!("echo a {}…", "é".repeat(53));
        assert_eq!(
            killed.notice(&long),
            format!(
                "[job 4 ({shown}) was killed after 1m 15s; job_output 4 shows its last output]"
            )
        );
        assert_eq!(killed.line(None), "job 4 was killed after 1m 15s");
        assert_eq!(notice_command(&"x".repeat(60)), "x".repeat(60));
        assert_eq!(
            job_busy_notice("2", "yes > /dev/null", 10),
            "[job 2 (yes > /dev/null) has used a full core for 10 min without output]"
        );
    }

    #[test]
    fn texts_are_the_specs() {
        assert_eq!(
            job_started_line("3"),
            "[Running in the background as job 3. Read it with job_output, stop it with job_kill.]"
        );
        assert_eq!(
            job_state_line("1", JobState::Running, None),
            "[job 1: running]"
        );
        assert_eq!(
            job_state_line("1", JobState::WaitingForInput, None),
            "[job 1: waiting for input]"
        );
        assert_eq!(
            job_state_line("2", JobState::Exited, Some(3)),
            "[job 2: exited with code 3]"
        );
        assert_eq!(
            job_state_line("2", JobState::Killed, None),
            "[job 2: killed]"
        );
        assert_eq!(no_such_job_text("9", &[]), "No job 9. Jobs: none");
        assert_eq!(
            no_such_job_text("9", &["1".into(), "2".into()]),
            "No job 9. Jobs: 1, 2"
        );
        assert_eq!(
            too_many_jobs_text(16),
            "Too many background jobs (16 running): stop one with job_kill first"
        );
        assert_eq!(
            job_has_no_terminal_text("4"),
            "Job 4 has no terminal: start it with pty: true to send input"
        );
        assert_eq!(job_has_ended_text("4"), "Job 4 has ended");
    }

    #[test]
    fn list_lines_and_run_times() {
        let mut job = JobSummary {
            id: "2".into(),
            state: JobState::Exited,
            exit_code: Some(1),
            pty: false,
            command: "make".into(),
            run_time: Duration::from_secs(184),
            output_bytes: 2048,
            usage: None,
        };
        assert_eq!(
            job.list_line(),
            "job 2 · exited with code 1 · 3m 04s · 2.0KB · $ make"
        );
        job.usage = Some(JobUsage {
            cpu_percent: 197,
            rss_bytes: 210 << 20,
            busy_minutes: Some(12),
            memory_limit: None,
        });
        assert_eq!(
            job.list_line(),
            "job 2 · exited with code 1 · 3m 04s · cpu 197% · 210.0MB · 2.0KB · busy without output for 12 min · $ make"
        );
        job.usage = Some(JobUsage {
            cpu_percent: 3,
            rss_bytes: 210 << 20,
            busy_minutes: None,
            memory_limit: Some(4 << 30),
        });
        assert_eq!(
            job.list_line(),
            "job 2 · exited with code 1 · 3m 04s · cpu 3% · 210.0MB of 4.0GB · 2.0KB · $ make"
        );
        job.usage = None;
        job.state = JobState::WaitingForInput;
        job.run_time = Duration::from_millis(12_900);
        assert_eq!(
            job.list_line(),
            "job 2 · waiting for input · 12s · 2.0KB · $ make"
        );
        assert_eq!(run_time_text(Duration::from_secs(3720)), "1h 02m");
        assert_eq!(run_time_text(Duration::from_secs(59)), "59s");
    }
}
