//! A real write failure mid-spill (`EFBIG` from `RLIMIT_FSIZE`, set in a child process): no
//! partial file remains, whichever way the reservation ends.

use std::path::Path;

use agentsh_artifact_store::Spill;

use crate::child;
use crate::util::{names, open};

/// The file size limit of the child, in bytes.
const LIMIT: u64 = 100_000;

/// Runs in the child: limits file sizes, ignores SIGXFSZ (so writes fail with EFBIG instead of
/// killing the process), then makes a spill fail in the way `how` names.
pub fn in_child(store_dir: &Path, how: &str) {
    // SAFETY: plain libc calls on this (child) process's own limits and signal disposition.
    unsafe {
        assert_ne!(libc::signal(libc::SIGXFSZ, libc::SIG_IGN), libc::SIG_ERR);
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        assert_eq!(libc::getrlimit(libc::RLIMIT_FSIZE, &raw mut limit), 0);
        limit.rlim_cur = LIMIT;
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &raw const limit), 0);
    }
    let store = open(store_dir);
    let mut spill = store.allocate().expect("allocate");
    println!("ARTIFACT-PATH {}", spill.path().display());
    let chunk = vec![b'x'; 10_000];
    let error = match how {
        // Unbuffered-size chunks: the write itself fails once the limit is crossed.
        "write" => loop {
            if let Err(err) = spill.write_all(&vec![b'y'; 70_000]) {
                break err;
            }
        },
        // 90,000 bytes reach the file, 20,000 wait in the buffer; the flush fails.
        "finish" => {
            spill
                .write_all(&vec![b'z'; 90_000])
                .expect("below the limit");
            spill.write_all(&chunk[..]).expect("buffered");
            spill.write_all(&chunk[..]).expect("buffered");
            spill.finish().expect_err("the flush crosses the limit")
        }
        other => panic!("unknown failure {other}"),
    };
    println!("WRITE-ERROR {error}");
    println!("WRITE-ERROR-CODE {:?}", error.raw_os_error());
    let end = std::env::var("AGENTSH_ARTIFACT_TEST_END").unwrap_or_default();
    if end == "drop" {
        drop(spill);
    } else {
        Box::new(spill).discard();
    }
}

fn run(how: &str, end: &str) -> (tempfile::TempDir, String, String, String) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("artifacts");
    let mut command = child::command("write-failure", &dir, None, how);
    command.env("AGENTSH_ARTIFACT_TEST_END", end);
    let output = command.output().expect("spawn child");
    let path = child::values(&output, "ARTIFACT-PATH").remove(0);
    let error = child::values(&output, "WRITE-ERROR").remove(0);
    let code = child::values(&output, "WRITE-ERROR-CODE").remove(0);
    (tmp, path, error, code)
}

fn check(how: &str, end: &str) {
    let (tmp, path, error, code) = run(how, end);
    // The file system's own error, OS code intact (the sink names the artifact and the step).
    assert_eq!(
        (error.as_str(), code.as_str()),
        ("File too large (os error 27)", "Some(27)"),
        "{how}/{end}"
    );
    assert!(!Path::new(&path).exists(), "{how}/{end}: partial file left");
    assert_eq!(names(&tmp.path().join("artifacts")), Vec::<String>::new());
}

#[test]
fn a_failed_write_then_discard_leaves_no_file() {
    check("write", "discard");
}

#[test]
fn a_failed_write_then_drop_leaves_no_file() {
    check("write", "drop");
}

#[test]
fn a_failed_flush_at_finish_then_discard_leaves_no_file() {
    check("finish", "discard");
}

#[test]
fn a_failed_flush_at_finish_then_drop_leaves_no_file() {
    check("finish", "drop");
}
