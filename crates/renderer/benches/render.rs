//! Rendering a 50 KB, 1,000-line result at 120 columns, collapsed and expanded (a 40-row
//! window), against copying the text once in the same run (goal: < 1 ms each).
#![allow(
    clippy::format_push_string,
    reason = "building the input once, outside the timing"
)]

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use agentsh_bench_support::{Row, median, quick, time_each};
use agentsh_renderer::{
    BashArgs, CallState, DefaultRenderer, Expansion, LineWindow, Renderer, Timeout, ToolCallView,
    ToolDetails, ToolResult,
};

const WIDTH: u16 = 120;
const BASELINE: &str = "copying the text once";

/// 1,000 lines of about 51 bytes each: build output with a long line every 50.
fn result_text() -> String {
    let mut text = String::with_capacity(52_000);
    for n in 0..1000 {
        if n % 50 == 49 {
            text.push_str(&format!("warning: unused variable `x{n}` in a line long enough to wrap once at 120 columns ... {}\n", "-".repeat(60)));
        } else {
            text.push_str(&format!(
                "   Compiling crate-{n:04} v0.{}.{} (/work/src/c{n:04})\n",
                n % 17,
                n % 5
            ));
        }
    }
    text
}

/// 1,000 lines of about 51 bytes of CJK text with an emoji and a combining mark each: the
/// slow path of the layout (grapheme segmentation).
fn cjk_text() -> String {
    let mut text = String::with_capacity(56_000);
    for n in 0..1000 {
        text.push_str(&format!("{n:04} 日本語のテキスト、幅は二列 👍🏽 e\u{301}\n"));
    }
    text
}

fn row(metric: &str, took: Duration, copy: Duration) {
    let ms = took.as_secs_f64() * 1e3;
    Row::new("renderer", metric)
        .value(took.as_secs_f64() * 1e6, "µs")
        .ratio(took.as_secs_f64() / copy.as_secs_f64(), BASELINE)
        .goal("< 1 ms", ms < 1.0)
        .report();
}

fn main() {
    let runs = if quick() { 50 } else { 2_000 };
    let text = result_text();
    let details = ToolDetails {
        exit_code: Some(0),
        ..ToolDetails::not_run(Path::new("/work"), Timeout::DEFAULT)
    };
    let result = ToolResult::new(text.clone(), details, false);
    let args = BashArgs {
        command: "cargo build".into(),
        ..BashArgs::default()
    };
    let renderer = DefaultRenderer::default();

    let copy = median(&time_each(runs, || {
        black_box(black_box(&text).clone());
    }));
    let collapsed = median(&time_each(runs, || {
        let view = ToolCallView::new(&args, "/work", CallState::Done(black_box(&result)));
        black_box(renderer.tool_call(&view, WIDTH));
    }));
    let expanded = median(&time_each(runs, || {
        let mut view = ToolCallView::new(&args, "/work", CallState::Done(black_box(&result)));
        // What a host does on a scroll: find the window, then draw it.
        view.expansion = Expansion::Expanded {
            window: LineWindow::of_text(&text, 480),
            rows: 40,
        };
        black_box(renderer.tool_call(&view, WIDTH));
    }));
    let cjk = cjk_text();
    let cjk_result = ToolResult::new(cjk.clone(), result.details.clone(), false);
    let cjk_copy = median(&time_each(runs, || {
        black_box(black_box(&cjk).clone());
    }));
    let cjk_collapsed = median(&time_each(runs, || {
        let view = ToolCallView::new(&args, "/work", CallState::Done(black_box(&cjk_result)));
        black_box(renderer.tool_call(&view, WIDTH));
    }));
    Row::new("renderer", format!("{BASELINE} (50 KB)"))
        .value(copy.as_secs_f64() * 1e6, "µs")
        .report();
    row(
        "50 KB, 1,000-line result collapsed at 120 columns",
        collapsed,
        copy,
    );
    row(
        "50 KB, 1,000-line result expanded, 40-row window at 120 columns",
        expanded,
        copy,
    );
    row(
        &format!(
            "{} KB CJK and emoji result collapsed at 120 columns",
            cjk.len() / 1024
        ),
        cjk_collapsed,
        cjk_copy,
    );
}
