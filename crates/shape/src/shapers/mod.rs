//! The built-in shapers, one module per program family. Each module has a `shaper` function
//! that says whether it shapes a [`Target`] (its subcommand, its options) and makes a fresh
//! shaper for one output; its fixtures are in `tests/fixtures/<module>/`.

use crate::engine::Shaper;
use crate::select::Target;

mod cargo;
mod docker;
mod find;
mod git;
mod go;
mod grep;
mod jest;
mod lint;
mod ls;
mod make;
mod node;
mod npm;
mod pip;
mod pytest;
mod tsc;

/// A fresh built-in shaper for `target`'s output, or `None` when agentsh has none for it.
pub(crate) fn builtin(target: &Target) -> Option<Box<dyn Shaper>> {
    match target.program.as_str() {
        "git" => git::shaper(target),
        "cargo" => cargo::shaper(target),
        "grep" | "egrep" | "fgrep" | "rg" => grep::shaper(target),
        "find" => find::shaper(target),
        "ls" => ls::shaper(target),
        "go" => go::shaper(target),
        "make" | "gmake" => make::shaper(target),
        "tsc" => tsc::shaper(target),
        "eslint" => lint::eslint(target),
        "ruff" => lint::ruff(target),
        "pytest" | "py.test" => pytest::shaper(target),
        "node" => node::shaper(target),
        "jest" | "vitest" => jest::shaper(target),
        "npm" | "pnpm" | "yarn" => npm::shaper(target),
        "pip" | "pip3" => pip::shaper(target),
        "docker" => docker::shaper(target),
        _ => None,
    }
}

/// Whether `line` is empty or only white space.
pub(crate) fn blank(line: &str) -> bool {
    line.trim().is_empty()
}
