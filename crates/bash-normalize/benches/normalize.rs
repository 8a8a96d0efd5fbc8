//! Front-end benchmark: median time of `normalize` per command of the NL2Bash corpus.

use std::hint::black_box;
use std::time::{Duration, Instant};

use agentsh_bash_normalize::normalize;
use agentsh_bench_support::{Row, median};

/// Goal of the row, in microseconds.
const GOAL_US: f64 = 20.0;
/// Passes over the corpus; each command's time is the median of its passes.
const PASSES: usize = 15;

fn main() {
    let corpus = agentsh_test_support::nl2bash_corpus();
    let commands: Vec<&str> = corpus.lines().collect();

    let medians = per_command_medians(&commands);
    let extracted: Vec<Duration> = commands
        .iter()
        .zip(&medians)
        .filter(|(command, _)| !normalize(command).limits.is_none())
        .map(|(_, &m)| m)
        .collect();
    let mut sorted = medians.clone();
    sorted.sort_unstable();
    let p99 = sorted[sorted.len() * 99 / 100];
    // Most corpus commands are rejected by the cheap pre-check (no final digit, no head/tail).
    // The same corpus with ` | head -1` appended takes the full lexer path on every command.
    let piped: Vec<String> = commands.iter().map(|c| format!("{c} | head -1")).collect();
    let piped: Vec<&str> = piped.iter().map(String::as_str).collect();
    let piped_medians = per_command_medians(&piped);

    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let m = us(median(&medians));
    Row::new("front-end", "normalize median per corpus command")
        .value(m, "µs")
        .goal(format!("< {GOAL_US} µs"), m < GOAL_US)
        .report();
    println!(
        "  ({} commands; p99 {:.3} µs; median over the {} with a limit extracted {:.3} µs; \
         median with ` | head -1` appended to every command {:.3} µs)",
        commands.len(),
        us(p99),
        extracted.len(),
        us(median(&extracted)),
        us(median(&piped_medians)),
    );
}

/// Per command: the median of its passes (robust against a preemption in one pass).
fn per_command_medians(commands: &[&str]) -> Vec<Duration> {
    let mut per_command = vec![Vec::with_capacity(PASSES); commands.len()];
    for _ in 0..PASSES {
        for (samples, command) in per_command.iter_mut().zip(commands) {
            let start = Instant::now();
            black_box(normalize(black_box(command)));
            samples.push(start.elapsed());
        }
    }
    per_command.iter().map(|samples| median(samples)).collect()
}
