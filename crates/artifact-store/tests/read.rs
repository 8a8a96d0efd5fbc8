//! Line-range reads: hand-checked cases, then coreutils (`tail -n +K | head -n L`, and awk's `NR`
//! for the line count) as the reference on generated and large inputs.

use std::path::Path;
use std::process::Command;

use agentsh_artifact_store::{ArtifactStore, ArtifactText, Spill};
use proptest::prelude::*;

use crate::util::{artifact, artifact_path, new_store};

/// `(offset, limit) → (text, total_lines)` on one artifact.
fn check(content: &[u8], cases: &[(Option<u64>, Option<u64>, &str)], total: u64) {
    let (_tmp, store) = new_store();
    let id = artifact(&store, content);
    for &(offset, limit, expected) in cases {
        let read = store
            .read(&format!("artifact://{id}"), offset, limit)
            .expect("read");
        assert_eq!(
            read,
            ArtifactText {
                text: expected.to_owned(),
                total_lines: total,
                path: artifact_path(&store, id),
            },
            "offset {offset:?} limit {limit:?}"
        );
    }
}

#[test]
fn without_a_final_newline() {
    check(
        b"alpha\nbeta\ngamma",
        &[
            (None, None, "alpha\nbeta\ngamma"),
            (Some(1), None, "alpha\nbeta\ngamma"),
            (Some(2), None, "beta\ngamma"),
            (Some(2), Some(1), "beta\n"),
            (Some(3), Some(5), "gamma"),
            (None, Some(2), "alpha\nbeta\n"),
            (Some(4), None, ""),
            (Some(4), Some(1), ""),
            (Some(0), Some(1), "alpha\n"),
            (Some(1), Some(0), ""),
            (Some(u64::MAX), Some(u64::MAX), ""),
            (Some(2), Some(u64::MAX), "beta\ngamma"),
        ],
        3,
    );
}

#[test]
fn with_a_final_newline() {
    check(
        b"a\nb\n",
        &[
            (None, None, "a\nb\n"),
            (Some(2), None, "b\n"),
            (Some(3), None, ""),
            (Some(2), Some(1), "b\n"),
        ],
        2,
    );
}

#[test]
fn empty_lines_count() {
    check(
        b"\n\nx\n\n",
        &[
            (Some(2), Some(1), "\n"),
            (Some(3), Some(1), "x\n"),
            (Some(4), None, "\n"),
        ],
        4,
    );
}

#[test]
fn a_single_unterminated_line() {
    check(b"x", &[(None, None, "x"), (Some(2), None, "")], 1);
}

#[test]
fn an_artifact_still_empty_has_no_lines() {
    let (_tmp, store) = new_store();
    let spill = store.allocate().expect("allocate");
    let read = store.read(spill.id(), None, None).expect("read");
    assert_eq!(read.text, "");
    assert_eq!(read.total_lines, 0);
}

#[test]
fn invalid_utf8_becomes_replacement_characters() {
    check(
        b"a\xff\nb\xe2\x82\n",
        &[(None, None, "a\u{fffd}\nb\u{fffd}\n")],
        2,
    );
}

#[test]
fn reads_see_bytes_after_finish_while_the_reservation_lives() {
    let (_tmp, store) = new_store();
    let mut spill = store.allocate().expect("allocate");
    spill.write_all(b"first\nsecond\n").expect("write");
    spill.finish().expect("finish");
    let read = store.read("1", Some(2), None).expect("read");
    assert_eq!(read.text, "second\n");
    assert_eq!(read.total_lines, 2);
}

/// What coreutils print for the same request: `tail -n +OFFSET FILE | head -n LIMIT`, and
/// awk's `NR` (which, like the spec's rule, counts an unterminated last line).
fn coreutils(path: &Path, offset: Option<u64>, limit: Option<u64>) -> (Vec<u8>, u64) {
    let offset = offset.unwrap_or(1).to_string();
    let script = match limit {
        Some(_) => r#"tail -n "+$1" "$2" | head -n "$3""#,
        None => r#"tail -n "+$1" "$2""#,
    };
    let limit = limit.map(|l| l.to_string()).unwrap_or_default();
    let text = Command::new("sh")
        .args(["-c", script, "sh", &offset])
        .arg(path)
        .arg(&limit)
        .output()
        .expect("run tail/head");
    assert!(text.status.success(), "{text:?}");
    let count = Command::new("awk")
        .args(["END { print NR }"])
        .arg(path)
        .output()
        .expect("run awk");
    assert!(count.status.success(), "{count:?}");
    let total = String::from_utf8(count.stdout).expect("utf-8");
    (text.stdout, total.trim().parse().expect("a number"))
}

fn agrees_with_coreutils(store: &ArtifactStore, id: u64, offset: Option<u64>, limit: Option<u64>) {
    let read = store.read(&id.to_string(), offset, limit).expect("read");
    let (text, total) = coreutils(&artifact_path(store, id), offset, limit);
    assert_eq!(
        read.text.as_bytes(),
        text,
        "offset {offset:?} limit {limit:?}"
    );
    assert_eq!(read.total_lines, total);
}

#[test]
fn large_artifact_with_lines_across_buffer_boundaries_agrees_with_coreutils() {
    // Lines from 0 to 150,000 bytes long, so lines start, end and span the 64 KiB read buffer
    // at many different places; no final newline.
    let mut content = Vec::new();
    let mut len = 0usize;
    for line in 0..120 {
        len = (len * 7 + 1_337) % 150_001;
        content.extend(std::iter::repeat_n(b'a' + (line % 26) as u8, len));
        content.push(b'\n');
    }
    content.extend_from_slice(b"tail without newline");
    let (_tmp, store) = new_store();
    let id = artifact(&store, &content);
    for (offset, limit) in [
        (None, None),
        (Some(1), Some(1)),
        (Some(2), Some(3)),
        (Some(60), Some(10)),
        (Some(100), None),
        (Some(121), None),
        (Some(122), None),
        (Some(119), Some(5)),
    ] {
        agrees_with_coreutils(&store, id, offset, limit);
    }
}

proptest! {
    #[test]
    fn line_ranges_agree_with_coreutils(
        content in proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'b'), Just(b'\n')], 1..80),
        offset in proptest::option::of(0u64..12),
        limit in proptest::option::of(0u64..12),
    ) {
        let (_tmp, store) = new_store();
        let id = artifact(&store, &content);
        agrees_with_coreutils(&store, id, offset, limit);
    }
}
