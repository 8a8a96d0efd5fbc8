//! Property test: for programs of the table, every spelling of a rule's options — split, merged
//! into one word, long, reordered, with global options inserted — gets the rule's decision, and
//! the same line without one of the rule's options does not.

use std::sync::LazyLock;

use agentsh_bash_policy::{Decision, Policy, SessionMemory, TierKind};
use proptest::prelude::*;

use crate::support::{policy, render};

/// One rule, and the parts of command lines it must match.
struct Case {
    /// The rule's `prefix`.
    rule: &'static [&'static str],
    /// The program, then its subcommand words (`["git", "push"]`, `["python3", "-m", "pip"]`).
    head: &'static [&'static str],
    /// The rule's options, each with its spellings (short ones are one letter).
    options: &'static [&'static [&'static str]],
    /// Global options a user may write before the subcommand, each with its value.
    globals: &'static [&'static [&'static str]],
    /// The operands after the subcommand, in order.
    operands: &'static [&'static str],
    /// Whether single-letter options may be written as one word.
    clusters: bool,
}

const GIT_GLOBALS: &[&[&str]] = &[
    &["-C", "."],
    &["-c", "k=v"],
    &["--git-dir=.git"],
    &["--git-dir", ".git"],
    &["--work-tree", "w"],
    &["--no-pager"],
    &["-P"],
    &["--bare"],
];

const DOCKER_GLOBALS: &[&[&str]] = &[
    &["-H", "tcp://h"],
    &["--context", "c"],
    &["--config", "d"],
    &["-D"],
];

const CASES: &[Case] = &[
    Case {
        rule: &["rm", "-rf"],
        head: &["rm"],
        options: &[&["-r", "-R", "--recursive"], &["-f", "--force"]],
        globals: &[],
        operands: &["x"],
        clusters: true,
    },
    Case {
        rule: &["rm", "-rf", "/*"],
        head: &["rm"],
        options: &[&["-r", "-R", "--recursive"], &["-f", "--force"]],
        globals: &[],
        operands: &["/tmp/x"],
        clusters: true,
    },
    Case {
        rule: &["git", "push", "--force"],
        head: &["git", "push"],
        options: &[&["-f", "--force", "--force-with-lease"]],
        globals: GIT_GLOBALS,
        operands: &["origin", "main"],
        clusters: true,
    },
    Case {
        rule: &["git", "clean", "-fdx"],
        head: &["git", "clean"],
        options: &[&["-f", "--force"], &["-d"], &["-x"]],
        globals: GIT_GLOBALS,
        operands: &["."],
        clusters: true,
    },
    Case {
        rule: &["git", "reset", "--hard"],
        head: &["git", "reset"],
        options: &[&["--hard"]],
        globals: GIT_GLOBALS,
        operands: &["HEAD~1"],
        clusters: true,
    },
    Case {
        rule: &["docker", "rm", "-f", "-v"],
        head: &["docker", "rm"],
        options: &[&["-f", "--force"], &["-v", "--volumes"]],
        globals: DOCKER_GLOBALS,
        operands: &["box"],
        clusters: true,
    },
    Case {
        rule: &["podman", "rm", "--force"],
        head: &["podman", "rm"],
        options: &[&["-f", "--force"]],
        globals: DOCKER_GLOBALS,
        operands: &["box"],
        clusters: true,
    },
    Case {
        rule: &["kubectl", "delete", "-A"],
        head: &["kubectl", "delete"],
        options: &[&["-A", "--all-namespaces"]],
        globals: &[
            &["-n", "prod"],
            &["--context", "c"],
            &["--kubeconfig", "k"],
            &["-s", "https://h"],
        ],
        operands: &["pods"],
        clusters: true,
    },
    Case {
        rule: &["chmod", "-R", "-v", "777"],
        head: &["chmod"],
        options: &[&["-R", "--recursive"], &["-v", "--verbose"]],
        globals: &[],
        operands: &["777", "x"],
        clusters: true,
    },
    Case {
        rule: &["cargo", "build", "-r"],
        head: &["cargo", "build"],
        options: &[&["-r", "--release"]],
        globals: &[
            &["+nightly"],
            &["--config", "k=v"],
            &["--manifest-path", "Cargo.toml"],
        ],
        operands: &[],
        clusters: true,
    },
    Case {
        rule: &["npm", "install", "-g"],
        head: &["npm", "install"],
        options: &[&["-g", "--global"]],
        globals: &[&["--prefix", "web"], &["-w", "a"]],
        operands: &["x"],
        clusters: true,
    },
    Case {
        rule: &["pnpm", "add", "-D"],
        head: &["pnpm", "add"],
        options: &[&["-D", "--save-dev"]],
        globals: &[
            &["-C", "web"],
            &["--filter", "a"],
            &["-F", "a"],
            &["-w"],
            &["--dir", "x"],
        ],
        operands: &["x"],
        clusters: true,
    },
    Case {
        rule: &["yarn", "publish"],
        head: &["yarn", "publish"],
        options: &[],
        globals: &[&["--cwd", "web"]],
        operands: &[],
        clusters: true,
    },
    Case {
        rule: &["go", "generate"],
        head: &["go", "generate"],
        options: &[],
        globals: &[&["-C", "web"]],
        operands: &["./..."],
        clusters: false,
    },
    Case {
        rule: &["make", "-k", "-B", "deploy"],
        head: &["make"],
        options: &[&["-k", "--keep-going"], &["-B", "--always-make"]],
        globals: &[&["-C", "web"], &["-f", "Makefile"]],
        operands: &["deploy"],
        clusters: true,
    },
    Case {
        rule: &["python3", "-m", "pip"],
        head: &["python3", "-m", "pip"],
        options: &[],
        globals: &[&["-u"], &["-B"], &["-X", "dev"], &["-W", "ignore"]],
        operands: &["install"],
        clusters: false,
    },
    Case {
        rule: &["pip", "install", "-U"],
        head: &["pip", "install"],
        options: &[&["-U", "--upgrade"]],
        globals: &[&["--timeout", "5"], &["--python", "p"]],
        operands: &["x"],
        clusters: true,
    },
];

/// Each case's rule alone, denied; everything else allowed.
static POLICIES: LazyLock<Vec<Policy>> = LazyLock::new(|| {
    CASES
        .iter()
        .map(|case| {
            let words: Vec<String> = case.rule.iter().map(|w| format!("{w:?}")).collect();
            let text = format!(
                "[policy]\ndefault = \"allow\"\nunknown = \"ask\"\n[[policy.rules]]\n\
                 prefix = [{}]\ndecision = \"deny\"\n",
                words.join(", ")
            );
            policy(&[(TierKind::User, &text)])
        })
        .collect()
});

/// A command line for `case`, every choice taken from `picks`; `without`: the index of a rule
/// option to leave out.
fn line(case: &Case, picks: &[usize], without: Option<usize>) -> String {
    let mut picks = picks.iter().copied().cycle();
    let mut pick = |n: usize| picks.next().unwrap_or(0) % n.max(1);
    let mut words: Vec<String> = vec![case.head[0].to_owned()];
    // Global options, some of them, in a rotated order.
    let globals: Vec<&[&str]> = case
        .globals
        .iter()
        .copied()
        .filter(|_| pick(2) == 1)
        .collect();
    let turn = pick(globals.len());
    for global in globals[turn..].iter().chain(&globals[..turn]) {
        words.extend(global.iter().map(|w| (*w).to_owned()));
    }
    words.extend(case.head[1..].iter().map(|w| (*w).to_owned()));
    // One spelling of each option; single letters merged into one word or not.
    let mut options: Vec<String> = case
        .options
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != without)
        .map(|(_, spellings)| spellings[pick(spellings.len())].to_owned())
        .collect();
    if case.clusters && pick(2) == 1 {
        let (short, long): (Vec<String>, Vec<String>) =
            options.into_iter().partition(|o| o.len() == 2);
        options = long;
        if !short.is_empty() {
            let letters: String = short.iter().map(|o| &o[1..]).collect();
            options.push(format!("-{letters}"));
        }
    }
    let turn = pick(options.len());
    options.rotate_left(turn);
    // The operands, in order, somewhere among the options.
    let at = pick(options.len() + 1);
    let operands = case.operands.iter().map(|w| (*w).to_owned());
    let tail: Vec<String> = options[..at]
        .iter()
        .cloned()
        .chain(operands)
        .chain(options[at..].iter().cloned())
        .collect();
    words.extend(tail);
    words.join(" ")
}

proptest! {
    #[test]
    fn every_spelling_of_a_rule_gets_its_decision(
        case in 0..CASES.len(),
        picks in prop::collection::vec(0usize..1000, 24),
        leave_out in 0usize..8,
    ) {
        let memory = SessionMemory::new();
        let policy = &POLICIES[case];
        let case = &CASES[case];
        let written = line(case, &picks, None);
        let judgement = policy.judge(&written, &memory);
        prop_assert_eq!(judgement.decision, Decision::Deny, "{}: {}", written, render(&judgement));
        if !case.options.is_empty() {
            let without = leave_out % case.options.len();
            let written = line(case, &picks, Some(without));
            let judgement = policy.judge(&written, &memory);
            prop_assert_eq!(judgement.decision, Decision::Allow, "{}: {}", written, render(&judgement));
        }
    }
}
