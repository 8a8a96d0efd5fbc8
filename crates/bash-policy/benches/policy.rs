//! Policy benchmark: median time to judge a command of the NL2Bash corpus under a 50-rule
//! policy, against normalisation alone on the same commands in the same run.

use std::hint::black_box;
use std::time::{Duration, Instant};

use agentsh_bash_normalize::normalize;
use agentsh_bash_policy::{Decision, Policy, PolicyConfig, SessionMemory, TierKind, TierSource};
use agentsh_bench_support::{Row, median};

/// Goal of the row, in microseconds.
const GOAL_US: f64 = 5.0;
/// Passes over the corpus; each command's time is the median of its passes.
const PASSES: usize = 15;

/// A realistic policy: git, npm, cargo, rm, curl… prefixes, some with globs, and a few regexes;
/// what no rule names is asked.
const RULES: &str = include_str!("../../../fixtures/policy/fifty-rules.toml");

fn main() {
    let config: PolicyConfig =
        toml::from_str(&format!("default = \"ask\"\nunknown = \"ask\"\n{RULES}"))
            .expect("the bench policy parses");
    assert_eq!(config.rules.len(), 50);
    let policy = Policy::new(vec![TierSource {
        kind: TierKind::User,
        origin: "bench".into(),
        policy: config,
    }])
    .expect("the bench policy loads");
    let memory = SessionMemory::new();

    let corpus = agentsh_test_support::nl2bash_corpus();
    let commands: Vec<&str> = corpus.lines().collect();

    let judged = per_command_medians(&commands, |command| {
        black_box(policy.judge(black_box(command), &memory));
    });
    let normalized = per_command_medians(&commands, |command| {
        black_box(normalize(black_box(command)));
    });
    // `normalize` skips most lines with a cheap pre-check; with ` | head -1` appended every line
    // takes its full lexer path, the same lexer the policy reads lines with.
    let piped: Vec<String> = commands.iter().map(|c| format!("{c} | head -1")).collect();
    let piped: Vec<&str> = piped.iter().map(String::as_str).collect();
    let lexed = per_command_medians(&piped, |command| {
        black_box(normalize(black_box(command)));
    });

    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let judge_median = us(median(&judged));
    let normalize_median = us(median(&normalized));
    Row::new("policy", "judge median per corpus command (50 rules)")
        .value(judge_median, "µs")
        .ratio(judge_median / normalize_median, "normalize alone")
        .goal(format!("≤ {GOAL_US} µs"), judge_median <= GOAL_US)
        .report();

    let mut sorted = judged.clone();
    sorted.sort_unstable();
    let p99 = sorted[sorted.len() * 99 / 100];
    let (mut decisions, mut segments, mut unknown) = ([0usize; 3], 0, 0);
    for command in &commands {
        let judgement = policy.judge(command, &memory);
        decisions[judgement.decision as usize] += 1;
        segments += judgement.segments.len();
        unknown += judgement.segments.iter().filter(|s| s.unknown).count();
    }
    println!(
        "  ({} commands, {segments} segments, {unknown} unknown; p99 {:.3} µs; normalize median \
         {normalize_median:.3} µs, {:.3} µs with ` | head -1` appended; lines allowed {}, asked \
         {}, denied {})",
        commands.len(),
        us(p99),
        us(median(&lexed)),
        decisions[Decision::Allow as usize],
        decisions[Decision::Ask as usize],
        decisions[Decision::Deny as usize],
    );
}

/// Per command: the median of its passes (robust against a preemption in one pass).
fn per_command_medians(commands: &[&str], mut run: impl FnMut(&str)) -> Vec<Duration> {
    let mut per_command = vec![Vec::with_capacity(PASSES); commands.len()];
    for _ in 0..PASSES {
        for (samples, command) in per_command.iter_mut().zip(commands) {
            let start = Instant::now();
            run(command);
            samples.push(start.elapsed());
        }
    }
    per_command.iter().map(|samples| median(samples)).collect()
}
