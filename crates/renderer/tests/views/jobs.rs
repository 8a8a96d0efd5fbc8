//! Job lines: `job N · running|waiting for input|exit N|killed · <runtime> · $ <command>`.

use std::time::Duration;

use agentsh_renderer::{DefaultRenderer, JobState, JobSummary, Renderer, Theme};
use insta::assert_snapshot;

use super::support::{WIDTHS, style_name};

fn job(id: &str, state: JobState, exit_code: Option<i32>, command: &str) -> JobSummary {
    JobSummary {
        id: id.into(),
        state,
        exit_code,
        pty: false,
        command: command.into(),
        run_time: Duration::from_secs(184),
        output_bytes: 4096,
        usage: None,
    }
}

fn jobs() -> Vec<JobSummary> {
    vec![
        job(
            "1",
            JobState::Running,
            None,
            "npm run dev -- --port 3000 --host 0.0.0.0",
        ),
        job("2", JobState::WaitingForInput, None, "python3 -q"),
        job("3", JobState::Exited, Some(0), "cargo build"),
        job("4", JobState::Exited, Some(101), "cargo test"),
        job("5", JobState::Killed, None, "tail -f log\n\u{1b}[2Jx"),
    ]
}

#[test]
fn job_lines_by_hand() {
    let renderer = DefaultRenderer::default();
    let lines: Vec<String> = jobs()
        .iter()
        .map(|job| renderer.job_line(job, 120).to_string())
        .collect();
    assert_eq!(
        lines,
        [
            "job 1 · running · 3m 04s · $ npm run dev -- --port 3000 --host 0.0.0.0",
            "job 2 · waiting for input · 3m 04s · $ python3 -q",
            "job 3 · exit 0 · 3m 04s · $ cargo build",
            "job 4 · exit 101 · 3m 04s · $ cargo test",
            "job 5 · killed · 3m 04s · $ tail -f log x",
        ]
    );
    assert_eq!(
        renderer.job_line(&jobs()[0], 40).to_string(),
        "job 1 · running · 3m 04s · $ npm run de…"
    );
}

#[test]
fn snapshot_job_lines() {
    let mut out = String::new();
    for theme in Theme::ALL {
        let renderer = DefaultRenderer::new(theme);
        for width in WIDTHS {
            out.push_str(&format!("── theme {theme}, {width} columns ──\n"));
            for job in jobs() {
                let line = renderer.job_line(&job, width);
                assert!(line.width() <= usize::from(width));
                out.push_str(&line.to_string());
                out.push('\n');
                let styles: Vec<String> = line
                    .spans
                    .iter()
                    .map(|span| format!("{}={:?}", span.content.trim(), style_name(span.style)))
                    .collect();
                out.push_str(&format!("  {}\n", styles.join(" ")));
            }
        }
    }
    assert_snapshot!(out);
}
