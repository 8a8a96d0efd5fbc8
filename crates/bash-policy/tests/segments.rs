//! The segmenter, case by case: a line → its decision and each segment's words and decision
//! (`?` marks an unknown segment), under one policy: `rm` denied, `git push` asked, a few
//! commands allowed, everything else (and everything unknown) asked.

use std::sync::LazyLock;

use agentsh_bash_policy::{Policy, SessionMemory, TierKind};

use crate::support::{policy, render};

/// Commands the table's policy allows (each a `prefix` rule).
const ALLOWED: &[&str] = &[
    "a",
    "b",
    "c",
    "echo",
    "ls",
    "cat",
    "true",
    "false",
    "printf",
    "grep",
    "wc",
    "make",
    "cd",
    "find",
    "read",
    "[",
    "python",
    "git status",
    "git log",
];

static POLICY: LazyLock<Policy> = LazyLock::new(|| {
    let mut text = String::from(
        r#"
[policy]
default = "ask"
unknown = "ask"

[[policy.rules]]
prefix = ["rm"]
decision = "deny"
reason = "rm deletes files"

[[policy.rules]]
prefix = ["git", "push"]
decision = "ask"
"#,
    );
    for allowed in ALLOWED {
        let words: Vec<String> = allowed.split(' ').map(|w| format!("{w:?}")).collect();
        text.push_str("\n[[policy.rules]]\ndecision = \"allow\"\nprefix = [");
        text.push_str(&words.join(", "));
        text.push_str("]\n");
    }
    policy(&[(TierKind::User, &text)])
});

/// Checks that `line` is judged as `expect` (see [`render`]).
#[track_caller]
fn check(line: &str, expect: &str) {
    let judgement = POLICY.judge(line, &SessionMemory::new());
    assert_eq!(render(&judgement), expect, "line: {line:?}");
}

#[test]
fn plain_commands_and_quote_removal() {
    check("rm -rf x", "deny: rm -rf x=deny");
    check("r''m -rf x", "deny: rm -rf x=deny");
    check("\\rm x", "deny: rm x=deny");
    check("\"rm\" x", "deny: rm x=deny");
    check("g'i't push", "ask: git push=ask");
    check("git push origin main", "ask: git push origin main=ask");
    check("ls -la", "allow: ls -la=allow");
    check("unknowncmd", "ask: unknowncmd=ask");
    check("echo rm x", "allow: echo rm x=allow");
    check("echo 'rm x'", "allow: echo rm x=allow");
    check("cat *.txt", "allow: cat *.txt=allow");
    check(
        "python -c 'import os; os.system(\"rm x\")'",
        "allow: python -c import os; os.system(\"rm x\")=allow",
    );
    check("echo $((1+2))", "allow: echo $((1+2))=allow");
    check("", "allow: ");
    check("# rm x", "allow: ");
    check("x=1 git status", "allow: git status=allow");
    check("[ -f x ] && cat x", "allow: [ -f x ]=allow; cat x=allow");
    check("~/bin/tool", "ask: ~/bin/tool=ask");
}

#[test]
fn paths() {
    check("/bin/rm x", "deny: /bin/rm x=deny");
    check("/tmp/rm x", "deny: /tmp/rm x=deny");
    check("./rm x", "deny: ./rm x=deny");
    check("/usr/bin/git status", "allow: /usr/bin/git status=allow");
    check(
        "/usr/local/bin/git status",
        "allow: /usr/local/bin/git status=allow",
    );
    // An allow rule takes the base name only for a path in a system directory.
    check("./git status", "ask: ./git status=ask");
    check("/tmp/git status", "ask: /tmp/git status=ask");
    check("/usr/bin/git push", "ask: /usr/bin/git push=ask");
}

#[test]
fn separators() {
    check("a; rm x", "deny: a=allow; rm x=deny");
    check("a && rm x", "deny: a=allow; rm x=deny");
    check("a || rm x", "deny: a=allow; rm x=deny");
    check("a | rm x", "deny: a=allow; rm x=deny");
    check("a |& rm x", "deny: a=allow; rm x=deny");
    check("a & rm x", "deny: a=allow; rm x=deny");
    check("a\nrm x", "deny: a=allow; rm x=deny");
    check("a &&\n  b", "allow: a=allow; b=allow");
    check(
        "a | { b; rm x; } && (c)",
        "deny: a=allow; b=allow; rm x=deny; c=allow",
    );
}

#[test]
fn groups_and_substitutions() {
    check("(rm x)", "deny: rm x=deny");
    check("{ rm x; }", "deny: rm x=deny");
    check("echo $(rm x)", "deny: echo $(rm x)=allow; rm x=deny");
    check("echo `rm x`", "deny: echo `rm x`=allow; rm x=deny");
    check("cat <(rm x)", "deny: cat <(rm x)=allow; rm x=deny");
    check("echo >(rm x)", "deny: echo >(rm x)=allow; rm x=deny");
    check("echo \"$(rm x)\"", "deny: echo $(rm x)=allow; rm x=deny");
    check(
        "echo \"a `rm x` b\"",
        "deny: echo a `rm x` b=allow; rm x=deny",
    );
    check("x=$(rm y)", "deny: rm y=deny");
    check("a=(x $(rm y))", "deny: rm y=deny");
    check(
        "echo ${x:-$(rm y)}",
        "deny: echo ${x:-$(rm y)}=allow; rm y=deny",
    );
    check(
        "echo $(( $(rm y) + 1 ))",
        "deny: echo $(( $(rm y) + 1 ))=allow; rm y=deny",
    );
    check("echo x > $(rm y)", "deny: echo x=allow; rm y=deny");
    check(
        "echo $(echo $(rm x))",
        "deny: echo $(echo $(rm x))=allow; echo $(rm x)=allow; rm x=deny",
    );
    check(
        "echo `echo \\`rm x\\``",
        "deny: echo `echo \\`rm x\\``=allow; echo `rm x`=allow; rm x=deny",
    );
    check("cat <<EOF\n$(rm x)\nEOF", "deny: cat=allow; rm x=deny");
    check("cat <<'EOF'\n$(rm x)\nEOF", "allow: cat=allow");
    check("echo ${ rm y; }", "deny: echo ${ rm y; }=allow; rm y=deny");
    check("cat < <(rm x)", "deny: cat=allow; rm x=deny");
    check("r\\\nm x", "deny: rm x=deny");
    check("cat <<< \"$(rm x)\"", "deny: cat=allow; rm x=deny");
}

#[test]
fn compound_commands() {
    check("if true; then rm x; fi", "deny: true=allow; rm x=deny");
    check(
        "if a; then b; elif c; then rm x; else b; fi",
        "deny: a=allow; b=allow; c=allow; rm x=deny; b=allow",
    );
    check(
        "while read l; do rm \"$l\"; done < list",
        "deny: read l=allow; rm $l=deny",
    );
    check("until false; do rm x; done", "deny: false=allow; rm x=deny");
    check("for f in *; do rm \"$f\"; done", "deny: rm $f=deny");
    check(
        "for f in $(rm x); do echo; done",
        "deny: rm x=deny; echo=allow",
    );
    check("case $x in a) rm x;; esac", "deny: rm x=deny");
    check("case $(rm y) in *) a;; esac", "deny: rm y=deny; a=allow");
    check("[[ -n $(rm x) ]]", "deny: rm x=deny");
    check("(( $(rm x) ))", "deny: rm x=deny");
    check("! rm x", "deny: rm x=deny");
    check("time rm x", "deny: rm x=deny");
    check("time -p rm x", "deny: rm x=deny");
}

#[test]
fn functions_and_aliases() {
    check("f() { rm x; }", "deny: rm x=deny");
    check("function g { rm x; }", "deny: rm x=deny");
    check("f() { a; }; f", "ask: a=allow; f=ask");
    check("alias r='rm x'", "deny: alias r=rm x=allow; rm x=deny");
    check(
        "alias ll='ls -l'",
        "allow: alias ll=ls -l=allow; ls -l=allow",
    );
    check("alias r=\"$x\"", "ask: alias r=$x?=ask");
    check("alias", "ask: alias=ask");
}

#[test]
fn wrappers() {
    check("sudo rm -rf x", "deny: sudo rm -rf x=allow; rm -rf x=deny");
    check("sudo -u x rm y", "deny: sudo -u x rm y=allow; rm y=deny");
    check(
        "sudo -Eu root make",
        "allow: sudo -Eu root make=allow; make=allow",
    );
    check(
        "sudo unknowncmd",
        "ask: sudo unknowncmd=allow; unknowncmd=ask",
    );
    check("sudo -l", "ask: sudo -l=ask");
    check("sudo -s", "ask: sudo -s?=ask");
    check(
        "doas -u root rm x",
        "deny: doas -u root rm x=allow; rm x=deny",
    );
    check("command rm x", "deny: command rm x=allow; rm x=deny");
    check("command -v rm", "ask: command -v rm=ask");
    check(
        "builtin echo hi",
        "allow: builtin echo hi=allow; echo hi=allow",
    );
    check("exec rm x", "deny: exec rm x=allow; rm x=deny");
    check("env -i rm x", "deny: env -i rm x=allow; rm x=deny");
    check(
        "env A=1 B=2 rm x",
        "deny: env A=1 B=2 rm x=allow; rm x=deny",
    );
    check(
        "env FOO=$BAR make",
        "allow: env FOO=$BAR make=allow; make=allow",
    );
    check(
        "env -u HOME -C /tmp rm x",
        "deny: env -u HOME -C /tmp rm x=allow; rm x=deny",
    );
    check("env - rm x", "deny: env - rm x=allow; rm x=deny");
    check(
        "env -S 'rm -rf x'",
        "deny: env -S rm -rf x=allow; rm -rf x=deny",
    );
    check("env", "ask: env=ask");
    check("nice -n 5 rm x", "deny: nice -n 5 rm x=allow; rm x=deny");
    check("nice -5 rm x", "deny: nice -5 rm x=allow; rm x=deny");
    check("nohup rm x &", "deny: nohup rm x=allow; rm x=deny");
    check(
        "timeout -s KILL 5 rm x",
        "deny: timeout -s KILL 5 rm x=allow; rm x=deny",
    );
    check(
        "timeout 5s make",
        "allow: timeout 5s make=allow; make=allow",
    );
    check("stdbuf -oL rm x", "deny: stdbuf -oL rm x=allow; rm x=deny");
    check("setsid -f rm x", "deny: setsid -f rm x=allow; rm x=deny");
    check(
        "ionice -c 3 rm x",
        "deny: ionice -c 3 rm x=allow; rm x=deny",
    );
    check("ionice -p 42", "ask: ionice -p 42=ask");
    check("xargs rm < list", "deny: xargs rm=allow; rm=deny");
    check("xargs -0 -n1 rm", "deny: xargs -0 -n1 rm=allow; rm=deny");
    check(
        "xargs -I{} rm {}",
        "deny: xargs -I{} rm {}=allow; rm {}=deny",
    );
    check("xargs", "ask: xargs=ask");
    check(
        "find . -exec rm {} \\;",
        "deny: find . -exec rm {} ;=allow; rm {}=deny",
    );
    check(
        "find . -name '*.o' -execdir rm {} +",
        "deny: find . -name *.o -execdir rm {} +=allow; rm {}=deny",
    );
    check(
        "find . -ok rm {} \\; -exec echo {} ';'",
        "deny: find . -ok rm {} ; -exec echo {} ;=allow; rm {}=deny; echo {}=allow",
    );
    check(
        "sudo env nice rm x",
        "deny: sudo env nice rm x=allow; env nice rm x=allow; nice rm x=allow; rm x=deny",
    );
    check(
        "command time -f %e rm x",
        "deny: command time -f %e rm x=allow; time -f %e rm x=allow; rm x=deny",
    );
    check(
        "/usr/bin/sudo rm x",
        "deny: /usr/bin/sudo rm x=allow; rm x=deny",
    );
    // Not found by its name: judged as itself.
    check("./sudo make", "ask: ./sudo make=ask; make=allow");
}

#[test]
fn shells_and_eval() {
    check(
        "bash -c 'rm -rf x'",
        "deny: bash -c rm -rf x=allow; rm -rf x=deny",
    );
    check(
        "sh -c \"cd /; rm -rf x\"",
        "deny: sh -c cd /; rm -rf x=allow; cd /=allow; rm -rf x=deny",
    );
    check("bash -ec 'make'", "allow: bash -ec make=allow; make=allow");
    check(
        "bash -o pipefail -c 'a | b'",
        "allow: bash -o pipefail -c a | b=allow; a=allow; b=allow",
    );
    check("zsh -c ls", "allow: zsh -c ls=allow; ls=allow");
    check("/bin/dash -c ls", "allow: /bin/dash -c ls=allow; ls=allow");
    check(
        "bash -c \"bash -c 'rm x'\"",
        "deny: bash -c bash -c 'rm x'=allow; bash -c rm x=allow; rm x=deny",
    );
    check("eval 'rm x'", "deny: eval rm x=allow; rm x=deny");
    check("eval rm x", "deny: eval rm x=allow; rm x=deny");
    check("bash --version", "ask: bash --version=ask");
}

#[test]
fn unknown_commands() {
    check("$RM x", "ask: $RM x?=ask");
    check("\"$@\"", "ask: $@?=ask");
    check("$(echo rm) x", "ask: $(echo rm) x?=ask; echo rm=allow");
    check("${x} y", "ask: ${x} y?=ask");
    check("eval \"$cmd\"", "ask: eval $cmd?=ask");
    check("bash -c \"$x\"", "ask: bash -c $x?=ask");
    check("{r,}m x", "ask: {r,}m x?=ask");
    check("/bin/r? x", "ask: /bin/r? x?=ask");
    check("$'\\x72\\x6d' x", "ask: $'\\x72\\x6d' x?=ask");
    check("printf 'rm x' | sh", "ask: printf rm x=allow; sh?=ask");
    check("bash script.sh", "ask: bash script.sh?=ask");
    check("sh <<EOF\nrm x\nEOF", "ask: sh?=ask");
    check("bash -s", "ask: bash -s?=ask");
    check(". ./x.sh", "ask: . ./x.sh?=ask");
    check("source x.sh", "ask: source x.sh?=ask");
    check("trap 'rm x' EXIT", "ask: trap rm x EXIT?=ask");
    check(
        "hash -p /bin/rm git; git status",
        "ask: hash -p /bin/rm git?=ask; git status=allow",
    );
    check("enable -f ./x.so foo", "ask: enable -f ./x.so foo?=ask");
    check("PATH=.:$PATH git status", "ask: git status?=ask");
    check("LD_PRELOAD=./x.so git status", "ask: git status?=ask");
    check("GIT_PAGER=./x git log", "ask: git log?=ask");
    // A leading `IFS` only changes how `read` splits; a plain one changes the line's splitting.
    check("IFS=: read a b", "allow: read a b=allow");
    check("IFS=:; read a b", "ask: IFS=:?=ask; read a b=allow");
    check("PATH=/tmp", "ask: PATH=/tmp?=ask");
    check("export PATH=/tmp", "ask: export PATH=/tmp?=ask");
    check("declare -x GIT_SSH=./x", "ask: declare -x GIT_SSH=./x?=ask");
    check(
        "env PATH=/tmp git status",
        "ask: env PATH=/tmp git status=allow; git status?=ask",
    );
    check(
        "PATH=. bash -c 'git status'",
        "ask: bash -c git status?=ask; git status?=ask",
    );
    check("sudo $CMD", "ask: sudo $CMD=allow; $CMD?=ask");
    // Never allow what cannot be parsed.
    check("echo ok 'unterminated", "ask: echo ok 'unterminated?=ask");
    check("coproc x", "ask: coproc x?=ask");
}
