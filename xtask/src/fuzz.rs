//! `cargo xtask fuzz [TARGET] [--time S]`: the coverage-guided fuzz targets of `fuzz/` (cargo
//! fuzz, libFuzzer), each for `S` seconds (default 60), one after the other.
//!
//! They need the nightly toolchain and `cargo-fuzz`; without either this says so and what to
//! install, and fails (nothing else of the project needs them: the stable test `replay` of
//! `agentsh-fuzz-checks` runs every corpus file through the same checks in `cargo xtask ci`).
//!
//! Per target: libFuzzer's log goes to `target/fuzz-logs/<target>.log` and a summary line is
//! printed (runs, runs per second, coverage, corpus). An input that broke a check (libFuzzer's
//! `fuzz/artifacts/<target>/crash-…`, `timeout-…` or `oom-…`) is copied into the target's
//! corpus, `fuzz/corpus/<target>/`, where the replay test checks it from then on, and the task
//! fails naming it. Then the corpus is minimised (libFuzzer's `-set_cover_merge`): of what the
//! fuzzer added (files named by their SHA-1), the fewest that keep every feature stay; named
//! files (seeds, findings) always stay.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Seconds per target when `--time` is not given.
const DEFAULT_SECONDS: u64 = 60;
const USAGE: &str = "usage: cargo xtask fuzz [TARGET] [--time SECONDS]";

/// `cargo xtask fuzz [TARGET] [--time S]`.
pub fn run(args: &[String], root: &Path) -> Result<(), String> {
    let fuzz = root.join("fuzz");
    let all = targets(&fuzz)?;
    let mut only = None;
    let mut seconds = DEFAULT_SECONDS;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--time" => {
                let value = args
                    .next()
                    .ok_or(format!("--time needs seconds\n{USAGE}"))?;
                seconds = value
                    .parse()
                    .ok()
                    .filter(|&s| s > 0)
                    .ok_or(format!("--time: not a number of seconds: {value}\n{USAGE}"))?;
            }
            name if !name.starts_with('-') && only.is_none() => only = Some(name.to_owned()),
            other => return Err(format!("fuzz: unexpected argument {other}\n{USAGE}")),
        }
    }
    let chosen: Vec<String> = match only {
        Some(name) if all.contains(&name) => vec![name],
        Some(name) => {
            return Err(format!(
                "fuzz: no target {name}; the targets are: {}",
                all.join(", ")
            ));
        }
        None => all,
    };
    check_tools("cargo".as_ref())?;
    let logs = root.join("target").join("fuzz-logs");
    std::fs::create_dir_all(&logs)
        .map_err(|err| format!("cannot make {}: {err}", logs.display()))?;
    let mut findings = Vec::new();
    for target in &chosen {
        println!("==> fuzz {target} for {seconds} s");
        let started = Instant::now();
        let log = logs.join(format!("{target}.log"));
        let ok = fuzz_one(&fuzz, target, seconds, &log)?;
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let found = keep_findings(&fuzz, target)?;
        if !ok && found.is_empty() {
            return Err(format!(
                "fuzz {target}: cargo fuzz failed without a finding; its log, {}:\n{}",
                log.display(),
                tail(&text, 30)
            ));
        }
        minimise(&fuzz, target)?;
        let corpus = corpus_files(&fuzz.join("corpus").join(target)).len();
        println!(
            "==> fuzz {target}: {} in {:.0} s, corpus {corpus} files{}",
            summary(&text),
            started.elapsed().as_secs_f64(),
            if found.is_empty() {
                ", nothing found".to_owned()
            } else {
                format!(", FOUND {}", found.len())
            }
        );
        if !found.is_empty() {
            println!("{}", tail(&text, 30));
        }
        findings.extend(found.into_iter().map(|path| (target.clone(), path)));
    }
    if findings.is_empty() {
        return Ok(());
    }
    let mut message = String::from(
        "the fuzzers found inputs that break a check (now in the corpora, so that the replay test fails until they are fixed):",
    );
    for (target, path) in findings {
        let _ = write!(message, "\n  {target}: {}", path.display());
    }
    Err(message)
}

/// The targets named in `fuzz/Cargo.toml`, in its order.
fn targets(fuzz: &Path) -> Result<Vec<String>, String> {
    let path = fuzz.join("Cargo.toml");
    let text =
        std::fs::read_to_string(&path).map_err(|err| format!("{}: {err}", path.display()))?;
    let manifest: toml::Table = text
        .parse()
        .map_err(|err| format!("{}: {err}", path.display()))?;
    let names: Vec<String> = manifest
        .get("bin")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|bin| bin.get("name")?.as_str().map(str::to_owned))
        .collect();
    if names.is_empty() {
        return Err(format!("{}: no [[bin]] targets", path.display()));
    }
    Ok(names)
}

/// `cargo +nightly …` from `fuzz/`, with what the stable cargo running xtask set removed.
fn nightly_cargo(fuzz: &Path) -> Command {
    let mut command = nightly("cargo".as_ref());
    command.current_dir(fuzz);
    command
}

/// `<cargo> +nightly`, without the toolchain choices of the stable cargo running xtask.
fn nightly(cargo: &std::ffi::OsStr) -> Command {
    let mut command = Command::new(cargo);
    command
        .arg("+nightly")
        .env_remove("CARGO")
        .env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("RUSTC")
        .env_remove("RUSTDOC");
    command
}

/// The nightly toolchain and cargo-fuzz are there for `cargo` (rustup's), or what to install.
fn check_tools(cargo: &std::ffi::OsStr) -> Result<(), String> {
    let runs = |args: &[&str]| {
        nightly(cargo)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    };
    if !runs(&["--version"]) {
        return Err(
            "fuzzing needs the nightly toolchain, which is not installed here \
             (rustup toolchain install nightly); nothing was fuzzed. The corpus replay \
             runs on stable in cargo xtask ci."
                .to_owned(),
        );
    }
    if !runs(&["fuzz", "--version"]) {
        return Err("fuzzing needs cargo-fuzz, which is not installed here \
             (cargo install cargo-fuzz); nothing was fuzzed. The corpus replay runs on \
             stable in cargo xtask ci."
            .to_owned());
    }
    Ok(())
}

/// Runs one target for `seconds`, its log into `log`; whether libFuzzer ended without a
/// finding.
fn fuzz_one(fuzz: &Path, target: &str, seconds: u64, log: &Path) -> Result<bool, String> {
    let file = std::fs::File::create(log).map_err(|err| format!("{}: {err}", log.display()))?;
    let err = file
        .try_clone()
        .map_err(|err| format!("{}: {err}", log.display()))?;
    let status = nightly_cargo(fuzz)
        .args(["fuzz", "run", target, "--"])
        .arg(format!("-max_total_time={seconds}"))
        .args(["-timeout=10", "-print_final_stats=1"])
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err)
        .status()
        .map_err(|err| format!("cannot start cargo +nightly fuzz: {err}"))?;
    Ok(status.success())
}

/// Copies the inputs libFuzzer saved for `target` (a crash, a time-out, running out of
/// memory) into its corpus, and removes them from `artifacts/`; the corpus paths.
fn keep_findings(fuzz: &Path, target: &str) -> Result<Vec<PathBuf>, String> {
    let artifacts = fuzz.join("artifacts").join(target);
    let corpus = fuzz.join("corpus").join(target);
    let mut kept = Vec::new();
    for path in corpus_files(&artifacts) {
        let Some(name) = path.file_name().and_then(|name| name.to_str()) else {
            continue;
        };
        if !["crash-", "timeout-", "oom-", "leak-", "slow-unit-"]
            .iter()
            .any(|kind| name.starts_with(kind))
        {
            continue;
        }
        let to = corpus.join(name);
        std::fs::copy(&path, &to).map_err(|err| format!("{}: {err}", to.display()))?;
        std::fs::remove_file(&path).map_err(|err| format!("{}: {err}", path.display()))?;
        kept.push(to);
    }
    Ok(kept)
}

/// Minimises the corpus of `target`: libFuzzer's set-cover merge of it into an empty
/// directory picks the fewest of the fuzzer's files that keep every feature; the others go.
/// Named files (seeds, findings) always stay.
fn minimise(fuzz: &Path, target: &str) -> Result<(), String> {
    let corpus = fuzz.join("corpus").join(target);
    let merged = std::env::temp_dir().join(format!(
        "agentsh-fuzz-merge-{target}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&merged)
        .map_err(|err| format!("cannot make {}: {err}", merged.display()))?;
    let output = nightly_cargo(fuzz)
        .args(["fuzz", "run", target])
        .arg(&merged)
        .arg(&corpus)
        .args(["--", "-set_cover_merge=1"])
        .stdin(Stdio::null())
        .output()
        .map_err(|err| format!("cannot start cargo +nightly fuzz: {err}"));
    let kept: Vec<std::ffi::OsString> = corpus_files(&merged)
        .into_iter()
        .filter_map(|path| path.file_name().map(ToOwned::to_owned))
        .collect();
    let _ = std::fs::remove_dir_all(&merged);
    let output = output?;
    if !output.status.success() {
        return Err(format!(
            "minimising the corpus of {target} failed:\n{}",
            tail(&String::from_utf8_lossy(&output.stderr), 20)
        ));
    }
    for path in corpus_files(&corpus) {
        let dropped = is_fuzzer_named(&path)
            && path
                .file_name()
                .is_some_and(|name| !kept.iter().any(|k| k == name));
        if dropped {
            std::fs::remove_file(&path).map_err(|err| format!("{}: {err}", path.display()))?;
        }
    }
    Ok(())
}

/// Whether libFuzzer named the file: the SHA-1 of its bytes, 40 hex digits.
fn is_fuzzer_named(path: &Path) -> bool {
    path.file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| name.len() == 40 && name.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The files of `dir` (none when it is missing).
fn corpus_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_file())
        .collect()
}

/// Runs, runs per second and coverage, from libFuzzer's final statistics and last status line.
fn summary(log: &str) -> String {
    let stat = |name: &str| {
        log.lines()
            .rev()
            .find_map(|line| line.strip_prefix(name)?.trim().parse::<u64>().ok())
    };
    let coverage = log.lines().rev().find_map(|line| {
        let rest = &line[line.find(" cov: ")? + 6..];
        rest.split_whitespace().next()?.parse::<u64>().ok()
    });
    let show = |value: Option<u64>| value.map_or_else(|| "?".to_owned(), |v| v.to_string());
    format!(
        "{} runs ({}/s), coverage {}",
        show(stat("stat::number_of_executed_units:")),
        show(stat("stat::average_exec_per_sec:")),
        show(coverage)
    )
}

/// The last `lines` lines of `text`.
fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `cargo` that is the shell script `body`.
    fn fake_cargo(dir: &Path, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt as _;
        let path = dir.join("cargo");
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        path
    }

    #[test]
    fn without_nightly_or_cargo_fuzz_it_says_what_to_install() {
        let dir = tempfile::tempdir().expect("tempdir");
        let no_nightly = fake_cargo(dir.path(), "exit 1");
        let err = check_tools(no_nightly.as_os_str()).expect_err("no nightly");
        assert!(err.contains("needs the nightly toolchain"), "{err}");
        assert!(err.contains("rustup toolchain install nightly"), "{err}");

        let dir = tempfile::tempdir().expect("tempdir");
        let no_fuzz = fake_cargo(dir.path(), r#"[ "$2" = fuzz ] && exit 101; exit 0"#);
        let err = check_tools(no_fuzz.as_os_str()).expect_err("no cargo-fuzz");
        assert!(err.contains("needs cargo-fuzz"), "{err}");
        assert!(err.contains("cargo install cargo-fuzz"), "{err}");

        let dir = tempfile::tempdir().expect("tempdir");
        let both = fake_cargo(dir.path(), "exit 0");
        assert_eq!(check_tools(both.as_os_str()), Ok(()));
    }

    #[test]
    fn the_summary_reads_libfuzzers_statistics() {
        let log = "#1024\tpulse  cov: 10 ft: 12 corp: 3/20b exec/s: 512 rss: 40Mb\n\
                   #2048\tNEW    cov: 2690 ft: 9395 corp: 1166/41Kb lim: 76 exec/s: 4699\n\
                   Done 985000 runs in 211 second(s)\n\
                   stat::number_of_executed_units: 985000\n\
                   stat::average_exec_per_sec:     4668\n\
                   stat::new_units_added:          2431\n";
        assert_eq!(summary(log), "985000 runs (4668/s), coverage 2690");
        assert_eq!(summary("nothing"), "? runs (?/s), coverage ?");
    }

    #[test]
    fn only_sha1_names_are_the_fuzzers() {
        assert!(is_fuzzer_named(Path::new(
            "c/0a4d55a8d778e5022fab701977c5d840bbc486d0"
        )));
        assert!(!is_fuzzer_named(Path::new("c/seed-bom")));
        assert!(!is_fuzzer_named(Path::new(
            "c/crash-0a4d55a8d778e5022fab701977c5d840bbc486d0"
        )));
    }

    #[test]
    fn the_targets_are_the_manifests_bins() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let names = targets(&root.join("fuzz")).expect("fuzz/Cargo.toml");
        assert_eq!(
            names,
            [
                "rpc_line",
                "mcp_line",
                "tool_args",
                "config",
                "normalize",
                "sanitize",
                "policy",
                "proxy_head"
            ]
        );
    }
}
