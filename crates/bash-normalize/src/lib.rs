//! Normalisation of a model's shell command (SPEC §1), as pure functions.
//!
//! Models habitually append `| head -n 20` or `| tail -5` to a command to keep its output
//! short. Done by the shell, that hides the producer's exit code and lets `head` see only what the
//! pipe delivered. [`normalize`] takes such a trailing stage off the command's last pipeline and
//! returns it as structured [`Limits`], which the executor applies to the real output stream
//! ([`apply_head_tail`] is the reference for what they mean).
//!
//! - [`normalize`] → [`Normalized`] `{ command, limits, producer }`: the command to run and the
//!   extracted limit. It never fails: a command it cannot prove safe to rewrite comes back
//!   unchanged (trimmed).
//! - [`merge_limits`]: explicit tool arguments win, extracted limits are the fallback.
//! - [`apply_head_tail`] and [`count_lines`]: the line rule (a final `\n` ends the last line, it
//!   does not start an empty one), agreeing byte for byte with coreutils `head -n`/`tail -n`.
//! - [`list_elements`]: the first pipeline stage of each top-level list element, for rules that
//!   look at every command of a list (interception, SPEC §2); [`Normalized::unwrapped`] gives the
//!   normalised command without the added subshell, for the same rules.
//!
//! **The subshell rule.** Inside a pipeline every stage runs in a subshell (in bash; zsh and
//! bash's `lastpipe` run the *last* stage in the shell itself). Once the `| head` stage is gone,
//! the remaining stages are therefore always wrapped in `( … )`: `cd x && make | tail -n 5` runs
//! as `cd x && ( make )`, so `export A=1 | head -1`, `cd /tmp | tail -1` or `exec ls | head -1`
//! still cannot change (or replace) the persistent shell, and a multi-stage producer keeps its
//! last stage out of the shell under zsh and `lastpipe` too. The wrap is applied even where it is
//! not needed, because telling which commands are free of shell side effects (functions,
//! aliases, `${x:=…}`) is guesswork.
//!
//! The command is read by a hand-written lexer that follows quotes, escapes, `$( )`, `$(( ))`,
//! backquotes, `${ }`, heredocs, comments and compound commands, so a `|` inside any of them is
//! never taken for the pipeline's.
//!
//! ```
//! use agentsh_bash_normalize::{Limits, apply_head_tail, normalize};
//!
//! let n = normalize("  cd src && make 2>&1 | tail -n 5 ");
//! assert_eq!(n.command, "cd src && ( make )");
//! assert_eq!(n.limits, Limits { head: None, tail: Some(5) });
//!
//! // Quoted pipes, `||` and other head/tail flags are left alone.
//! assert_eq!(normalize("echo 'a | head -1'").command, "echo 'a | head -1'");
//! assert!(normalize("tail -f log | head -c 100").limits.is_none());
//!
//! assert_eq!(apply_head_tail("1\n2\n3\n4\n", Some(3), Some(2)), "2\n3\n");
//! ```
#![deny(missing_docs)]

mod elements;
mod lexer;
mod lines;
mod normalize;

pub use elements::list_elements;
pub use lines::{apply_head_tail, count_lines};
pub use normalize::{Limits, Normalized, merge_limits, normalize};
