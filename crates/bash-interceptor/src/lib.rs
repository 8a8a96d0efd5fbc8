//! Blocks shell commands that have a better dedicated tool, by configurable regex rules.
#![deny(missing_docs)]
