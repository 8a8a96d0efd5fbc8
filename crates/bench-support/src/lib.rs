//! Shared helpers for agentsh benchmarks.
//!
//! Every benchmark of the workspace is a `harness = false` bench target that measures its figure
//! and its baseline in the same run and reports a [`Row`]. [`Row::report`] prints the row and, when
//! `cargo xtask bench` runs the benchmarks, appends it as one JSON line to the file named by
//! [`REPORT_ENV`]; xtask then prints every row as one table.
//!
//! ```
//! use agentsh_bench_support::{Row, median, time_each};
//! let samples = time_each(5, || { std::hint::black_box(1 + 1); });
//! let m = median(&samples);
//! Row::new("example", "median of an addition").value(m.as_secs_f64() * 1e9, "ns").report();
//! ```
#![deny(missing_docs)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// Environment variable naming the JSON-lines file rows are appended to.
pub const REPORT_ENV: &str = "AGENTSH_BENCH_REPORT";

/// Environment variable that, when set, shrinks every benchmark's sizes (for a smoke run).
pub const QUICK_ENV: &str = "AGENTSH_BENCH_QUICK";

/// Whether [`QUICK_ENV`] asks for a smoke run.
pub fn quick() -> bool {
    std::env::var_os(QUICK_ENV).is_some()
}

/// The filter of `cargo bench -- FILTER` (`cargo xtask bench FILTER`): a group of rows runs only
/// when its name contains it. Flags cargo passes (`--bench`) are not a filter.
#[derive(Debug, Clone, Default)]
pub struct Filter(Option<String>);

impl Filter {
    /// The first argument of this process that is not a flag.
    pub fn from_args() -> Self {
        Self(std::env::args().skip(1).find(|arg| !arg.starts_with('-')))
    }

    /// Whether the group named `group` runs.
    pub fn wants(&self, group: &str) -> bool {
        self.0
            .as_deref()
            .is_none_or(|filter| group.contains(filter))
    }
}

/// One line of the benchmark table: a figure, optionally with its same-run baseline and goal.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Row {
    /// Which benchmark (usually the crate or area).
    pub bench: String,
    /// What was measured.
    pub metric: String,
    /// The measured figure.
    pub value: f64,
    /// Unit of `value` (`µs`, `MB/s`, `MiB`, …).
    pub unit: String,
    /// The figure divided by the baseline measured in the same run.
    pub ratio: Option<f64>,
    /// What the baseline was, e.g. `std::io::copy to a file`.
    pub baseline: Option<String>,
    /// The goal, as text, e.g. `≥ 0.5×`.
    pub goal: Option<String>,
    /// Whether the goal was met, when one is stated.
    pub met: Option<bool>,
}

impl Row {
    /// Starts a row for `bench` measuring `metric`.
    pub fn new(bench: impl Into<String>, metric: impl Into<String>) -> Self {
        Self {
            bench: bench.into(),
            metric: metric.into(),
            ..Self::default()
        }
    }

    /// Sets the figure and its unit.
    #[must_use]
    pub fn value(mut self, value: f64, unit: impl Into<String>) -> Self {
        self.value = value;
        self.unit = unit.into();
        self
    }

    /// Sets the ratio against a named baseline measured in the same run.
    #[must_use]
    pub fn ratio(mut self, ratio: f64, baseline: impl Into<String>) -> Self {
        self.ratio = Some(ratio);
        self.baseline = Some(baseline.into());
        self
    }

    /// States the goal and whether it was met.
    #[must_use]
    pub fn goal(mut self, goal: impl Into<String>, met: bool) -> Self {
        self.goal = Some(goal.into());
        self.met = Some(met);
        self
    }

    /// Prints the row and appends it to the report file when [`REPORT_ENV`] is set.
    pub fn report(&self) {
        let ratio = self
            .ratio
            .map(|r| {
                format!(
                    "  ratio {r:.3}× vs {}",
                    self.baseline.as_deref().unwrap_or("")
                )
            })
            .unwrap_or_default();
        let goal = match (&self.goal, self.met) {
            (Some(goal), Some(met)) => {
                format!("  goal {goal}: {}", if met { "met" } else { "MISSED" })
            }
            _ => String::new(),
        };
        println!(
            "[{}] {}: {:.3} {}{ratio}{goal}",
            self.bench, self.metric, self.value, self.unit
        );
        if let Some(path) = std::env::var_os(REPORT_ENV) {
            let line = match serde_json::to_string(self) {
                Ok(line) => line,
                Err(err) => {
                    eprintln!("bench row not serialisable: {err}");
                    return;
                }
            };
            let appended = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .and_then(|mut file| writeln!(file, "{line}"));
            if let Err(err) = appended {
                eprintln!(
                    "cannot append bench row to {}: {err}",
                    path.to_string_lossy()
                );
            }
        }
    }
}

/// Runs `f` `n` times and returns the duration of each run.
pub fn time_each(n: usize, mut f: impl FnMut()) -> Vec<Duration> {
    (0..n)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect()
}

/// The median of `samples` (the lower middle for an even count); zero when empty.
pub fn median(samples: &[Duration]) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    sorted
        .get(sorted.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or_default()
}

/// One run of `shell -c '<command> | cat > <file>'`, timed: the floor for any runtime that
/// captures a command's output through a pipe into a file. Asserts that `file` got `bytes` bytes,
/// then removes it.
pub fn pipe_floor(shell: &Path, command: &str, file: &Path, bytes: u64) -> Duration {
    let target = file.to_str().expect("a UTF-8 bench path");
    assert!(!target.contains('\''), "no quote in {target}");
    let script = format!("{command} | cat > '{target}'");
    let start = Instant::now();
    let status = Command::new(shell)
        .args(["-c", &script])
        .stdin(Stdio::null())
        .status()
        .expect("the shell runs");
    let elapsed = start.elapsed();
    assert!(status.success(), "{script}: {status}");
    let written = std::fs::metadata(file).map_or(0, |m| m.len());
    assert_eq!(written, bytes, "{script} wrote {written} bytes");
    let _ = std::fs::remove_file(file);
    elapsed
}

/// Peak resident memory (`VmHWM` of `/proc/<pid>/status`) in KiB, of `pid` or, for `None`, of
/// this process; `None` once the process is gone.
pub fn vm_hwm_kib(pid: Option<u32>) -> Option<u64> {
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/status"),
        None => "/proc/self/status".to_owned(),
    };
    std::fs::read_to_string(path)
        .ok()?
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Throughput in MB/s (10^6 bytes per second) of `bytes` moved in `elapsed`.
pub fn mb_per_s(bytes: u64, elapsed: Duration) -> f64 {
    bytes as f64 / 1e6 / elapsed.as_secs_f64().max(f64::MIN_POSITIVE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_picks_the_middle() {
        let ms = |n| Duration::from_millis(n);
        assert_eq!(median(&[ms(5), ms(1), ms(3)]), ms(3));
        assert_eq!(median(&[ms(4), ms(1), ms(3), ms(2)]), ms(2));
        assert_eq!(median(&[]), Duration::ZERO);
    }

    #[test]
    fn a_filter_picks_groups_by_substring() {
        assert!(Filter::default().wants("throughput"));
        let filter = Filter(Some("through".into()));
        assert!(filter.wants("throughput"));
        assert!(!filter.wants("cpu"));
    }

    #[test]
    fn pipe_floor_writes_and_removes_the_file() {
        let dir = std::env::temp_dir().join(format!("bench-support-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let file = dir.join("floor.out");
        pipe_floor(Path::new("sh"), "printf abc", &file, 3);
        assert!(!file.exists(), "the floor's file is removed");
        std::fs::remove_dir(&dir).expect("rmdir");
    }

    #[test]
    fn peak_memory_of_this_process_is_read() {
        assert!(vm_hwm_kib(None).is_some_and(|kib| kib > 0));
        assert!(vm_hwm_kib(Some(std::process::id())).is_some_and(|kib| kib > 0));
        assert_eq!(vm_hwm_kib(Some(u32::MAX)), None);
    }

    #[test]
    fn throughput_in_megabytes() {
        assert!((mb_per_s(2_000_000, Duration::from_secs(1)) - 2.0).abs() < 1e-9);
    }
}
