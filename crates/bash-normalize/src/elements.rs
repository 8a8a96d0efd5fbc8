//! The top-level list elements of a command, for rules that look at each command of a list.

use crate::lexer::{self, Kind, Op};

/// The first pipeline stage of each top-level list element of `command` (elements are separated
/// by `&&`, `||`, `;`, `&` and newlines outside quotes, substitutions and groups), as slices of
/// `command`, in order.
///
/// A group stays whole: `(cat x)` is one element, `(cat x)`. Comments and heredoc bodies are not
/// part of any element. A command the lexer cannot follow (unterminated quote, syntax error)
/// gives no elements: callers still have the whole command.
///
/// ```
/// use agentsh_bash_normalize::list_elements;
/// assert_eq!(list_elements("cd src && ls | grep x; cat 'a;b' &\nmake"), ["cd src", "ls", "cat 'a;b'", "make"]);
/// assert_eq!(list_elements("echo \"a && b\" $(c; d)"), ["echo \"a && b\" $(c; d)"]);
/// assert_eq!(list_elements("(cat x) || { grep y z; }"), ["(cat x)", "{ grep y z; }"]);
/// assert!(list_elements("echo 'unterminated").is_empty());
/// ```
pub fn list_elements(command: &str) -> Vec<&str> {
    let Ok(program) = lexer::tokenize(command) else {
        return Vec::new();
    };
    let tokens = &program.tokens;
    program
        .pipelines
        .iter()
        .filter_map(|&first| {
            let ends_stage = |kind: Kind| {
                matches!(
                    kind,
                    Kind::Comment
                        | Kind::HeredocBody
                        | Kind::Op(
                            Op::Pipe
                                | Op::PipeAmp
                                | Op::AndIf
                                | Op::OrIf
                                | Op::Semi
                                | Op::Amp
                                | Op::Newline
                                | Op::CaseEnd
                        )
                )
            };
            let last = tokens[first..]
                .iter()
                .take_while(|t| t.depth > 0 || !ends_stage(t.kind))
                .last()?;
            command.get(tokens[first].start..last.end)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(command: &str, expect: &[&str]) {
        assert_eq!(list_elements(command), expect, "command: {command:?}");
    }

    #[test]
    fn elements() {
        check("cd src && cat main.rs", &["cd src", "cat main.rs"]);
        check(
            "cd src; grep -n x main.rs",
            &["cd src", "grep -n x main.rs"],
        );
        check("false || tail -f log", &["false", "tail -f log"]);
        check("make &\nfind . -name x", &["make", "find . -name x"]);
        check("cd src && ls | grep x", &["cd src", "ls"]);
        check("cat x |& grep y", &["cat x"]);
        check("  cat x  ", &["cat x"]);
        check("a &&\n  b", &["a", "b"]);
        check("a |\n  b; c", &["a", "c"]);
        check("(cat x)", &["(cat x)"]);
        check("( cat x ) 2>&1 | tail", &["( cat x ) 2>&1"]);
        check("if a; then cat x; fi && b", &["if a; then cat x; fi", "b"]);
        check("echo $(cat x)", &["echo $(cat x)"]);
        check("echo 'a && cat b'", &["echo 'a && cat b'"]);
        check("# cat x", &[]);
        check("cat x # && grep y", &["cat x"]);
        check(
            "cat <<EOF && grep y z\nbody; cat\nEOF\nsed -i s/a/b/ f",
            &["cat <<EOF", "grep y z", "sed -i s/a/b/ f"],
        );
        check("A=1 cat x; >f echo", &["A=1 cat x", ">f echo"]);
        check("", &[]);
        check("echo 'unterminated", &[]);
        check("a; b;", &["a", "b"]);
    }
}
