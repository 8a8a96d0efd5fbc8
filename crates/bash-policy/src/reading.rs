//! A simple command read the way its program reads it (for a program in `table.rs`): its global
//! options set aside, its operands in order (the subcommand first, by its name), its options by
//! meaning. A `prefix` rule for such a program is read the same way, and the two are compared:
//! the rule's operands as the first operands, its options anywhere, its global options among the
//! segment's.

use crate::glob::{Compared, WordPattern};
use crate::table::Program;

/// An option as read: what it means, how it was written, its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Opt {
    /// Its first spelling in the table (`-r` for `--recursive`), or as written.
    pub name: String,
    /// The word it was written in (`-rf` for both `-r` and `-f`).
    pub written: String,
    /// Its value, and whether that is literal.
    pub value: Option<(String, bool)>,
}

/// A command's words as its program reads them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Reading {
    /// The global options set aside, as written (with their values).
    pub set_aside: Vec<String>,
    /// The global options by name, with their values.
    pub globals: Vec<Opt>,
    /// The operands in order, each with whether it is literal (a subcommand by its name).
    pub operands: Vec<(String, bool)>,
    /// The other options.
    pub options: Vec<Opt>,
    /// A global option makes what runs unknown (`git -c alias.x=…`).
    pub unknown: bool,
}

/// Reads `words` (after the program's name; each with whether it is literal) as `program`
/// does.
pub(crate) fn read<'w>(
    program: &Program,
    words: impl IntoIterator<Item = (&'w str, bool)>,
) -> Reading {
    let words: Vec<(&str, bool)> = words.into_iter().collect();
    let mut out = Reading::default();
    let mut global = program.subcommands || !program.runs.is_empty();
    let mut operands_only = false;
    let mut subcommand = String::new();
    let mut i = 0;
    while let Some(&(word, literal)) = words.get(i) {
        i += 1;
        if operands_only || !word.starts_with('-') || word == "-" {
            if global && program.plus_prefix && literal && word.starts_with('+') {
                out.set_aside.push(word.to_owned());
                out.globals.push(Opt {
                    name: word.to_owned(),
                    written: word.to_owned(),
                    value: None,
                });
                continue;
            }
            let value = if out.operands.is_empty() && program.subcommands && literal {
                program.subcommand(word).to_owned()
            } else {
                word.to_owned()
            };
            if out.operands.is_empty() {
                subcommand.clone_from(&value);
            }
            out.operands.push((value, literal));
            global = false;
            continue;
        }
        if word == "--" {
            operands_only = true;
            global = false;
            continue;
        }
        if global && program.runs.contains(&word) {
            // `python -m pytest`: what runs, kept as the first operands.
            out.operands.push((word.to_owned(), literal));
            if let Some(&(module, literal)) = words.get(i) {
                out.operands.push((module.to_owned(), literal));
                i += 1;
            }
            word.clone_into(&mut subcommand);
            global = false;
            continue;
        }
        let start = i;
        let globals_before = out.globals.len();
        let mut read_one = |name: &str, attached: Option<&str>, i: &mut usize| {
            let is_global =
                global || (program.globals_anywhere && program.global_values.contains(&name));
            let value = match attached {
                Some(value) => Some((value.to_owned(), literal)),
                None if program.takes_value(&subcommand, name, global) => {
                    words.get(*i).map(|&(v, l)| {
                        *i += 1;
                        (v.to_owned(), l)
                    })
                }
                None if program.numeric_values.contains(&name) => match words.get(*i) {
                    Some(&(v, true)) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => {
                        *i += 1;
                        Some((v.to_owned(), true))
                    }
                    _ => None,
                },
                None => None,
            };
            let opt = Opt {
                name: program.meaning(&subcommand, name).to_owned(),
                written: word.to_owned(),
                value,
            };
            if is_global {
                let value = opt.value.as_ref().map_or("", |(v, _)| v.as_str());
                out.unknown |= program.unknown_globals.iter().any(|(option, prefix)| {
                    *option == name
                        && (opt.value.is_some() || prefix.is_empty())
                        && value.to_ascii_lowercase().starts_with(prefix)
                });
                out.globals.push(opt);
            } else {
                out.options.push(opt);
            }
        };
        if let Some(long) = word.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((name, value)) => (&word[..name.len() + 2], Some(value)),
                None => (word, None),
            };
            read_one(name, attached, &mut i);
        } else if !program.clusters || word.len() == 2 {
            read_one(word, None, &mut i);
        } else {
            // A cluster: `-rf` is `-r -f`; an option that takes a value takes the rest.
            for (at, letter) in word[1..].char_indices() {
                let name = format!("-{letter}");
                let rest = &word[1 + at + letter.len_utf8()..];
                let with_value = program.takes_value(&subcommand, &name, global)
                    || (program.numeric_values.contains(&name.as_str())
                        && !rest.is_empty()
                        && rest.bytes().all(|b| b.is_ascii_digit()));
                if with_value && !rest.is_empty() {
                    read_one(&name, Some(rest), &mut i);
                    break;
                }
                read_one(&name, None, &mut i);
                if with_value {
                    break;
                }
            }
        }
        if out.globals.len() > globals_before {
            out.set_aside
                .extend(words[start - 1..i].iter().map(|(w, _)| (*w).to_owned()));
        }
    }
    out
}

/// A `prefix` rule's words after the program's name, read as the program reads them.
#[derive(Debug, Clone)]
pub(crate) struct RuleReading {
    globals: Vec<RuleOpt>,
    operands: Vec<WordPattern>,
    options: Vec<RuleOpt>,
}

#[derive(Debug, Clone)]
struct RuleOpt {
    /// The option by meaning, or a glob over the words options are written in (`--force*`).
    name: WordPattern,
    glob: bool,
    value: Option<WordPattern>,
}

impl RuleOpt {
    fn new(opt: &Opt) -> Self {
        let glob = has_glob(&opt.written);
        let name = if glob { &opt.written } else { &opt.name };
        Self {
            name: WordPattern::new(name),
            glob,
            value: opt.value.as_ref().map(|(v, _)| WordPattern::new(v)),
        }
    }

    fn matches(&self, opt: &Opt) -> bool {
        let name = if self.glob {
            self.name.matches(&opt.written) || self.name.matches(&opt.name)
        } else {
            self.name.matches(&opt.name)
        };
        name && self.value.as_ref().is_none_or(|want| {
            opt.value
                .as_ref()
                .is_some_and(|(value, literal)| *literal && want.matches(value))
        })
    }
}

fn has_glob(word: &str) -> bool {
    word.contains(['*', '?', '['])
}

impl RuleReading {
    /// Reads a rule's words after the program's name.
    pub(crate) fn new(program: &Program, words: &[String]) -> Self {
        let reading = read(program, words.iter().map(|w| (w.as_str(), true)));
        Self {
            globals: reading.globals.iter().map(RuleOpt::new).collect(),
            operands: reading
                .operands
                .iter()
                .map(|(w, _)| WordPattern::new(w))
                .collect(),
            options: reading.options.iter().map(RuleOpt::new).collect(),
        }
    }

    /// Compares the rule with a segment's reading. `open`: more operands come from input
    /// (`… | xargs git`).
    pub(crate) fn compare(&self, segment: &Reading, open: bool) -> Compared {
        let mut unknown = false;
        for global in &self.globals {
            if !segment.globals.iter().any(|g| global.matches(g)) {
                return Compared::No;
            }
        }
        for (i, pattern) in self.operands.iter().enumerate() {
            match segment.operands.get(i) {
                None if open => unknown = true,
                None => return Compared::No,
                Some((word, true)) => {
                    if !pattern.matches(word) {
                        return Compared::No;
                    }
                }
                Some((word, false)) => match pattern.compare_unknown(word) {
                    Compared::No => return Compared::No,
                    Compared::Unknown => unknown = true,
                    Compared::Yes => {}
                },
            }
        }
        // Options are judged as written: an option that could come from input is not looked
        // for (as an option with a variable value is not).
        for option in &self.options {
            if !segment.options.iter().any(|o| option.matches(o)) {
                return Compared::No;
            }
        }
        if unknown {
            Compared::Unknown
        } else {
            Compared::Yes
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::program;

    fn reading(line: &str) -> Reading {
        let mut words = line.split(' ');
        let name = words.next().unwrap();
        read(program(name).unwrap(), words.map(|w| (w, !w.contains('$'))))
    }

    fn options(reading: &Reading) -> Vec<&str> {
        reading.options.iter().map(|o| o.name.as_str()).collect()
    }

    fn operands(reading: &Reading) -> Vec<&str> {
        reading.operands.iter().map(|(o, _)| o.as_str()).collect()
    }

    #[test]
    fn clusters_split_and_spellings_mean_one_option() {
        for line in [
            "rm -rf x",
            "rm -fr x",
            "rm -r -f x",
            "rm --recursive --force x",
            "rm -Rf x",
        ] {
            let read = reading(line);
            let mut got = options(&read);
            got.sort_unstable();
            assert_eq!(got, ["-f", "-r"], "{line}");
            assert_eq!(operands(&reading(line)), ["x"], "{line}");
        }
    }

    #[test]
    fn global_options_are_set_aside_with_their_values() {
        let got = reading("git -C . -c k=v --git-dir=.git --no-pager -P push -f origin");
        assert_eq!(
            got.set_aside,
            ["-C", ".", "-c", "k=v", "--git-dir=.git", "--no-pager", "-P"]
        );
        assert_eq!(operands(&got), ["push", "origin"]);
        assert_eq!(options(&got), ["-f"]);
        assert!(!got.unknown);
        assert!(reading("git -c alias.p=push p").unknown);
        assert!(reading("git -c Alias.p=!sh p").unknown);
        assert!(reading("git --exec-path=/tmp status").unknown);
    }

    #[test]
    fn values_are_not_operands() {
        assert_eq!(
            operands(&reading("git push -o ci.skip origin")),
            ["push", "origin"]
        );
        assert_eq!(operands(&reading("make -j 4 deploy")), ["deploy"]);
        assert_eq!(operands(&reading("make -j4 -C web deploy")), ["deploy"]);
        assert_eq!(
            operands(&reading("kubectl get pods -n prod")),
            ["get", "pods"]
        );
        assert_eq!(
            operands(&reading("python3 -u -X dev -m pytest -x")),
            ["-m", "pytest"]
        );
    }
}
