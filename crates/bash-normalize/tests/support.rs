//! Helpers shared by the test modules: the corpus and real bash.

use std::io::Write;
use std::process::{Command, Stdio};

pub use agentsh_test_support::nl2bash_corpus as corpus;

/// Whether real bash (with extglob, as interactive shells usually have it) parses `command`.
/// `-n` only parses: nothing is run.
pub fn bash_parses(command: &str) -> bool {
    Command::new("bash")
        .args(["-O", "extglob", "-n", "-c", command])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("bash must be installed to run these tests")
        .success()
}

/// Runs `program` with `args`, feeding `input` on stdin; returns its stdout.
pub fn run_with_input(program: &str, args: &[&str], input: &[u8]) -> Vec<u8> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|err| panic!("cannot start {program}: {err}"));
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let input = input.to_vec();
    // Write from a thread: a large input must not deadlock against a full stdout pipe.
    let writer = std::thread::spawn(move || {
        // `head` may exit before reading everything: a broken pipe is expected then.
        let _ = stdin.write_all(&input);
    });
    let output = child.wait_with_output().expect("wait for the child");
    writer.join().expect("writer thread");
    assert!(
        output.status.success(),
        "{program} {args:?} failed: {:?}",
        output.status
    );
    output.stdout
}

/// The case count for tests that spawn processes: a quarter of `PROPTEST_CASES` (256 when unset).
pub fn process_cases() -> u32 {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .unwrap_or(256);
    (cases / 4).max(1)
}
