//! Every file of the committed fuzz corpora (`fuzz/corpus/<target>/`), the inputs the fuzzers
//! found and the seeds they started from, through the same checks the fuzz targets make: an
//! input once found keeps being checked on stable Rust, in every `cargo xtask ci`.

use std::path::{Path, PathBuf};

use agentsh_fuzz_checks::TARGETS;

fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target)
}

/// The files of `dir`, sorted (a listing that fails is a failure: a corpus must be there).
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
        .map(|entry| entry.expect("a corpus entry").path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    files
}

#[test]
fn every_corpus_file_passes_its_targets_checks() {
    let mut failures = Vec::new();
    let mut total = 0;
    for (target, check) in TARGETS {
        let files = inputs(&corpus_dir(target));
        assert!(!files.is_empty(), "the corpus of {target} is empty");
        for file in files {
            let data = std::fs::read(&file).expect("a corpus file");
            total += 1;
            if let Err(panic) = std::panic::catch_unwind(|| check(&data)) {
                let why = panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("a panic");
                failures.push(format!("{target}/{}: {why}", file.display()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {total} inputs fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_target_has_a_fuzz_target_and_a_corpus() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let manifest = std::fs::read_to_string(fuzz.join("Cargo.toml")).expect("fuzz/Cargo.toml");
    for (target, _) in TARGETS {
        let source = fuzz.join("fuzz_targets").join(format!("{target}.rs"));
        let text = std::fs::read_to_string(&source)
            .unwrap_or_else(|err| panic!("{}: {err}", source.display()));
        assert!(
            text.contains(&format!("agentsh_fuzz_checks::{target}(")),
            "{} does not call its check",
            source.display()
        );
        assert!(
            manifest.contains(&format!("name = \"{target}\"")),
            "fuzz/Cargo.toml lacks {target}"
        );
        assert!(corpus_dir(target).is_dir(), "no corpus for {target}");
    }
}
