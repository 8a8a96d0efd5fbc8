//! The scripts that generating shells run: source the rc between two notes of the shell
//! options, then write every function, alias and `PATH` between marker lines.

use agentsh_process::shell::ShellKind;

/// `$0` of the generating shell, shown in its own error messages.
pub(crate) const GENERATOR_NAME: &str = "agentsh-snapshot";

/// Sources the rc (`$2`) and writes the dump to `$1`, each section introduced by a line
/// `$3 <section>`. Builtins are called through `\builtin` so that rc functions or aliases of
/// the same names do not interfere.
const BASH_SCRIPT: &str = r#"__agentsh_snap_out=$1 __agentsh_snap_rc=$2 __agentsh_snap_mark=$3
\builtin unset HISTFILE
\builtin set --
{ \builtin printf '%s options-before\n' "$__agentsh_snap_mark"; \builtin set +o; \builtin shopt -p; } >>"$__agentsh_snap_out"
__agentsh_snap_status=0
\builtin source -- "$__agentsh_snap_rc" </dev/null || __agentsh_snap_status=$?
{ \builtin printf '%s options-after\n' "$__agentsh_snap_mark"; \builtin set +o; \builtin shopt -p; } >>"$__agentsh_snap_out"
\builtin shopt -u expand_aliases
\builtin set +o errexit +o nounset +o xtrace +o verbose +o noglob
\builtin trap - DEBUG RETURN ERR EXIT
IFS=$' \t\n'
{
  \builtin printf '%s status %s\n' "$__agentsh_snap_mark" "$__agentsh_snap_status"
  while IFS= \builtin read -r __agentsh_snap_name; do
    \builtin printf '%s function %s\n' "$__agentsh_snap_mark" "$__agentsh_snap_name"
    \builtin declare -f -- "$__agentsh_snap_name"
  done < <(\builtin compgen -A function)
  while IFS= \builtin read -r __agentsh_snap_name; do
    \builtin printf '%s alias %s\n' "$__agentsh_snap_mark" "$__agentsh_snap_name"
    \builtin alias -- "$__agentsh_snap_name"
  done < <(\builtin compgen -a)
  \builtin printf '%s path\n' "$__agentsh_snap_mark"
  \builtin printf 'export PATH=%q\n' "$PATH"
  \builtin printf '%s end\n' "$__agentsh_snap_mark"
} >>"$__agentsh_snap_out"
\builtin unset HISTFILE
\builtin exit 0
"#;

/// The zsh counterpart of [`BASH_SCRIPT`]. `emulate zsh` after the options are noted gives the
/// rest of the script default options whatever the rc set.
const ZSH_SCRIPT: &str = r#"__agentsh_snap_out=$1 __agentsh_snap_rc=$2 __agentsh_snap_mark=$3
\builtin unset HISTFILE
\builtin set --
{ \builtin print -r -- "$__agentsh_snap_mark options-before"; \builtin setopt; } >>"$__agentsh_snap_out"
__agentsh_snap_status=0
\builtin source "$__agentsh_snap_rc" </dev/null || __agentsh_snap_status=$?
{ \builtin print -r -- "$__agentsh_snap_mark options-after"; \builtin setopt; } >>"$__agentsh_snap_out"
\builtin emulate zsh
\builtin unsetopt aliases
\builtin trap - EXIT ZERR DEBUG
{
  \builtin print -r -- "$__agentsh_snap_mark status $__agentsh_snap_status"
  for __agentsh_snap_name in ${(ok)functions}; do
    \builtin print -r -- "$__agentsh_snap_mark function $__agentsh_snap_name"
    \builtin functions -- "$__agentsh_snap_name"
  done
  for __agentsh_snap_name in ${(ok)aliases}; do
    \builtin print -r -- "$__agentsh_snap_mark alias $__agentsh_snap_name"
    \builtin alias -L -- "$__agentsh_snap_name"
  done
  \builtin print -r -- "$__agentsh_snap_mark path"
  \builtin print -r -- "export PATH=${(qq)PATH}"
  \builtin print -r -- "$__agentsh_snap_mark end"
} >>"$__agentsh_snap_out"
\builtin unset HISTFILE
\builtin exit 0
"#;

/// How a snapshot is made for one kind of shell.
pub(crate) struct Generator {
    /// Flags before the script: no startup files, interactive, command string.
    pub(crate) flags: &'static [&'static str],
    /// The script, given `$1` dump file, `$2` rc file, `$3` marker.
    pub(crate) script: &'static str,
    /// The status `source` returns when the file has a syntax error.
    pub(crate) syntax_error_status: i32,
}

impl Generator {
    /// The generator for `kind`; `None` for `sh`, which has no rc file.
    pub(crate) fn for_kind(kind: ShellKind) -> Option<Self> {
        match kind {
            ShellKind::Bash => Some(Self {
                flags: &["--norc", "--noprofile", "-i", "-c"],
                script: BASH_SCRIPT,
                syntax_error_status: 2,
            }),
            ShellKind::Zsh => Some(Self {
                flags: &["-f", "-i", "-c"],
                script: ZSH_SCRIPT,
                // zsh's `source` returns 128 - SOURCE_ERROR (2) when sourcing aborts on an error.
                syntax_error_status: 126,
            }),
            ShellKind::Sh => None,
        }
    }
}
