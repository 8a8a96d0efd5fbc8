//! The context text of a bang command (`!cmd`): fences, outcome lines, annotation, notice.

use super::*;

#[test]
fn bang_context_texts() {
    let done = exited(sink("a\nb\n", LIMIT, None), Some(0));
    assert_eq!(
        bang_context_text("ls", &done, LIMIT as u64, None),
        "Ran `ls`\n```\na\nb\n```"
    );

    let silent = exited(sink("", LIMIT, None), Some(0));
    assert_eq!(
        bang_context_text("true", &silent, LIMIT as u64, None),
        "Ran `true`\n(no output)"
    );

    let failed = exited(sink("oops\n", LIMIT, None), Some(2));
    assert_eq!(
        bang_context_text("make", &failed, LIMIT as u64, None),
        "Ran `make`\n```\noops\n```\n\nCommand exited with code 2"
    );

    let cancelled = BashResult {
        summary: sink("partial\n", LIMIT, None),
        annotation: Some("Command cancelled".into()),
        exit_code: None,
        cancelled: true,
        timed_out: false,
        session_restarted: false,
        blocked_hosts: Vec::new(),
        needs_terminal: None,
        limit: None,
    };
    assert_eq!(
        bang_context_text("sleep 9", &cancelled, LIMIT as u64, None),
        "Ran `sleep 9`\n```\n[Command cancelled]\npartial\n```\n\n(command cancelled)"
    );
    // Stopped before any output: the annotation line alone in the fence.
    let silent = BashResult {
        summary: sink("", LIMIT, None),
        ..cancelled.clone()
    };
    assert_eq!(
        bang_context_text("sleep 9", &silent, LIMIT as u64, None),
        "Ran `sleep 9`\n```\n[Command cancelled]\n```\n\n(command cancelled)"
    );

    let no_status = exited(sink("", LIMIT, None), None);
    assert_eq!(
        bang_context_text("x", &no_status, LIMIT as u64, None),
        "Ran `x`\n(no output)\n\nCommand failed: missing exit status"
    );

    let whole = seq(1, 30);
    let truncated = exited(sink(&whole, 20, Some("9")), Some(0));
    assert_eq!(
        bang_context_text("seq 30", &truncated, 20, None),
        "Ran `seq 30`\n```\n4\n25\n26\n27\n28\n29\n30\n```\n\n[Showing lines 24-30 of 30 (20B limit). Full: artifact://9]"
    );
}

#[test]
fn bang_fences_outgrow_backticks() {
    let done = exited(sink("```rust\nfn x() {}\n```\n", LIMIT, None), Some(0));
    assert_eq!(
        bang_context_text("cat README.md", &done, LIMIT as u64, None),
        "Ran `cat README.md`\n````\n```rust\nfn x() {}\n```\n````"
    );
    let silent = exited(sink("", LIMIT, None), Some(0));
    assert_eq!(
        bang_context_text("echo `date` >/dev/null", &silent, LIMIT as u64, None),
        "Ran ``echo `date` >/dev/null``\n(no output)"
    );
    assert_eq!(code_span("`x`"), "`` `x` ``");
}
