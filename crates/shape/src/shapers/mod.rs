//! The built-in shapers, one module per program family. Each module has a `shaper` function
//! that says whether it shapes a [`Target`] (its subcommand, its options) and makes a fresh
//! shaper for one output; its fixtures are in `tests/fixtures/<module>/`.

use crate::engine::Shaper;
use crate::select::Target;

mod cargo;
mod docker;
mod git;
mod jest;
mod node;
mod npm;
mod pip;
mod pytest;

/// A fresh built-in shaper for `target`'s output, or `None` when agentsh has none for it.
pub(crate) fn builtin(target: &Target) -> Option<Box<dyn Shaper>> {
    match target.program.as_str() {
        "git" => git::shaper(target),
        "cargo" => cargo::shaper(target),
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
