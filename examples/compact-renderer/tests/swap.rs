//! The renderer swap end to end: a host that draws through `&dyn Renderer` takes either renderer.

mod support;

use agentsh_compact_renderer::CompactRenderer;
use agentsh_protocol::JobState;
use agentsh_renderer::ratatui_core::buffer::Buffer;
use agentsh_renderer::ratatui_core::layout::Rect;
use agentsh_renderer::ratatui_core::widgets::Widget;
use agentsh_renderer::{
    BangView, CallState, DefaultRenderer, Renderer, Theme, ToolCallView, ToolCallWidget,
};

use support::{args, buffer_rows, details, finished_bang, job, numbers, plain, result};

/// What a host does with whichever renderer it was given: a call, a bang command and a job line.
fn draw(renderer: &dyn Renderer, width: u16) -> Vec<String> {
    let args = args("seq 12");
    let done = result(&numbers(1, 12), details(Some(0)), false);
    let view = ToolCallView::new(&args, "/project", CallState::Done(&done));
    let mut rows = plain(&renderer.tool_call(&view, width), width);
    let bang = finished_bang("git status", "On branch main\nnothing to commit\n", Some(0));
    rows.extend(plain(&renderer.bang(&BangView::new(&bang), width), width));
    rows.push(
        renderer
            .job_line(&job("1", JobState::Running, None, "npm run dev"), width)
            .to_string(),
    );
    rows
}

#[test]
fn both_renderers_draw_through_dyn_renderer() {
    let renderers: [(&str, Box<dyn Renderer>); 2] = [
        ("default", Box::new(DefaultRenderer::new(Theme::Unicode))),
        ("compact", Box::new(CompactRenderer)),
    ];
    let drawn: Vec<Vec<String>> = renderers
        .iter()
        .map(|(_, renderer)| draw(renderer.as_ref(), 60))
        .collect();
    assert_ne!(drawn[0], drawn[1]);
    // The default view's call line and collapsed header, the compact one-line header.
    assert_eq!(drawn[0][0], "$ seq 12");
    assert!(drawn[0][1].starts_with("… (2 earlier lines, showing 10 of 12)"));
    assert_eq!(
        drawn[1],
        [
            "✓ seq 12",
            "  10",
            "  11",
            "  12",
            "! ✓ git status",
            "  On branch main",
            "  nothing to commit",
            "#1 running npm run dev",
        ]
    );
}

#[test]
fn the_renderer_crates_widgets_take_the_compact_renderer() {
    // The host-side widget sizes itself by the renderer it is given.
    let args = args("seq 12");
    let done = result(&numbers(1, 12), details(Some(0)), false);
    let view = ToolCallView::new(&args, "/project", CallState::Done(&done));
    let renderer: &dyn Renderer = &CompactRenderer;
    let widget = ToolCallWidget::new(renderer, view, 20);
    assert_eq!(widget.height(), 4);
    let area = Rect::new(0, 0, 20, 4);
    let mut buf = Buffer::empty(area);
    (&widget).render(area, &mut buf);
    assert_eq!(
        buffer_rows(&buf),
        [
            "✓ seq 12            |",
            "  10                |",
            "  11                |",
            "  12                |",
        ]
    );
    let default = ToolCallWidget::new(&DefaultRenderer::default(), view, 20);
    assert_ne!(default.height(), widget.height());
}
