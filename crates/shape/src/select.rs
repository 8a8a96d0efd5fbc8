//! Which command lines are shaped, decided on the parsed line, never from the output: one
//! simple command of a program (wrappers and the program's global options set aside), after
//! setup commands only (`cd`, `export`, assignments, `source` of a virtualenv) joined by `&&`,
//! `;` or newlines, with `2>&1` allowed — and no format the caller asked for.

use agentsh_bash_normalize::syntax::{self, Kind, Op, WordRole};
use agentsh_bash_policy::program::{CommandWord, subcommand_at, wrapped_command};

/// The program a shaped command line runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The program's name: the base name of its command word (`git`; `pytest` for
    /// `python -m pytest`, `jest` for `npx jest`).
    pub program: String,
    /// Its subcommand, after the program's global options (`log` of `git -C x log`).
    pub subcommand: Option<String>,
    /// The words after the subcommand (after the program when it has none), as the program
    /// gets them; a word with an expansion is as written.
    pub args: Vec<String>,
}

impl Target {
    /// `<program>[ <subcommand>]`, as results name it.
    pub fn name(&self) -> String {
        match &self.subcommand {
            Some(sub) => format!("{} {sub}", self.program),
            None => self.program.clone(),
        }
    }

    /// Whether an argument is `flag`, or a long `flag=…`.
    pub fn has(&self, flag: &str) -> bool {
        self.args.iter().any(|arg| {
            arg == flag
                || (flag.starts_with("--")
                    && arg
                        .strip_prefix(flag)
                        .is_some_and(|rest| rest.starts_with('=')))
        })
    }
}

/// Options that ask for a format of their own: such output is for a program, not shaped.
const FORMAT_OPTIONS: &[&str] = &[
    "--json",
    "--format",
    "--porcelain",
    "--message-format",
    "--output-format",
    "--reporter",
    "--test-reporter",
    "--null",
    "-z",
];

/// The program `command` runs, read as the module doc says, or `None` when its output is not
/// shaped.
pub fn select(command: &str) -> Option<Target> {
    let tokens = syntax::tokenize(command).ok()?;
    // Simple commands at the top level, as word texts; `2>&1` allowed, nothing else.
    let mut commands: Vec<Vec<(&str, WordRole)>> = vec![Vec::new()];
    for token in &tokens {
        if token.depth > 0 {
            return None;
        }
        let text = &command[token.start..token.end];
        match token.kind {
            Kind::Word(role) => commands.last_mut()?.push((text, role)),
            Kind::Op(Op::AndIf | Op::Semi | Op::Newline) => commands.push(Vec::new()),
            Kind::Redirect { .. } if text == "2>&1" => {}
            Kind::Comment => {}
            _ => return None,
        }
    }
    commands.retain(|words| !words.is_empty());
    let (last, setup) = commands.split_last()?;
    if !setup.iter().all(|words| is_setup(words)) {
        return None;
    }
    target(last)
}

/// Whether a simple command only prepares the one after it.
fn is_setup(words: &[(&str, WordRole)]) -> bool {
    if words.iter().all(|(_, role)| *role == WordRole::Assignment) {
        return true;
    }
    let Some(name) = words
        .iter()
        .find(|(_, role)| *role == WordRole::CommandName)
        .and_then(|(text, _)| CommandWord::parse(text))
    else {
        return false;
    };
    match name.value.as_str() {
        "cd" | "pushd" | "export" | "set" | "unset" | "ulimit" | "umask" => true,
        "source" | "." => words
            .last()
            .is_some_and(|(text, _)| text.ends_with("/activate")),
        _ => false,
    }
}

fn target(words: &[(&str, WordRole)]) -> Option<Target> {
    let mut values = Vec::new();
    for &(text, role) in words {
        match role {
            WordRole::Assignment => {}
            // `time` (and its `-p`) times the command.
            WordRole::Reserved if values.is_empty() && matches!(text, "time" | "-p") => {}
            WordRole::CommandName | WordRole::Argument => values.push(CommandWord::parse(text)?),
            _ => return None,
        }
    }
    // Wrappers (`timeout 60`, `env A=1`, `nice`) set aside.
    let mut start = 0;
    while let Some(at) = wrapped_command(&values[start..]) {
        start += at;
    }
    let mut words = &values[start..];
    let first = words.first().filter(|w| w.literal)?;
    let mut program = base_name(&first.value).to_owned();
    // Runners of a program: `python -m pytest`, `npx jest`, `uv run pytest`.
    let runner = match (program.as_str(), words.get(1).map(|w| w.value.as_str())) {
        ("python" | "python3", Some("-m"))
        | ("uv" | "poetry" | "pipenv", Some("run"))
        | ("pnpm" | "npm", Some("exec"))
        | ("pnpm" | "yarn", Some("dlx")) => Some(2),
        ("npx" | "pnpx" | "bunx", _) | ("uv", Some("pip")) => Some(1),
        _ => None,
    };
    if let Some(skip) = runner {
        words = &words[skip.min(words.len())..];
        let first = words.first().filter(|w| w.literal)?;
        base_name(&first.value).clone_into(&mut program);
    }
    let (subcommand, rest) = match subcommand_at(&program, words) {
        Some(at) => (Some(words[at].value.clone()), &words[at + 1..]),
        None => (None, &words[1..]),
    };
    let target = Target {
        program,
        subcommand,
        args: rest.iter().map(|w| w.value.clone()).collect(),
    };
    // git's own format options (`tsc --pretty` is only colour).
    let git_format = target.program == "git"
        && ["--pretty", "--oneline", "--graph"]
            .iter()
            .any(|flag| target.has(flag));
    let asks_format = git_format
        || FORMAT_OPTIONS.iter().any(|flag| target.has(flag))
        || target.args.windows(2).any(|pair| {
            pair[0] == "-o" && matches!(pair[1].as_str(), "json" | "yaml" | "wide" | "name")
        })
        || target
            .args
            .iter()
            .any(|arg| matches!(arg.as_str(), "-ojson" | "-oyaml" | "-owide"));
    (!asks_format).then_some(target)
}

fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(command: &str) -> Option<String> {
        select(command).map(|t| t.name())
    }

    #[test]
    fn one_command_of_a_program_is_named_with_its_subcommand() {
        assert_eq!(name("git log -n 20").as_deref(), Some("git log"));
        assert_eq!(
            name("git -C repo --no-pager log").as_deref(),
            Some("git log")
        );
        assert_eq!(
            name("cargo +nightly test -q").as_deref(),
            Some("cargo test")
        );
        assert_eq!(name("/usr/bin/git status").as_deref(), Some("git status"));
        assert_eq!(name("grep -rn foo src").as_deref(), Some("grep"));
        assert_eq!(name("python3 -m pytest -x").as_deref(), Some("pytest"));
        assert_eq!(name("npx jest").as_deref(), Some("jest"));
        assert_eq!(name("uv pip install x").as_deref(), Some("pip install"));
        assert_eq!(
            name("python -m pip install x").as_deref(),
            Some("pip install")
        );
        assert_eq!(name("pnpm dlx vitest run").as_deref(), Some("vitest"));
        assert_eq!(name("'git' lo\"g\"").as_deref(), Some("git log"));
    }

    #[test]
    fn wrappers_setup_and_stderr_merging_are_set_aside() {
        assert_eq!(
            name("timeout 60 cargo build").as_deref(),
            Some("cargo build")
        );
        assert_eq!(name("time cargo build").as_deref(), Some("cargo build"));
        assert_eq!(
            name("RUST_LOG=1 env A=1 cargo test 2>&1").as_deref(),
            Some("cargo test")
        );
        assert_eq!(name("cd app && npm test").as_deref(), Some("npm test"));
        assert_eq!(
            name("cd x; export A=1\nsource .venv/bin/activate && pytest").as_deref(),
            Some("pytest")
        );
        assert_eq!(name("A=1; git status # why").as_deref(), Some("git status"));
    }

    #[test]
    fn what_is_not_one_plain_command_is_not_shaped() {
        for command in [
            "git log | cat",
            "git log > log.txt",
            "git log 2> err",
            "git log &",
            "make || true",
            "cargo build && cargo test",
            "(cd x && git log)",
            "for f in *; do git log $f; done",
            "$git log",
            "source env.sh && pytest",
            "git log 'unterminated",
        ] {
            assert_eq!(name(command), None, "{command}");
        }
    }

    #[test]
    fn a_format_the_caller_asked_for_is_not_shaped() {
        for command in [
            "cargo build --message-format=json",
            "git log --pretty=format:%h",
            "git log --oneline",
            "git status --porcelain",
            "npm ls --json",
            "docker ps --format '{{.ID}}'",
            "kubectl get pods -o json",
            "git status -z",
        ] {
            assert_eq!(name(command), None, "{command}");
        }
        assert_eq!(name("git status -s").as_deref(), Some("git status"));
    }
}
