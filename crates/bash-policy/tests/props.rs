//! Property tests: any line built from allowed commands, joined and grouped in any way, is
//! allowed; the same line with `rm -rf x` inserted anywhere is denied.

use std::sync::LazyLock;

use agentsh_bash_policy::{Decision, Policy, SessionMemory, TierKind};
use proptest::prelude::*;
use proptest::sample::Index;

use crate::support::{policy, render};

const ALLOWED: &[&str] = &[
    "ls -l",
    "echo hi",
    "cat 'a file'",
    "true",
    "git status",
    "grep -n \"x y\" f",
    "wc -l",
];

const DENIED: &str = "rm -rf x";

const SEPARATORS: &[&str] = &["; ", " && ", " || ", " | ", " & ", "\n"];

static POLICY: LazyLock<Policy> = LazyLock::new(|| {
    policy(&[(
        TierKind::User,
        r#"
[policy]
default = "ask"
unknown = "ask"
[[policy.rules]]
prefix = ["rm"]
decision = "deny"
[[policy.rules]]
prefix = ["ls"]
decision = "allow"
[[policy.rules]]
prefix = ["echo"]
decision = "allow"
[[policy.rules]]
prefix = ["cat"]
decision = "allow"
[[policy.rules]]
prefix = ["true"]
decision = "allow"
[[policy.rules]]
prefix = ["git", "status"]
decision = "allow"
[[policy.rules]]
regex = '(grep|wc) '
decision = "allow"
"#,
    )])
});

/// A command line as a tree.
#[derive(Debug, Clone)]
enum Node {
    /// One of [`ALLOWED`].
    Command(usize),
    /// Nodes joined by separators (indexes into [`SEPARATORS`]).
    List(Vec<(usize, Node)>),
    /// `( … )`
    Subshell(Box<Node>),
    /// `{ …; }`
    Braces(Box<Node>),
    /// `echo $( … )`
    Substitution(Box<Node>),
    /// ``echo `…` ``
    Backquotes(Box<Node>),
    /// `if …; then …; fi`
    If(Box<Node>, Box<Node>),
}

fn node() -> impl Strategy<Value = Node> {
    let leaf = (0..ALLOWED.len()).prop_map(Node::Command);
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec((0..SEPARATORS.len(), inner.clone()), 2..4).prop_map(Node::List),
            inner.clone().prop_map(|n| Node::Subshell(Box::new(n))),
            inner.clone().prop_map(|n| Node::Braces(Box::new(n))),
            inner.clone().prop_map(|n| Node::Substitution(Box::new(n))),
            inner.clone().prop_map(|n| Node::Backquotes(Box::new(n))),
            (inner.clone(), inner).prop_map(|(c, b)| Node::If(Box::new(c), Box::new(b))),
        ]
    })
}

/// Where the denied command goes: at the leaf `leaf` (counted in rendering order), `before`
/// or after it, joined by `separator`.
#[derive(Debug, Clone, Copy)]
struct Insert {
    leaf: usize,
    before: bool,
    separator: usize,
}

/// Renders `node`; with `insert`, adds the denied command at its leaf. `leaves` counts the
/// leaves rendered so far.
fn render_line(node: &Node, insert: Option<Insert>, leaves: &mut usize) -> String {
    match node {
        Node::Command(i) => {
            let command = ALLOWED[*i];
            let here = insert.filter(|at| at.leaf == *leaves);
            *leaves += 1;
            match here {
                Some(at) if at.before => format!("{DENIED}{}{command}", SEPARATORS[at.separator]),
                Some(at) => format!("{command}{}{DENIED}", SEPARATORS[at.separator]),
                None => command.to_owned(),
            }
        }
        Node::List(items) => {
            let mut out = String::new();
            for (k, (separator, item)) in items.iter().enumerate() {
                if k > 0 {
                    out.push_str(SEPARATORS[*separator]);
                }
                out.push_str(&render_line(item, insert, leaves));
            }
            out
        }
        Node::Subshell(inner) => format!("( {} )", render_line(inner, insert, leaves)),
        Node::Braces(inner) => format!("{{ {}; }}", render_line(inner, insert, leaves)),
        Node::Substitution(inner) => format!("echo $( {} )", render_line(inner, insert, leaves)),
        Node::Backquotes(inner) => {
            let text = render_line(inner, insert, leaves);
            let escaped = text
                .replace('\\', "\\\\")
                .replace('`', "\\`")
                .replace('$', "\\$");
            format!("echo `{escaped}`")
        }
        Node::If(condition, body) => {
            let condition = render_line(condition, insert, leaves);
            let body = render_line(body, insert, leaves);
            format!("if {condition}; then {body}; fi")
        }
    }
}

fn leaf_count(node: &Node) -> usize {
    match node {
        Node::Command(_) => 1,
        Node::List(items) => items.iter().map(|(_, n)| leaf_count(n)).sum(),
        Node::Subshell(n) | Node::Braces(n) | Node::Substitution(n) | Node::Backquotes(n) => {
            leaf_count(n)
        }
        Node::If(c, b) => leaf_count(c) + leaf_count(b),
    }
}

proptest! {
    #[test]
    fn lines_of_allowed_commands_are_allowed(tree in node()) {
        let line = render_line(&tree, None, &mut 0);
        let judgement = POLICY.judge(&line, &SessionMemory::new());
        prop_assert_eq!(judgement.decision, Decision::Allow, "{:?} → {}", line, render(&judgement));
        prop_assert!(!judgement.segments.is_empty());
    }

    #[test]
    fn a_denied_command_anywhere_denies_the_line(
        tree in node(),
        leaf in any::<Index>(),
        before in any::<bool>(),
        separator in 0..SEPARATORS.len(),
    ) {
        let insert = Insert { leaf: leaf.index(leaf_count(&tree)), before, separator };
        let line = render_line(&tree, Some(insert), &mut 0);
        let judgement = POLICY.judge(&line, &SessionMemory::new());
        prop_assert_eq!(judgement.decision, Decision::Deny, "{:?} → {}", line, render(&judgement));
        let denied = judgement.first_denied().map(|s| s.words.as_str());
        prop_assert_eq!(denied, Some(DENIED), "{:?}", line);
    }
}

/// What holds for any judged line: the line's decision is the strictest of its segments'.
fn check_judgement(line: &str) -> Result<(), TestCaseError> {
    let judgement = POLICY.judge(line, &SessionMemory::new());
    let strictest = judgement.segments.iter().map(|s| s.decision).max();
    prop_assert_eq!(judgement.decision, strictest.unwrap_or(Decision::Allow));
    Ok(())
}

proptest! {
    #[test]
    fn judging_never_panics_on_arbitrary_text(line in any::<String>()) {
        check_judgement(&line)?;
    }

    #[test]
    fn judging_never_panics_on_shell_soup(
        parts in prop::collection::vec(prop::sample::select(vec![
            "|", "||", "&", "&&", ";", ";;", "\n", " ", "\\", "\\\n", "'", "\"", "$'", "$(", "$((",
            "${", "`", "(", ")", "{", "}", "[[", "]]", "<", ">", "<<", "<<<", "<(", ">(", "#", "=",
            "a=(", "!", "@(", "*", "?", "EOF", "if", "then", "fi", "for", "in", "do", "done",
            "case", "esac", "function", "f()", "time", "sudo", "-u", "env", "-S", "xargs", "find",
            "-exec", "bash", "-c", "eval", "alias", "rm", "PATH=", "/bin/", "é", "日",
        ]), 0..40),
    ) {
        check_judgement(&parts.concat())?;
    }
}
