//! Hand-written normalisation cases: input → (command, head, tail), one line each.

use agentsh_bash_normalize::{Limits, normalize};

/// Checks that `input` normalises to `expect = (command, head, tail)`.
#[track_caller]
fn check(input: &str, expect: (&str, Option<u32>, Option<u32>)) {
    let (command, head, tail) = expect;
    let got = normalize(input);
    assert_eq!(
        (got.command.as_str(), got.limits),
        (command, Limits { head, tail }),
        "input: {input:?}"
    );
}

const NO: Option<u32> = None;

#[test]
fn spellings() {
    check("seq 100 | head -n 5", ("( seq 100 )", Some(5), NO));
    check("seq 100 | head -n5", ("( seq 100 )", Some(5), NO));
    check("seq 100 | head -5", ("( seq 100 )", Some(5), NO));
    check("seq 100 | tail -n 5", ("( seq 100 )", NO, Some(5)));
    check("seq 100 | tail -n5", ("( seq 100 )", NO, Some(5)));
    check("seq 100 | tail -5", ("( seq 100 )", NO, Some(5)));
}

#[test]
fn spacing() {
    check("seq 100|head -5", ("( seq 100 )", Some(5), NO));
    check("seq 100 |head -5", ("( seq 100 )", Some(5), NO));
    check("seq 100 |  tail   -n   3", ("( seq 100 )", NO, Some(3)));
    check("seq 100\t|\thead\t-n\t7", ("( seq 100 )", Some(7), NO));
    check(
        "seq  1   100 \t | head -2",
        ("( seq  1   100 )", Some(2), NO),
    );
    check("  \n seq 100 | head -5  \n\n", ("( seq 100 )", Some(5), NO));
    check("seq 100 | tail -n 5\r\n", ("( seq 100 )", NO, Some(5)));
    check("seq 100 |\n  head -5", ("( seq 100 )", Some(5), NO));
    check("seq 100 \\\n | head -5", ("( seq 100 )", Some(5), NO));
    check("seq 100 | head -n \\\n 5", ("( seq 100 )", Some(5), NO));
    check(
        "seq 100 | # keep it short\n head -5",
        ("( seq 100 )", Some(5), NO),
    );
}

#[test]
fn counts() {
    check("seq 10 | head -0", ("( seq 10 )", Some(0), NO));
    check("seq 10 | tail -n 007", ("( seq 10 )", NO, Some(7)));
    check(
        "seq 10 | head -n 4294967295",
        ("( seq 10 )", Some(u32::MAX), NO),
    );
    check(
        "seq 10 | head -n 4294967296",
        ("seq 10 | head -n 4294967296", NO, NO),
    );
    check(
        "seq 10 | tail -99999999999999999999",
        ("seq 10 | tail -99999999999999999999", NO, NO),
    );
    check("seq 10 | head -n ５", ("seq 10 | head -n ５", NO, NO));
}

#[test]
fn other_flags_and_operands_are_left_alone() {
    check("echo hi | head -c 5", ("echo hi | head -c 5", NO, NO));
    check("dmesg | tail -f", ("dmesg | tail -f", NO, NO));
    check("seq 10 | tail -n +5", ("seq 10 | tail -n +5", NO, NO));
    check("seq 10 | tail +5", ("seq 10 | tail +5", NO, NO));
    check("seq 10 | tail -n+5", ("seq 10 | tail -n+5", NO, NO));
    check(
        "seq 10 | head -n 5 file",
        ("seq 10 | head -n 5 file", NO, NO),
    );
    check("seq 10 | head -n -5", ("seq 10 | head -n -5", NO, NO));
    check(
        "seq 10 | head --lines=5",
        ("seq 10 | head --lines=5", NO, NO),
    );
    check(
        "seq 10 | head --bytes 5",
        ("seq 10 | head --bytes 5", NO, NO),
    );
    check("seq 10 | head -n '5'", ("seq 10 | head -n '5'", NO, NO));
    check("seq 10 | head -q -n 5", ("seq 10 | head -q -n 5", NO, NO));
    check("seq 10 | head -5 -5", ("seq 10 | head -5 -5", NO, NO));
    check("seq 10 | head 5", ("seq 10 | head 5", NO, NO));
    check("seq 10 | head", ("seq 10 | head", NO, NO));
    check("seq 10 | head -n", ("seq 10 | head -n", NO, NO));
    check("seq 10 | \"head\" -5", ("seq 10 | \"head\" -5", NO, NO));
    check("seq 10 | \\head -5", ("seq 10 | \\head -5", NO, NO));
    check(
        "seq 10 | /usr/bin/head -5",
        ("seq 10 | /usr/bin/head -5", NO, NO),
    );
    check(
        "seq 10 | LC_ALL=C head -5",
        ("seq 10 | LC_ALL=C head -5", NO, NO),
    );
    check(
        "seq 10 | head -5 2>/dev/null",
        ("seq 10 | head -5 2>/dev/null", NO, NO),
    );
    check("seq 10 | head -5 >out", ("seq 10 | head -5 >out", NO, NO));
    check("seq 10 | head -5 >1", ("seq 10 | head -5 >1", NO, NO));
    check("tail -f log | head -5", ("( tail -f log )", Some(5), NO));
}

#[test]
fn quotes_and_escapes_hide_the_pipe() {
    check("echo 'a | head -5'", ("echo 'a | head -5'", NO, NO));
    check("echo \"a | head -5\"", ("echo \"a | head -5\"", NO, NO));
    check("echo a \\| head -5", ("echo a \\| head -5", NO, NO));
    check(
        "echo $'it\\'s | head -1'",
        ("echo $'it\\'s | head -1'", NO, NO),
    );
    check(
        "echo \"it's $\" | head -1",
        ("( echo \"it's $\" )", Some(1), NO),
    );
    check(
        "grep -E 'a|b' f | head -3",
        ("( grep -E 'a|b' f )", Some(3), NO),
    );
    check(
        "echo \"x\\\" | head -1\"",
        ("echo \"x\\\" | head -1\"", NO, NO),
    );
    check(
        "echo \"unterminated | head -5",
        ("echo \"unterminated | head -5", NO, NO),
    );
}

#[test]
fn or_and_pipe_ampersand() {
    check("false || head -5", ("false || head -5", NO, NO));
    check(
        "seq 3 || seq 5 | head -1",
        ("seq 3 || ( seq 5 )", Some(1), NO),
    );
    check("make |& tail -5", ("make |& tail -5", NO, NO));
    check("a |& b | tail -5", ("( a |& b )", NO, Some(5)));
}

#[test]
fn heredocs() {
    check(
        "cat <<EOF | head -1\nx | head -2\nEOF",
        ("cat <<EOF | head -1\nx | head -2\nEOF", NO, NO),
    );
    check(
        "cat <<EOF\nls | head -5\n",
        ("cat <<EOF\nls | head -5", NO, NO),
    );
    check(
        "cat <<EOF |\nx\nEOF\nhead -2",
        ("cat <<EOF |\nx\nEOF\nhead -2", NO, NO),
    );
    check(
        "cat <<'EOF' >f\na | head -1\nEOF\nseq 3 | head -2",
        ("cat <<'EOF' >f\na | head -1\nEOF\n( seq 3 )", Some(2), NO),
    );
    check(
        "cat <<-EOF\n\tx |\n\tEOF\nls | tail -1",
        ("cat <<-EOF\n\tx |\n\tEOF\n( ls )", NO, Some(1)),
    );
    check(
        "cat <<\"E F\"\n)\nE F\nls | tail -1",
        ("cat <<\"E F\"\n)\nE F\n( ls )", NO, Some(1)),
    );
}

#[test]
fn substitutions() {
    check("echo $(ls | head -1)", ("echo $(ls | head -1)", NO, NO));
    check("x=$(seq 5 | head -1)", ("x=$(seq 5 | head -1)", NO, NO));
    check(
        "echo \"$(ls | head -1)\" | tail -2",
        ("( echo \"$(ls | head -1)\" )", NO, Some(2)),
    );
    check("echo `ls | head -1`", ("echo `ls | head -1`", NO, NO));
    check(
        "echo `ls | head -1` | head -3",
        ("( echo `ls | head -1` )", Some(3), NO),
    );
    check(
        "echo $(case $x in a) ls;; esac) | head -1",
        ("( echo $(case $x in a) ls;; esac) )", Some(1), NO),
    );
    check(
        "echo $((1 | 2)) | head -1",
        ("( echo $((1 | 2)) )", Some(1), NO),
    );
    check(
        "echo $( (seq 3) | tac) | tail -1",
        ("( echo $( (seq 3) | tac) )", NO, Some(1)),
    );
    check(
        "echo ${x:-a|b} | head -1",
        ("( echo ${x:-a|b} )", Some(1), NO),
    );
    check(
        "echo \"${x//|/,}\" | tail -2",
        ("( echo \"${x//|/,}\" )", NO, Some(2)),
    );
    check(
        "diff <(ls a) <(ls b) | head -5",
        ("( diff <(ls a) <(ls b) )", Some(5), NO),
    );
    check("cat <(seq 3 | head -1)", ("cat <(seq 3 | head -1)", NO, NO));
}

#[test]
fn groups() {
    check("( seq 5 | head -1 )", ("( seq 5 | head -1 )", NO, NO));
    check("{ seq 5 | head -1; }", ("{ seq 5 | head -1; }", NO, NO));
    check(
        "{ seq 5 | head -1; } > out",
        ("{ seq 5 | head -1; } > out", NO, NO),
    );
    check(
        "(cd src && make) 2>&1 | tail -20",
        ("( (cd src && make) )", NO, Some(20)),
    );
    check("{ ls; pwd; } | head -3", ("( { ls; pwd; } )", Some(3), NO));
    check(
        "f() { ls | head -1; }; f | tail -2",
        ("f() { ls | head -1; }; ( f )", NO, Some(2)),
    );
    check(
        "ls !(*.o|*.a) | head -2",
        ("( ls !(*.o|*.a) )", Some(2), NO),
    );
    check(
        "[[ -n $x || -z $y ]] && ls | head -1",
        ("[[ -n $x || -z $y ]] && ( ls )", Some(1), NO),
    );
}

#[test]
fn stderr_merge() {
    check("make 2>&1 | tail -5", ("( make )", NO, Some(5)));
    check("make -j4  2>&1  | tail -5", ("( make -j4 )", NO, Some(5)));
    check(
        "cmd >log 2>&1 | tail -5",
        ("( cmd >log 2>&1 )", NO, Some(5)),
    );
    check(
        "make 2>/dev/null 2>&1 | tail -5",
        ("( make 2>/dev/null 2>&1 )", NO, Some(5)),
    );
    check(
        "make &>log 2>&1 | tail -3",
        ("( make &>log 2>&1 )", NO, Some(3)),
    );
    check(
        "make 1>&2 2>&1 | tail -1",
        ("( make 1>&2 2>&1 )", NO, Some(1)),
    );
    check("make <in 2>&1 | tail -1", ("( make <in )", NO, Some(1)));
    check(
        "make 2>&1 -j4 | tail -5",
        ("( make 2>&1 -j4 )", NO, Some(5)),
    );
    check("make 2>& 1 | tail -5", ("( make 2>& 1 )", NO, Some(5)));
    check("a 2>&1 | b 2>&1 | tail -5", ("( a 2>&1 | b )", NO, Some(5)));
    check("2>&1 | tail -5", ("( 2>&1 )", NO, Some(5)));
}

#[test]
fn lists() {
    check(
        "cd x && make | tail -n 5",
        ("cd x && ( make )", NO, Some(5)),
    );
    check("cd x; make | tail -n 5", ("cd x; ( make )", NO, Some(5)));
    check("cd x\nmake | tail -n 5", ("cd x\n( make )", NO, Some(5)));
    check(
        "sleep 1 & seq 3 | head -1",
        ("sleep 1 & ( seq 3 )", Some(1), NO),
    );
    check("export A=1 | head -1", ("( export A=1 )", Some(1), NO));
    check("A=1 env | head -1", ("( A=1 env )", Some(1), NO));
    check("time make | tail -3", ("( time make )", NO, Some(3)));
    check("! grep x f | head -1", ("! grep x f | head -1", NO, NO));
    check(
        "time ! grep x f | head -1",
        ("time ! grep x f | head -1", NO, NO),
    );
    check(
        "time -p ! grep x f | head -1",
        ("time -p ! grep x f | head -1", NO, NO),
    );
    check(
        "time -p grep x f | head -1",
        ("( time -p grep x f )", Some(1), NO),
    );
    check("exec ls | head -1", ("( exec ls )", Some(1), NO));
    check("exit 3 | tail -1", ("( exit 3 )", NO, Some(1)));
    check("cd /tmp | tail -1", ("( cd /tmp )", NO, Some(1)));
}

#[test]
fn one_limit_per_normalisation() {
    check(
        "seq 100 | head -20 | tail -5",
        ("( seq 100 | head -20 )", NO, Some(5)),
    );
    check(
        "seq 100 | tail -5 | head -1",
        ("( seq 100 | tail -5 )", Some(1), NO),
    );
}

#[test]
fn trailing_operators_and_comments() {
    check("seq 5 | head -1 &", ("seq 5 | head -1 &", NO, NO));
    check("seq 5 | head -1;", ("seq 5 | head -1;", NO, NO));
    check("seq 5 | head -1 ;", ("seq 5 | head -1 ;", NO, NO));
    check(
        "seq 5 | head -1 # first",
        ("seq 5 | head -1 # first", NO, NO),
    );
    check("seq 5 | head -1 #", ("seq 5 | head -1 #", NO, NO));
    check("seq 5 | head -1 &&", ("seq 5 | head -1 &&", NO, NO));
    check("seq 5 | head -1 \\", ("seq 5 | head -1 \\", NO, NO));
    check("ls # | head -3", ("ls # | head -3", NO, NO));
    check("# list\nls | head -3", ("# list\n( ls )", Some(3), NO));
}

#[test]
fn compound_commands() {
    check(
        "for f in a b; do\n  echo $f\ndone | tail -1",
        ("( for f in a b; do\n  echo $f\ndone )", NO, Some(1)),
    );
    check(
        "if true; then seq 3; fi | head -1",
        ("( if true; then seq 3; fi )", Some(1), NO),
    );
    check(
        "while read l; do echo $l; done < f | head -2",
        ("( while read l; do echo $l; done < f )", Some(2), NO),
    );
    check(
        "case $x in a|b) ls;; *) pwd;; esac | head -1",
        ("( case $x in a|b) ls;; *) pwd;; esac )", Some(1), NO),
    );
    check(
        "for ((i=0;i<3;i++)); do echo $i; done | tail -1",
        ("( for ((i=0;i<3;i++)); do echo $i; done )", NO, Some(1)),
    );
    check(
        "if true; then seq 3 | head -1; fi",
        ("if true; then seq 3 | head -1; fi", NO, NO),
    );
}

#[test]
fn unicode() {
    check(
        "echo 'héllo wörld' | head -1",
        ("( echo 'héllo wörld' )", Some(1), NO),
    );
    check("grep -r ñ . | tail -5", ("( grep -r ñ . )", NO, Some(5)));
    check(
        "echo ok | head -5\u{a0}",
        ("echo ok | head -5\u{a0}", NO, NO),
    );
    check("echo 日本 |head -n 2", ("( echo 日本 )", Some(2), NO));
}

#[test]
fn syntax_errors_are_left_alone() {
    check("| head -5", ("| head -5", NO, NO));
    check("ls | | head -5", ("ls | | head -5", NO, NO));
    check("ls ) | head -5", ("ls ) | head -5", NO, NO));
    check("(ls | head -5", ("(ls | head -5", NO, NO));
    check("ls; } | head -5", ("ls; } | head -5", NO, NO));
    check("if ls | head -5", ("if ls | head -5", NO, NO));
    check("ls > | head -5", ("ls > | head -5", NO, NO));
    check("", ("", NO, NO));
    check("   ", ("", NO, NO));
}

#[test]
fn unwrapped_is_the_command_without_the_added_subshell() {
    let unwrapped = |input: &str| normalize(input).unwrapped().into_owned();
    assert_eq!(unwrapped("cat src/main.rs | head -50"), "cat src/main.rs");
    assert_eq!(unwrapped("cd x && make 2>&1 | tail -n 5"), "cd x && make");
    assert_eq!(unwrapped("a | b | tail -3"), "a | b");
    assert_eq!(unwrapped("(cd x; make) | tail -3"), "(cd x; make)");
    assert_eq!(unwrapped("  ls  "), "ls");
    assert_eq!(unwrapped("( ls | head -1 )"), "( ls | head -1 )");
    let n = normalize("cd x && make | tail -n 5");
    assert_eq!(n.producer, Some(10..14));
    assert_eq!(&n.command[10..14], "make");
    assert_eq!(normalize("ls").producer, None);
}
