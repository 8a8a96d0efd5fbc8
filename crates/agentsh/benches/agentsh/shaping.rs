// Kept as one file: the cases, the three ways each runs and the rows read as one table.
//! The `shaping` group (docs/shaping.md): what output shaping saves the model, side by side with
//! oh-my-pi 18.2.3's shell minimizer on the same work, in one run.
//!
//! The group builds its fixture projects in a temp dir (`shaping_fixtures.rs`, no network) and
//! runs twelve everyday commands in them three ways:
//!
//! - raw: the command under `bash -c` in the project, stdout and stderr merged;
//! - agentsh: a `tool_call` of `bash` (`command`, `cwd`) to this build's `agentsh rpc` (the
//!   model's path: RPC `bash` is never shaped), with a private HOME/XDG tree; the model's text
//!   is the result's text content;
//! - oh-my-pi: its RPC `bash` with the minimizer on (its default), driven by `peer_rpc.py` (one
//!   peer process per project folder); the model's text is the result's `output`. The peer is
//!   installed by `shared/peers/setup.sh` into `<target>/peers` (or `AGENTSH_BENCH_PEERS`) when
//!   missing; when it cannot be, its columns are skipped with the reason.
//!
//! Every way runs with the same environment (PATH with the test-deps virtualenv first, a
//! `CARGO_TARGET_DIR` in the temp dir that is removed before each way, as is the C build's
//! folder, so each compiles alike). Tokens are o200k (`tiktoken-rs`).
//!
//! The lines a model needs are named per case from the raw output by the shaping rules
//! (docs/shaping.md, "What is never lost"): every diagnostic line (`agentsh_shape::is_diagnostic`, the one rule), the case's summary lines (each case's `Needs` picks them:
//! commit lines and subjects, changed lines of a diff, `test result:`, a failure's block, …),
//! and for grep/find every line. A line is kept when its text appears in the model's text, or
//! in a regrouped listing: agentsh's path groups (a prefix line, then each line's rest indented
//! by two spaces) and oh-my-pi's (`path:` then `  N: text` for grep, `dir/ a b c` for find;
//! white space aside), so a format loses no line.
//!
//! Rows: agentsh's tokens over all cases vs raw (goal ≤ 0.55×); agentsh vs oh-my-pi over the
//! cases where oh-my-pi keeps every needed line (goal < 1.0×); needed lines agentsh keeps (goal:
//! all), and cases where agentsh drops a line oh-my-pi keeps (goal: none). Speed: `grep -rn`
//! printing 200 MB (20 MB with `AGENTSH_BENCH_QUICK`) through a `tool_call`, against the same
//! call on a server whose `$XDG_CONFIG_HOME/agentsh/config.toml` says `[shape] enabled = false`
//! (interleaved, median of 5; goal ≤ 1.10×), and both servers' peak RSS.
//!
//! `AGENTSH_BENCH_SHAPING_DUMP=DIR` writes each case's three texts to `DIR` for reading.

#[path = "shaping_fixtures.rs"]
mod fixtures;

use std::collections::HashSet;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::LazyLock;
use std::time::Duration;

use agentsh_bench_support::{Row, median};
use regex::Regex;
use serde_json::{Value, json};

use super::{AGENTSH, BENCH, RpcServer, end_at_eof, spawn_piped};

/// A `--stat` line: ` path | 12 ++--`, or its total ` 3 files changed, …`.
static STAT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^ \S.*\|\s+(\d+|Bin)|^ \d+ files? changed").expect("a valid pattern")
});

/// The goal for agentsh's tokens over all cases, as a share of the raw output's.
const TOKEN_GOAL: f64 = 0.55;
/// The goal for the speed row: shaped vs not, same call.
const SPEED_GOAL: f64 = 1.10;
/// Interleaved rounds of the speed row (median of each side).
const SPEED_ROUNDS: usize = 5;
/// Output of the speed row's command (`grep -rn` over a generated tree).
const SPEED_BYTES: u64 = 200_000_000;
/// Where to write each case's texts, when set.
const DUMP_ENV: &str = "AGENTSH_BENCH_SHAPING_DUMP";
/// Where oh-my-pi is (or is installed), when set; else `<target>/peers`.
const PEERS_ENV: &str = "AGENTSH_BENCH_PEERS";
/// Seconds a command may take under a tool call or oh-my-pi.
const CALL_TIMEOUT_S: u64 = 600;

/// Which lines of a case's raw output a model needs besides its diagnostic lines.
#[derive(Clone, Copy)]
enum Needs {
    /// Every line: a listing (grep, find, ls).
    Every,
    /// The summary lines this function picks (indexes into the lines).
    Named(fn(&[&str]) -> Vec<usize>),
}

/// One everyday command in one fixture project.
struct Case {
    /// The fixture folder, under the temp dir.
    dir: &'static str,
    /// The command line, as a model writes it.
    command: &'static str,
    /// The lines a model needs.
    needs: Needs,
    /// Folders (under the temp dir) removed before each way runs, so each way builds alike.
    fresh: &'static [&'static str],
}

/// The twelve cases, grouped by folder (one oh-my-pi process per folder).
fn cases() -> Vec<Case> {
    let case = |dir, command, needs, fresh| Case {
        dir,
        command,
        needs,
        fresh,
    };
    let cargo_target: &[&str] = &["cargo-target"];
    vec![
        case("git", "git log -n 20", Needs::Named(git_log), &[]),
        case("git", "git log --stat -n 5", Needs::Named(git_log), &[]),
        case("git", "git status", Needs::Named(git_status), &[]),
        case("git", "git diff", Needs::Named(git_diff), &[]),
        case("git", "git show HEAD", Needs::Named(git_show), &[]),
        case(
            "rust-broken",
            "cargo build",
            Needs::Named(cargo),
            cargo_target,
        ),
        case("rust", "cargo test", Needs::Named(cargo), cargo_target),
        case("python", "python -m pytest", Needs::Named(pytest), &[]),
        case("node", "node --test", Needs::Named(node_test), &[]),
        case("c", "make", Needs::Named(nothing_more), &["c/build"]),
        case("tree", "grep -rn logger .", Needs::Every, &[]),
        case("tree", "find . -name '*.py'", Needs::Every, &[]),
    ]
}

// --- the lines a model needs ------------------------------------------------------------------

/// No summary lines: the diagnostic lines are all (make with gcc).
fn nothing_more(_: &[&str]) -> Vec<usize> {
    Vec::new()
}

/// `git log` (also `--stat`): each `commit` line and subject, the stat lines and totals.
fn git_log(lines: &[&str]) -> Vec<usize> {
    let mut picked = Vec::new();
    let mut subject_next = false;
    for (i, line) in lines.iter().enumerate() {
        if line.starts_with("commit ") {
            picked.push(i);
            subject_next = true;
        } else if subject_next && line.starts_with("    ") && !line.trim().is_empty() {
            picked.push(i);
            subject_next = false;
        } else if STAT.is_match(line) {
            picked.push(i);
        }
    }
    picked
}

/// `git status`: the branch and every path line (staged, unstaged, untracked).
fn git_status(lines: &[&str]) -> Vec<usize> {
    pick(lines, |line| {
        line.starts_with("On branch ") || line.starts_with('\t')
    })
}

/// `git diff`: each file's `diff --git` line and every added or removed line.
fn git_diff(lines: &[&str]) -> Vec<usize> {
    pick(lines, |line| {
        line.starts_with("diff --git ")
            || (line.starts_with(['+', '-'])
                && !line.starts_with("+++ ")
                && !line.starts_with("--- "))
    })
}

/// `git show`: the commit's lines as `git log` and the diff's as `git diff`.
fn git_show(lines: &[&str]) -> Vec<usize> {
    let mut picked = git_log(lines);
    picked.extend(git_diff(lines));
    picked.sort_unstable();
    picked.dedup();
    picked
}

/// cargo: each diagnostic's location (`--> src/lib.rs:3:5`), `test result:` lines, and each
/// failing test's block (`---- name stdout ----` to the blank line after it, `note:` aside).
fn cargo(lines: &[&str]) -> Vec<usize> {
    let mut picked = Vec::new();
    let mut in_failure = false;
    for (i, line) in lines.iter().enumerate() {
        if line.starts_with("---- ") {
            in_failure = true;
        } else if line.trim().is_empty() {
            in_failure = false;
        }
        let location = line.trim_start().starts_with("--> ");
        if location
            || line.starts_with("test result:")
            || (in_failure && !line.starts_with("note: "))
        {
            picked.push(i);
        }
    }
    picked
}

/// pytest: each failure's header (`____ test_x ____`), its failing source line (`>`) and
/// explanation (`E …`), and the closing summary (`=== 3 failed, 57 passed in 0.1s ===`).
fn pytest(lines: &[&str]) -> Vec<usize> {
    static HEADER: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^_{3,} \S.* _{3,}$").expect("a valid pattern"));
    static SUMMARY: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^=+ .*\b(passed|failed)\b.* =+$").expect("a valid pattern"));
    pick(lines, |line| {
        HEADER.is_match(line)
            || line.starts_with("> ")
            || line.starts_with("E ")
            || SUMMARY.is_match(line)
    })
}

/// node's test runner (TAP or spec reporter): each failing test (`not ok …`, `✖ …`), its
/// expected and actual values and location, and the counts (`# tests 40`, `# fail 2`).
fn node_test(lines: &[&str]) -> Vec<usize> {
    static NEEDED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^\s*(not ok \d+|✖ )|^(# |ℹ )(tests|pass|fail) \d+$|^\s+(expected|actual|location):",
        )
        .expect("a valid pattern")
    });
    pick(lines, |line| NEEDED.is_match(line))
}

/// The indexes of the lines `keep` picks.
fn pick(lines: &[&str], keep: impl Fn(&str) -> bool) -> Vec<usize> {
    (0..lines.len()).filter(|&i| keep(lines[i])).collect()
}

/// The lines of `raw` a model needs for `needs`: diagnostic lines, the named ones, or every
/// line; blank lines never.
fn needed_lines(raw: &str, needs: Needs) -> Vec<String> {
    let lines: Vec<&str> = raw.lines().collect();
    let named: HashSet<usize> = match needs {
        Needs::Every => (0..lines.len()).collect(),
        Needs::Named(pick) => pick(&lines).into_iter().collect(),
    };
    lines
        .iter()
        .enumerate()
        .filter(|(i, line)| {
            !line.trim().is_empty() && (named.contains(i) || agentsh_shape::is_diagnostic(line))
        })
        .map(|(_, line)| line.trim_end().to_owned())
        .collect()
}

/// A line with no white space: how regrouped forms are compared.
fn squeeze(line: &str) -> String {
    line.chars().filter(|c| !c.is_whitespace()).collect()
}

/// `text` with what differs from run to run masked: addresses (`0x7f3a…`), a thread's id
/// (`thread 'x' (6154)`), durations (`in 0.15s`, `duration_ms: 1.6`).
fn steady(text: &str) -> String {
    static VOLATILE: LazyLock<[(Regex, &str); 4]> = LazyLock::new(|| {
        let re = |pattern| Regex::new(pattern).expect("a valid pattern");
        [
            (re(r"0x[0-9a-fA-F]{6,}"), "0x…"),
            (re(r"(thread '[^']*') \(\d+\)"), "$1 (…)"),
            (re(r"duration_ms:? [0-9.]+"), "duration_ms …"),
            (re(r"\b\d+(\.\d+)?m?s\b"), "…s"),
        ]
    });
    let mut text = text.to_owned();
    for (pattern, mask) in VOLATILE.iter() {
        text = pattern.replace_all(&text, *mask).into_owned();
    }
    text
}

/// What a model's text holds: its lines and the lines its regrouped listings stand for, white
/// space removed (alignment and indentation are form, not content).
struct Held {
    /// The text's lines.
    lines: Vec<String>,
    /// The lines its regrouped listings stand for.
    regrouped: HashSet<String>,
}

impl Held {
    /// What `text` holds.
    fn new(text: &str) -> Self {
        let mut regrouped = HashSet::new();
        let mut header: Option<&str> = None;
        // oh-my-pi's find groups: `dir/ a b c`, continued by `  d e f`.
        let members = |dir: &str, names: &str, regrouped: &mut HashSet<String>| {
            if dir.ends_with('/') && !dir.contains(':') {
                for name in names.split_whitespace() {
                    regrouped.insert(squeeze(&format!("{dir}{name}")));
                }
            }
        };
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("  ") {
                let Some(header) = header else { continue };
                // agentsh's path groups, and oh-my-pi's grep groups (`path:`, `  N: text`).
                regrouped.insert(squeeze(&format!("{header}{rest}")));
                if let Some((dir, _)) = header.split_once(' ') {
                    members(dir, rest, &mut regrouped);
                }
            } else {
                header = Some(line);
                if let Some((dir, names)) = line.split_once(' ') {
                    members(dir, names, &mut regrouped);
                }
            }
        }
        Self {
            lines: text.lines().map(squeeze).collect(),
            regrouped,
        }
    }

    /// Whether the text holds `line`: within one of its lines, or regrouped (a `./` prefix
    /// aside), as it is or without its rules (`=== 3 failed in 0.1s ===`: a runner's own
    /// framing); or in a form that keeps what it says: a `commit <sha>` line by the sha's first
    /// 7 digits, a `diff --git a/P b/P` line by its path.
    fn holds(&self, line: &str) -> bool {
        static RULE: LazyLock<Regex> =
            LazyLock::new(|| Regex::new(r"[=_-]{3,}").expect("a valid pattern"));
        let within = |form: &str| {
            let form = squeeze(form);
            !form.is_empty()
                && (self.lines.iter().any(|line| line.contains(&form))
                    || self.regrouped.contains(&form)
                    || form
                        .strip_prefix("./")
                        .is_some_and(|rest| self.regrouped.contains(rest)))
        };
        let commit = line
            .strip_prefix("commit ")
            .filter(|sha| sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit()))
            .is_some_and(|sha| within(&sha[..7]));
        let diff = line
            .strip_prefix("diff --git a/")
            .and_then(|paths| paths.split_once(" b/"))
            .is_some_and(|(path, _)| within(path));
        within(line) || within(&RULE.replace_all(line, "")) || commit || diff
    }
}

/// Checks the presence rules on small examples before they judge real texts.
fn check_presence_rules() {
    let held = |text: &str, line: &str| Held::new(&steady(text)).holds(&steady(line));
    // agentsh's path group: the prefix once, each rest indented by two.
    let grouped = "./src/app/\n  a.py:3:logger = 1\n  b.py:9:    logger.x()\n[… 2 lines …]";
    assert!(held(grouped, "./src/app/a.py:3:logger = 1"));
    assert!(held(grouped, "./src/app/b.py:9:    logger.x()"));
    assert!(!held(grouped, "./src/app/c.py:1:logger"));
    // oh-my-pi's grep and find groups.
    assert!(held("./a.py:\n  8: logger.x()", "./a.py:8:    logger.x()"));
    assert!(!held("./a.py:\n  8: logger.x()", "./a.py:9:    logger.x()"));
    assert!(held("src/app/ a.py b.py\n  c.py", "./src/app/c.py"));
    assert!(!held("src/app/ a.py b.py\n  c.py", "./src/app/d.py"));
    // Other forms that keep what a line says; what differs between runs.
    let sha = "b15f16dfc08fd817cae0cbe2f683cead2319b1e7";
    assert!(held("b15f16d Add transfers", &format!("commit {sha}")));
    assert!(!held("b15f16e Add transfers", &format!("commit {sha}")));
    assert!(held("File: src/a.py", "diff --git a/src/a.py b/src/a.py"));
    assert!(held(
        "pytest: 3 failed, 57 passed in 0.13s",
        "==== 3 failed, 57 passed in 0.09s ===="
    ));
    assert!(held(" a.py   | 11 ++", "a.py | 11 ++"));
    assert!(held(
        "thread 'x' (99) panicked",
        "thread 'x' (6154) panicked"
    ));
    assert!(!held("2 failed", "3 failed"));
}

// --- the three ways ---------------------------------------------------------------------------

/// The environment every way runs the commands in (oh-my-pi's driver replaces HOME and XDG).
struct Setting {
    /// The temp dir holding the fixtures.
    root: PathBuf,
    /// The whole environment of a command.
    vars: Vec<(String, OsString)>,
}

impl Setting {
    /// The setting of fixtures under `root`, with `venv`'s programs first on PATH.
    fn new(root: &Path, venv: Option<&Path>) -> Self {
        let real_home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default();
        let mut path = OsString::new();
        if let Some(venv) = venv {
            path.push(venv.join("bin"));
            path.push(":");
        }
        path.push(std::env::var_os("PATH").unwrap_or_default());
        let mut vars: Vec<(String, OsString)> = vec![
            ("PATH".into(), path),
            ("HOME".into(), root.join("home").into()),
            ("LANG".into(), "C.UTF-8".into()),
            ("TZ".into(), "UTC".into()),
            ("CARGO_TARGET_DIR".into(), root.join("cargo-target").into()),
            ("CARGO_NET_OFFLINE".into(), "true".into()),
            ("PYTHONDONTWRITEBYTECODE".into(), "1".into()),
            ("GIT_CONFIG_NOSYSTEM".into(), "1".into()),
            // One job: cargo's output in one order every run.
            ("CARGO_BUILD_JOBS".into(), "1".into()),
        ];
        // What agentsh sets in its shells (`CI=1`, `TERM=dumb`, pagers…), for every way alike:
        // programs print the same to each (pytest, for one, prints more under `CI`).
        let hardened = agentsh_process::env::HARDENED_ENV
            .iter()
            .chain(agentsh_process::env::TerminalKind::Pipe.vars());
        vars.extend(hardened.map(|(k, v)| ((*k).to_owned(), OsString::from(v))));
        // The toolchain stays the user's (the HOMEs are private).
        for (key, default) in [("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo")] {
            let value = std::env::var_os(key).unwrap_or_else(|| real_home.join(default).into());
            vars.push((key.into(), value));
        }
        std::fs::create_dir_all(root.join("home")).expect("mkdir");
        Self {
            root: root.to_owned(),
            vars,
        }
    }

    /// `program` with only this setting's environment.
    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = Command::new(program);
        command
            .env_clear()
            .envs(self.vars.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null());
        command
    }

    /// Removes `case.fresh`, so the next way builds from scratch.
    fn freshen(&self, case: &Case) {
        for dir in case.fresh {
            let _ = std::fs::remove_dir_all(self.root.join(dir));
        }
    }

    /// The raw output: `bash -c` in the case's folder, stdout and stderr merged.
    fn raw(&self, case: &Case) -> String {
        let output = self
            .command("bash")
            .arg("-c")
            .arg(format!("exec 2>&1\n{}", case.command))
            .current_dir(self.root.join(case.dir))
            .stderr(Stdio::null())
            .output()
            .expect("bash");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }
}

/// An `agentsh rpc` server of this build, with its own HOME/XDG tree under `dir`.
struct Agentsh {
    server: RpcServer,
    /// Its HOME/XDG tree and artifact store.
    dir: PathBuf,
}

impl Agentsh {
    /// Starts a server whose config file (`$XDG_CONFIG_HOME/agentsh/config.toml`) adds `extra`
    /// to a private artifact store; `Err` with agentsh's words when it refuses the config.
    fn start(setting: &Setting, dir: &Path, extra: &str) -> Result<Self, String> {
        for sub in ["home", "config/agentsh", "state", "cache", "artifacts"] {
            std::fs::create_dir_all(dir.join(sub)).expect("mkdir");
        }
        let config = format!(
            "[artifacts]\ndir = \"{}\"\n{extra}",
            dir.join("artifacts").display()
        );
        std::fs::write(dir.join("config/agentsh/config.toml"), config).expect("config");
        let command = |args: &[&str]| {
            let mut command = setting.command(AGENTSH);
            command
                .args(args)
                .env("HOME", dir.join("home"))
                .env("XDG_CONFIG_HOME", dir.join("config"))
                .env("XDG_STATE_HOME", dir.join("state"))
                .env("XDG_CACHE_HOME", dir.join("cache"))
                .current_dir(dir);
            command
        };
        // A config agentsh refuses ends every mode at once: ask `exec` first, for its words.
        let check = command(&["exec", "--", "true"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .expect("agentsh exec");
        if !check.status.success() {
            return Err(String::from_utf8_lossy(&check.stderr).trim().to_owned());
        }
        let mut server = RpcServer::spawn(command(&["rpc"]));
        server.tool_true();
        Ok(Self {
            server,
            dir: dir.to_owned(),
        })
    }

    /// A `bash` tool call of `command` in `cwd`: the model's text and the result's details.
    fn call(&mut self, command: &str, cwd: &Path) -> (String, Value) {
        let (result, _) = self.server.tool_call(
            "bash",
            &json!({"command": command, "cwd": cwd, "timeout": CALL_TIMEOUT_S}),
        );
        (result_text(&result), result["details"].clone())
    }

    /// Removes every artifact of the server's store (the speed row's 200 MB ones).
    fn clear_artifacts(&self) {
        let store = self.dir.join("artifacts");
        for entry in std::fs::read_dir(&store).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                let _ = std::fs::remove_dir_all(path);
            } else {
                let _ = std::fs::remove_file(path);
            }
        }
    }

    /// The server's peak resident memory so far (`VmHWM`), in MiB.
    fn peak_rss_mib(&self) -> f64 {
        self.server.peak_rss_mib()
    }

    /// Ends the server (at end of input) and waits for it.
    fn stop(self) {
        self.server.stop();
    }
}

/// The text content of a tool result (what the model reads).
fn result_text(result: &Value) -> String {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|part| part["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The driver of oh-my-pi: reads `{"cwd", "command"}` lines, answers `{"output"}` or
/// `{"error"}` lines; one peer process per folder, restarted when the folder changes.
const OMP_DRIVER: &str = r#"
import json, sys
sys.path.insert(0, sys.argv[1])
from peer_rpc import PeerRPC
peer, cwd = None, None
for line in sys.stdin:
    request = json.loads(line)
    try:
        if peer is None or request["cwd"] != cwd:
            if peer is not None:
                peer.close()
            peer, cwd = None, request["cwd"]
            peer = PeerRPC("omp", cwd=cwd)
        data, _, _ = peer.bash(request["command"], timeout=float(sys.argv[2]))
        answer = {"output": data.get("output", "")} if "output" in data else {"error": data}
    except Exception as error:
        answer = {"error": repr(error)}
    print(json.dumps(answer), flush=True)
if peer is not None:
    peer.close()
"#;

/// oh-my-pi with its minimizer on, through `peer_rpc.py`.
struct Omp {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Omp {
    /// Starts the driver of oh-my-pi installed in `peers`, in `setting`'s environment.
    fn start(setting: &Setting, peers: &Path) -> Self {
        let driver = setting.root.join("omp-driver.py");
        std::fs::write(&driver, OMP_DRIVER).expect("driver");
        let mut command = setting.command(python());
        command
            .arg(&driver)
            .arg(peers)
            .arg(CALL_TIMEOUT_S.to_string())
            .current_dir(&setting.root)
            .stderr(Stdio::inherit());
        let (child, stdin, stdout) = spawn_piped(command);
        Self {
            child,
            stdin,
            stdout,
        }
    }

    /// The model's text of `command` in `cwd`, or why there is none.
    fn call(&mut self, command: &str, cwd: &Path) -> Result<String, String> {
        writeln!(self.stdin, "{}", json!({"cwd": cwd, "command": command})).expect("write");
        self.stdin.flush().expect("flush");
        let mut line = String::new();
        if self.stdout.read_line(&mut line).expect("read") == 0 {
            return Err("the oh-my-pi driver ended".into());
        }
        let answer: Value = serde_json::from_str(&line).expect("a JSON line");
        match answer["output"].as_str() {
            Some(output) => Ok(output.to_owned()),
            None => Err(answer["error"].to_string()),
        }
    }

    /// Ends the driver (and its peer) at end of input and waits for it.
    fn stop(self) {
        end_at_eof(self.child, self.stdin);
    }
}

/// A python to run the oh-my-pi driver with: the test-deps virtualenv's, else the one `python3`
/// names here (a pyenv shim would not find its root under the private HOME).
fn python() -> PathBuf {
    if let Some(venv) = test_deps_venv() {
        return venv.join("bin/python");
    }
    Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .filter(|path| !path.is_empty())
        .map_or_else(|| PathBuf::from("python3"), PathBuf::from)
}

/// Where oh-my-pi is: `AGENTSH_BENCH_PEERS`, else `<target>/peers`, installed there by
/// `shared/peers/setup.sh` (npm registry only) when missing; `Err` says why it is not.
fn omp_peers() -> Result<PathBuf, String> {
    let dir = std::env::var_os(PEERS_ENV).map_or_else(
        || {
            Path::new(AGENTSH)
                .ancestors()
                .nth(2)
                .expect("the target dir")
                .join("peers")
        },
        PathBuf::from,
    );
    let ready = |dir: &Path| {
        dir.join("peer_rpc.py").is_file()
            && dir
                .join("omp/node_modules/@oh-my-pi/pi-coding-agent/dist/cli.js")
                .is_file()
            && dir.join("bun/node_modules/bun/bin/bun.exe").is_file()
    };
    if ready(&dir) {
        return Ok(dir);
    }
    let setup = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/peers/setup.sh");
    if !setup.is_file() {
        return Err(format!(
            "oh-my-pi is not in {} and there is no {} to install it",
            dir.display(),
            setup.display()
        ));
    }
    eprintln!("{BENCH}: installing oh-my-pi into {}", dir.display());
    let status = Command::new("bash")
        .arg(&setup)
        .env("PEERS_DIR", &dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .map_err(|err| format!("{}: {err}", setup.display()))?;
    if status.success() && ready(&dir) {
        Ok(dir)
    } else {
        Err(format!(
            "{} did not install oh-my-pi into {} ({status})",
            setup.display(),
            dir.display()
        ))
    }
}

/// The virtualenv of `scripts/install-test-deps` (with pytest), as `tests/mcp.rs` finds it.
fn test_deps_venv() -> Option<PathBuf> {
    let deps = std::env::var_os("AGENTSH_TEST_DEPS")
        .map(PathBuf::from)
        .or_else(|| {
            Path::new(AGENTSH)
                .ancestors()
                .map(|dir| dir.join("test-deps"))
                .find(|dir| dir.is_dir())
        })?;
    Some(deps.join("venv")).filter(|venv| venv.join("bin/python").is_file())
}

// --- measuring --------------------------------------------------------------------------------

/// One case's figures.
struct Measured {
    /// The command line.
    name: String,
    /// Tokens of the raw output.
    raw: usize,
    /// Tokens of agentsh's text.
    agentsh: usize,
    /// oh-my-pi's tokens, or why it has none.
    omp: Result<usize, String>,
    /// Lines a model needs.
    needed: usize,
    /// Of them, those agentsh's text holds.
    agentsh_kept: usize,
    /// The needed lines agentsh's text lacks.
    agentsh_dropped: Vec<String>,
    /// The needed lines oh-my-pi's text lacks (`None` without oh-my-pi).
    omp_dropped: Option<Vec<String>>,
    /// Whether agentsh's result says it was shaped (`details.meta.shaped`).
    shaped: bool,
}

impl Measured {
    /// Needed lines agentsh drops that oh-my-pi keeps.
    fn lost_to_omp(&self) -> Vec<&String> {
        match &self.omp_dropped {
            Some(omp) => self
                .agentsh_dropped
                .iter()
                .filter(|line| !omp.contains(line))
                .collect(),
            None => Vec::new(),
        }
    }
}

/// o200k tokens of `text`.
fn tokens(text: &str) -> usize {
    tiktoken_rs::o200k_base_singleton()
        .encode_ordinary(text)
        .len()
}

/// The needed lines `text` lacks (what differs from run to run masked in both).
fn dropped(needed: &[String], text: &str) -> Vec<String> {
    let held = Held::new(&steady(text));
    needed
        .iter()
        .filter(|line| !held.holds(&steady(line)))
        .cloned()
        .collect()
}

/// Runs every case three ways; a case that cannot run here is left out with its reason.
fn measure(
    setting: &Setting,
    agentsh: &mut Agentsh,
    omp: &mut Result<Omp, String>,
) -> Vec<Measured> {
    let dump = std::env::var_os(DUMP_ENV).map(PathBuf::from);
    let mut measured = Vec::new();
    for (n, case) in cases().into_iter().enumerate() {
        let cwd = setting.root.join(case.dir);
        if case.command.contains("pytest") && test_deps_venv().is_none() {
            eprintln!(
                "{BENCH}: skipped `{}`: no virtualenv with pytest (run scripts/install-test-deps)",
                case.command
            );
            continue;
        }
        setting.freshen(&case);
        let raw = setting.raw(&case);
        setting.freshen(&case);
        let (agentsh_text, details) = agentsh.call(case.command, &cwd);
        setting.freshen(&case);
        let omp_text = match omp {
            Ok(omp) => omp.call(case.command, &cwd),
            Err(why) => Err(why.clone()),
        };
        if let Some(dir) = &dump {
            std::fs::create_dir_all(dir).expect("the dump folder");
            let stem = format!(
                "{n:02}-{}",
                case.command.replace([' ', '/', '\'', '*'], "_")
            );
            std::fs::write(dir.join(format!("{stem}.raw")), &raw).expect("dump");
            std::fs::write(dir.join(format!("{stem}.agentsh")), &agentsh_text).expect("dump");
            let omp_dump = omp_text
                .clone()
                .unwrap_or_else(|why| format!("(none: {why})"));
            std::fs::write(dir.join(format!("{stem}.omp")), omp_dump).expect("dump");
        }
        let needed = needed_lines(&raw, case.needs);
        let agentsh_dropped = dropped(&needed, &agentsh_text);
        let omp_dropped = omp_text.as_ref().ok().map(|text| dropped(&needed, text));
        measured.push(Measured {
            name: case.command.to_owned(),
            raw: tokens(&raw),
            agentsh: tokens(&agentsh_text),
            omp: omp_text.as_deref().map(tokens).map_err(Clone::clone),
            needed: needed.len(),
            agentsh_kept: needed.len() - agentsh_dropped.len(),
            agentsh_dropped,
            omp_dropped,
            shaped: !details["meta"]["shaped"].is_null(),
        });
    }
    measured
}

/// Prints the per-case table and the lines each side drops.
fn print_table(measured: &[Measured]) {
    println!(
        "\n{:<22} {:>6} {:>8} {:>6} {:>6} {:>6} {:>6} {:>8} {:>6}  note",
        "case", "raw", "agentsh", "×raw", "omp", "×raw", "needed", "agentsh", "omp"
    );
    let ratio = |a: usize, b: usize| a as f64 / b.max(1) as f64;
    for m in measured {
        let (omp_tokens, omp_ratio, omp_kept) = match (&m.omp, &m.omp_dropped) {
            (Ok(t), Some(d)) => (
                t.to_string(),
                format!("{:.2}", ratio(*t, m.raw)),
                (m.needed - d.len()).to_string(),
            ),
            _ => ("-".into(), "-".into(), "-".into()),
        };
        let lost = m.lost_to_omp().len();
        let mut note = Vec::new();
        if lost > 0 {
            note.push(format!(
                "MISSED: drops {lost} needed line(s) oh-my-pi keeps"
            ));
        } else if !m.agentsh_dropped.is_empty() {
            note.push(format!(
                "MISSED: drops {} needed line(s)",
                m.agentsh_dropped.len()
            ));
        }
        if m.shaped {
            note.push("shaped".into());
        }
        if let Err(why) = &m.omp {
            note.push(format!("oh-my-pi: {why}"));
        }
        println!(
            "{:<22} {:>6} {:>8} {:>6.2} {:>6} {:>6} {:>6} {:>8} {:>6}  {}",
            m.name,
            m.raw,
            m.agentsh,
            ratio(m.agentsh, m.raw),
            omp_tokens,
            omp_ratio,
            m.needed,
            m.agentsh_kept,
            omp_kept,
            note.join("; ")
        );
    }
    let sum = |f: fn(&Measured) -> usize| measured.iter().map(f).sum::<usize>();
    let (raw, agentsh) = (sum(|m| m.raw), sum(|m| m.agentsh));
    let omp: usize = measured.iter().filter_map(|m| m.omp.as_ref().ok()).sum();
    let omp_kept: usize = measured
        .iter()
        .filter_map(|m| m.omp_dropped.as_ref().map(|d| m.needed - d.len()))
        .sum();
    println!(
        "{:<22} {:>6} {:>8} {:>6.2} {:>6} {:>6.2} {:>6} {:>8} {:>6}\n",
        "total",
        raw,
        agentsh,
        ratio(agentsh, raw),
        omp,
        ratio(omp, raw),
        sum(|m| m.needed),
        sum(|m| m.agentsh_kept),
        omp_kept
    );
    for m in measured {
        for (who, lines) in [
            ("agentsh", Some(&m.agentsh_dropped)),
            ("oh-my-pi", m.omp_dropped.as_ref()),
        ] {
            let Some(lines) = lines.filter(|lines| !lines.is_empty()) else {
                continue;
            };
            println!(
                "{who} drops {} needed line(s) of `{}`:",
                lines.len(),
                m.name
            );
            for line in lines.iter().take(5) {
                println!("    {line}");
            }
            if lines.len() > 5 {
                println!("    … and {} more", lines.len() - 5);
            }
        }
    }
}

/// The token and needed-line rows.
fn report(measured: &[Measured]) {
    let raw: usize = measured.iter().map(|m| m.raw).sum();
    let agentsh: usize = measured.iter().map(|m| m.agentsh).sum();
    let cases = measured.len();
    let ratio = agentsh as f64 / raw.max(1) as f64;
    Row::new(
        BENCH,
        format!("shaping: o200k tokens the model reads, {cases} everyday commands"),
    )
    .value(agentsh as f64, "tokens")
    .ratio(ratio, format!("the raw output, {raw} tokens"))
    .goal(format!("≤ {TOKEN_GOAL:.2}×"), ratio <= TOKEN_GOAL)
    .report();
    let with_omp: Vec<&Measured> = measured.iter().filter(|m| m.omp.is_ok()).collect();
    if !with_omp.is_empty() {
        let omp: usize = with_omp.iter().filter_map(|m| m.omp.as_ref().ok()).sum();
        let omp_raw: usize = with_omp.iter().map(|m| m.raw).sum();
        Row::new(
            BENCH,
            format!(
                "shaping: oh-my-pi 18.2.3's tokens, {} commands",
                with_omp.len()
            ),
        )
        .value(omp as f64, "tokens")
        .ratio(
            omp as f64 / omp_raw.max(1) as f64,
            format!("the raw output, {omp_raw} tokens"),
        )
        .report();
        let fair: Vec<&&Measured> = with_omp
            .iter()
            .filter(|m| m.omp_dropped.as_ref().is_some_and(Vec::is_empty))
            .collect();
        let ours: usize = fair.iter().map(|m| m.agentsh).sum();
        let theirs: usize = fair.iter().filter_map(|m| m.omp.as_ref().ok()).sum();
        let ratio = ours as f64 / theirs.max(1) as f64;
        Row::new(
            BENCH,
            format!(
                "shaping: agentsh vs oh-my-pi over the {} commands where oh-my-pi keeps every needed line",
                fair.len()
            ),
        )
        .value(ours as f64, "tokens")
        .ratio(ratio, format!("oh-my-pi, {theirs} tokens"))
        .goal("< 1.00×", ratio < 1.0)
        .report();
        let lost = with_omp
            .iter()
            .filter(|m| !m.lost_to_omp().is_empty())
            .count();
        Row::new(
            BENCH,
            "shaping: commands where agentsh drops a needed line oh-my-pi keeps",
        )
        .value(lost as f64, "commands")
        .goal("none", lost == 0)
        .report();
        let omp_kept: usize = with_omp
            .iter()
            .filter_map(|m| m.omp_dropped.as_ref().map(|d| m.needed - d.len()))
            .sum();
        let omp_needed: usize = with_omp.iter().map(|m| m.needed).sum();
        Row::new(BENCH, "shaping: needed lines oh-my-pi keeps")
            .value(omp_kept as f64, "lines")
            .ratio(
                omp_kept as f64 / omp_needed.max(1) as f64,
                format!("{omp_needed} needed"),
            )
            .report();
    }
    let needed: usize = measured.iter().map(|m| m.needed).sum();
    let kept: usize = measured.iter().map(|m| m.agentsh_kept).sum();
    Row::new(BENCH, "shaping: needed lines agentsh keeps")
        .value(kept as f64, "lines")
        .ratio(
            kept as f64 / needed.max(1) as f64,
            format!("{needed} needed"),
        )
        .goal(format!("all {needed}"), kept == needed)
        .report();
}

/// The speed row: `grep -rn` printing `bytes` through a tool call, shaped vs `[shape] enabled =
/// false`, interleaved, and both servers' peak RSS.
fn speed(setting: &Setting, bytes: u64) {
    let tree = setting.root.join("big");
    let printed = fixtures::big_tree(&tree, 100, bytes);
    let command = "grep -rn logger .";
    let mb = printed / 1_000_000;
    let mut shaped = Agentsh::start(setting, &setting.root.join("agentsh-speed"), "")
        .expect("agentsh starts with its default config");
    let mut plain = match Agentsh::start(
        setting,
        &setting.root.join("agentsh-unshaped"),
        "[shape]\nenabled = false\n",
    ) {
        Ok(plain) => Some(plain),
        Err(why) => {
            eprintln!(
                "{BENCH}: the speed row has no baseline: this build refuses `[shape] enabled = false` ({why})"
            );
            None
        }
    };
    let time = |server: &mut Agentsh| {
        let start = std::time::Instant::now();
        let (text, details) = server.call(command, &tree);
        let elapsed = start.elapsed();
        assert!(!text.is_empty(), "{command}: no text");
        // Every byte went through: the shaped or the truncated result counts them all.
        let meta = &details["meta"];
        let total = meta["shaped"]["rawBytes"]
            .as_u64()
            .or_else(|| meta["truncation"]["totalBytes"].as_u64());
        assert_eq!(total, Some(printed), "{command}: {details}");
        server.clear_artifacts();
        (elapsed, !details["meta"]["shaped"].is_null())
    };
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let mut was_shaped = false;
    for _ in 0..SPEED_ROUNDS {
        let (elapsed, is_shaped) = time(&mut shaped);
        ours.push(elapsed);
        was_shaped |= is_shaped;
        if let Some(plain) = plain.as_mut() {
            theirs.push(time(plain).0);
        }
    }
    let _ = std::fs::remove_dir_all(&tree);
    let ours_median: Duration = median(&ours);
    let label = if was_shaped {
        "shaped"
    } else {
        "not shaped by this build"
    };
    let row = Row::new(
        BENCH,
        format!(
            "shaping: `{command}` printing {mb} MB, tool_call ({label}), median of {SPEED_ROUNDS}"
        ),
    )
    .value(ours_median.as_secs_f64() * 1e3, "ms");
    match &plain {
        Some(_) => {
            let base = median(&theirs);
            let ratio = ours_median.as_secs_f64() / base.as_secs_f64();
            row.ratio(
                ratio,
                format!(
                    "[shape] enabled = false, {:.0} ms",
                    base.as_secs_f64() * 1e3
                ),
            )
            .goal(format!("≤ {SPEED_GOAL:.2}×"), ratio <= SPEED_GOAL)
            .report();
        }
        None => row.report(),
    }
    let peak = shaped.peak_rss_mib();
    let row = Row::new(
        BENCH,
        format!("shaping: agentsh rpc after the {mb} MB calls ({label}): peak RSS (VmHWM)"),
    )
    .value(peak, "MiB");
    match &plain {
        Some(plain) => {
            let base = plain.peak_rss_mib();
            row.ratio(
                peak / base,
                format!("[shape] enabled = false, {base:.1} MiB"),
            )
            .goal("≤ 20 MiB", peak <= 20.0)
            .report();
        }
        None => row.goal("≤ 20 MiB", peak <= 20.0).report(),
    }
    shaped.stop();
    if let Some(plain) = plain {
        plain.stop();
    }
}

/// The group's rows.
pub(crate) fn rows(quick: bool) {
    check_presence_rules();
    let root = tempfile::Builder::new()
        .prefix("agentsh-bench-shaping-")
        .tempdir()
        .expect("temp dir");
    let root_path = root.path().to_owned();
    let venv = test_deps_venv();
    let setting = Setting::new(&root_path, venv.as_deref());
    fixtures::git_repo(&root_path.join("git"));
    fixtures::python_project(&root_path.join("python"));
    fixtures::rust_workspace(&root_path.join("rust"), false);
    fixtures::rust_workspace(&root_path.join("rust-broken"), true);
    fixtures::node_suite(&root_path.join("node"));
    fixtures::c_project(&root_path.join("c"));
    fixtures::file_tree(&root_path.join("tree"));

    let mut agentsh = Agentsh::start(&setting, &root_path.join("agentsh"), "")
        .expect("agentsh starts with its default config");
    let mut omp = omp_peers().map(|peers| Omp::start(&setting, &peers));
    if let Err(why) = &omp {
        eprintln!("{BENCH}: no oh-my-pi columns: {why}");
    }
    let measured = measure(&setting, &mut agentsh, &mut omp);
    agentsh.stop();
    if let Ok(omp) = omp {
        omp.stop();
    }
    print_table(&measured);
    report(&measured);
    speed(&setting, if quick { SPEED_BYTES / 10 } else { SPEED_BYTES });
}
