//! Differential tests against real programs: `apply_head_tail` against coreutils `head`/`tail`,
//! and normalised commands run by bash against the original pipelines.

use std::process::{Command, Stdio};

use agentsh_bash_normalize::{Limits, apply_head_tail, count_lines, normalize};
use proptest::prelude::*;
use proptest::sample::select;

use crate::support::{process_cases, run_with_input};

/// Texts with and without a final newline, empty lines, CRLF, lone CR and non-ASCII.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        (
            prop::collection::vec(
                select(vec!["", "a", "bb", " ", "\r", "x\r", "é", "tab\t", "日本"]),
                0..12
            ),
            select(vec!["\n", "\r\n"]),
            any::<bool>(),
        )
            .prop_map(|(lines, sep, final_newline)| {
                let mut text = lines.join(sep);
                if final_newline {
                    text.push_str(sep);
                }
                text
            }),
        "[ab\n\r]{0,30}",
    ]
}

/// A count for `-n`: none, small, around the line count, or huge.
fn count(lines: u64) -> impl Strategy<Value = Option<u32>> {
    let lines = u32::try_from(lines).unwrap_or(u32::MAX);
    prop_oneof![
        1 => Just(None),
        1 => Just(Some(0)),
        4 => (0..=lines.saturating_add(3)).prop_map(Some),
        1 => Just(Some(u32::MAX)),
    ]
}

fn coreutils(text: &str, head: Option<u32>, tail: Option<u32>) -> Vec<u8> {
    let mut bytes = text.as_bytes().to_vec();
    if let Some(head) = head {
        bytes = run_with_input("head", &["-n", &head.to_string()], &bytes);
    }
    if let Some(tail) = tail {
        bytes = run_with_input("tail", &["-n", &tail.to_string()], &bytes);
    }
    bytes
}

/// Runs `command` in a fresh bash with stderr merged into stdout; returns the output.
fn bash_output(command: &str) -> Vec<u8> {
    let output = Command::new("bash")
        .arg("-c")
        .arg(format!("{{\n{command}\n}} 2>&1"))
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .expect("bash must be installed to run these tests");
    output.stdout
}

/// Producers that write nothing outside the pipeline and have no side effects, each with
/// whether it writes to stderr (then a `2>&1` must carry that into the pipe).
fn producer() -> impl Strategy<Value = (&'static str, bool)> {
    select(vec![
        ("seq 12", false),
        ("seq 20000", false),
        ("printf 'a\\nb\\nc\\n'", false),
        ("printf 'x\\r\\ny\\r\\nz'", false),
        ("printf 'no newline'", false),
        ("printf ''", false),
        ("printf '\\n\\n\\n'", false),
        ("echo 'a | b'", false),
        ("seq 20 | sort -r", false),
        ("seq 5 | tac", false),
        ("seq 30 | grep 1 | sort -n", false),
        ("for i in 1 2 3; do echo \"$i\"; done", false),
        ("(seq 3; seq 2)", false),
        ("{ seq 2; printf 'z'; }", false),
        ("if true; then seq 4; fi", false),
        ("echo \"$(seq 3 | head -1)\"", false),
        ("export LIMITED=1; echo \"$LIMITED\"", false),
        ("{ echo out; echo err >&2; echo out2; }", true),
        ("ls /nonexistent-agentsh-dir", true),
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(process_cases()))]

    #[test]
    fn apply_head_tail_agrees_with_coreutils(
        (text, head, tail) in text().prop_flat_map(|text| {
            let lines = count_lines(&text);
            (Just(text), count(lines), count(lines))
        })
    ) {
        let ours = apply_head_tail(&text, head, tail);
        let theirs = coreutils(&text, head, tail);
        prop_assert_eq!(ours.as_bytes(), theirs.as_slice(), "text {:?} head {:?} tail {:?}", text, head, tail);
    }

    /// The crate's promise, end to end with real bash: running the normalised command and applying
    /// the extracted limit gives what the original pipeline printed.
    #[test]
    fn normalised_command_plus_limit_prints_what_the_pipeline_printed(
        prefix in select(vec!["", "true && ", "x=1; ", "cd / && ", ":\n", "false || "]),
        (producer, writes_stderr) in producer(),
        merge in any::<bool>(),
        (name, form, n) in (select(vec!["head", "tail"]), 0..3usize, 0..15u32),
    ) {
        let merge = if merge || writes_stderr { " 2>&1" } else { "" };
        let limit = match form {
            0 => format!("{name} -n {n}"),
            1 => format!("{name} -n{n}"),
            _ => format!("{name} -{n}"),
        };
        let original = format!("{prefix}{producer}{merge} | {limit}");
        let normalized = normalize(&original);
        let expected_limits = if name == "head" {
            Limits { head: Some(n), tail: None }
        } else {
            Limits { head: None, tail: Some(n) }
        };
        prop_assert_eq!(normalized.limits, expected_limits, "{:?}", original);
        let want = bash_output(&original);
        let got = bash_output(&normalized.command);
        let got = apply_head_tail(std::str::from_utf8(&got).expect("utf-8 output"), normalized.limits.head, normalized.limits.tail);
        prop_assert_eq!(
            String::from_utf8_lossy(&want),
            got,
            "original {:?} normalised {:?}",
            original,
            normalized.command
        );
    }
}

/// The subshell rule matters: state changed by the producer must not leak out of it, exactly as
/// it did not leak out of the pipeline.
#[test]
fn producer_keeps_its_subshell() {
    for (command, after) in [
        ("export A=1 | head -1", "echo \"A=${A-unset}\""),
        ("cd / | tail -1", "pwd"),
        ("exit 3 | tail -1", "echo still-here"),
        ("exec true | head -1", "echo still-here"),
    ] {
        let original = bash_output(&format!("cd /tmp\n{command}\n{after}"));
        let normalized = normalize(command);
        assert!(!normalized.limits.is_none(), "{command}");
        let rewritten = bash_output(&format!("cd /tmp\n{}\n{after}", normalized.command));
        assert_eq!(
            String::from_utf8_lossy(&rewritten),
            String::from_utf8_lossy(&original),
            "{command}"
        );
    }
}
