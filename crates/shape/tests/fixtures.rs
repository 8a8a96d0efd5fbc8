//! Every fixture under `tests/fixtures/<family>/` — the output of a real program, with the
//! command that made it — shaped as a call would be, snapshotted, and checked against the
//! guarantees: every diagnostic line of the raw output is in the shaped text, and the shaped
//! text is only lines of the raw output in their order (markers aside, groups rebuilt).
//!
//! A fixture file is a header, `---`, then the raw output:
//!
//! ```text
//! $ cargo test
//! # made in a crate with one failing test (cargo 1.91)
//! ---
//!    Compiling …
//! ```

use std::path::{Path, PathBuf};

use agentsh_shape::{Shaped, Shaping, is_diagnostic, shape_text};
use proptest::prelude::*;

const MAX_BYTES: usize = 50 * 1024;

struct Fixture {
    name: String,
    command: String,
    output: String,
}

fn fixtures() -> Vec<Fixture> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("tests/fixtures exists")
        .flat_map(|family| std::fs::read_dir(family.expect("a family").path()).expect("its files"))
        .map(|entry| entry.expect("a fixture").path())
        .filter(|path| path.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("a fixture is UTF-8 text");
            let (header, output) = text
                .split_once("\n---\n")
                .unwrap_or_else(|| panic!("{}: no `---` after the header", path.display()));
            let command = header
                .lines()
                .find_map(|l| l.strip_prefix("$ "))
                .unwrap_or_else(|| panic!("{}: no `$ command` line", path.display()))
                .to_owned();
            let family = path.parent().and_then(Path::file_name).expect("a family");
            let case = path.file_stem().expect("a case");
            Fixture {
                name: format!("{}__{}", family.to_string_lossy(), case.to_string_lossy()),
                command,
                output: output.to_owned(),
            }
        })
        .collect()
}

fn is_marker(line: &str) -> bool {
    line.starts_with("[… ") && line.ends_with(" …]")
}

/// Checks that the shaped text is lines of `raw` in order (a group header followed by its
/// indented members stands for header + member), and that every diagnostic line of `raw` is
/// among them. Returns what is wrong.
fn check(raw: &str, shaped: &Shaped) -> Result<(), String> {
    let raw_lines: Vec<&str> = raw.lines().collect();
    let mut at = 0;
    let mut kept = vec![false; raw_lines.len()];
    let mut header: Option<&str> = None;
    // The header has members: it stood for their common prefix.
    let mut members = false;
    let find = |from: usize, wanted: &str| raw_lines[from..].iter().position(|l| *l == wanted);
    for line in shaped.text.lines() {
        if is_marker(line) {
            header = None;
            continue;
        }
        if let (Some(h), Some(member)) = (header, line.strip_prefix("  ")) {
            let whole = format!("{h}{member}");
            if let Some(i) = find(at, &whole) {
                kept[at + i] = true;
                at += i + 1;
                members = true;
                continue;
            }
        }
        if let Some(i) = find(at, line) {
            kept[at + i] = true;
            at += i + 1;
            header = None;
            continue;
        }
        // Not a line of the output: it can only be a group's header.
        if let Some(h) = header.filter(|_| !members) {
            return Err(format!("a line that is not in the output: {h:?}"));
        }
        header = Some(line);
        members = false;
    }
    if let Some(h) = header.filter(|_| !members) {
        return Err(format!("a line that is not in the output: {h:?}"));
    }
    for (i, line) in raw_lines.iter().enumerate() {
        if is_diagnostic(line) && !kept[i] {
            return Err(format!("diagnostic line {} left out: {line:?}", i + 1));
        }
    }
    Ok(())
}

#[test]
fn every_fixture_is_shaped_within_the_guarantees() {
    let fixtures = fixtures();
    assert!(!fixtures.is_empty());
    let shaping = Shaping::default();
    for fixture in &fixtures {
        let shaped = shape_text(&shaping, &fixture.command, &fixture.output, MAX_BYTES)
            .unwrap_or_else(|| panic!("{}: `{}` is not shaped", fixture.name, fixture.command));
        if let Err(err) = check(&fixture.output, &shaped) {
            panic!("{}: {err}\n--- shaped:\n{}", fixture.name, shaped.text);
        }
        assert!(
            shaped.changed,
            "{}: the shaper left the output as it was",
            fixture.name
        );
        let snapshot = format!(
            "$ {}\n# {} of {} lines kept, {} bytes of {}\n{}",
            fixture.command,
            shaped.kept_lines,
            shaped.raw_lines,
            shaped.text.len(),
            shaped.raw_bytes,
            shaped.text
        );
        insta::assert_snapshot!(fixture.name.clone(), snapshot);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Lines of every fixture, in any order and number, through every fixture's shaper: the
    /// guarantees hold on output no program printed in that order.
    #[test]
    fn guarantees_hold_on_mixed_fixture_lines(
        picks in prop::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>()), 0..200),
        shaper in any::<prop::sample::Index>(),
        chunk in 1usize..64,
    ) {
        let fixtures = fixtures();
        let lines: Vec<&str> = fixtures.iter().flat_map(|f| f.output.lines()).collect();
        let mut raw = String::new();
        for (_, line) in &picks {
            let picked: &&str = line.get(&lines);
            raw.push_str(picked);
            raw.push('\n');
        }
        let command = &shaper.get(&fixtures).command;
        let plan = Shaping::default().plan(command).unwrap();
        let mut run = plan.run(MAX_BYTES);
        let bytes = raw.as_bytes();
        let mut start = 0;
        while start < bytes.len() {
            let mut end = (start + chunk).min(bytes.len());
            while !raw.is_char_boundary(end) {
                end += 1;
            }
            run.push(&raw[start..end]);
            start = end;
        }
        let shaped = run.finish();
        let whole = shape_text(&Shaping::default(), command, &raw, MAX_BYTES).unwrap();
        prop_assert_eq!(&shaped, &whole, "chunking changed the result");
        if let Err(err) = check(&raw, &shaped) {
            prop_assert!(false, "{}: {}\n--- raw:\n{}\n--- shaped:\n{}", command, err, raw, shaped.text);
        }
    }
}
