//! What jobs cost: every second while a job of the session runs, one pass over `/proc` sums
//! CPU time and resident memory over each running job's process tree. `job_list` shows CPU
//! over the last 10 s and the memory; a job that has used more than 90% of a core for 10
//! minutes with no output is marked, and noticed once in the next tool result. No job running:
//! no sampling at all (the sampler task ends, and the next job starts it again).

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use agentsh_protocol::{JobUsage, job_busy_notice};

use crate::Jobs;
use crate::job::ends::JobReports;
use crate::job::{Control, Job};
use crate::lock;

/// How often running jobs' trees are read.
const SAMPLE_EVERY: Duration = Duration::from_secs(1);
/// CPU use is what the last this long used.
const CPU_WINDOW: Duration = Duration::from_secs(10);
/// More than this share of one core, between two samples, counts as busy.
const BUSY_SHARE: f64 = 0.9;
/// How long a job must be busy without output to be marked: 10 minutes, or what
/// `AGENTSH_TEST_BUSY_AFTER_S` says (for tests).
const BUSY_AFTER: Duration = Duration::from_secs(600);
/// Shortens [`BUSY_AFTER`] for tests: seconds.
pub(crate) const BUSY_AFTER_ENV: &str = "AGENTSH_TEST_BUSY_AFTER_S";

/// Lowers [`BUSY_SHARE`] for tests (a share of one core): how much CPU a test's spinning
/// job gets depends on the machine's load, which no test controls.
const BUSY_SHARE_ENV: &str = "AGENTSH_TEST_BUSY_SHARE";

fn busy_share() -> f64 {
    static SHARE: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *SHARE.get_or_init(|| {
        std::env::var(BUSY_SHARE_ENV)
            .ok()
            .and_then(|share| share.parse::<f64>().ok())
            .filter(|share| share.is_finite() && *share >= 0.0)
            .map_or(BUSY_SHARE, |share| share.min(BUSY_SHARE))
    })
}

fn busy_after() -> Duration {
    std::env::var(BUSY_AFTER_ENV)
        .ok()
        .and_then(|seconds| seconds.parse::<f64>().ok())
        .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
        .unwrap_or(BUSY_AFTER)
}

/// One job's samples and marks.
#[derive(Default)]
pub(crate) struct Usage {
    /// (when, CPU ticks of its tree), the last [`CPU_WINDOW`] and one more.
    samples: VecDeque<(Instant, u64)>,
    rss_bytes: u64,
    /// Since when it has been busy with no output, and its output size then.
    busy_since: Option<(Instant, u64)>,
    /// Whole minutes busy without output as of the last sample, once past the threshold: the
    /// mark and the notice come from the same sample.
    busy: Option<u64>,
    /// Its busy notice went out.
    noticed: bool,
}

impl Usage {
    /// Takes a sample: `cpu_ticks` and `rss_bytes` of its tree now, `output_bytes` it has
    /// printed; returns the busy minutes when the job has just become due for its notice.
    fn sample(
        &mut self,
        now: Instant,
        cpu_ticks: u64,
        rss_bytes: u64,
        output_bytes: u64,
    ) -> Option<u64> {
        let share = self.samples.back().map(|&(then, ticks)| {
            let seconds = now.duration_since(then).as_secs_f64().max(1e-3);
            cpu_ticks.saturating_sub(ticks) as f64
                / agentsh_process::ticks_per_second() as f64
                / seconds
        });
        let last = self.samples.back().map(|&(then, _)| then);
        self.samples.push_back((now, cpu_ticks));
        while self
            .samples
            .get(1)
            .is_some_and(|&(then, _)| now.duration_since(then) >= CPU_WINDOW)
        {
            self.samples.pop_front();
        }
        self.rss_bytes = rss_bytes;
        match (share, self.busy_since) {
            (Some(share), Some((_, output))) if share > busy_share() && output == output_bytes => {}
            (Some(share), _) if share > busy_share() => {
                self.busy_since = Some((last.unwrap_or(now), output_bytes));
            }
            _ => self.busy_since = None,
        }
        self.busy = self.busy_minutes(now);
        let minutes = self.busy?;
        (!std::mem::replace(&mut self.noticed, true)).then_some(minutes)
    }

    /// Whole minutes busy without output (at least 1), once past the threshold.
    fn busy_minutes(&self, now: Instant) -> Option<u64> {
        let (since, _) = self.busy_since?;
        let busy = now.duration_since(since);
        (busy >= busy_after()).then(|| (busy.as_secs() / 60).max(1))
    }

    /// What `job_list` shows of it now (a job no longer running uses nothing).
    pub(crate) fn view(&self, running: bool) -> JobUsage {
        if !running {
            return JobUsage::default();
        }
        let cpu_percent = match (self.samples.front(), self.samples.back()) {
            (Some(&(first, from)), Some(&(last, to))) if last > first => {
                let seconds = last.duration_since(first).as_secs_f64();
                let cores = to.saturating_sub(from) as f64
                    / agentsh_process::ticks_per_second() as f64
                    / seconds;
                (cores * 100.0).round() as u32
            }
            _ => 0,
        };
        JobUsage {
            cpu_percent,
            rss_bytes: self.rss_bytes,
            busy_minutes: self.busy,
            memory_limit: None,
        }
    }
}

impl Job {
    /// The pid the job's whole tree descends from, while it runs: a piped job's supervisor, a
    /// terminal's supervisor (the shell's parent, unless that is agentsh itself).
    fn tree_root(&self) -> Option<u32> {
        match &self.control {
            Control::Piped(run) => run.root_pid(),
            Control::Pty(controller) => {
                let shell = controller.shell_pid()?;
                match agentsh_process::parent_pid(shell) {
                    Some(parent) if parent != std::process::id() && parent > 1 => Some(parent),
                    _ => Some(shell),
                }
            }
        }
    }
}

/// The sampler of a session's jobs: started with the first job that runs, ended when none
/// runs.
#[derive(Default)]
pub(crate) struct Sampler {
    running: Arc<AtomicBool>,
}

impl Sampler {
    /// Starts sampling `jobs` (reporting busy ones to `reports`) unless it runs already.
    pub(crate) fn ensure(&self, jobs: std::sync::Weak<Jobs>, reports: JobReports) {
        if self.running.swap(true, Ordering::AcqRel) {
            return;
        }
        let running = Arc::clone(&self.running);
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(SAMPLE_EVERY);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                let Some(jobs) = jobs.upgrade() else { break };
                let live: Vec<Arc<Job>> =
                    jobs.all().into_iter().filter(|job| job.is_live()).collect();
                if live.is_empty() {
                    running.store(false, Ordering::Release);
                    // A job that started meanwhile started no sampler: keep going for it.
                    if jobs.all().iter().any(|job| job.is_live())
                        && !running.swap(true, Ordering::AcqRel)
                    {
                        continue;
                    }
                    break;
                }
                sample(&live, &reports);
            }
        });
    }
}

/// One sample of every job in `live`: one `/proc` pass.
fn sample(live: &[Arc<Job>], reports: &JobReports) {
    let roots: Vec<(usize, u32)> = live
        .iter()
        .enumerate()
        .filter_map(|(at, job)| Some((at, job.tree_root()?)))
        .collect();
    let pids: Vec<u32> = roots.iter().map(|&(_, pid)| pid).collect();
    let usages = agentsh_process::tree_usages(&pids);
    let now = Instant::now();
    for (&(at, _), usage) in roots.iter().zip(usages) {
        let Some(usage) = usage else { continue };
        let job = &live[at];
        let output_bytes = lock(&job.output).log.total_bytes();
        let due = lock(&job.usage).sample(now, usage.cpu_ticks, usage.rss_bytes, output_bytes);
        if let Some(minutes) = due {
            reports.notice(job, job_busy_notice(&job.id, &job.command, minutes));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples a second apart from `start`: `cores` of CPU in each, `output` bytes printed.
    fn feed(
        usage: &mut Usage,
        start: Instant,
        seconds: std::ops::Range<u64>,
        cores: f64,
        output: u64,
    ) -> Vec<u64> {
        let tps = agentsh_process::ticks_per_second() as f64;
        let mut due = Vec::new();
        for second in seconds {
            let ticks = (second as f64 * cores * tps) as u64;
            due.extend(usage.sample(start + Duration::from_secs(second), ticks, 1 << 20, output));
        }
        due
    }

    #[test]
    fn cpu_is_the_last_ten_seconds_and_busy_is_noticed_once_after_the_threshold() {
        let start = Instant::now();
        let mut usage = Usage::default();
        // 11 minutes at a full core, no output: due once, at 10 minutes.
        let due = feed(&mut usage, start, 0..661, 1.0, 0);
        assert_eq!(due, [10]);
        let view = usage.view(true);
        assert_eq!(view.cpu_percent, 100);
        assert_eq!(view.rss_bytes, 1 << 20);
        assert_eq!(view.busy_minutes, Some(11));
        assert_eq!(usage.view(false), JobUsage::default());

        // Output resets the clock (599 s busy since it came: not yet); a quiet core too.
        let mut usage = Usage::default();
        assert!(feed(&mut usage, start, 0..300, 1.0, 0).is_empty());
        assert!(feed(&mut usage, start, 300..899, 1.0, 5).is_empty());
        assert_eq!(usage.busy, None);
        let mut idle = Usage::default();
        assert!(feed(&mut idle, start, 0..700, 0.5, 0).is_empty());
        assert_eq!(idle.view(true).cpu_percent, 50);
        assert_eq!(idle.view(true).busy_minutes, None);
    }
}
