//! `artifact://` resolution and its exact error texts.

use std::fs;
use std::os::unix::fs::symlink;

use agentsh_artifact_store::{ArtifactError, ArtifactStore, parse_artifact_id};

use crate::util::{artifact, artifact_path, new_store};

const FORTY_DIGITS: &str = "1234567890123456789012345678901234567890";

/// A store holding artifacts 1, 2, 5 and 10 (3, 4 and 6..9 allocated then discarded).
fn store_with_gaps() -> (tempfile::TempDir, ArtifactStore) {
    let (tmp, store) = new_store();
    for id in 1..=10 {
        let mut spill = store.allocate().expect("allocate");
        if [1, 2, 5, 10].contains(&id) {
            agentsh_artifact_store::Spill::write_all(&mut spill, b"x\n").expect("write");
        }
    }
    assert_eq!(store.ids().expect("ids"), [1, 2, 5, 10]);
    (tmp, store)
}

fn error(store: &ArtifactStore, id_or_url: &str) -> String {
    let err = store.resolve(id_or_url).expect_err(id_or_url);
    let read_err = store.read(id_or_url, None, None).expect_err(id_or_url);
    assert_eq!(
        read_err.to_string(),
        err.to_string(),
        "read and resolve agree"
    );
    err.to_string()
}

#[test]
fn error_texts() {
    let (_tmp, store) = store_with_gaps();
    let not_found = |id: &str| format!("Artifact {id} not found. Available: 1, 2, 5, 10");
    let cases: &[(&str, String)] = &[
        (
            "artifact://",
            "artifact:// URL requires a numeric ID: artifact://".into(),
        ),
        ("", "artifact:// URL requires a numeric ID: ".into()),
        (
            "artifact://abc",
            "artifact:// ID must be numeric, got: abc".into(),
        ),
        (
            "artifact://../x",
            "artifact:// ID must be numeric, got: ../x".into(),
        ),
        ("../x", "artifact:// ID must be numeric, got: ../x".into()),
        (
            "1/../2",
            "artifact:// ID must be numeric, got: 1/../2".into(),
        ),
        (
            "artifact://1/../2",
            "artifact:// ID must be numeric, got: 1/../2".into(),
        ),
        (
            "artifact://5/",
            "artifact:// ID must be numeric, got: 5/".into(),
        ),
        (
            "/etc/passwd",
            "artifact:// ID must be numeric, got: /etc/passwd".into(),
        ),
        ("-1", "artifact:// ID must be numeric, got: -1".into()),
        ("+1", "artifact:// ID must be numeric, got: +1".into()),
        (" 1", "artifact:// ID must be numeric, got:  1".into()),
        (
            "1.bash.log",
            "artifact:// ID must be numeric, got: 1.bash.log".into(),
        ),
        (
            "\u{661}",
            "artifact:// ID must be numeric, got: \u{661}".into(),
        ),
        (
            "ARTIFACT://1",
            "artifact:// ID must be numeric, got: ARTIFACT://1".into(),
        ),
        (
            "artifact://artifact://1",
            "artifact:// ID must be numeric, got: artifact://1".into(),
        ),
        ("3", not_found("3")),
        ("artifact://3", not_found("3")),
        ("0", not_found("0")),
        ("05", not_found("05")),
        ("18446744073709551616", not_found("18446744073709551616")),
        (FORTY_DIGITS, not_found(FORTY_DIGITS)),
        (
            &format!("artifact://{FORTY_DIGITS}"),
            not_found(FORTY_DIGITS),
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(&error(&store, input), expected, "input {input:?}");
    }
}

#[test]
fn not_found_in_an_empty_store_lists_none() {
    let (_tmp, store) = new_store();
    assert_eq!(
        error(&store, "artifact://1"),
        "Artifact 1 not found. Available: none"
    );
    assert_eq!(
        error(&store, FORTY_DIGITS),
        format!("Artifact {FORTY_DIGITS} not found. Available: none")
    );
}

#[test]
fn available_ids_are_in_numeric_order() {
    let (_tmp, store) = store_with_gaps();
    match store.resolve("7") {
        Err(ArtifactError::NotFound { id, available }) => {
            assert_eq!(id, "7");
            assert_eq!(available, [1, 2, 5, 10]);
        }
        other => panic!("expected NotFound, got {other:?}"),
    }
}

#[test]
fn bare_ids_and_urls_resolve_to_the_file() {
    let (_tmp, store) = store_with_gaps();
    let expected = store.dir().join("10.bash.log");
    assert_eq!(store.resolve("10").expect("bare"), expected);
    assert_eq!(store.resolve("artifact://10").expect("url"), expected);
}

#[test]
fn syntax_is_checked_without_a_store() {
    assert_eq!(parse_artifact_id("artifact://42").expect("url"), "42");
    assert_eq!(parse_artifact_id("007").expect("digits"), "007");
    assert_eq!(
        parse_artifact_id("artifact://4 2")
            .expect_err("space")
            .to_string(),
        "artifact:// ID must be numeric, got: 4 2"
    );
}

#[test]
fn things_named_like_artifacts_that_are_not_files_are_not_found() {
    let (tmp, store) = new_store();
    artifact(&store, b"real\n");
    let outside = tmp.path().join("secret.txt");
    fs::write(&outside, b"secret\n").expect("write");
    symlink(&outside, store.dir().join("2.bash.log")).expect("symlink");
    fs::create_dir(store.dir().join("3.bash.log")).expect("mkdir");
    let fifo = store.dir().join("4.bash.log");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(status.success());
    for id in ["2", "3", "4"] {
        assert_eq!(
            error(&store, id),
            format!("Artifact {id} not found. Available: 1")
        );
    }
    assert_eq!(store.resolve("1").expect("real"), artifact_path(&store, 1));
}

#[test]
fn list_is_newest_first_with_sizes() {
    let (_tmp, store) = new_store();
    let old = artifact(&store, b"old\n");
    let newer = artifact(&store, b"newer, longer\n");
    let newest = artifact(&store, b"x");
    crate::util::age(&artifact_path(&store, old), crate::util::hours(2));
    crate::util::age(&artifact_path(&store, newer), crate::util::hours(1));
    // Named like an artifact but not a file: not listed.
    fs::create_dir(store.dir().join("99.bash.log")).expect("a directory named like one");
    let listed: Vec<(u64, u64)> = store
        .list()
        .expect("list")
        .into_iter()
        .map(|info| (info.id, info.size))
        .collect();
    assert_eq!(listed, [(newest, 1), (newer, 14), (old, 4)]);
}

#[test]
fn info_is_one_artifact_as_list_shows_it() {
    let (_tmp, store) = new_store();
    let one = artifact(&store, b"newer, longer\n");
    let listed = store.list().expect("list");
    let by_id = store.info(&one.to_string()).expect("info");
    assert_eq!((by_id.id, by_id.size), (one, 14));
    assert_eq!(by_id.modified, listed[0].modified);
    let by_url = store
        .info(&format!("artifact://{one}"))
        .expect("info by URL");
    assert_eq!(by_url.id, one);
    // The errors are resolve's, exactly.
    assert_eq!(
        store.info("9").expect_err("missing").to_string(),
        format!("Artifact 9 not found. Available: {one}")
    );
    fs::create_dir(store.dir().join("99.bash.log")).expect("a directory named like one");
    assert_eq!(
        store.info("99").expect_err("not a file").to_string(),
        store.resolve("99").expect_err("not a file").to_string()
    );
}
