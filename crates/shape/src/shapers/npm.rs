//! npm, pnpm and yarn: `install` (`i`, `ci`, `add`, `update`; a bare `yarn`) and the scripts
//! (`test`, `run <script>`, `start`; yarn's and pnpm's `<script>`).
//!
//! Installs: progress (`Progress: resolved …`, `[1/4] Resolving packages...`, bars), the
//! store's notes, funding hints, `npm notice` and the dependency tree are left out; warnings
//! and errors, `added 114 packages in 3s`, the audit's findings, pnpm's `Packages: +114` and
//! `Done in 8.4s`, yarn's `success …` are kept (the summary lines).
//!
//! Scripts: the header that says what runs (`> pkg@1.0.0 test` and `> jest`; pnpm's and yarn's
//! `$ jest`) is kept, and the script's own output is shaped by the shaper of the program the
//! header names when agentsh has one (`jest`, `node --test`, `vitest run`, `pytest`, …), else
//! kept; the closing lines of the package manager (`error Command failed with exit code 1.`,
//! ` ELIFECYCLE  Test failed.`) are kept.

use crate::engine::{Label, Shaper, Verdict};
use crate::select::{Target, select};
use crate::shapers::blank;

const PROGRESS: Label<'static> = Label::Lines("install progress");
const TREE: Label<'static> = Label::Lines("dependency tree");

pub(crate) fn shaper(target: &Target) -> Option<Box<dyn Shaper>> {
    let sub = target.subcommand.as_deref();
    let install = matches!(
        sub,
        Some(
            "install"
                | "i"
                | "ci"
                | "clean-install"
                | "add"
                | "update"
                | "up"
                | "upgrade"
                | "remove"
                | "rm"
                | "uninstall"
        )
    ) || (sub.is_none() && target.program == "yarn");
    if install {
        return Some(Box::new(Install::default()));
    }
    let script = match sub? {
        "test" | "t" | "tst" | "run" | "run-script" | "rum" | "urn" | "start" | "exec" => true,
        // yarn and pnpm run a script named as the subcommand (`yarn build`, `pnpm lint`).
        _ => target.program != "npm",
    };
    script.then(|| Box::new(Script::default()) as Box<dyn Shaper>)
}

/// The output of an install.
#[derive(Default)]
struct Install {
    /// Under pnpm's `Packages are hard linked …` note: its indented lines go with it.
    store_note: bool,
}

impl Shaper for Install {
    fn line(&mut self, line: &str) -> Verdict<'_> {
        let trimmed = line.trim();
        if std::mem::take(&mut self.store_note) && line.starts_with("  ") {
            self.store_note = true;
            return Verdict::Drop(Label::Quiet);
        }
        if blank(line) {
            return Verdict::Drop(Label::Quiet);
        }
        // npm.
        if line.starts_with("npm notice") {
            return Verdict::Drop(Label::Quiet);
        }
        if line.ends_with(" packages are looking for funding")
            || line.ends_with(" package is looking for funding")
            || trimmed == "run `npm fund` for details"
        {
            return Verdict::Drop(Label::Quiet);
        }
        // pnpm.
        if line.starts_with("Progress: resolved ") || is_bar(trimmed) {
            return Verdict::Drop(PROGRESS);
        }
        if line.starts_with("Packages are hard linked ")
            || line.starts_with("Packages are copied ")
            || line.starts_with("Packages are cloned ")
        {
            self.store_note = true;
            return Verdict::Drop(Label::Quiet);
        }
        if line.starts_with("· ") && line.contains("newer version") {
            return Verdict::Drop(Label::Quiet);
        }
        // yarn.
        if line.starts_with("yarn install v") || line.starts_with("yarn add v") {
            return Verdict::Drop(Label::Quiet);
        }
        if is_yarn_step(line) {
            return Verdict::Drop(PROGRESS);
        }
        if trimmed.starts_with("├─ ") || trimmed.starts_with("└─ ") || trimmed.starts_with("│ ")
        {
            return Verdict::Drop(TREE);
        }
        if line.starts_with("info Direct dependencies") || line.starts_with("info All dependencies")
        {
            return Verdict::Drop(TREE);
        }
        Verdict::Keep
    }
}

/// yarn's `[1/4] Resolving packages...`.
fn is_yarn_step(line: &str) -> bool {
    line.strip_prefix('[')
        .and_then(|rest| rest.split_once("] "))
        .is_some_and(|(step, _)| {
            step.split_once('/').is_some_and(|(a, b)| {
                !a.is_empty()
                    && !b.is_empty()
                    && a.bytes().all(|c| c.is_ascii_digit())
                    && b.bytes().all(|c| c.is_ascii_digit())
            })
        })
}

/// A progress bar: one character repeated (`++++++`, `↓↓↓↓`, `------`).
fn is_bar(trimmed: &str) -> bool {
    let mut chars = trimmed.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    trimmed.chars().count() >= 8
        && matches!(first, '+' | '-' | '↓' | '#')
        && chars.all(|c| c == first)
}

/// The output of a script: headers kept, the script's program's shaper for what follows.
#[derive(Default)]
struct Script {
    /// The shaper of the program the last header named, when agentsh has one.
    inner: Option<Box<dyn Shaper>>,
    /// The line before was npm's `> pkg@1.0.0 test`: this one is the script's command.
    command_next: bool,
    /// Lines seen.
    lines: u64,
    /// The line before was yarn's `yarn run v1.22.22`.
    after_yarn: bool,
}

/// npm's and pnpm's first header line: `> pkg@1.0.0 test` (pnpm adds the directory).
fn is_npm_header(line: &str) -> bool {
    line.strip_prefix("> ")
        .and_then(|rest| rest.split_once(' '))
        .is_some_and(|(package, _)| {
            let ats = package.matches('@').count();
            (ats == 1 && !package.starts_with('@')) || ats >= 2
        })
}

impl Script {
    /// Makes the shaper for the script `command` runs (`None`: its output is kept).
    fn switch_to(&mut self, command: &str) {
        self.inner = select(command).and_then(|target| super::builtin(&target));
    }
}

impl Shaper for Script {
    fn line(&mut self, line: &str) -> Verdict<'_> {
        self.lines += 1;
        let first = self.lines == 1;
        let after_yarn = std::mem::take(&mut self.after_yarn);
        if std::mem::take(&mut self.command_next)
            && let Some(command) = line.strip_prefix("> ")
        {
            self.switch_to(command);
            return Verdict::Keep;
        }
        if is_npm_header(line) {
            self.command_next = true;
            return Verdict::Keep;
        }
        if let Some(command) = line.strip_prefix("$ ")
            && (first || after_yarn || self.inner.is_none())
        {
            self.switch_to(command);
            return Verdict::Keep;
        }
        if line.starts_with("yarn run v") {
            self.after_yarn = true;
            return Verdict::Drop(Label::Quiet);
        }
        if line.starts_with("info Visit https://yarnpkg.com/") || line.starts_with("npm notice") {
            return Verdict::Drop(Label::Quiet);
        }
        match &mut self.inner {
            Some(inner) => inner.line(line),
            None if blank(line) => Verdict::Drop(Label::Quiet),
            None => Verdict::Keep,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_name_the_program_whose_shaper_follows() {
        let mut script = Script::default();
        assert_eq!(script.line(""), Verdict::Drop(Label::Quiet));
        assert_eq!(script.line("> calc@1.0.0 test"), Verdict::Keep);
        assert_eq!(script.line("> jest --ci"), Verdict::Keep);
        assert!(script.inner.is_some());
        assert_eq!(
            script.line("PASS ./a.test.js"),
            Verdict::Drop(Label::Lines("passing test files"))
        );
        // pytest's `>` lines are code, not a header.
        assert!(!is_npm_header(">       assert add(1, 2) == 4"));
        assert!(is_npm_header("> @scope/calc@1.0.0 test /tmp/work"));
        assert!(is_npm_header("> calc@1.0.0 test:node"));
    }

    #[test]
    fn an_unknown_script_keeps_its_output() {
        let mut script = Script::default();
        script.line("$ ./build.sh");
        assert!(script.inner.is_none());
        assert_eq!(script.line("PASS ./a.test.js"), Verdict::Keep);
    }

    #[test]
    fn install_progress_is_told_apart() {
        assert!(is_yarn_step("[1/4] Resolving packages..."));
        assert!(!is_yarn_step("[error] x"));
        assert!(is_bar("++++++++++++"));
        assert!(is_bar("↓↓↓↓↓↓↓↓↓↓↓↓"));
        assert!(!is_bar("+ express 4.21.2"));
    }
}
