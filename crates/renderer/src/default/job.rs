//! The job line: `job N · running|waiting for input|exit N|killed · <run time> · $ <command>`.

use agentsh_protocol::{JobState, JobSummary, run_time_text};
use ratatui_core::text::{Line, Span};

use super::DefaultRenderer;
use crate::layout::{single_line, str_width, strip_controls, truncate_to_width};

impl DefaultRenderer {
    pub(super) fn draw_job_line(&self, job: &JobSummary, width: u16) -> Line<'static> {
        let glyphs = &self.glyphs;
        let palette = &self.palette;
        let (state, style) = match (job.state, job.exit_code) {
            (JobState::Running, _) => ("running".to_owned(), palette.accent),
            (JobState::WaitingForInput, _) => ("waiting for input".to_owned(), palette.warning),
            (JobState::Exited, Some(0)) => ("exit 0".to_owned(), palette.success),
            (JobState::Exited, Some(code)) => (format!("exit {code}"), palette.error),
            (JobState::Exited, None) => ("exited".to_owned(), palette.muted),
            (JobState::Killed, _) => ("killed".to_owned(), palette.muted),
        };
        let sep = format!(" {} ", glyphs.separator);
        let id = format!("job {}", strip_controls(&job.id));
        let run_time = run_time_text(job.run_time);
        let command = single_line(&job.command);
        let command = format!("$ {command}");
        let parts = [
            (id, palette.title),
            (sep.clone(), palette.muted),
            (state, style),
            (sep.clone(), palette.muted),
            (run_time, palette.muted),
            (sep, palette.muted),
            (command, palette.output),
        ];
        // Cut from the end so that the id and the state stay in view.
        let mut left = usize::from(width.max(1));
        let mut spans = Vec::new();
        let total: usize = parts.iter().map(|(text, _)| str_width(text)).sum();
        for (text, style) in parts {
            if left == 0 {
                break;
            }
            let shown = if total > usize::from(width) {
                truncate_to_width(&text, left as u16, glyphs.ellipsis).into_owned()
            } else {
                text
            };
            left = left.saturating_sub(str_width(&shown));
            spans.push(Span::styled(shown, style));
        }
        Line::from(spans)
    }
}
