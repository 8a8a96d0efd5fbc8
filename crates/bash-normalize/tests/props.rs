//! Property tests: round trips on generated pipelines, commands without a limit untouched,
//! no panic on arbitrary input, and idempotence.

use agentsh_bash_normalize::syntax;
use agentsh_bash_normalize::{Limits, list_elements, normalize};
use proptest::prelude::*;
use proptest::sample::select;

/// One element of a generated stage after its command name.
#[derive(Debug, Clone)]
enum Elem {
    Word(String),
    /// A redirection and whether it redirects fd 1 or 2.
    Redirect(&'static str, bool),
}

impl Elem {
    fn text(&self) -> &str {
        match self {
            Self::Word(w) => w,
            Self::Redirect(r, _) => r,
        }
    }
}

/// A pipeline stage: its head (a command name or a whole group) and its elements, each with the
/// blank run written before it.
#[derive(Debug, Clone)]
struct Stage {
    head: String,
    elems: Vec<(&'static str, Elem)>,
}

impl Stage {
    fn render(&self, elems: &[(&'static str, Elem)]) -> String {
        let mut out = self.head.clone();
        for (blank, elem) in elems {
            out.push_str(blank);
            out.push_str(elem.text());
        }
        out
    }

    /// The stage as written.
    fn text(&self) -> String {
        self.render(&self.elems)
    }

    /// The stage as normalisation leaves it when it is the last remaining one: a trailing
    /// `2>&1` goes when nothing else in the stage redirects stdout or stderr.
    fn text_as_last(&self) -> String {
        if let [rest @ .., (_, Elem::Redirect("2>&1", _))] = self.elems.as_slice()
            && !rest
                .iter()
                .any(|(_, e)| matches!(e, Elem::Redirect(_, true)))
        {
            return self.render(rest);
        }
        self.text()
    }
}

fn blank() -> impl Strategy<Value = &'static str> {
    select(vec![" ", "  ", "\t", " \t ", " \\\n "])
}

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z][a-z0-9._/-]{0,6}",
        2 => "-[a-zA-Z]{1,3}",
        2 => "'[^']{0,8}'",
        2 => "\"[^\"\\\\$`]{0,8}\"",
        1 => "[a-z]{1,3}\\\\[|;&()<> ]",
        1 => select(vec![
            "\"$(echo a | head -1)\"",
            "$(seq 3 | tail -n 1)",
            "`ls | head -2`",
            "${x:-a|b}",
            "\"${y//|/;}\"",
            "$((1 | 2))",
            "<(ls | head -1)",
            "$'a\\'|b'",
            "héllo",
            "日本",
            "$(case $x in a) echo | head -1;; esac)",
            "@(a|b)",
            "#not-a-comment",
        ])
        .prop_map(|s| if s == "#not-a-comment" { "x#y".to_owned() } else { s.to_owned() }),
    ]
}

fn elem() -> impl Strategy<Value = Elem> {
    prop_oneof![
        4 => word().prop_map(Elem::Word),
        2 => select(vec![
            (">f", true),
            ("> out.txt", true),
            ("2>/dev/null", true),
            (">>log", true),
            ("&>all", true),
            ("1>&2", true),
            ("<in", false),
            ("<<<'a | b'", false),
            ("3>side", false),
            ("2>&1", true),
        ])
        .prop_map(|(r, touches)| Elem::Redirect(r, touches)),
        // A trailing `2>&1` is the interesting case: give it weight.
        1 => Just(Elem::Redirect("2>&1", true)),
    ]
}

fn simple_command() -> impl Strategy<Value = String> {
    (
        select(vec![
            "echo", "printf", "ls", "grep", "cat", "seq", "sort", "make", "head", "tail", "exec",
            "cd",
        ]),
        prop::collection::vec((blank(), word()), 0..3),
    )
        .prop_map(|(name, args)| {
            let mut out = name.to_owned();
            for (blank, arg) in args {
                out.push_str(blank);
                out.push_str(&arg);
            }
            out
        })
}

fn stage() -> impl Strategy<Value = Stage> {
    // (head, whether it is a compound command, after which only redirections may follow)
    let head = prop_oneof![
        6 => select(vec!["echo", "printf", "ls", "grep", "cat", "seq", "sort", "make", "head", "tail", "exec", "export", "cd", "A=1"])
            .prop_map(|name| (name.to_owned(), false)),
        1 => (simple_command(), simple_command()).prop_map(|(a, b)| (format!("( {a} | {b} | head -1 )"), true)),
        1 => (simple_command(), simple_command()).prop_map(|(a, b)| (format!("{{ {a}; {b} | tail -2; }}"), true)),
        1 => simple_command().prop_map(|a| (format!("for i in 1 2; do {a} | head -1; done"), true)),
        1 => simple_command().prop_map(|a| (format!("if true; then\n  {a} | head -1\nfi"), true)),
    ];
    (head, prop::collection::vec((blank(), elem()), 0..4)).prop_map(
        |((head, compound), mut elems)| {
            if compound {
                elems.retain(|(_, elem)| matches!(elem, Elem::Redirect(..)));
            }
            Stage { head, elems }
        },
    )
}

fn pipe() -> impl Strategy<Value = &'static str> {
    select(vec![" | ", "|", " |\n  ", " |& ", "  |  "])
}

/// A single pipeline: stages and the pipe operators between them.
fn pipeline() -> impl Strategy<Value = (Vec<Stage>, Vec<&'static str>)> {
    prop::collection::vec(stage(), 1..4).prop_flat_map(|stages| {
        let n = stages.len() - 1;
        (Just(stages), prop::collection::vec(pipe(), n))
    })
}

fn render_pipeline(stages: &[Stage], pipes: &[&str], last_as_normalised: bool) -> String {
    let mut out = String::new();
    for (i, stage) in stages.iter().enumerate() {
        if i > 0 {
            out.push_str(pipes[i - 1]);
        }
        let is_last = i + 1 == stages.len();
        out.push_str(&if is_last && last_as_normalised {
            stage.text_as_last()
        } else {
            stage.text()
        });
    }
    out
}

/// List elements that may come before the last pipeline.
fn list_prefix() -> impl Strategy<Value = &'static str> {
    select(vec![
        "",
        "cd src && ",
        "true; ",
        "false || ",
        "sleep 1 & ",
        "x=1\n",
        "# comment | head -1\n",
        "cat <<EOF >/dev/null\nx | head -1\nEOF\n",
        "if a; then b | tail -1; fi; ",
        "f() { ls | head -1; }\n",
    ])
}

fn spelling() -> impl Strategy<Value = (String, Limits)> {
    (0..6usize, any::<u32>(), select(vec![" ", "  ", "\t"])).prop_map(|(form, n, sp)| {
        let (name, limits) = if form < 3 {
            (
                "head",
                Limits {
                    head: Some(n),
                    tail: None,
                },
            )
        } else {
            (
                "tail",
                Limits {
                    head: None,
                    tail: Some(n),
                },
            )
        };
        let text = match form % 3 {
            0 => format!("{name}{sp}-n{sp}{n}"),
            1 => format!("{name}{sp}-n{n}"),
            _ => format!("{name}{sp}-{n}"),
        };
        (text, limits)
    })
}

fn outer_space() -> impl Strategy<Value = &'static str> {
    select(vec!["", " ", "\n", " \t\n ", "\r\n"])
}

/// Suffixes that are not a limit to extract.
fn non_limit_suffix() -> impl Strategy<Value = &'static str> {
    select(vec![
        "",
        " | head -c 5",
        " | tail -f",
        " | head -n +5",
        " | tail -n +5",
        " | tail +5",
        " | head -n 5 file",
        " | head -n -5",
        " | head -n 5 &",
        " | head -5;",
        " | head -5 # first five",
        " || head -5",
        " |& tail -3",
        " | \"head\" -5",
        " | head -5 >out",
        " | head -5 2>&1",
        " | head -q -5",
        " | sort",
        " | head --lines=5",
        " | head -n 99999999999",
        " &",
    ])
}

/// Wrappers that hide a trailing limit from the top level.
fn hiding_wrapper() -> impl Strategy<Value = (&'static str, &'static str)> {
    select(vec![
        ("( ", " )"),
        ("{ ", "; }"),
        ("echo \"$(", ")\""),
        ("x=$(", ")"),
        ("echo `", "`"),
        ("cat <(", ")"),
        ("if true; then ", "; fi"),
        ("echo '", "'"),
    ])
}

/// The trimming rule of `normalize`, restated: ASCII space, tab, CR and LF at both ends, except
/// a whitespace character escaped by a backslash (`echo a\ ` keeps its escaped space).
fn trimmed(s: &str) -> &str {
    const SPACE: [char; 4] = [' ', '\t', '\n', '\r'];
    let start = s.len() - s.trim_start_matches(SPACE).len();
    let mut end = s.trim_end_matches(SPACE).len();
    let backslashes = s[..end].chars().rev().take_while(|&c| c == '\\').count();
    if backslashes % 2 == 1 && end < s.len() {
        end += 1;
    }
    s.get(start..end).unwrap_or("")
}

proptest! {
    #[test]
    fn trailing_limit_is_extracted_and_producer_wrapped(
        lead in outer_space(),
        prefix in list_prefix(),
        (stages, pipes) in pipeline(),
        sp1 in select(vec!["", " ", "  ", "\t"]),
        sp2 in select(vec!["", " ", "  ", "\n", "\t"]),
        (limit, limits) in spelling(),
        trail in outer_space(),
    ) {
        let producer = render_pipeline(&stages, &pipes, false);
        let input = format!("{lead}{prefix}{producer}{sp1}|{sp2}{limit}{trail}");
        let expected = format!("{prefix}( {} )", render_pipeline(&stages, &pipes, true));
        let got = normalize(&input);
        prop_assert_eq!(got.command, expected, "input: {:?}", input);
        prop_assert_eq!(got.limits, limits);
    }

    #[test]
    fn command_without_trailing_limit_is_unchanged(
        lead in outer_space(),
        prefix in list_prefix(),
        (stages, pipes) in pipeline(),
        suffix in non_limit_suffix(),
        trail in outer_space(),
    ) {
        let input = format!("{lead}{prefix}{}{suffix}{trail}", render_pipeline(&stages, &pipes, false));
        let got = normalize(&input);
        prop_assert_eq!(got.command.as_str(), trimmed(&input));
        prop_assert!(got.limits.is_none());
    }

    #[test]
    fn limit_inside_a_nested_construct_is_unchanged(
        (stages, pipes) in pipeline(),
        (open, close) in hiding_wrapper(),
        (limit, _) in spelling(),
    ) {
        let producer = render_pipeline(&stages, &pipes, false);
        let input = format!("{open}{producer} | {limit}{close}");
        // A single-quoted producer that itself contains `'` ends the quote early; skip those.
        prop_assume!(open != "echo '" || !producer.contains('\''));
        prop_assume!(open != "echo `" || !producer.contains('`'));
        let got = normalize(&input);
        prop_assert_eq!(got.command.as_str(), input.as_str());
        prop_assert!(got.limits.is_none());
    }

    #[test]
    fn never_panics_on_arbitrary_text(input in any::<String>()) {
        check_invariants(&input)?;
        check_syntax(&input)?;
    }

    #[test]
    fn never_panics_on_shell_soup(
        parts in prop::collection::vec(select(vec![
            "|", "||", "|&", "&", "&&", ";", ";;", ";&", "\n", " ", "\t", "\\", "\\\n", "'", "\"",
            "$'", "$(", "$((", "${", "$[", "`", "(", ")", "((", "))", "{", "}", "[[", "]]", "<",
            ">", "<<", "<<-", "<<<", "2>&1", "&>", ">&", "<(", ">(", "#", "=", "a=(", "!", "@(",
            "EOF", "'EOF'", "head", "tail", "-n", "-5", "5", "+5", "-c", "if", "then", "fi", "for",
            "in", "do", "done", "case", "esac", "while", "function", "f()", "time", "-p", "é", "日",
            "\r", "\0",
        ]), 0..40),
        (limit, _) in spelling(),
        with_limit in any::<bool>(),
    ) {
        let mut input = parts.concat();
        if with_limit {
            input.push_str(" | ");
            input.push_str(&limit);
        }
        check_invariants(&input)?;
        check_syntax(&input)?;
    }
}

proptest! {
    #[test]
    fn list_elements_are_the_first_stages(
        items in prop::collection::vec(
            (pipeline(), select(vec![" && ", " || ", "; ", " & ", "\n", " ;\n\n", "&&\n  "])),
            1..5,
        ),
        trailing in select(vec!["", ";", " &", "\n", " # done"]),
    ) {
        let mut command = String::new();
        let mut expected = Vec::new();
        let mut separator = "";
        for ((stages, pipes), next_separator) in &items {
            command.push_str(separator);
            command.push_str(&render_pipeline(stages, pipes, false));
            expected.push(stages[0].text());
            separator = next_separator;
        }
        command.push_str(trailing);
        prop_assert_eq!(list_elements(&command), expected, "command: {:?}", command);
    }
}

/// What holds for every input: no panic; unchanged (trimmed) when no limit was taken; otherwise
/// exactly one limit, a wrapped producer, and a result that normalises to itself.
fn check_invariants(input: &str) -> Result<(), TestCaseError> {
    let got = normalize(input);
    if got.limits.is_none() {
        prop_assert_eq!(got.command.as_str(), trimmed(input));
    } else {
        prop_assert!(got.limits.head.is_some() != got.limits.tail.is_some());
        prop_assert!(got.command.ends_with(" )"), "{:?}", got.command);
        let producer = got.producer.clone().expect("a producer range with a limit");
        prop_assert_eq!(&got.command[producer.end..], " )");
        prop_assert_eq!(&got.command[producer.start - 2..producer.start], "( ");
        prop_assert!(trimmed(input).starts_with(&got.command[..producer.start - 2]));
        let again = normalize(&got.command);
        prop_assert_eq!(again.command, got.command.clone());
        prop_assert!(again.limits.is_none());
    }
    Ok(())
}

/// What holds for the syntax module on every input: no panic; tokens in order on character
/// boundaries; each word's parts in order, inside it, on character boundaries; each
/// substitution's program readable.
fn check_syntax(input: &str) -> Result<(), TestCaseError> {
    let Ok(tokens) = syntax::tokenize(input) else {
        return Ok(());
    };
    let mut end = 0;
    for token in &tokens {
        prop_assert!(
            end <= token.start && token.start <= token.end,
            "{:?}",
            tokens
        );
        prop_assert!(input.is_char_boundary(token.start) && input.is_char_boundary(token.end));
        end = token.end;
        let text = &input[token.start..token.end];
        let context = match token.kind {
            syntax::Kind::Word(_) => syntax::Context::Word,
            syntax::Kind::HeredocBody => syntax::Context::HeredocBody,
            syntax::Kind::Arith => syntax::Context::Arithmetic,
            _ => continue,
        };
        let Ok(word) = syntax::parse_word(text, context) else {
            continue;
        };
        let mut at = 0;
        for part in &word.parts {
            prop_assert!(at <= part.start && part.start < part.end && part.end <= text.len());
            prop_assert!(text.is_char_boundary(part.start) && text.is_char_boundary(part.end));
            at = part.end;
        }
        for substitution in &word.substitutions {
            prop_assert!(substitution.start <= substitution.end && substitution.end <= text.len());
            let _ = substitution.program(text);
        }
    }
    Ok(())
}
