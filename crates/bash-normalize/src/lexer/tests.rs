use super::*;

/// Renders the tokens as `text · text`, a token inside a compound command prefixed with its
/// depth (`1:x`), the first token of the last pipeline with `▸`, a newline as `⏎`.
fn render(src: &str) -> String {
    let Ok(program) = tokenize(src) else {
        return "BAIL".to_owned();
    };
    let mut parts = Vec::new();
    for (i, token) in program.tokens.iter().enumerate() {
        let mut part = String::new();
        if program.last_pipeline() == Some(i) {
            part.push('▸');
        }
        if token.depth > 0 {
            part = format!("{part}{}:", token.depth);
        }
        part.push_str(&src[token.start..token.end].replace('\n', "⏎"));
        parts.push(part);
    }
    parts.join(" · ")
}

#[track_caller]
fn check(src: &str, expect: &str) {
    assert_eq!(render(src), expect, "source: {src:?}");
}

#[test]
fn operators_and_lists() {
    check("a | b", "▸a · | · b");
    check("a|b", "▸a · | · b");
    check("a || b", "a · || · ▸b");
    check("a |& b", "▸a · |& · b");
    check("a && b; c & d\ne", "a · && · b · ; · c · & · d · ⏎ · ▸e");
    check("a |\n\n b", "▸a · | · ⏎ · ⏎ · b");
    check("a &&\n b", "a · && · ⏎ · ▸b");
    check("a;", "▸a · ;");
    check("", "");
    check("\n\n", "⏎ · ⏎");
}

#[test]
fn quotes_and_expansions_stay_inside_words() {
    check(
        r#"echo 'x | y' "a;b" $'c\'|d'"#,
        r#"▸echo · 'x | y' · "a;b" · $'c\'|d'"#,
    );
    check(r#"echo "$'" | x"#, r#"▸echo · "$'" · | · x"#);
    check(
        "echo $(a | b) `c | d` ${x:-|} $((1|2)) $[1|2]",
        "▸echo · $(a | b) · `c | d` · ${x:-|} · $((1|2)) · $[1|2]",
    );
    check("echo a\\|b \\; c", "▸echo · a\\|b · \\; · c");
    check(
        "echo \"a `b \\` | c` d\" | e",
        "▸echo · \"a `b \\` | c` d\" · | · e",
    );
    check("echo ${x:-'}'} | y", "▸echo · ${x:-'}'} · | · y");
    check("echo \"${x#'}'}\" | y", "▸echo · \"${x#'}'}\" · | · y");
    check("echo ${a[${i}]}x|y", "▸echo · ${a[${i}]}x · | · y");
    check(
        "echo $(case x in a) b;; (c|d) e;;& esac) | f",
        "▸echo · $(case x in a) b;; (c|d) e;;& esac) · | · f",
    );
    check("echo $((a) | b) | c", "▸echo · $((a) | b) · | · c");
    check(
        "echo $(echo ')' \") # (\" # )\n) | x",
        "▸echo · $(echo ')' \") # (\" # )⏎) · | · x",
    );
    check(
        "x=$(cat <<EOF\na)\nEOF\n) | y",
        "▸x=$(cat <<EOF⏎a)⏎EOF⏎) · | · y",
    );
    check(
        "diff <(a | b) >(c) x<(d)",
        "▸diff · <(a | b) · >(c) · x<(d)",
    );
    check(
        "ls @(a|b) !(c) x*(y) | z",
        "▸ls · @(a|b) · !(c) · x*(y) · | · z",
    );
    check(
        "a=(x | y) b+=([k]=v) c[1]=(z) | d",
        "▸a=(x | y) · b+=([k]=v) · c[1]=(z) · | · d",
    );
    check("a#b | c", "▸a#b · | · c");
}

#[test]
fn comments() {
    check("a # b | c\nd", "a · # b | c · ⏎ · ▸d");
    check("a | # b ; c\nd", "▸a · | · # b ; c · ⏎ · d");
    check("# only", "# only");
    check("a #", "▸a · #");
}

#[test]
fn redirections() {
    check(
        "a 2>&1 >log <in 3<>f &>all &>>x >|y",
        "▸a · 2>&1 · >log · <in · 3<>f · &>all · &>>x · >|y",
    );
    check(
        "a > 'my file' 2> /dev/null | b",
        "▸a · > 'my file' · 2> /dev/null · | · b",
    );
    check(
        "a {fd}>f 12>&- <<<'x | y' | b",
        "▸a · {fd}>f · 12>&- · <<<'x | y' · | · b",
    );
    check("a 2>&1", "▸a · 2>&1");
    check(">f a", "▸>f · a");
    let kinds = |src: &str| {
        tokenize(src)
            .map(|p| {
                p.tokens
                    .iter()
                    .filter_map(|t| match t.kind {
                        Kind::Redirect {
                            touches_stdout_or_stderr,
                        } => Some(touches_stdout_or_stderr),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    assert_eq!(
        kinds("a >f 1>f 2>f >>f >|f >&f &>f &>>f 1<&0 2>&1"),
        [true, true, true, true, true, true, true, true, true, true]
    );
    assert_eq!(kinds("a <f 0<f 3>f <&3 <>f {fd}>f {x}>&1 <<<w"), [false; 8]);
}

#[test]
fn heredocs() {
    check(
        "cat <<EOF | x\nbody | y\nEOF\nz",
        "cat · <<EOF · | · x · ⏎ · body | y⏎EOF⏎ · ▸z",
    );
    check(
        "cat <<-'E O'\n\t$(\n\tE O\nz",
        "cat · <<-'E O' · ⏎ · \t$(⏎\tE O⏎ · ▸z",
    );
    check(
        "cat <<A <<\\B\na\nA\nb\nB\nz",
        "cat · <<A · <<\\B · ⏎ · a⏎A⏎b⏎B⏎ · ▸z",
    );
    check("cat <<EOF\nx\nEOF", "▸cat · <<EOF · ⏎ · x⏎EOF");
    check("cat <<EOF\nx\n EOF", "BAIL");
    check("cat <<EOF", "BAIL");
    check("cat <<", "BAIL");
    check("cat <<E; echo $(\nx\n)\nE\n", "BAIL");
}

#[test]
fn compound_commands_nest() {
    check("(a | b) | c", "▸( · 1:a · 1:| · 1:b · ) · | · c");
    check("{ a; } | b", "▸{ · 1:a · 1:; · } · | · b");
    check(
        "if a; then b | c; fi | d",
        "▸if · 1:a · 1:; · 1:then · 1:b · 1:| · 1:c · 1:; · fi · | · d",
    );
    check(
        "while a; do b; done",
        "▸while · 1:a · 1:; · 1:do · 1:b · 1:; · done",
    );
    check(
        "for x in a b; do c; done",
        "▸for · 1:x · 1:in · 1:a · 1:b · 1:; · 1:do · 1:c · 1:; · done",
    );
    check(
        "for ((i=0;i<2;i++)); do c; done",
        "▸for · 1:((i=0;i<2;i++)) · 1:; · 1:do · 1:c · 1:; · done",
    );
    check(
        "case x in (a|b) c;; d) e;& *) ;; esac | f",
        "▸case · 1:x · 1:in · 1:( · 1:a · 1:| · 1:b · 1:) · 1:c · 1:;; · 1:d · 1:) · 1:e · 1:;& · 1:* · 1:) · 1:;; · esac · | · f",
    );
    check(
        "case x in a) echo esac;; esac",
        "▸case · 1:x · 1:in · 1:a · 1:) · 1:echo · 1:esac · 1:;; · esac",
    );
    check(
        "[[ a < b && ( c || d ) ]] | e",
        "▸[[ · 1:a · 1:< b · 1:&& · 1:( · 1:c · 1:|| · 1:d · 1:) · ]] · | · e",
    );
    check("(( x = 1 | 2 )) | y", "▸(( x = 1 | 2 )) · | · y");
    check("((a) ) | y", "▸( · 1:( · 2:a · 1:) · ) · | · y");
    check("f() { a; } | b", "▸f · ( · ) · { · 1:a · 1:; · } · | · b");
    check(
        "function g { a; }; h",
        "function · g · { · 1:a · 1:; · } · ; · ▸h",
    );
    check("time -p a | b", "▸time · -p · a · | · b");
    check("! a | b", "▸! · a · | · b");
    check(
        "i\\\nf a; then b; fi",
        "▸i\\⏎f · 1:a · 1:; · 1:then · 1:b · 1:; · fi",
    );
    check("echo if then fi | x", "▸echo · if · then · fi · | · x");
    check("A=1 if", "▸A=1 · if");
    check("{a,b} }", "▸{a,b} · }");
    check(
        "if (a) then b; fi",
        "▸if · 1:( · 2:a · 1:) · 1:then · 1:b · 1:; · fi",
    );
    check(
        "while a; do if b; then c; fi done",
        "▸while · 1:a · 1:; · 1:do · 1:if · 2:b · 2:; · 2:then · 2:c · 2:; · 1:fi · done",
    );
    check("{ (a) }", "▸{ · 1:( · 2:a · 1:) · }");
    check("done < <(a | b) 2> >(c)", "BAIL");
    check(
        "while a; do b; done < <(c | d) | e",
        "▸while · 1:a · 1:; · 1:do · 1:b · 1:; · done · < <(c | d) · | · e",
    );
    check(
        "{ a; } >f 2>&1 | b",
        "▸{ · 1:a · 1:; · } · >f · 2>&1 · | · b",
    );
    for src in [
        "{ a; } b",
        "(a) b",
        "if a; then b; fi c",
        "[[ a ]] b",
        "((1)) b",
        "fi if",
        "(a) (b)",
    ] {
        check(src, "BAIL");
    }
}

#[test]
fn bails_on_what_it_does_not_understand_or_bash_rejects() {
    for src in [
        "echo 'a",
        "echo \"a",
        "echo $(a",
        "echo ${a",
        "echo `a",
        "echo $'a",
        "a )",
        "( a",
        "( )",
        "fi",
        "then",
        "a |",
        "a &&",
        ";",
        "a ;;",
        "| a",
        "a | | b",
        "a > ",
        "a > | b",
        "a=(",
        "coproc x",
        "case x in a) b;;",
        "for x in a; do b; ",
        "if a; then b",
        "{ a; ",
        "[[ a",
        "f() a",
        "{ a }",
        "echo $( a; ",
    ] {
        check(src, "BAIL");
    }
}

#[test]
fn retried_substitutions_stay_cheap() {
    // Each `$((a) | …)` first looks like arithmetic, then is rescanned as `$( (a) | …)`.
    let nest = |depth: usize| {
        let mut command = "x".to_owned();
        for _ in 0..depth {
            command = format!("$((a) | {command})");
        }
        format!("echo {command} | y")
    };
    let shallow = nest(8);
    let word = &shallow["echo ".len()..shallow.len() - " | y".len()];
    check(&shallow, &format!("▸echo · {word} · | · y"));
    // Rescanning every level again on every retry would take 2^60 scans.
    let deep = nest(60);
    let word = &deep["echo ".len()..deep.len() - " | y".len()];
    check(&deep, &format!("▸echo · {word} · | · y"));
}

#[test]
fn deep_nesting_bails_without_overflowing_the_stack() {
    let deep = "$(".repeat(100_000);
    check(&deep, "BAIL");
    let deep = "\"$(".repeat(50_000);
    check(&deep, "BAIL");
    let deep = "${".repeat(100_000);
    check(&deep, "BAIL");
    let deep = "$[".repeat(100_000);
    check(&deep, "BAIL");
    let parens = "(".repeat(100_000);
    check(&parens, "BAIL");
    let nested = format!("{}a{}", "$(".repeat(50), ")".repeat(50));
    check(&nested, &format!("▸{nested}"));
}
