//! Completion: a battery of hostile one-liners, each with its expected outcome.
//!
//! Every line runs in a fresh session after `V=kept` and is followed by `echo ok; false` (which
//! must report `ok` and exit 1: the session works) and `echo "$V"` (the variable is still there
//! unless the line ended the shell or was outcome (b), a replaced shell). Where bash itself
//! gives a result, agentsh gives the same as `bash -c` does, compared here with a real
//! `bash -c` run (error messages name the command file where bash names itself, so that
//! prefix is normalised).

use std::time::{Duration, Instant};

use agentsh_process::shell::ShellSpec;
use agentsh_shell_executor::{SessionKey, ShellExecutor};

use crate::common::{executor, run_on, runtime, session, which};

/// What a hostile line must lead to.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// The same output and exit code as `bash -c` (for sh and zsh: as `sh -c`, `zsh -fc`),
    /// with the shell and its state kept.
    AsShell,
    /// Kept, with this output and exit code, where agentsh differs from `<shell> -c` by
    /// design (the reason is written beside the case).
    Kept(&'static str, i32),
    /// Outcome (b): the call ends with the shell replaced (`sessionRestarted`), with this exit
    /// code (`None`: it cannot be known).
    Replaced(Option<i32>),
    /// The line ends the shell itself with this status.
    Death(i32),
}

use Expect::{AsShell, Death, Kept, Replaced};

/// One hostile line and why it has the outcome it has.
struct Case {
    line: &'static str,
    expect: Expect,
    why: &'static str,
}

const fn case(line: &'static str, expect: Expect, why: &'static str) -> Case {
    Case { line, expect, why }
}

/// How long a hostile line may run (the call must end within 2 s more).
const LINE_TIMEOUT: Duration = Duration::from_secs(3);

const BASH_CASES: &[Case] = &[
    // Shadowing each builtin the loop uses.
    case(
        "builtin() { echo fake; }; false",
        AsShell,
        "the loop removes a function named builtin",
    ),
    case(
        "enable() { echo fake; }; false",
        AsShell,
        "the loop removes a function named enable",
    ),
    case(
        "printf() { echo fake; }; echo hi",
        AsShell,
        "the loop calls builtin printf",
    ),
    case(
        "read() { echo fake; }",
        AsShell,
        "the loop calls builtin read",
    ),
    case(
        "cd() { echo fake-cd; }; false",
        AsShell,
        "the loop calls builtin cd",
    ),
    case(
        "trap() { echo fake; }",
        AsShell,
        "the loop calls builtin trap",
    ),
    case(
        "set() { echo fake; }",
        AsShell,
        "the loop calls builtin set",
    ),
    case(
        "shopt() { echo fake; }",
        AsShell,
        "the loop calls builtin shopt",
    ),
    case(
        "export() { echo fake; }",
        AsShell,
        "the loop calls builtin export",
    ),
    case(
        "unset() { echo fake; }",
        AsShell,
        "a fake unset removes nothing, and builtin is real",
    ),
    case(
        "command() { echo fake; }; false",
        AsShell,
        "the loop does not use command",
    ),
    case(
        "source() { echo fake; }; .() { echo fake; }",
        AsShell,
        "the loop calls builtin .",
    ),
    case(
        "eval() { echo fake; }; exec() { echo fake; }",
        AsShell,
        "the loop uses neither",
    ),
    // Disabling builtins.
    case(
        "enable -n printf; enable -n read",
        AsShell,
        "re-enabled for the loop",
    ),
    case(
        "enable -n cd",
        AsShell,
        "re-enabled for the loop, disabled again for the user",
    ),
    case("enable -n .", AsShell, "re-enabled for the loop"),
    case(
        "enable -n source trap set shopt export readonly",
        AsShell,
        "re-enabled",
    ),
    case("enable -n builtin", AsShell, "enable re-enables builtin"),
    case(
        "enable -n enable",
        Replaced(Some(0)),
        "nothing can re-enable a builtin: (b)",
    ),
    // Traps on signals and pseudo-signals.
    case(
        "trap false DEBUG",
        AsShell,
        "the user's DEBUG trap is saved and cleared around the loop",
    ),
    case(
        "trap 'echo D' DEBUG; echo x",
        AsShell,
        "a DEBUG trap fires for the user's commands",
    ),
    case(
        "shopt -s extdebug; trap false DEBUG; echo skipped",
        Replaced(None),
        "with extdebug every command of the loop is skipped: wedged, replaced within 1 s",
    ),
    case(
        "trap 'echo E' ERR; false",
        AsShell,
        "ERR fires once, for the user's false",
    ),
    case(
        "trap 'exit 42' ERR; false",
        Death(42),
        "as bash -c: the ERR trap ends the shell",
    ),
    case(
        "trap 'echo T' TERM; trap '' INT HUP QUIT",
        AsShell,
        "signals the loop does not use",
    ),
    case(
        "trap 'echo u' USR1 USR2; trap '' PIPE",
        AsShell,
        "the stop signal is a real-time one",
    ),
    case(
        "trap 'echo all' {1..8} {10..18} {20..31}",
        AsShell,
        "every catchable signal",
    ),
    case(
        "trap 'echo rt' {34..64}",
        AsShell,
        "real-time ones too (a later stop replaces)",
    ),
    case(
        "trap 'echo bye' EXIT",
        Kept("", 0),
        "EXIT fires when the shell exits, as interactively",
    ),
    case(
        "trap 'kill -9 $$' DEBUG",
        Death(137),
        "the command's own trap kills the shell, as kill -9 $$ would",
    ),
    // File descriptor games on 0-20.
    case(
        "exec 3>&- 4>&- 5>&- 10>&- 11>&- 12>&- 14>&-",
        AsShell,
        "no loop descriptor to close",
    ),
    case(
        "for i in {0..20}; do eval \"exec $i>&-\"; done",
        AsShell,
        "0-2 are reset per command",
    ),
    case(
        "for i in {3..20}; do eval \"exec $i>/dev/null\"; done; echo x",
        AsShell,
        "likewise",
    ),
    case(
        "exec >/dev/null 2>&1; echo hidden",
        AsShell,
        "undone when the command ends",
    ),
    case(
        "exec 0</dev/zero 2>&1 1>&2",
        AsShell,
        "undone when the command ends",
    ),
    case(
        "exec 7>/tmp/agentsh-battery-7; exec 7>&-; echo done",
        AsShell,
        "fd 7 is nobody's",
    ),
    case(
        "exec >&- 2>&-; sleep 1.5; echo gone",
        AsShell,
        "a command without stdout and stderr still runs (it is waiting for sleep)",
    ),
    case(
        "exec <&- >&- 2>&-; sleep 1.5",
        AsShell,
        "likewise without stdin",
    ),
    // Limits.
    case(
        "ulimit -n 4",
        AsShell,
        "the loop needs only fds 0-2 once the command ended",
    ),
    case(
        "ulimit -f 0",
        AsShell,
        "the loop writes no regular file data",
    ),
    case("ulimit -c 0; ulimit -s 8192", AsShell, "harmless limits"),
    // Options.
    case("set -o posix", AsShell, "the loop is safe in POSIX mode"),
    case(
        "set -uo pipefail -C; IFS=x; PATH=/nonexistent",
        AsShell,
        "options and variables",
    ),
    case(
        "shopt -s nullglob failglob extglob dotglob nocaseglob",
        AsShell,
        "glob options",
    ),
    case(
        "shopt -s expand_aliases; alias builtin=echo enable=echo trap=echo",
        AsShell,
        "no alias reaches the loop",
    ),
    case(
        "set -e; false; echo after",
        Death(1),
        "as bash -c: errexit ends the shell",
    ),
    case(
        "umask 777",
        AsShell,
        "the loop's files are created under any umask",
    ),
    // Killing the shell, its parent and its process group.
    case("kill -9 $$", Death(137), "shell death"),
    case("exec true", Death(0), "shell death"),
    case(
        "kill -9 $PPID; sleep 0.5",
        Replaced(None),
        "the supervisor died: its shell is replaced",
    ),
    case(
        "kill -TERM 0; sleep 0.5",
        Death(143),
        "as bash -c: the shell gets the SIGTERM",
    ),
];

const SH_CASES: &[Case] = &[
    case(
        "command() { echo fake; }; false",
        AsShell,
        "dash finds unset before functions",
    ),
    case(
        "exec 3>&- 4>&- 5>&- 7>&- 9>&-",
        AsShell,
        "no loop descriptor to close",
    ),
    case(
        "exec >/dev/null 2>&1; echo hidden",
        AsShell,
        "undone when the command ends",
    ),
    case(
        "trap 'echo T' TERM; trap '' INT HUP",
        AsShell,
        "signals the loop does not use",
    ),
    case(
        "ulimit -n 4",
        Replaced(Some(0)),
        "dash cannot source a file below 11 fds: (b)",
    ),
    case(
        "set -e; false; echo after",
        Death(1),
        "as sh -c: errexit ends the shell",
    ),
    case("kill -9 $$", Death(137), "shell death"),
];

const ZSH_CASES: &[Case] = &[
    case("disable printf", AsShell, "re-enabled by builtin enable"),
    case(
        "disable read cd export",
        AsShell,
        "re-enabled by builtin enable",
    ),
    case(
        "builtin() { echo fake; }; false",
        AsShell,
        "the loop removes a function named builtin",
    ),
    case("trap 'echo E' ZERR; false", AsShell, "ZERR fires once"),
    case(
        "exec 3>&- 4>&- 5>&- 7>&- 9>&-",
        AsShell,
        "no loop descriptor to close",
    ),
    case("kill -9 $$", Death(137), "shell death"),
];

#[test]
fn hostile_bash_lines_give_bash_results_or_a_replaced_shell() {
    battery("bash", &[], BASH_CASES);
}

#[test]
fn hostile_sh_lines_give_sh_results_or_a_replaced_shell() {
    battery("sh", &[], SH_CASES);
}

#[test]
fn hostile_zsh_lines_give_zsh_results_or_a_replaced_shell() {
    if which("zsh").is_none() {
        eprintln!("zsh not installed (scripts/install-test-deps installs it): skipped");
        return;
    }
    battery("zsh", &["-f"], ZSH_CASES);
}

fn battery(shell: &str, flags: &[&str], cases: &[Case]) {
    assert!(cases.len() >= 6);
    let spec = ShellSpec::from_path(which(shell).expect("shell on PATH"));
    let exec = executor();
    let mut failures = Vec::new();
    runtime().block_on(async {
        for (i, case) in cases.iter().enumerate() {
            let s = session(&format!("battery-{shell}-{i}"));
            if let Err(why) = check(&exec, &s, &spec, shell, flags, case).await {
                failures.push(format!("`{}` ({}): {why}", case.line, case.why));
            }
        }
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

async fn check(
    exec: &ShellExecutor,
    s: &SessionKey,
    spec: &ShellSpec,
    shell: &str,
    flags: &[&str],
    case: &Case,
) -> Result<(), String> {
    let ten = Duration::from_secs(10);
    run_on(exec, s, spec, "V=kept", ten).await;
    let started = Instant::now();
    let hostile = run_on(exec, s, spec, case.line, LINE_TIMEOUT).await;
    if started.elapsed() > LINE_TIMEOUT + Duration::from_secs(2) {
        return Err(format!("took {:?}", started.elapsed()));
    }
    let got = (
        normalise(&hostile.summary.output),
        hostile.exit_code,
        hostile.session_restarted,
    );
    let kept = match case.expect {
        AsShell => {
            let (output, code) = shell_c(shell, flags, case.line);
            if got != (output.clone(), Some(code), false) || hostile.timed_out {
                return Err(format!(
                    "got {got:?}, {shell} -c gives {:?}",
                    (output, code)
                ));
            }
            true
        }
        Kept(output, code) => {
            if got != (output.to_owned(), Some(code), false) {
                return Err(format!("got {got:?}, want {:?}", (output, code)));
            }
            true
        }
        Replaced(code) => {
            if !hostile.session_restarted || hostile.exit_code != code {
                return Err(format!("got {got:?}, want a replaced shell with {code:?}"));
            }
            false
        }
        Death(code) => {
            if hostile.exit_code != Some(code) || hostile.timed_out {
                return Err(format!("got {got:?}, want the shell's death with {code}"));
            }
            false
        }
    };
    let next = run_on(exec, s, spec, "echo ok; false", ten).await;
    // A trap the line set still fires for the user's commands (only for them).
    let fine = if kept && case.line.contains("trap ") {
        next.summary.output.lines().any(|line| line == "ok")
    } else {
        next.summary.output == "ok\n"
    };
    if !fine || next.exit_code != Some(1) {
        return Err(format!("the next call gave {next:?}"));
    }
    let var = run_on(exec, s, spec, "echo \"$V\"", ten).await;
    let want = if kept { "kept" } else { "" };
    let seen = if kept && case.line.contains("trap ") {
        var.summary.output.lines().any(|line| line == want)
    } else {
        var.summary.output == format!("{want}\n")
    };
    if !seen {
        return Err(format!(
            "V afterwards: {:?}, want {want:?}",
            var.summary.output
        ));
    }
    Ok(())
}

/// Runs `line` as `<shell> <flags> -c line` (stdin `/dev/null`, stdout and stderr together,
/// the same small environment as the executor's shells) and returns its output and status.
fn shell_c(shell: &str, flags: &[&str], line: &str) -> (String, i32) {
    let out = tempfile::tempfile().expect("temp file");
    let err = out.try_clone().expect("dup");
    let status = std::process::Command::new(which(shell).expect("shell"))
        .args(flags)
        .arg("-c")
        .arg(line)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env(
            "HOME",
            std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into()),
        )
        .current_dir(std::env::temp_dir())
        .stdin(std::process::Stdio::null())
        .stdout(out.try_clone().expect("dup"))
        .stderr(err)
        .status()
        .expect("the shell runs");
    let mut out = out;
    let mut text = String::new();
    std::io::Seek::rewind(&mut out).expect("rewind");
    std::io::Read::read_to_string(&mut out, &mut text).expect("read");
    let code = status.code().unwrap_or_else(|| {
        128 + std::os::unix::process::ExitStatusExt::signal(&status).unwrap_or(0)
    });
    (normalise(&text), code)
}

/// Error messages name the command file (`/…/command: line 1: x: …`) where `<shell> -c`
/// names the shell (`bash: line 1: x: …`, `sh: 1: x: …`, `zsh:1: …`): both become
/// `SHELL: …`.
fn normalise(text: &str) -> String {
    const MARKERS: [(&str, &str); 4] = [
        ("/command: line ", "line "),
        ("bash: line ", "line "),
        ("sh: 1: ", "1: "),
        ("zsh:", ""),
    ];
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let replaced = MARKERS.iter().find_map(|(marker, keep)| {
            line.find(marker)
                .map(|at| format!("SHELL: {keep}{}", &line[at + marker.len()..]))
        });
        out.push_str(replaced.as_deref().unwrap_or(line));
    }
    out
}
