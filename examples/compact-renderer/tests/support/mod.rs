//! How the tests build views and write them down (shared by the test binaries).

#![allow(dead_code)]

use std::fmt::Write as _;
use std::time::Duration;

use agentsh_protocol::{
    BangRun, BangState, BashResult, JobState, JobSummary, OutputSummary, Timeout, ToolDetails,
    ToolResult,
};
use agentsh_renderer::ratatui_core::text::Text;
use agentsh_renderer::snapshot::plain_rows;
#[allow(
    unused_imports,
    reason = "shared by two test binaries; each uses part of it"
)]
pub use agentsh_renderer::snapshot::{buffer_rows, styled_rows as styled};
use agentsh_renderer::{BashArgs, str_width};

/// The widths every view is drawn at.
pub const WIDTHS: [u16; 3] = [40, 80, 120];

/// The rows as text, one per line, each checked to fit `width`.
pub fn plain(text: &Text<'_>, width: u16) -> Vec<String> {
    plain_rows(text)
        .into_iter()
        .map(|row| {
            assert!(
                str_width(&row) <= usize::from(width),
                "row wider than {width}: {row:?}"
            );
            row
        })
        .collect()
}

/// A view drawn at the three widths, plain, as one snapshot text.
pub fn at_widths(mut draw: impl FnMut(u16) -> Text<'static>) -> String {
    let mut out = String::new();
    for width in WIDTHS {
        writeln!(out, "── {width} columns ──").expect("writing to a String cannot fail");
        for row in plain(&draw(width), width) {
            writeln!(out, "{row}|").expect("writing to a String cannot fail");
        }
    }
    out
}

/// The arguments of a call of `command`.
pub fn args(command: &str) -> BashArgs {
    BashArgs {
        command: command.into(),
        ..BashArgs::default()
    }
}

/// Details of a call that exited with `code` in `/project`.
pub fn details(code: Option<i32>) -> ToolDetails {
    ToolDetails {
        exit_code: code,
        cancelled: false,
        timed_out: false,
        session_restarted: false,
        cwd: "/project".into(),
        timeout: Timeout::DEFAULT,
        meta: None,
        interception: None,
        job: None,
        limit: None,
    }
}

/// A result with `text`.
pub fn result(text: &str, details: ToolDetails, is_error: bool) -> ToolResult {
    ToolResult::new(text.to_owned(), details, is_error)
}

/// `1\n2\n…\nN` without the final newline.
pub fn numbers(from: u64, to: u64) -> String {
    (from..=to)
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A bang command that finished with `exit_code` after printing `output`.
pub fn finished_bang(command: &str, output: &str, exit_code: Option<i32>) -> BangRun {
    BangRun {
        command: command.into(),
        exclude_from_context: false,
        state: BangState::Finished(BashResult {
            summary: OutputSummary {
                output: output.into(),
                ..OutputSummary::default()
            },
            exit_code,
            ..BashResult::default()
        }),
    }
}

/// A job of `command` in `state`.
pub fn job(id: &str, state: JobState, exit_code: Option<i32>, command: &str) -> JobSummary {
    JobSummary {
        id: id.into(),
        state,
        exit_code,
        pty: false,
        command: command.into(),
        run_time: Duration::from_secs(75),
        output_bytes: 1024,
        usage: None,
    }
}
