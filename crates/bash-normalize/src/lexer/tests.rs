use super::*;
use parts::PartKind;

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

/// Renders each word with its role (`C` command name, `A` argument, `R` reserved, `=`
/// assignment, `F` function name, `V` loop variable, `L` loop word, `S` case subject, `P` case
/// pattern, `T` test); other tokens as they are.
fn roles(src: &str) -> String {
    let Ok(program) = tokenize(src) else {
        return "BAIL".to_owned();
    };
    let mut parts = Vec::new();
    for token in &program.tokens {
        let text = src[token.start..token.end].replace('\n', "⏎");
        let Kind::Word(role) = token.kind else {
            parts.push(text);
            continue;
        };
        let tag = match role {
            WordRole::CommandName => "C",
            WordRole::Argument => "A",
            WordRole::Reserved => "R",
            WordRole::Assignment => "=",
            WordRole::FunctionName => "F",
            WordRole::LoopVariable => "V",
            WordRole::LoopWord => "L",
            WordRole::CaseSubject => "S",
            WordRole::CasePattern => "P",
            WordRole::Test => "T",
        };
        parts.push(format!("{tag}:{text}"));
    }
    parts.join(" ")
}

#[track_caller]
fn check_roles(src: &str, expect: &str) {
    assert_eq!(roles(src), expect, "source: {src:?}");
}

#[test]
fn word_roles() {
    check_roles("a b c", "C:a A:b A:c");
    check_roles("X=1 Y=2 make -j", "=:X=1 =:Y=2 C:make A:-j");
    check_roles("X=1", "=:X=1");
    check_roles(">log X=1 a Y=2", ">log =:X=1 C:a A:Y=2");
    check_roles("a | b && c; d", "C:a | C:b && C:c ; C:d");
    check_roles("! time -p a", "R:! R:time R:-p C:a");
    check_roles("time a", "R:time C:a");
    check_roles(
        "if a; then b; elif c; then d; else e; fi",
        "R:if C:a ; R:then C:b ; R:elif C:c ; R:then C:d ; R:else C:e ; R:fi",
    );
    check_roles(
        "for f in *.rs x; do rm \"$f\"; done",
        "R:for V:f R:in L:*.rs L:x ; R:do C:rm A:\"$f\" ; R:done",
    );
    check_roles("while a; do b; done", "R:while C:a ; R:do C:b ; R:done");
    check_roles(
        "case $x in a|b) c;; *) d;; esac",
        "R:case S:$x R:in P:a | P:b ) C:c ;; P:* ) C:d ;; R:esac",
    );
    check_roles("{ a; } && ( b )", "R:{ C:a ; R:} && ( C:b )");
    check_roles("f() { rm x; }", "F:f ( ) R:{ C:rm A:x ; R:}");
    check_roles("function g { a; }", "R:function F:g R:{ C:a ; R:}");
    check_roles("function g () { a; }", "R:function F:g ( ) R:{ C:a ; R:}");
    check_roles("[[ -f $x && y ]] && z", "R:[[ T:-f T:$x && T:y R:]] && C:z");
    check_roles("echo if then", "C:echo A:if A:then");
    check_roles("echo $(if a; then b; fi)", "C:echo A:$(if a; then b; fi)");
    check_roles("(( x++ )) && a", "(( x++ )) && C:a");
}

/// Renders the parts of `text` as `kind:text` (a quoted part prefixed with `"`), then `|` and
/// each substitution's program.
fn parts(text: &str, context: Context) -> String {
    let Ok(word) = super::parse_word(text, context) else {
        return "BAIL".to_owned();
    };
    let mut out: Vec<String> = word
        .parts
        .iter()
        .map(|p| {
            let kind = match p.kind {
                PartKind::Literal => "lit",
                PartKind::Escape => "esc",
                PartKind::SingleQuoted => "sq",
                PartKind::AnsiC => "ansi",
                PartKind::Localized => "loc",
                PartKind::Parameter => "param",
                PartKind::Arithmetic => "arith",
                PartKind::Substitution => "sub",
                PartKind::Group => "group",
            };
            let q = if p.quoted { "\"" } else { "" };
            format!("{q}{kind}:{}", &text[p.start..p.end])
        })
        .collect();
    for sub in &word.substitutions {
        out.push(format!("| {}", sub.program(text)));
    }
    out.join(" ")
}

#[track_caller]
fn check_parts(text: &str, expect: &str) {
    assert_eq!(parts(text, Context::Word), expect, "word: {text:?}");
}

#[test]
fn word_parts() {
    check_parts("rm", "lit:rm");
    check_parts("", "");
    check_parts("r''m", "lit:r sq:'' lit:m");
    check_parts("\\rm", "esc:\\r lit:m");
    check_parts("g'i't", "lit:g sq:'i' lit:t");
    check_parts("\"a b\"", "\"lit:a b");
    check_parts("\"\"", "");
    check_parts("\"a\\$b\\x\"", "\"lit:a \"esc:\\$ \"lit:b\\x");
    check_parts("$x${y}$1$@", "param:$x param:${y} param:$1 param:$@");
    check_parts("a$", "lit:a$");
    check_parts("$'\\x72m'", "ansi:$'\\x72m'");
    check_parts("$\"hi $(a)\"", "loc:$\"hi $(a)\" | a");
    check_parts("$((1+2))$[3]", "arith:$((1+2)) arith:$[3]");
    check_parts("x$(rm y)z", "lit:x sub:$(rm y) lit:z | rm y");
    check_parts("\"$(a) `b`\"", "\"sub:$(a) \"lit:  \"sub:`b` | a | b");
    check_parts(
        "`echo \\`x\\` \\$y`",
        "sub:`echo \\`x\\` \\$y` | echo `x` $y",
    );
    check_parts("\"`a \\\"b\\\"`\"", "\"sub:`a \\\"b\\\"` | a \"b\"");
    check_parts("<(ls)x>(wc)", "sub:<(ls) lit:x sub:>(wc) | ls | wc");
    check_parts("${x:-$(rm y)}", "param:${x:-$(rm y)} | rm y");
    check_parts("${ rm y; }", "sub:${ rm y; } |  rm y; ");
    check_parts(
        "\"${| REPLY=$(a); }\"",
        "\"sub:${| REPLY=$(a); } |  REPLY=$(a); ",
    );
    check_parts("$(( $(a) + 1 ))", "arith:$(( $(a) + 1 )) | a");
    check_parts("@(a|b)", "lit:@ group:(a|b)");
    check_parts("a=(x $(y))", "lit:a= group:(x $(y)) | y");
    check_parts("$(a $(b))", "sub:$(a $(b)) | a $(b)");
    check_parts("'unterminated", "BAIL");
    check_parts("$(", "BAIL");
    assert_eq!(
        parts("a $(b) \"c\" `d`", Context::HeredocBody),
        "\"lit:a  \"sub:$(b) \"lit: \"c\"  \"sub:`d` | b | d"
    );
    assert_eq!(
        parts("(( x = $(a) + y[`b`] ))", Context::Arithmetic),
        "| a | b"
    );
}
