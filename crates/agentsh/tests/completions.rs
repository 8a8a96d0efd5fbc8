//! `agentsh completions bash|zsh|fish`: the scripts load in the real shells and complete.

use std::process::Stdio;

use crate::util::{AGENTSH, TestEnv, finish, have};

#[test]
fn bash_completion_loads_and_completes_the_modes() {
    let env = TestEnv::new();
    // As a user loads it: `source <(agentsh completions bash)`; then what bash would do on
    // `agentsh ex<Tab>` and `agentsh completions <Tab>`.
    let script = format!(
        r#"source <("{AGENTSH}" completions bash) || exit 9
complete -p agentsh
COMP_WORDS=(agentsh ex); COMP_CWORD=1; COMP_LINE="agentsh ex"; COMP_POINT=${{#COMP_LINE}}
_agentsh agentsh ex agentsh; echo "modes: ${{COMPREPLY[*]}}"
COMP_WORDS=(agentsh completions ''); COMP_CWORD=2; COMP_LINE="agentsh completions "; COMP_POINT=${{#COMP_LINE}}
_agentsh agentsh '' completions; echo "shells: ${{COMPREPLY[*]}}"
"#
    );
    let done = finish(
        env.program("bash", &["--norc", "-c", &script])
            .stdin(Stdio::null()),
    );
    assert_eq!(done.code(), 0, "{done:?}");
    assert!(done.stdout.contains("-F _agentsh agentsh\n"), "{done:?}");
    assert!(done.stdout.contains("modes: exec"), "{done:?}");
    assert!(
        done.stdout.contains("shells: ") && done.stdout.contains(" bash zsh fish\n"),
        "{done:?}"
    );
}

#[test]
fn zsh_completion_loads() {
    if !have("zsh") {
        // scripts/install-test-deps installs zsh; a machine without it cannot run this.
        eprintln!("skipped: no zsh");
        return;
    }
    let env = TestEnv::new();
    let script = format!(
        r#"autoload -U compinit && compinit -u -d "$HOME/.zcompdump" || exit 8
source <("{AGENTSH}" completions zsh) || exit 9
print -r -- "registered: $_comps[agentsh]"
whence -w _agentsh
"#
    );
    let done = finish(
        env.program("zsh", &["-f", "-c", &script])
            .stdin(Stdio::null()),
    );
    assert_eq!(done.code(), 0, "{done:?}");
    assert!(done.stdout.contains("registered: _agentsh"), "{done:?}");
    assert!(done.stdout.contains("_agentsh: function"), "{done:?}");
}

#[test]
fn fish_completion_completes_the_modes() {
    if !have("fish") {
        eprintln!("skipped: no fish");
        return;
    }
    let env = TestEnv::new();
    let script = format!(r#""{AGENTSH}" completions fish | source; complete -C "agentsh ex""#);
    let done = finish(
        env.program("fish", &["--no-config", "-c", &script])
            .stdin(Stdio::null()),
    );
    assert_eq!(done.code(), 0, "{done:?}");
    assert!(done.stdout.contains("exec"), "{done:?}");
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let env = TestEnv::new();
    let done = finish(env.command(&["completions", "tcsh"]).stdin(Stdio::null()));
    assert_eq!(done.code(), 2, "{done:?}");
    assert!(done.stderr.contains("tcsh"), "{done:?}");
    assert!(done.stdout.is_empty(), "{done:?}");
}
