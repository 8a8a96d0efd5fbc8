//! The command front end over the real-world corpus: normalise + intercept (default rules),
//! median time per command. Goal: under 20 µs, invisible next to a process spawn.

use std::hint::black_box;
use std::time::Instant;

use agentsh_bash_interceptor::Interceptor;
use agentsh_bench_support::{Row, median};

const ROUNDS: u32 = 20;
const GOAL_MICROS: f64 = 20.0;

fn main() {
    let corpus = agentsh_test_support::nl2bash_corpus();
    let tools = ["read", "grep", "find", "edit", "write"];
    let interceptor = Interceptor::with_default_rules();
    let commands: Vec<&str> = corpus.lines().collect();

    // Per command: mean over ROUNDS runs (one Instant pair per command, not per run).
    let mut per_command = Vec::with_capacity(commands.len());
    for command in &commands {
        let start = Instant::now();
        for _ in 0..ROUNDS {
            let normalized = agentsh_bash_normalize::normalize(black_box(command));
            black_box(interceptor.check(&normalized.unwrapped(), &tools));
        }
        per_command.push(start.elapsed() / ROUNDS);
    }
    let median_us = median(&per_command).as_secs_f64() * 1e6;
    let mut sorted = per_command.clone();
    sorted.sort_unstable();
    let p99_us = sorted[sorted.len() * 99 / 100].as_secs_f64() * 1e6;

    Row::new(
        "front-end",
        "normalize + intercept, median per corpus command",
    )
    .value(median_us, "µs")
    .goal("< 20 µs", median_us < GOAL_MICROS)
    .report();
    Row::new("front-end", "normalize + intercept, p99 per corpus command")
        .value(p99_us, "µs")
        .report();
}
