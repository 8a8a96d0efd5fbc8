//! The words of a simple command as the policy sees them, and the assignments that change
//! which program a command name runs.

/// A word of a simple command, after quote removal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Arg {
    /// Where it starts in the program's text.
    pub start: usize,
    /// Where it ends.
    pub end: usize,
    /// Its value; expansions (`$x`, `$(…)`) stay as written.
    pub value: String,
    /// No expansion: `value` is what the shell sees.
    pub literal: bool,
    /// Unquoted glob characters, a brace expansion or an extglob group.
    pub glob: bool,
    /// `$'…'` or `$"…"`.
    pub quoting: bool,
}

/// Whether `word` assigns to a variable that changes which program a command name runs or what
/// it loads (`PATH=…`, `LD_PRELOAD=…`, `GIT_SSH=…`, …).
pub(crate) fn dangerous_assignment(word: &str) -> bool {
    let Some(end) = word.find(['=', '[', '+']) else {
        return false;
    };
    let name = &word[..end];
    let rest = &word[end..];
    (rest.starts_with('=') || rest.starts_with("+=") || rest.starts_with('['))
        && (matches!(
            name,
            "PATH"
                | "BASH_ENV"
                | "ENV"
                | "IFS"
                | "SHELLOPTS"
                | "BASHOPTS"
                | "EDITOR"
                | "VISUAL"
                | "GIT_SSH"
                | "GIT_EXEC_PATH"
        ) || name.starts_with("LD_")
            || name.ends_with("_COMMAND")
            || name.ends_with("PAGER"))
}
