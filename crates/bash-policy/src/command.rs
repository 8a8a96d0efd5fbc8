//! One simple command, by its words: whether its name can be known before it runs, and what it
//! runs in turn — a wrapper's command (`sudo`, `env`, `xargs`, …), `find -exec`'s commands, a
//! shell's `-c` string, `eval`'s string, an alias's body.

use crate::arg::{Arg, dangerous_assignment};
use crate::segment::{MAX_DEPTH, RawSegment, Segmenter, Sink};

/// What a command runs besides itself.
pub(crate) enum Inner {
    /// Nothing (as far as the policy follows).
    None,
    /// Its own command cannot be known: it reads a script, or runs a string that is not literal.
    Unknown,
    /// The words from `at` on are a command (a wrapper's); `environment`: the wrapper changes
    /// `PATH` or the like for it; `input`: more of its words come from input (`xargs`).
    Command {
        at: usize,
        environment: bool,
        input: bool,
    },
    /// A program given as text (`bash -c`, `eval`, `env -S`).
    Program(String),
    /// Alias definitions: names and bodies.
    Aliases(Vec<(String, String)>),
    /// `find`'s `-exec` commands: word ranges.
    Execs(Vec<(usize, usize)>),
}

impl<S: Sink> Segmenter<'_, S> {
    /// Judges the simple command `args` (written at `span` of `src`, its assignments and
    /// redirections included) and what it runs. `environment`: it runs with a changed `PATH` or
    /// the like; `input`: more of its words come from input when it runs (`xargs`).
    pub(crate) fn command(
        &mut self,
        src: &str,
        span: (usize, usize),
        args: &[Arg],
        environment: bool,
        input: bool,
    ) {
        let Some(name) = args.first() else {
            return;
        };
        let (start, end) = span;
        let text = &src[start..end];
        if self.depth >= MAX_DEPTH {
            self.emit(RawSegment::unparsed(text));
            return;
        }
        let known = name.literal && !name.glob && !name.quoting;
        let mut unknown = environment || !known;
        let (dir, base) = match name.value.rsplit_once('/') {
            Some((dir, base)) => (Some(dir), base),
            None => (None, name.value.as_str()),
        };
        // A wrapper is taken for one by its name only when the shell finds it on PATH or it is
        // in a system directory; `./sudo x` is judged as itself, and `x` too.
        let by_name = dir.is_none_or(|dir| {
            matches!(
                dir,
                "/bin" | "/sbin" | "/usr/bin" | "/usr/sbin" | "/usr/local/bin"
            )
        });
        if known && dir.is_none() && self.sink.is_tainted(base) {
            unknown = true;
        }
        // A file this line wrote or made executable: what it runs is only known when it runs.
        if known && dir.is_some() && self.wrote(&name.value) {
            unknown = true;
        }
        let inner = if known {
            match inner(base, dir.is_none(), args) {
                // A virtualenv's activation script, unless this line wrote it.
                Inner::Unknown
                    if matches!(base, "source" | ".")
                        && args.len() == 2
                        && args[1].literal
                        && !args[1].glob
                        && is_activate(&args[1].value)
                        && !self.wrote(&args[1].value) =>
                {
                    Inner::None
                }
                inner => inner,
            }
        } else {
            Inner::None
        };
        if known {
            self.note_writes(base, args);
        }
        let wrapper = by_name
            && matches!(
                inner,
                Inner::Command { .. } | Inner::Program(_) | Inner::Aliases(_)
            );
        unknown |= matches!(inner, Inner::Unknown);
        self.emit(RawSegment::command(text, args, unknown, wrapper, input));

        self.depth += 1;
        let changed = usize::from(environment);
        self.environment_changed += changed;
        match inner {
            Inner::None | Inner::Unknown => {}
            Inner::Command {
                at,
                environment: changes,
                input,
            } => {
                let span = (args[at].start, end);
                let environment = environment || changes;
                if input {
                    // `xargs -I{} rm {}`: the input replaces `{}`.
                    let mut args = args[at..].to_vec();
                    for arg in args.iter_mut().filter(|a| a.value.contains("{}")) {
                        arg.literal = false;
                    }
                    self.command(src, span, &args, environment, input);
                } else {
                    self.command(src, span, &args[at..], environment, input);
                }
            }
            Inner::Program(program) => self.program(&program),
            Inner::Aliases(aliases) => {
                for (alias, body) in aliases {
                    let since = self.sink.mark();
                    self.program(&body);
                    self.sink.define(&alias, since);
                }
            }
            Inner::Execs(ranges) => {
                for (from, to) in ranges {
                    let span = (args[from].start, args[to - 1].end);
                    self.command(src, span, &args[from..to], environment, false);
                }
            }
        }
        self.environment_changed -= changed;
        self.depth -= 1;
    }
}

/// What the command named `base` runs; `plain`: it was named without a directory (so it may be
/// a builtin).
fn inner(base: &str, plain: bool, args: &[Arg]) -> Inner {
    let rest = &args[1..];
    match base {
        "source" | "." | "trap" if plain => Inner::Unknown,
        "hash" if plain && short_option(rest, 'p') => Inner::Unknown,
        "enable" if plain && short_option(rest, 'f') => Inner::Unknown,
        "export" | "declare" | "typeset" | "local" | "readonly"
            if plain && rest.iter().any(|a| dangerous_assignment(&a.value)) =>
        {
            Inner::Unknown
        }
        "eval" if plain => {
            if rest.is_empty() {
                Inner::None
            } else if rest.iter().all(|a| a.literal) {
                Inner::Program(join(rest))
            } else {
                Inner::Unknown
            }
        }
        "alias" if plain => {
            let mut aliases = Vec::new();
            for arg in rest {
                let Some((alias, body)) = arg.value.split_once('=') else {
                    continue;
                };
                if alias.starts_with('-') {
                    continue;
                }
                if !arg.literal {
                    return Inner::Unknown;
                }
                aliases.push((alias.to_owned(), body.to_owned()));
            }
            if aliases.is_empty() {
                Inner::None
            } else {
                Inner::Aliases(aliases)
            }
        }
        "bash" | "sh" | "zsh" | "dash" => shell(args),
        "find" => find(args),
        "su" | "script" => command_string(base, args),
        "flock" => flock(args),
        _ => match wrapper(base) {
            Some(spec) => unwrap(base, &spec, args),
            None => Inner::None,
        },
    }
}

/// The words' values joined by spaces, as `eval` joins its arguments.
fn join(args: &[Arg]) -> String {
    let mut out = String::new();
    for (i, arg) in args.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(&arg.value);
    }
    out
}

/// Whether an option word before the first operand holds the short option `option` (`-p`,
/// `-dp`).
fn short_option(args: &[Arg], option: char) -> bool {
    for arg in args {
        let value = arg.value.as_str();
        if value == "--" || !value.starts_with('-') || value.len() < 2 {
            return false;
        }
        if !value.starts_with("--") && value[1..].contains(option) {
            return true;
        }
    }
    false
}

/// `bash`, `sh`, `zsh`, `dash`: runs its `-c` string, or reads a script (from a file, or stdin).
fn shell(args: &[Arg]) -> Inner {
    let mut i = 1;
    let (mut command, mut stdin, mut informative) = (false, false, false);
    while let Some(arg) = args.get(i) {
        let value = arg.value.as_str();
        if !arg.literal {
            break;
        }
        if value == "--" || value == "-" {
            i += 1;
            break;
        }
        if let Some(long) = value.strip_prefix("--") {
            match long {
                "rcfile" | "init-file" => i += 1,
                "version" | "help" => informative = true,
                _ => {}
            }
            i += 1;
            continue;
        }
        if value.len() > 1 && (value.starts_with('-') || value.starts_with('+')) {
            for option in value[1..].chars() {
                match option {
                    'c' => command = true,
                    's' => stdin = true,
                    // `-o pipefail`, `-O extglob`: the next word is the option's name.
                    'o' | 'O' => i += 1,
                    _ => {}
                }
            }
            i += 1;
            continue;
        }
        break;
    }
    if command {
        return match args.get(i) {
            Some(string) if string.literal => Inner::Program(string.value.clone()),
            Some(_) => Inner::Unknown,
            // `bash -c` without a string only complains.
            None => Inner::None,
        };
    }
    if informative && !stdin && i >= args.len() {
        return Inner::None;
    }
    // A script file, or a script read from stdin (a pipe, a here-document, the terminal).
    Inner::Unknown
}

/// `find … -exec cmd … ;` (and `-execdir`, `-ok`, `-okdir`, with `;` or `{} +`).
fn find(args: &[Arg]) -> Inner {
    let mut ranges = Vec::new();
    let mut i = 1;
    while let Some(arg) = args.get(i) {
        i += 1;
        if !matches!(arg.value.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            continue;
        }
        let from = i;
        while let Some(arg) = args.get(i) {
            let ends =
                arg.value == ";" || (arg.value == "+" && i > from && args[i - 1].value == "{}");
            if ends {
                break;
            }
            i += 1;
        }
        if i > from {
            ranges.push((from, i));
        }
        i += 1;
    }
    if ranges.is_empty() {
        Inner::None
    } else {
        Inner::Execs(ranges)
    }
}

/// How a wrapper's options are read.
struct Spec {
    /// Short options that take an argument (attached or the next word).
    with_argument: &'static str,
    /// Short options whose argument can only be attached (`xargs -i{}`).
    attached_argument: &'static str,
    /// Long options that take the next word when written without `=`.
    long_with_argument: &'static [&'static str],
    /// `NAME=value` words may come before the command.
    assignments: bool,
}

const fn spec(with_argument: &'static str, long_with_argument: &'static [&'static str]) -> Spec {
    Spec {
        with_argument,
        attached_argument: "",
        long_with_argument,
        assignments: false,
    }
}

fn wrapper(name: &str) -> Option<Spec> {
    Some(match name {
        "command" | "builtin" | "nohup" | "setsid" | "busybox" | "unbuffer" => spec("", &[]),
        "exec" => spec("a", &[]),
        "env" => Spec {
            assignments: true,
            ..spec("uCSP", &["unset", "chdir", "split-string"])
        },
        "nice" => spec("n", &["adjustment"]),
        "time" => spec("fo", &["format", "output"]),
        "timeout" => spec("sk", &["signal", "kill-after"]),
        "stdbuf" => spec("ioe", &["input", "output", "error"]),
        "ionice" => spec("cn", &["class", "classdata"]),
        "sudo" => Spec {
            assignments: true,
            ..spec(
                "aCcDghpRrtTUu",
                &[
                    "auth-type",
                    "close-from",
                    "chdir",
                    "group",
                    "host",
                    "login-class",
                    "prompt",
                    "chroot",
                    "role",
                    "type",
                    "command-timeout",
                    "other-user",
                    "user",
                ],
            )
        },
        "doas" => spec("aCu", &[]),
        "chroot" => spec("", &["userspec", "groups"]),
        "watch" => spec("nq", &["interval", "equexit"]),
        "xargs" => Spec {
            attached_argument: "eil",
            ..spec(
                "adEILnPs",
                &[
                    "arg-file",
                    "delimiter",
                    "max-args",
                    "max-procs",
                    "max-chars",
                    "process-slot-var",
                ],
            )
        },
        _ => return None,
    })
}

/// The options a wrapper was given, read up to its command.
#[derive(Default)]
struct Options {
    /// The index of the first word after the options.
    next: usize,
    short: Vec<char>,
    long: Vec<String>,
    /// A `NAME=value` changes `PATH` or the like.
    environment: bool,
    /// `env -S`'s string, and whether it is literal.
    split: Option<(String, bool)>,
}

fn options(args: &[Arg], spec: &Spec) -> Options {
    let mut out = Options::default();
    let mut i = 1;
    while let Some(arg) = args.get(i) {
        let value = arg.value.as_str();
        // `NAME=…` (its value may be anything): an assignment for the command.
        if spec.assignments && is_assignment(value) {
            out.environment |= dangerous_assignment(value);
            i += 1;
            continue;
        }
        // Any other word that is not literal could be anything: it is taken for the command.
        if !arg.literal {
            break;
        }
        if value == "--" {
            i += 1;
            break;
        }
        if let Some(long) = value.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((name, value)) => (name, Some((value.to_owned(), arg.literal))),
                None => (long, None),
            };
            let argument = if attached.is_none() && spec.long_with_argument.contains(&name) {
                i += 1;
                args.get(i).map(|a| (a.value.clone(), a.literal))
            } else {
                attached
            };
            if name == "split-string" {
                out.split = argument;
            }
            out.long.push(name.to_owned());
            i += 1;
            continue;
        }
        if value.len() > 1 && value.starts_with('-') {
            for (at, option) in value[1..].char_indices() {
                out.short.push(option);
                let rest = &value[1 + at + option.len_utf8()..];
                if spec.with_argument.contains(option) {
                    let argument = if rest.is_empty() {
                        i += 1;
                        args.get(i).map(|a| (a.value.clone(), a.literal))
                    } else {
                        Some((rest.to_owned(), true))
                    };
                    if option == 'S' {
                        out.split = argument;
                    }
                    break;
                }
                if spec.attached_argument.contains(option) {
                    break;
                }
            }
            i += 1;
            continue;
        }
        if value == "-" && spec.assignments {
            // `env -` is `env -i`.
            i += 1;
            continue;
        }
        break;
    }
    out.next = i;
    out
}

/// `NAME=…` (or `NAME+=…`, `NAME[i]=…`).
fn is_assignment(word: &str) -> bool {
    let name_len = word
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    name_len > 0
        && !word.as_bytes()[0].is_ascii_digit()
        && matches!(word.as_bytes().get(name_len), Some(b'=' | b'+' | b'['))
        && word.contains('=')
}

/// What the wrapper `base` runs, given its words `args` (`args[0]` is the wrapper); `None` when
/// `base` is no wrapper.
pub(crate) fn wrapper_inner(base: &str, args: &[Arg]) -> Option<Inner> {
    wrapper(base).map(|spec| unwrap(base, &spec, args))
}

fn unwrap(name: &str, spec: &Spec, args: &[Arg]) -> Inner {
    let mut options = options(args, spec);
    let short = |c: char| options.short.contains(&c);
    let long = |l: &str| options.long.iter().any(|x| x == l);
    let runs_nothing = match name {
        // `command -v x` only says what `x` is.
        "command" => short('v') || short('V'),
        // With `-p`, `-P` or `-u` the words are process, group or user ids.
        "ionice" => short('p') || short('P') || short('u') || long("pid") || long("pgid"),
        "sudo" => {
            ['e', 'l', 'v', 'K', 'V'].into_iter().any(short)
                || [
                    "edit",
                    "list",
                    "validate",
                    "remove-timestamp",
                    "version",
                    "help",
                ]
                .into_iter()
                .any(long)
        }
        "doas" => short('C'),
        _ => false,
    };
    if runs_nothing {
        return Inner::None;
    }
    if let Some((string, literal)) = options.split.take() {
        if !literal || !args[options.next..].iter().all(|a| a.literal) {
            return Inner::Unknown;
        }
        let mut program = string;
        for arg in &args[options.next..] {
            program.push(' ');
            program.push_str(&arg.value);
        }
        return Inner::Program(program);
    }
    match name {
        // The new root; without a command, an interactive shell.
        "chroot" if options.next + 1 >= args.len() => return Inner::Unknown,
        // The duration; the new root.
        "timeout" | "chroot" => options.next += 1,
        // `watch` runs its words as a `sh -c` string, but with `-x`.
        "watch" if !(short('x') || long("exec")) && options.next < args.len() => {
            let rest = &args[options.next..];
            return if rest.iter().all(|a| a.literal) {
                Inner::Program(join(rest))
            } else {
                Inner::Unknown
            };
        }
        _ => {}
    }
    if options.next >= args.len() {
        let shell = match name {
            "sudo" => short('s') || short('i') || long("shell") || long("login"),
            "doas" => short('s'),
            _ => false,
        };
        // `sudo -s` without a command: a shell reading its script from stdin.
        return if shell { Inner::Unknown } else { Inner::None };
    }
    Inner::Command {
        at: options.next,
        environment: options.environment,
        input: name == "xargs",
    }
}

/// Whether `path` is a virtualenv's activation script (`venv/bin/activate`).
fn is_activate(path: &str) -> bool {
    path == "bin/activate" || path.ends_with("/bin/activate")
}

/// `su` and `script`: the string of `-c`/`--command` (options may come after the user or the
/// typescript file); without one, a shell reading its script from the terminal.
fn command_string(name: &str, args: &[Arg]) -> Inner {
    let with_value: &str = if name == "su" { "sgGw" } else { "TIOBEmo" };
    let mut i = 1;
    let mut informative = false;
    while let Some(arg) = args.get(i) {
        i += 1;
        let value = arg.value.as_str();
        if value == "--" {
            break;
        }
        let string = if let Some(long) = value.strip_prefix("--") {
            match long.split_once('=') {
                Some(("command", string)) => Some(Some((string.to_owned(), arg.literal))),
                _ if long == "command" => Some(args.get(i).map(|a| (a.value.clone(), a.literal))),
                _ => {
                    informative |= matches!(long, "help" | "version");
                    None
                }
            }
        } else if value.len() > 1 && value.starts_with('-') {
            let mut found = None;
            for (at, option) in value[1..].char_indices() {
                let rest = &value[1 + at + option.len_utf8()..];
                if option == 'c' {
                    found = Some(if rest.is_empty() {
                        args.get(i).map(|a| (a.value.clone(), a.literal))
                    } else {
                        Some((rest.to_owned(), arg.literal))
                    });
                    break;
                }
                informative |= matches!(option, 'h' | 'V');
                if with_value.contains(option) {
                    if rest.is_empty() {
                        i += 1;
                    }
                    break;
                }
            }
            found
        } else {
            None
        };
        match string {
            Some(Some((string, true))) => return Inner::Program(string),
            Some(_) => return Inner::Unknown,
            None => {}
        }
    }
    if informative {
        Inner::None
    } else {
        Inner::Unknown
    }
}

/// `flock [options] FILE cmd…` or `flock [options] FILE -c STR`; `flock [options] FD` runs
/// nothing.
fn flock(args: &[Arg]) -> Inner {
    let spec = spec("wE", &["timeout", "wait", "conflict-exit-code"]);
    let options = options(args, &spec);
    let at = options.next + 1;
    match args.get(at) {
        None => Inner::None,
        Some(arg) if matches!(arg.value.as_str(), "-c" | "--command") => match args.get(at + 1) {
            Some(string) if string.literal => Inner::Program(string.value.clone()),
            Some(_) => Inner::Unknown,
            None => Inner::None,
        },
        Some(_) => Inner::Command {
            at,
            environment: false,
            input: false,
        },
    }
}
