//! An artifact that could not be written: the notice says why the full output was
//! not saved, and `details.meta.truncation.artifactError` holds the reason, on every path.

use super::*;

const REASON: &str = "cannot write artifact 7: No space left on device (os error 28)";

/// What a sink reports when spilling `whole` failed: the tail, no id, the error.
fn not_saved(whole: &str) -> OutputSummary {
    OutputSummary {
        artifact_error: Some(REASON.into()),
        ..sink(whole, LIMIT, None)
    }
}

#[test]
fn the_notice_says_the_full_output_was_not_saved_and_why() {
    let whole = seq(1, 100_000);
    for code in [0, 2] {
        let call = Call::new(exited(not_saved(&whole), Some(code)), LIMIT as u64);
        let result = call.build().into_result();
        let outcome = if code == 0 {
            String::new()
        } else {
            format!("\n\nCommand exited with code {code}")
        };
        assert!(
            result.text().ends_with(&format!(
                "100000{outcome}\n\n[Showing lines 91468-100000 of 100000 (50.0KB limit). Full output not saved: {REASON}]"
            )),
            "exit {code}: {}",
            &result.text()[result.text().len() - 200..]
        );
        let truncation = call.truncation().expect("truncation");
        assert_eq!(truncation.artifact_id, None);
        assert_eq!(truncation.artifact_error.as_deref(), Some(REASON));
        let json = serde_json::to_value(&result.details).expect("json");
        assert_eq!(json["meta"]["truncation"]["artifactError"], REASON);
        assert!(json["meta"]["truncation"].get("artifactId").is_none());
    }
}

#[test]
fn a_timed_out_or_head_cut_run_still_carries_the_reason() {
    let whole = seq(1, 100_000);
    let call = Call::new(
        timed_out(not_saved(&whole), "Command timed out after 5 seconds"),
        LIMIT as u64,
    );
    assert!(
        call.text()
            .ends_with(&format!("Full output not saved: {REASON}]"))
    );
    // A head cut gets no notice (the caller asked for it), but the reason is still in details.
    let head = seq(1, 3);
    let call = Call::new(exited(not_saved(&whole), Some(0)), LIMIT as u64)
        .head(3)
        .capture(&head, false);
    assert!(!call.text().contains("not saved"), "{}", call.text());
    let truncation = call.truncation().expect("truncation");
    assert_eq!(truncation.truncated_by, TruncatedBy::Lines);
    assert_eq!(truncation.artifact_error.as_deref(), Some(REASON));
}

#[test]
fn the_bang_context_text_says_it_too() {
    let whole = seq(1, 100_000);
    let text = bang_context_text(
        "seq 100000",
        &exited(not_saved(&whole), Some(0)),
        LIMIT as u64,
        None,
    );
    assert!(
        text.ends_with(&format!(
            "\n\n[Showing lines 91468-100000 of 100000 (50.0KB limit). Full output not saved: {REASON}]"
        )),
        "{}",
        &text[text.len() - 200..]
    );
}
