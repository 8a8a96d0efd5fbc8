//! The generating shell's dump: parsed at its marker lines, filtered, and rendered as the
//! snapshot file.

use std::path::Path;

use agentsh_process::shell::ShellKind;

/// Names of common tools and shell builtins. A function or alias of such a name is not
/// carried into command shells: the agent relies on these behaving as documented (and
/// `rm -i` style aliases would wait for an answer that never comes). Language runtimes and
/// package managers (`node`, `python`, `npm`, …) are deliberately not listed: rc functions of
/// those names are usually version-manager shims the user needs.
const SHADOWED_NAMES: &[&str] = &[
    "[", "awk", "basename", "builtin", "cat", "cd", "chmod", "chown", "command", "cp", "curl",
    "cut", "date", "diff", "dirname", "du", "echo", "egrep", "env", "eval", "exec", "exit",
    "export", "false", "fd", "fgrep", "find", "git", "grep", "head", "kill", "less", "ln", "ls",
    "mkdir", "more", "mv", "patch", "popd", "printf", "pushd", "pwd", "read", "readlink",
    "realpath", "rg", "rm", "rmdir", "sed", "set", "shopt", "sleep", "sort", "source", "stat",
    "tail", "tar", "tee", "test", "time", "touch", "tr", "trap", "true", "type", "uniq", "unset",
    "wc", "wget", "which", "xargs",
];

/// Functions the shell calls by itself (hooks). Not carried: they would run around every
/// command (`precmd`, `preexec`, `chpwd`, …) or replace "command not found" with suggestions.
const HOOK_FUNCTIONS: &[&str] = &[
    "command_not_found_handle",
    "command_not_found_handler",
    "precmd",
    "preexec",
    "chpwd",
    "periodic",
    "zshexit",
    "zshaddhistory",
];

/// bash options (`set -o` and `shopt` names) never carried. The first seven never suit a command shell;
/// `noexec` would stop the command shell from running anything, and `history` / `histexpand`
/// are interactive-only (a snapshot is generated in an interactive shell; `!` must stay a
/// plain character in commands).
const UNCARRIED_OPTIONS_BASH: &[&str] = &[
    "errexit",
    "nounset",
    "xtrace",
    "verbose",
    "onecmd",
    "monitor",
    "restricted",
    "noexec",
    "history",
    "histexpand",
];

/// zsh options never carried, in zsh's normalised spelling (lower case, no `_`, without a
/// `no` prefix: `nounset` is the option `unset` turned off). The bash list in zsh names
/// (`unset` for nounset, `singlecommand` for onecmd), plus `exec` (`-n`), `errreturn` (like
/// errexit, for functions) and options that only describe how the shell was started.
const UNCARRIED_OPTIONS_ZSH: &[&str] = &[
    "errexit",
    "unset",
    "xtrace",
    "verbose",
    "singlecommand",
    "monitor",
    "restricted",
    "exec",
    "errreturn",
    "interactive",
    "shinstdin",
    "zle",
    "login",
    "privileged",
    "rcs",
    "globalrcs",
];

/// The generating shell's output, split at marker lines.
#[derive(Debug, Default)]
pub(crate) struct Dump {
    options_before: Vec<Vec<u8>>,
    options_after: Vec<Vec<u8>>,
    pub(crate) status: Option<i32>,
    functions: Vec<(String, Vec<u8>)>,
    aliases: Vec<(String, Vec<u8>)>,
    path: Vec<u8>,
    pub(crate) complete: bool,
}

#[derive(Clone, Copy)]
enum Section {
    None,
    OptionsBefore,
    OptionsAfter,
    Function,
    Alias,
    Path,
}

impl Dump {
    /// Splits `raw` at the lines that start with `marker`.
    pub(crate) fn parse(raw: &[u8], marker: &[u8]) -> Self {
        let mut dump = Self::default();
        let mut section = Section::None;
        let mut lines = raw.split(|&b| b == b'\n').peekable();
        while let Some(line) = lines.next() {
            // `split` yields an empty piece after a final newline; it is not a line.
            if line.is_empty() && lines.peek().is_none() {
                break;
            }
            if let Some(header) = line
                .strip_prefix(marker)
                .and_then(|rest| rest.strip_prefix(b" "))
            {
                let header = String::from_utf8_lossy(header);
                let (kind, arg) = header.split_once(' ').unwrap_or((&header, ""));
                section = match kind {
                    "options-before" => Section::OptionsBefore,
                    "options-after" => Section::OptionsAfter,
                    "status" => {
                        dump.status = arg.trim().parse().ok();
                        Section::None
                    }
                    "function" => {
                        dump.functions.push((arg.to_owned(), Vec::new()));
                        Section::Function
                    }
                    "alias" => {
                        dump.aliases.push((arg.to_owned(), Vec::new()));
                        Section::Alias
                    }
                    "path" => Section::Path,
                    "end" => {
                        dump.complete = true;
                        Section::None
                    }
                    _ => Section::None,
                };
                continue;
            }
            let append = |body: &mut Vec<u8>| {
                body.extend_from_slice(line);
                body.push(b'\n');
            };
            match section {
                Section::None => {}
                Section::OptionsBefore => dump.options_before.push(line.to_vec()),
                Section::OptionsAfter => dump.options_after.push(line.to_vec()),
                Section::Function => {
                    if let Some((_, body)) = dump.functions.last_mut() {
                        append(body);
                    }
                }
                Section::Alias => {
                    if let Some((_, body)) = dump.aliases.last_mut() {
                        append(body);
                    }
                }
                Section::Path => append(&mut dump.path),
            }
        }
        dump
    }
}

/// Whether a function or alias `name` is carried into command shells.
fn carries_name(kind: ShellKind, name: &str, is_function: bool) -> bool {
    if name.is_empty() || name.starts_with('_') || SHADOWED_NAMES.contains(&name) {
        return false;
    }
    if is_function {
        if HOOK_FUNCTIONS.contains(&name) {
            return false;
        }
        // zsh runs `TRAPINT`, `TRAPEXIT`, … as signal and exit handlers.
        if kind == ShellKind::Zsh && name.starts_with("TRAP") {
            return false;
        }
    }
    true
}

/// The option lines to replay: those whose state the rc changed, minus the uncarried ones.
fn changed_options(kind: ShellKind, before: &[Vec<u8>], after: &[Vec<u8>]) -> Vec<String> {
    match kind {
        ShellKind::Bash => {
            // Lines are `set -o NAME`, `set +o NAME`, `shopt -s NAME`, `shopt -u NAME`.
            let before: std::collections::HashSet<&[u8]> =
                before.iter().map(Vec::as_slice).collect();
            after
                .iter()
                .filter(|line| !before.contains(line.as_slice()))
                .filter_map(|line| {
                    let line = std::str::from_utf8(line).ok()?;
                    let mut words = line.split(' ');
                    let (cmd, flag, name) = (words.next()?, words.next()?, words.next()?);
                    let known =
                        matches!((cmd, flag), ("set", "-o" | "+o") | ("shopt", "-s" | "-u"));
                    (known && words.next().is_none() && !UNCARRIED_OPTIONS_BASH.contains(&name))
                        .then(|| line.to_owned())
                })
                .collect()
        }
        ShellKind::Zsh => {
            // `setopt` lists the options that differ from zsh's defaults, one per line.
            let normalise = |line: &Vec<u8>| {
                String::from_utf8_lossy(line)
                    .trim()
                    .to_ascii_lowercase()
                    .replace('_', "")
            };
            let before: Vec<String> = before.iter().map(normalise).collect();
            let after: Vec<String> = after.iter().map(normalise).collect();
            let carried = |token: &str| {
                let base = token.strip_prefix("no").unwrap_or(token);
                !token.is_empty()
                    && token.bytes().all(|b| b.is_ascii_alphanumeric())
                    && !UNCARRIED_OPTIONS_ZSH.contains(&token)
                    && !UNCARRIED_OPTIONS_ZSH.contains(&base)
            };
            let set = after
                .iter()
                .filter(|t| !before.contains(t) && carried(t))
                .map(|t| format!("setopt {t}"));
            let unset = before
                .iter()
                .filter(|t| !after.contains(t) && carried(t))
                .map(|t| format!("unsetopt {t}"));
            set.chain(unset).collect()
        }
        ShellKind::Sh => Vec::new(),
    }
}

/// The snapshot file: options, functions, aliases, `expand_aliases` (bash), `PATH`.
pub(crate) fn render(kind: ShellKind, dump: &Dump, rc: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    let rc_name = rc.to_string_lossy().replace(['\n', '\r'], "?");
    out.extend_from_slice(
        format!("# agentsh rc snapshot of {rc_name} ({kind}); generated, do not edit\n").as_bytes(),
    );
    for line in changed_options(kind, &dump.options_before, &dump.options_after) {
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    for (name, body) in &dump.functions {
        if carries_name(kind, name, true) {
            out.extend_from_slice(body);
        }
    }
    for (name, body) in &dump.aliases {
        if carries_name(kind, name, false) {
            out.extend_from_slice(body);
        }
    }
    if kind == ShellKind::Bash {
        out.extend_from_slice(b"shopt -s expand_aliases\n");
    }
    out.extend_from_slice(&dump.path);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<Vec<u8>> {
        text.lines().map(|l| l.as_bytes().to_vec()).collect()
    }

    #[test]
    fn bash_options_carry_only_changes_outside_the_uncarried_list() {
        let before = lines(
            "set +o errexit\nset -o histexpand\nset +o noclobber\nset +o pipefail\nshopt -u extglob\nshopt -s cmdhist",
        );
        let after = lines(
            "set -o errexit\nset +o histexpand\nset -o noclobber\nset +o pipefail\nshopt -s extglob\nshopt -u cmdhist",
        );
        assert_eq!(
            changed_options(ShellKind::Bash, &before, &after),
            ["set -o noclobber", "shopt -s extglob", "shopt -u cmdhist"]
        );
    }

    #[test]
    fn zsh_options_carry_set_and_unset_changes_outside_the_uncarried_list() {
        let before = lines("interactive\nzle\nnohashdirs\nautocd");
        let after = lines("interactive\nzle\nnounset\nerrexit\nextended_glob\nnotify\nautocd");
        assert_eq!(
            changed_options(ShellKind::Zsh, &before, &after),
            [
                "setopt extendedglob",
                "setopt notify",
                "unsetopt nohashdirs"
            ]
        );
    }

    #[test]
    fn dump_parsing_keeps_bodies_apart_and_needs_the_end_marker() {
        let raw = b"M options-before\nset +o errexit\nM status 0\nM function f\nf () \n{ \n    echo 'M function g'\n}\nM alias ll\nalias ll='ls -l'\nM path\nexport PATH=/a:/b\n";
        let dump = Dump::parse(raw, b"M");
        assert!(!dump.complete);
        assert_eq!(dump.status, Some(0));
        assert_eq!(dump.functions.len(), 1);
        assert_eq!(dump.functions[0].0, "f");
        assert_eq!(
            dump.functions[0].1,
            b"f () \n{ \n    echo 'M function g'\n}\n".to_vec()
        );
        assert_eq!(dump.aliases[0].1, b"alias ll='ls -l'\n".to_vec());
        assert_eq!(dump.path, b"export PATH=/a:/b\n".to_vec());
        let complete = [raw.as_slice(), b"M end\n"].concat();
        assert!(Dump::parse(&complete, b"M").complete);
    }

    #[test]
    fn render_orders_options_functions_aliases_then_path() {
        let raw = b"M options-before\nshopt -u extglob\nM options-after\nshopt -s extglob\nM status 0\nM function ls\nls () { :; }\nM function f\nf () { :; }\nM alias ll\nalias ll='ls -l'\nM alias rm\nalias rm='rm -i'\nM path\nexport PATH=/x\nM end\n";
        let text = render(
            ShellKind::Bash,
            &Dump::parse(raw, b"M"),
            Path::new("/h/.bashrc"),
        );
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "# agentsh rc snapshot of /h/.bashrc (bash); generated, do not edit\n\
             shopt -s extglob\nf () { :; }\nalias ll='ls -l'\nshopt -s expand_aliases\nexport PATH=/x\n"
        );
    }

    #[test]
    fn names_filter() {
        assert!(carries_name(ShellKind::Bash, "greet", true));
        assert!(!carries_name(ShellKind::Bash, "ls", true));
        assert!(!carries_name(ShellKind::Bash, "_private", true));
        assert!(!carries_name(
            ShellKind::Bash,
            "command_not_found_handle",
            true
        ));
        assert!(!carries_name(ShellKind::Zsh, "TRAPINT", true));
        assert!(carries_name(ShellKind::Bash, "TRAPINT", true));
        assert!(!carries_name(ShellKind::Bash, "rm", false));
        assert!(carries_name(ShellKind::Bash, "precmd", false));
    }
}
