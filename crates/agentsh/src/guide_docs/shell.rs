//! `sh` blocks: the simple commands of a block, and the checks of those this test knows (see
//! the top of `guide_docs.rs`).

use std::collections::BTreeSet;

use serde_json::Value;

use super::{check_agentsh_args, check_tool_args, read, root};

/// The simple commands of a shell block, each as its words after quote removal, with leading
/// reserved words, `coproc NAME` and variable assignments left out, and redirection targets
/// dropped. Not bash: enough for the command lines a page shows.
pub(super) fn simple_commands(script: &str) -> Vec<Vec<String>> {
    let mut commands = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word: Option<String> = None;
    let mut redirect_target = false;
    let mut chars = script.chars().peekable();

    let end_word =
        |word: &mut Option<String>, words: &mut Vec<String>, redirect_target: &mut bool| {
            if let Some(done) = word.take() {
                if *redirect_target {
                    *redirect_target = false;
                } else {
                    words.push(done);
                }
            }
        };
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(escaped) => word.get_or_insert_default().push(escaped),
            },
            '\'' => {
                let text = word.get_or_insert_default();
                for quoted in chars.by_ref() {
                    if quoted == '\'' {
                        break;
                    }
                    text.push(quoted);
                }
            }
            '"' => {
                let text = word.get_or_insert_default();
                while let Some(quoted) = chars.next() {
                    match quoted {
                        '"' => break,
                        '\\' => match chars.next() {
                            Some(next @ ('"' | '\\' | '$' | '`')) => text.push(next),
                            Some('\n') | None => {}
                            Some(next) => {
                                text.push('\\');
                                text.push(next);
                            }
                        },
                        other => text.push(other),
                    }
                }
            }
            '#' if word.is_none() => {
                while chars.peek().is_some_and(|&next| next != '\n') {
                    chars.next();
                }
            }
            ' ' | '\t' => end_word(&mut word, &mut words, &mut redirect_target),
            '<' | '>' => {
                end_word(&mut word, &mut words, &mut redirect_target);
                if chars.peek() == Some(&'(') {
                    // A process substitution: its program is a command of its own.
                    commands.push(std::mem::take(&mut words));
                    chars.next();
                } else {
                    while chars.peek().is_some_and(|&next| matches!(next, '>' | '&')) {
                        chars.next();
                    }
                    redirect_target = true;
                }
            }
            '\n' | ';' | '&' | '|' | '(' | ')' => {
                end_word(&mut word, &mut words, &mut redirect_target);
                commands.push(std::mem::take(&mut words));
            }
            other => word.get_or_insert_default().push(other),
        }
    }
    end_word(&mut word, &mut words, &mut redirect_target);
    commands.push(words);

    commands
        .into_iter()
        .map(|mut words| {
            loop {
                let first = words.first().map(String::as_str);
                match first {
                    Some("{" | "}" | "!" | "if" | "then" | "else" | "do" | "while" | "until") => {
                        words.remove(0);
                    }
                    Some("coproc") => {
                        let named = words.get(2).is_some_and(|w| w == "{");
                        words.drain(..if named { 2 } else { 1 });
                    }
                    Some(assignment) if is_assignment(assignment) => {
                        words.remove(0);
                    }
                    _ => break,
                }
            }
            while words.last().is_some_and(|w| w == "}") {
                words.pop();
            }
            words
        })
        .filter(|words| !words.is_empty())
        .collect()
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// The workspace's package names.
pub(super) fn workspace_packages() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut dirs = vec![root().join("xtask")];
    for group in ["crates", "examples"] {
        let entries = std::fs::read_dir(root().join(group)).expect("readable");
        dirs.extend(entries.flatten().map(|entry| entry.path()));
    }
    for dir in dirs {
        let Ok(text) = std::fs::read_to_string(dir.join("Cargo.toml")) else {
            continue;
        };
        let table: toml::Table = text.parse().expect("a manifest parses");
        if let Some(name) = table
            .get("package")
            .and_then(|p| p.get("name"))
            .and_then(toml::Value::as_str)
        {
            names.insert(name.to_owned());
        }
    }
    names
}

/// A JSON word of a command line: a request the RPC server reads.
fn check_rpc_request(line: &str) -> Result<(), String> {
    match agentsh_rpc::read_line_for_checks(line.as_bytes()) {
        Ok(Some(_)) => {}
        Ok(None) => return Err("a blank request".to_owned()),
        Err(answer) => return Err(format!("the RPC server refuses `{line}`: {answer}")),
    }
    let value: Value = serde_json::from_str(line).map_err(|err| err.to_string())?;
    if value["type"] == "tool_call" {
        let name = value["name"].as_str().unwrap_or_default();
        check_tool_args(name, &value["arguments"])?;
    }
    Ok(())
}

/// Checks one simple command; `Ok(true)` when something in it was checked.
fn check_command(words: &[String], packages: &BTreeSet<String>) -> Result<bool, String> {
    let mut checked = false;
    for word in words.iter().filter(|w| w.starts_with("{\"")) {
        check_rpc_request(word)?;
        checked = true;
    }
    match words[0].as_str() {
        "agentsh" => {
            check_agentsh_args(&words[1..])?;
            checked = true;
        }
        "cargo" => {
            checked |= check_cargo(words, packages)?;
        }
        _ => {
            if let Some(at) = words
                .windows(2)
                .position(|w| w[0] == "--" && w[1] == "agentsh")
            {
                check_agentsh_args(&words[at + 2..])?;
                checked = true;
            }
        }
    }
    Ok(checked)
}

/// A `cargo` command line: its packages, paths and `xtask` subcommands exist, and what
/// `cargo run -p agentsh` passes is a command line the binary takes.
fn check_cargo(words: &[String], packages: &BTreeSet<String>) -> Result<bool, String> {
    let split = words.iter().position(|w| w == "--").unwrap_or(words.len());
    let (own, passed) = (&words[..split], words.get(split + 1..).unwrap_or_default());
    let mut checked = false;
    let mut package = None;
    for pair in own.windows(2) {
        match pair[0].as_str() {
            "-p" | "--package" => {
                if !packages.contains(&pair[1]) {
                    return Err(format!("`{}` is no package of the workspace", pair[1]));
                }
                package = Some(pair[1].as_str());
                checked = true;
            }
            "--path" => {
                if !root().join(&pair[1]).is_dir() {
                    return Err(format!("`{}` is no directory of the repository", pair[1]));
                }
                checked = true;
            }
            _ => {}
        }
    }
    match own.get(1).map(String::as_str) {
        Some("run") if package == Some("agentsh") => {
            check_agentsh_args(passed)?;
        }
        Some("xtask") => {
            let main = read(&root().join("xtask/src/main.rs"));
            let sub = own.get(2).ok_or("`cargo xtask` without a subcommand")?;
            if !main.contains(&format!("Some(\"{sub}\")")) {
                return Err(format!("`cargo xtask {sub}`: xtask has no such subcommand"));
            }
            if sub == "fuzz"
                && let Some(target) = own.get(3).filter(|t| !t.starts_with('-'))
                && !root()
                    .join(format!("fuzz/fuzz_targets/{target}.rs"))
                    .is_file()
            {
                return Err(format!("`cargo xtask fuzz {target}`: no such fuzz target"));
            }
            checked = true;
        }
        _ => {}
    }
    Ok(checked)
}

pub(super) fn check_shell(body: &str, packages: &BTreeSet<String>) -> Result<(), String> {
    let mut checked = false;
    for words in simple_commands(body) {
        checked |= check_command(&words, packages)?;
    }
    if checked {
        Ok(())
    } else {
        Err("no command in the block is one this test checks (mark it `text`?)".to_owned())
    }
}
