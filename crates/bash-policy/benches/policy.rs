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

/// A realistic policy: git, npm, cargo, rm, curl… prefixes, some with globs, and a few regexes.
const POLICY: &str = r#"
default = "ask"
unknown = "ask"
rules = [
  { prefix = ["rm", "-rf", "/"], decision = "deny", reason = "Deleting the root is never right." },
  { prefix = ["rm", "-r*"], decision = "ask" },
  { prefix = ["rm"], decision = "ask" },
  { prefix = ["sudo"], decision = "ask" },
  { prefix = ["git", "push", "--force*"], decision = "deny" },
  { prefix = ["git", "push"], decision = "ask", reason = "Pushing publishes work." },
  { prefix = ["git", "reset", "--hard"], decision = "ask" },
  { prefix = ["git", "clean", "-*f*"], decision = "ask" },
  { prefix = ["git", "status"], decision = "allow" },
  { prefix = ["git", "log"], decision = "allow" },
  { prefix = ["git", "diff"], decision = "allow" },
  { prefix = ["git", "show"], decision = "allow" },
  { prefix = ["git", "add"], decision = "allow" },
  { prefix = ["git", "commit"], decision = "allow" },
  { prefix = ["git", "checkout", "-b"], decision = "allow" },
  { prefix = ["git", "branch"], decision = "allow" },
  { prefix = ["npm", "publish"], decision = "deny" },
  { prefix = ["npm", "install"], decision = "ask" },
  { prefix = ["npm", "test"], decision = "allow" },
  { prefix = ["npm", "run", "*"], decision = "allow" },
  { prefix = ["cargo", "publish"], decision = "deny" },
  { prefix = ["cargo", "build"], decision = "allow" },
  { prefix = ["cargo", "test"], decision = "allow" },
  { prefix = ["cargo", "clippy"], decision = "allow" },
  { prefix = ["cargo", "fmt"], decision = "allow" },
  { prefix = ["curl"], decision = "ask" },
  { prefix = ["wget"], decision = "ask" },
  { regex = '(curl|wget) .*https?://(localhost|127\.0\.0\.1)[:/]', decision = "allow" },
  { prefix = ["ls"], decision = "allow" },
  { prefix = ["cat"], decision = "allow" },
  { prefix = ["grep"], decision = "allow" },
  { prefix = ["find"], decision = "allow" },
  { prefix = ["echo"], decision = "allow" },
  { prefix = ["head"], decision = "allow" },
  { prefix = ["tail"], decision = "allow" },
  { prefix = ["wc"], decision = "allow" },
  { prefix = ["sort"], decision = "allow" },
  { prefix = ["uniq"], decision = "allow" },
  { prefix = ["awk"], decision = "allow" },
  { prefix = ["sed", "-i*"], decision = "ask" },
  { prefix = ["sed"], decision = "allow" },
  { prefix = ["chmod", "777", "*"], decision = "deny" },
  { prefix = ["chmod"], decision = "ask" },
  { prefix = ["chown"], decision = "ask" },
  { prefix = ["dd"], decision = "deny" },
  { prefix = ["mkfs*"], decision = "deny" },
  { regex = '(shutdown|reboot|halt|poweroff)( |$)', decision = "deny" },
  { prefix = ["kill", "-9", "*"], decision = "ask" },
  { prefix = ["docker", "run", "--privileged"], decision = "deny" },
  { regex = 'ssh(-keygen)? ', decision = "ask" },
]
"#;

fn main() {
    let config: PolicyConfig = toml::from_str(POLICY).expect("the bench policy parses");
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
