//! Project automation, reached through the cargo alias `cargo xtask`.
//!
//! - `cargo xtask ci [--long]`: format check, clippy with `-D warnings`, every test (nextest when
//!   installed, `cargo test` otherwise, ignored tests included), doc tests, snapshots in check mode,
//!   proptest with a fixed case count (256, or 10,000 with `--long`), the tidy tests (`tidy.rs`)
//!   with them, then every crate README's Rust examples built from outside the workspace
//!   (`readme.rs`). Stops at the first failure.
//! - `cargo xtask readme`: only the README examples, built from outside the workspace.
//! - `cargo xtask man [DIR]`: the man pages of `agentsh` (`man.rs`), into `target/man` by
//!   default.
//! - `cargo xtask fuzz [TARGET] [--time S]`: the fuzz targets of `fuzz/`, nightly only
//!   (`fuzz.rs`).
//! - `cargo xtask bench [FILTER]`: runs every benchmark of the workspace and prints one table of
//!   figures and same-run ratios.
//! - `cargo xtask vm-test`: the resource-limit tests under a cgroup v2 kernel booted in a
//!   virtual machine (`vm_test.rs`; needs `scripts/install-vm-test-deps`).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use agentsh_bench_support::{REPORT_ENV, Row};

#[cfg(test)]
mod cycles;
mod fuzz;
#[cfg(test)]
mod layering;
mod man;
mod manifest;
#[cfg(test)]
mod paths;
mod readme;
#[cfg(test)]
mod tidy;
mod vm_test;

use manifest::Manifest;

const USAGE: &str = "usage: cargo xtask <ci [--long] | bench [FILTER] | readme | man [DIR] | fuzz [TARGET] [--time S] | vm-test>";
const PROPTEST_CASES: &str = "256";
const PROPTEST_CASES_LONG: &str = "10000";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(&args[1..]),
        Some("bench") => bench(&args[1..]),
        Some("readme") => {
            let root = workspace_root();
            Manifest::load(&root).and_then(|manifest| readme::build_all(&root, &manifest))
        }
        Some("man") => man::run(&args[1..], &workspace_root()),
        Some("fuzz") => fuzz::run(&args[1..], &workspace_root()),
        Some("vm-test") => vm_test::run(&args[1..], &workspace_root()),
        Some("-h" | "--help") => {
            println!("{USAGE}");
            Ok(())
        }
        _ => Err(format!("unknown or missing task\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn cargo() -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command.current_dir(workspace_root());
    command
}

/// Runs one named step with inherited output; an error names the step that failed.
fn step(name: &str, mut command: Command) -> Result<(), String> {
    println!("==> {name}");
    let start = Instant::now();
    let status = command
        .status()
        .map_err(|err| format!("{name}: cannot start: {err}"))?;
    if status.success() {
        println!("==> {name}: ok ({:.1}s)", start.elapsed().as_secs_f64());
        Ok(())
    } else {
        Err(format!("{name}: failed ({status})"))
    }
}

fn ci(args: &[String]) -> Result<(), String> {
    let mut long = false;
    for arg in args {
        match arg.as_str() {
            "--long" => long = true,
            other => return Err(format!("ci: unknown flag {other}\n{USAGE}")),
        }
    }
    let cases = if long {
        PROPTEST_CASES_LONG
    } else {
        PROPTEST_CASES
    };

    let mut fmt = cargo();
    fmt.args(["fmt", "--all", "--", "--check"]);
    step("cargo fmt --check", fmt)?;

    let mut clippy = cargo();
    clippy.args([
        "clippy",
        "--workspace",
        "--all-targets",
        // The interactive mode's frame bench needs its helpers.
        "--features",
        "agentsh-tui/bench",
        "--",
        "-D",
        "warnings",
    ]);
    step("cargo clippy -D warnings", clippy)?;

    let test_env = |command: &mut Command| {
        command
            .env("PROPTEST_CASES", cases)
            .env("INSTA_UPDATE", "no")
            .env("INSTA_FORCE_PASS", "0")
            .env("AGENTSH_TEST_LONG", if long { "1" } else { "0" });
    };
    if has_nextest() {
        let mut tests = cargo();
        tests.args(["nextest", "run", "--workspace", "--run-ignored", "all"]);
        test_env(&mut tests);
        step(
            &format!("cargo nextest run (PROPTEST_CASES={cases})"),
            tests,
        )?;
        let mut doc = cargo();
        doc.args(["test", "--workspace", "--doc"]);
        test_env(&mut doc);
        step("cargo test --doc", doc)?;
    } else {
        let mut tests = cargo();
        tests.args(["test", "--workspace", "--", "--include-ignored"]);
        test_env(&mut tests);
        step(&format!("cargo test (PROPTEST_CASES={cases})"), tests)?;
    }

    let root = workspace_root();
    readme::build_all(&root, &Manifest::load(&root)?)?;

    let pending = pending_snapshots(&root);
    if !pending.is_empty() {
        let list: Vec<String> = pending.iter().map(|p| p.display().to_string()).collect();
        return Err(format!(
            "pending or changed snapshots (review with cargo insta review):\n  {}",
            list.join("\n  ")
        ));
    }
    println!("==> snapshots: none pending");
    println!("==> ci: all steps passed");
    Ok(())
}

fn has_nextest() -> bool {
    cargo()
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|out| out.status.success())
}

/// Files insta leaves behind for a new or changed snapshot.
fn pending_snapshots(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if path.is_dir() {
                if name != "target" && !name.starts_with('.') {
                    stack.push(path);
                }
            } else if name.ends_with(".snap.new") || name.ends_with(".pending-snap") {
                found.push(path);
            }
        }
    }
    found
}

fn bench(args: &[String]) -> Result<(), String> {
    let root = workspace_root();
    let report = root.join("target").join("bench-report.jsonl");
    std::fs::create_dir_all(root.join("target")).map_err(|err| format!("bench: {err}"))?;
    if report.exists() {
        std::fs::remove_file(&report).map_err(|err| format!("bench: {err}"))?;
    }
    let mut command = cargo();
    command
        .args([
            "bench",
            "--workspace",
            "--benches",
            "--features",
            "agentsh-tui/bench",
        ])
        .env(REPORT_ENV, &report);
    if let Some(filter) = args.first() {
        command.args(["--", filter]);
    }
    step("cargo bench", command)?;

    let text = std::fs::read_to_string(&report).unwrap_or_default();
    let rows: Vec<Row> = text
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    print_table(&rows);
    Ok(())
}

fn print_table(rows: &[Row]) {
    let header = ["bench", "metric", "value", "ratio", "baseline", "goal"];
    let cells: Vec<[String; 6]> = rows
        .iter()
        .map(|row| {
            let goal = match (&row.goal, row.met) {
                (Some(goal), Some(true)) => format!("{goal} (met)"),
                (Some(goal), _) => format!("{goal} (MISSED)"),
                _ => String::new(),
            };
            [
                row.bench.clone(),
                row.metric.clone(),
                format!("{:.3} {}", row.value, row.unit),
                row.ratio.map(|r| format!("{r:.3}×")).unwrap_or_default(),
                row.baseline.clone().unwrap_or_default(),
                goal,
            ]
        })
        .collect();
    let mut widths = header.map(|h| h.chars().count());
    for row in &cells {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        println!("| {} |", padded.join(" | "));
    };
    println!();
    line(&header.map(String::from));
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    line(&rule);
    for row in &cells {
        line(row);
    }
}
