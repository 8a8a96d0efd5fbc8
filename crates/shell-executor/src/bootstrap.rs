//! The run loop each persistent shell executes, and the per-command files it reads.
//!
//! The shell is started as `<shell> [flags] -c <LOOP> <name> <dir> <snapshot> <tag>` with
//! `/dev/null` on 0, 1 and 2, which the loop closes at once. `<dir>` is the shell's private
//! directory (0700, on tmpfs where there is one), `<tag>` the shell's marker tag. The loop holds
//! no descriptor of its own between commands: it talks to agentsh through two FIFOs in `<dir>`
//! that it opens by path for each use — [`TRIGGER_FIFO`] (agentsh → shell) and [`REPORT_FIFO`]
//! (shell → agentsh); agentsh keeps both open read-write, so neither ever blocks on open or sees
//! EOF. For each command agentsh writes the user's text into [`COMMAND_FILE`] (and the working
//! directory into [`HEADER_FILE`] when it changed), then writes one line
//! `<seq> <fifo id> <header changed: 0|1>` to the trigger FIFO. The loop:
//!
//! 1. reads that line (blocks while idle), sources the header if it changed, exports the
//!    command marker [`agentsh_process::MARKER_VAR`] = `<tag>.<seq>`, `cd`s to the working
//!    directory;
//! 2. sources the command file at top level (so `declare`, aliases, functions and options
//!    persist as if typed; aliases expand, as `expand_aliases` is set once after the snapshot) with stdin `/dev/null` and stdout and stderr on the FIFO `out<fifo
//!    id>`, all three set by redirections of the `.` command itself. Those descriptors were
//!    closed before, so undoing the redirections only closes them again: no saved copy the
//!    command could close or reach, and no error of the loop's own (`Bad file descriptor`) can
//!    land in the output, whatever the command does to descriptors 0–255;
//! 3. takes the status (`$?`, the first thing it does), repairs itself (below), writes the
//!    user's `DEBUG` and `ERR` traps (`trap -p`) to the report FIFO and clears them, writes
//!    `<seq> <status>` there, and only then re-installs its stop trap and resets `errexit` (so
//!    agentsh gets the result while the loop finishes). agentsh parses the traps quote by quote
//!    ([`next_report_item`]), so no trap text can pass for a status line. (Each of the three is
//!    a simple command of its own: a user's `DEBUG` trap runs before each with stdout closed, and
//!    inside a redirected group it would write into the report.)
//!
//! agentsh accepts a report only when the shell holds no fd 2 (`/proc/<pid>/fd/2`: see
//! `shell::run`): while the command runs its stderr is open, and the loop itself never opens
//! fd 2, so a report a command writes itself — the report FIFO is reachable by path — is
//! ignored, and results never get out of step with their commands. When the shell holds
//! neither fd 1 nor fd 2 (it left the command) and no report follows within a second, the loop
//! is wedged beyond repair (`shopt -s extdebug; trap false DEBUG` skips every command): agentsh
//! replaces the shell. When the loop cannot go on (`enable -n enable`; the command's
//! redirections failed), it creates [`GAVE_UP_FILE`]`.<seq>.<status>` and ends: the shell is
//! replaced with that status (`sessionRestarted`). A shell that exits without that file was
//! ended by its command (`exit 3`).
//!
//! Once, before its first trigger, the loop reports `0 0`: it is ready. agentsh does not wait
//! for that line before sending the first command — the trigger waits in the FIFO while the
//! shell starts, so a new shell's start-up overlaps with agentsh preparing the command — but it
//! watches for it: a shell that exits or hangs before it reported ready failed to start (a
//! broken snapshot), which is not the command's doing.
//!
//! **Repair** (bash). Builtins run inside the shell and may shadow or disable what the loop uses.
//! After each command the loop removes functions named `builtin` and `enable` (the only user
//! functions it deletes: every other builtin it calls goes through `builtin`) and re-enables
//! the builtins it uses (a user's `enable -n printf` lasts for that command). The user's
//! `DEBUG`/`ERR` traps come with the report; agentsh writes them to [`PRE_FILE`] when they
//! changed and puts `{ builtin . <dir>/pre; } 2>/dev/null;` in front of the next command while
//! there are any, on the command's first line (line numbers stay as typed), so those traps fire for the
//! user's commands — a `DEBUG` trap set before a sourced file would not — and never for the
//! loop's. What cannot be repaired (`enable -n enable`, a read-only function `builtin`, `builtin`
//! and `unset` both shadowed) ends or wedges the loop: the shell is replaced. (POSIX mode would
//! put `unset` before functions, but leaving it resets `expand_aliases` and three other options
//! in bash 5.2.) sh (dash) removes a function named `command` (dash finds `unset` before
//! functions and refuses functions named after special builtins), zsh re-enables its builtins
//! with `builtin enable`. Where the loop needs a command that does nothing (its `while`
//! condition, creating a file) it never calls `:` or `true`, which a command may redefine as a
//! function (`:(){ :|:& };:` would run again at every turn of the loop): bash and zsh use the
//! arithmetic command `(( 1 ))`, sh the special builtin `:` (dash finds special builtins
//! before functions).
//!
//! The loop's constants are read-only, and its own code is safe under any options a command may
//! leave behind (`set -u`, `-C`, `-x`, `-o posix`: with stderr closed, xtrace never shows it;
//! a changed `IFS` does not reach its `read`s).
//!
//! The loop's variables are visible to commands (`set` lists them), so they carry the `__ash_`
//! prefix no user variable has, and say what they hold:
//!
//! | variable | holds |
//! |---|---|
//! | `__ash_private_dir` | the shell's private directory (read-only) |
//! | `__ash_marker_tag` | the shell's marker tag (read-only) |
//! | `__ash_snapshot` | the snapshot to source before the first command, then empty |
//! | `__ash_seq`, `__ash_fifo_id`, `__ash_header_changed` | the fields of the current trigger |
//! | `__ash_cwd` | the working directory (set by the header file) |
//! | `__ash_marker` | the running command's marker, `<tag>.<seq>` (bash) |
//! | `__ash_started` | `1` once the command's redirections were made (it ran) |
//! | `__ash_status` | the command's exit status, reported after it |
//! | `__ash_bail` | set when the loop cannot go on: the shell exits (sh, zsh) |
//! | `__ash_stop_marker` | the marker of the command to stop, read from [`STOP_FILE`] (bash) |
//! | `__ash_unwind_armed` | `1` while the unwinding `DEBUG` trap is installed (bash) |
//! | `__ash_extdebug_off` | `1` when `extdebug` was off before a stop turned it on (bash) |
//! | `__ash_unwind_trap`, `__ash_stop_trap` | the two traps' texts (read-only, bash) |
//!
//! **Stopping** (bash): agentsh freezes the shell, checks in `/proc` that the stop signal
//! ([`stop_signal`]: a real-time signal drawn per shell, so a command's own `trap … USR1` or
//! `trap '' USR1` is no concern) is still caught and that no other real-time signal is (a blanket `trap … {1..64}`
//! would have replaced the loop's trap), writes the marker of the command to stop into
//! [`STOP_FILE`], sends the signal, ends the command's processes and only then lets the shell
//! go on. The loop's trap (re-installed after every command) reads that marker, removes a
//! shadowing function `builtin`, saves and clears the user's `DEBUG`,
//! `ERR` and `RETURN` traps (so `trap 'exit 42' ERR` cannot end the shell on the way out),
//! turns `errexit` off and `extdebug` on, creates [`UNWOUND_FILE`]`.<seq>`, and arms a `DEBUG`
//! trap which simulates `return` at every command inside the sourced command file or any function
//! while the marker names the running command: the command unwinds and nothing more of it runs.
//! After it, the loop disarms the trap, restores `extdebug` and the user's traps. A command whose
//! stop arrived before it started is skipped; a late signal for an earlier command matches no
//! marker and changes nothing. Nothing of this runs unless a command is stopped (a permanent
//! `DEBUG` trap made a builtin loop 12× slower, and `extdebug` changes what user traps do). zsh
//! and sh have no such mechanism: a stopped command replaces their shell.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use agentsh_process::shell::ShellKind;

/// File (in the shell's private directory) holding the working directory assignment.
pub(crate) const HEADER_FILE: &str = "header";
/// File holding the command text. The shell names it in its own error messages
/// (`<dir>/command: line 1: foo: command not found`); `shell::names` rewrites those as `bash -c`
/// prints them.
pub(crate) const COMMAND_FILE: &str = "command";
/// File agentsh writes the marker of a command to stop into before it signals the shell (bash).
pub(crate) const STOP_FILE: &str = "stop";
/// FIFO agentsh writes triggers to.
pub(crate) const TRIGGER_FIFO: &str = "trigger";
/// FIFO the loop writes its reports to.
pub(crate) const REPORT_FIFO: &str = "report";
/// File agentsh writes the user's `DEBUG`/`ERR` traps to, as the loop reported them (bash).
pub(crate) const PRE_FILE: &str = "pre";
/// Prefix of the file the stop trap creates when it armed the unwind: `unwound.<seq>` (bash).
pub(crate) const UNWOUND_FILE: &str = "unwound";
/// The signal that stops a command in a bash shell with marker tag `tag`: a real-time signal
/// (35–62), so that a command's own traps on the usual signals do not touch it, and one that
/// differs from shell to shell (drawn from the random tag), so that no command traps it by
/// accident.
pub(crate) fn stop_signal(tag: &str) -> i32 {
    let drawn = tag
        .get(..2)
        .and_then(|hex| u8::from_str_radix(hex, 16).ok())
        .unwrap_or(0);
    35 + i32::from(drawn % 28)
}

/// What agentsh puts in front of a command whose shell saved user traps in [`PRE_FILE`]: on the same line, so line numbers stay as typed; stderr closed, so xtrace
/// does not show it.
pub(crate) const PRE_PREFIX: &str = r#"{ builtin . "$__ash_private_dir/pre"; } 2>/dev/null;"#;

const BASH_LOOP: &str = r#"__ash_private_dir=$1 __ash_snapshot=$2 __ash_marker_tag=$3 __ash_stop_marker= __ash_unwind_armed= __ash_extdebug_off= __ash_status=0 __ash_seq=0 __ash_fifo_id= __ash_header_changed= __ash_cwd=/ __ash_marker= __ash_started=
builtin set --
__ash_unwind_trap='{ if [[ -n ${__ash_stop_marker-} && ${__ash_stop_marker} == "${__ash_marker-}" && -n ${BASH_SOURCE[0]+x}${FUNCNAME[0]+x} ]]; then builtin return 2; fi; } 2>/dev/null'
__ash_stop_trap='{ IFS= builtin read -r __ash_stop_marker 0<"$__ash_private_dir/stop"; if [[ $__ash_stop_marker == "$__ash_marker" && -z $__ash_unwind_armed ]]; then unset -f builtin; builtin trap -p DEBUG ERR RETURN 1>|"$__ash_private_dir/stoptraps"; builtin trap - ERR RETURN; builtin set +e; if [[ :$BASHOPTS: != *:extdebug:* ]]; then __ash_extdebug_off=1; builtin shopt -s extdebug; fi; __ash_unwind_armed=1; builtin trap -- "$__ash_unwind_trap" DEBUG; (( 1 )) 1>|"$__ash_private_dir/unwound.$__ash_seq"; fi; } 0</dev/null 1>/dev/null 2>&1'
builtin readonly __ash_private_dir __ash_marker_tag __ash_unwind_trap __ash_stop_trap
exec 0<&- 1>&- 2>&-
if [[ -n $__ash_snapshot ]]; then
  builtin . "$__ash_snapshot" 0</dev/null 1>/dev/null 2>&1
  __ash_snapshot=
fi
builtin shopt -s expand_aliases
while (( 1 )); do
  unset -f builtin enable
  if ! enable builtin enable . printf read cd trap set shopt export readonly; then
    (( 1 )) 1>|"$__ash_private_dir/gaveup.$__ash_seq.$__ash_status"
    break
  fi
  if [[ -n $__ash_unwind_armed ]]; then
    builtin trap - DEBUG
    if [[ -n $__ash_extdebug_off ]]; then builtin shopt -u extdebug; fi
    __ash_unwind_armed= __ash_extdebug_off=
    builtin . "$__ash_private_dir/stoptraps"
  fi
  builtin trap -p DEBUG ERR 1>|"$__ash_private_dir/report"
  builtin trap - DEBUG ERR
  if ! builtin printf '%s %s\n' "$__ash_seq" "$__ash_status" 1>|"$__ash_private_dir/report"; then
    (( 1 )) 1>|"$__ash_private_dir/gaveup.$__ash_seq.$__ash_status"
    break
  fi
  builtin trap -- "$__ash_stop_trap" STOPSIG
  builtin set +e
  if ! IFS=' ' builtin read -r __ash_seq __ash_fifo_id __ash_header_changed 0<"$__ash_private_dir/trigger"; then
    (( 1 )) 1>|"$__ash_private_dir/gaveup.$__ash_seq.$__ash_status"
    break
  fi
  if [[ $__ash_header_changed == 1 ]]; then
    builtin . "$__ash_private_dir/header"
  fi
  __ash_marker=$__ash_marker_tag.$__ash_seq __ash_started=
  builtin export AGENTSH_CMD="$__ash_marker"
  if [[ ${__ash_stop_marker-} == "$__ash_marker" ]]; then
    __ash_status=130
    (( 1 )) 1>|"$__ash_private_dir/unwound.$__ash_seq"
  elif builtin cd -- "$__ash_cwd"; then
    builtin . "$__ash_private_dir/command" 0</dev/null 1>|"$__ash_private_dir/out$__ash_fifo_id" 2>&$((__ash_started=1))
    __ash_status=$?
    if [[ -z $__ash_started ]]; then
      (( 1 )) 1>|"$__ash_private_dir/gaveup.$__ash_seq."
      break
    fi
  else
    builtin cd -- "$__ash_cwd" 2>|"$__ash_private_dir/out$__ash_fifo_id"
    __ash_status=1
  fi
done
"#;

/// The POSIX loop (sh, zsh); `BUILTIN` is replaced by the shell's way to bypass functions,
/// `REPAIR` by its repair step (see the module docs) and `NOOP` by a command that does nothing
/// and that no function can shadow.
const POSIX_LOOP: &str = r#"__ash_private_dir=$1 __ash_snapshot=$2 __ash_marker_tag=$3 __ash_status=0 __ash_seq=0 __ash_fifo_id= __ash_header_changed= __ash_cwd=/ __ash_started= __ash_bail=
set --
BUILTIN readonly __ash_private_dir __ash_marker_tag
exec 0<&- 1>&- 2>&-
case $__ash_snapshot in ?*)
  BUILTIN . "$__ash_snapshot" 0</dev/null 1>/dev/null 2>&1
  __ash_snapshot= ;;
esac
while NOOP; do
  REPAIR
  case $__ash_bail in '')
    BUILTIN printf '%s %s\n' "$__ash_seq" "$__ash_status" 1>|"$__ash_private_dir/report" || __ash_bail=1 ;;
  esac
  case $__ash_bail in
    '')
      BUILTIN set +e
      IFS=' ' BUILTIN read -r __ash_seq __ash_fifo_id __ash_header_changed 0<"$__ash_private_dir/trigger" || __ash_bail=1 ;;
    *) { NOOP; } 1>|"$__ash_private_dir/gaveup.$__ash_seq.$__ash_status" ;;
  esac
  case $__ash_bail in ?*) break ;; esac
  case $__ash_header_changed in 1) BUILTIN . "$__ash_private_dir/header" ;; esac
  BUILTIN export AGENTSH_CMD="$__ash_marker_tag.$__ash_seq"
  __ash_started=
  if BUILTIN cd -- "$__ash_cwd"; then
    BUILTIN . "$__ash_private_dir/command" 0</dev/null 1>|"$__ash_private_dir/out$__ash_fifo_id" 2>&$((__ash_started=1))
    __ash_status=$?
    case $__ash_started in '')
      { NOOP; } 1>|"$__ash_private_dir/gaveup.$__ash_seq."
      break ;;
    esac
  else
    BUILTIN cd -- "$__ash_cwd" 2>|"$__ash_private_dir/out$__ash_fifo_id"
    __ash_status=1
  fi
done
"#;

/// zsh's repair step: functions named `builtin` go (zsh finds functions before builtins, and
/// `builtin` bypasses every other one), and the builtins the loop uses are enabled again.
const ZSH_REPAIR: &str = "(( ${+functions[builtin]} )) && unset -f builtin; builtin enable . cd export printf read set || __ash_bail=1";

/// sh's repair step: a function named `command` goes (dash finds the special builtin `unset`
/// before functions and refuses functions named after special builtins), and a probe that
/// dash can still source files (`ulimit -n` below 11 stops it: it moves what it sources to a
/// descriptor of 10 or more); when it cannot, the loop ends and the shell is replaced.
const SH_REPAIR: &str = r#"unset -f command; { :; } 1>|"$__ash_private_dir/probe"; command . "$__ash_private_dir/probe" || __ash_bail=1"#;

/// Prefix of the file the loop creates when it gives up after command `<seq>`:
/// `gaveup.<seq>.<status>`, the status empty when the command never started.
pub(crate) const GAVE_UP_FILE: &str = "gaveup";

/// What a give-up file says about its command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GaveUp {
    /// The command ran and ended with this status.
    After(i32),
    /// The command never started (its redirections failed).
    Before,
}

impl GaveUp {
    /// The command's status, when it ran.
    pub(crate) fn status(self) -> Option<i32> {
        match self {
            Self::After(status) => Some(status),
            Self::Before => None,
        }
    }
}

/// Parses a give-up file's name for command `seq`.
pub(crate) fn parse_gave_up_file(name: &[u8], seq: u64) -> Option<GaveUp> {
    let name = std::str::from_utf8(name).ok()?;
    let rest = name.strip_prefix(GAVE_UP_FILE)?.strip_prefix('.')?;
    let (done, status) = rest.split_once('.')?;
    (done.parse::<u64>().ok()? == seq).then_some(())?;
    if status.is_empty() {
        return Some(GaveUp::Before);
    }
    Some(GaveUp::After(status.parse().ok()?))
}

/// Whether stopped commands of this shell kind can be unwound with the shell kept.
pub(crate) fn can_unwind(kind: ShellKind) -> bool {
    kind == ShellKind::Bash
}

/// The shell's arguments (`argv[1..]`): flags that skip rc files, then `-c <loop> <name> <dir>
/// <snapshot> <marker tag>`.
pub(crate) fn shell_args(
    kind: ShellKind,
    dir: &Path,
    snapshot: Option<&Path>,
    tag: &str,
) -> Vec<OsString> {
    let mut args: Vec<OsString> = kind.no_rc_flags().iter().map(Into::into).collect();
    let script = match kind {
        ShellKind::Bash => BASH_LOOP.replace("STOPSIG", &stop_signal(tag).to_string()),
        ShellKind::Zsh => POSIX_LOOP
            .replace("REPAIR", ZSH_REPAIR)
            .replace("BUILTIN", "builtin")
            .replace("NOOP", "(( 1 ))"),
        ShellKind::Sh => POSIX_LOOP
            .replace("REPAIR", SH_REPAIR)
            .replace("BUILTIN", "command")
            .replace("NOOP", ":"),
    };
    args.push("-c".into());
    args.push(script.into());
    args.push(kind.name().into());
    args.push(dir.as_os_str().to_owned());
    args.push(
        snapshot
            .map(|p| p.as_os_str().to_owned())
            .unwrap_or_default(),
    );
    args.push(tag.into());
    args
}

/// Quotes bytes for every POSIX shell: `'…'`, with `'` written as `'\''`.
pub(crate) fn single_quote(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + 2);
    out.push(b'\'');
    for &b in bytes {
        if b == b'\'' {
            out.extend_from_slice(b"'\\''");
        } else {
            out.push(b);
        }
    }
    out.push(b'\'');
    out
}

/// The header file: the working directory, rewritten only when it changes.
pub(crate) fn header(cwd: &Path) -> Vec<u8> {
    let mut out = b"__ash_cwd=".to_vec();
    out.extend_from_slice(&single_quote(cwd.as_os_str().as_bytes()));
    out.push(b'\n');
    out
}

/// The prefix of FIFO names in the private directory: `out<id>`.
pub(crate) const FIFO_PREFIX: &str = "out";

/// Whether the header file changed since the shell last sourced it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeaderState {
    /// Unchanged: the loop skips it.
    Unchanged,
    /// Rewritten for this command: the loop sources it first.
    Changed,
}

/// The line that starts a command: `<seq> <fifo id> <1 if the header changed, else 0>`.
pub(crate) fn trigger(seq: u64, fifo: u64, header: HeaderState) -> String {
    format!(
        "{seq} {fifo} {}\n",
        u8::from(header == HeaderState::Changed)
    )
}

/// The loop's one-time ready report, `0 0` (commands are numbered from 1).
pub(crate) const READY: (u64, i32) = (0, 0);

/// The most a report item (a trap line, a status line) may take; past it the channel is not
/// the loop's (a command writing endlessly into the report FIFO), and the shell is replaced.
pub(crate) const MAX_REPORT_ITEM: usize = 1 << 20;

/// One item on the loop's report channel, at the start of the bytes received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReportItem {
    /// A saved user trap, `trap -- '<text>' DEBUG|ERR` and its newline: this many bytes.
    Trap(usize),
    /// `trap -- - DEBUG|ERR` (POSIX mode's line for a trap that is not set): this many bytes.
    Unset(usize),
    /// `<seq> <status>`, newline included in `len`.
    Status {
        /// The command's number (0: the ready report).
        seq: u64,
        /// Its exit status.
        status: i32,
        /// Bytes taken, newline included.
        len: usize,
    },
}

/// The bytes are not what the loop writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NotTheLoops;

/// Parses the next item of the report channel: `Ok(None)` while it is incomplete. A trap's
/// text is taken as bash's `trap -p` quotes it (`'…'` pieces joined by `\'`, raw bytes and
/// newlines inside), so a trap cannot end early or pass for a status line.
pub(crate) fn next_report_item(buf: &[u8]) -> Result<Option<ReportItem>, NotTheLoops> {
    const TRAP: &[u8] = b"trap -- '";
    const NAMES: [&[u8]; 2] = [b" DEBUG\n", b" ERR\n"];
    const JOIN: &[u8] = b"\\''";
    if buf.is_empty() {
        return Ok(None);
    }
    if !buf[0].is_ascii_digit() {
        // POSIX mode lists a trap that is not set as `trap -- - DEBUG`.
        for unset in [&b"trap -- - DEBUG\n"[..], b"trap -- - ERR\n"] {
            if buf.starts_with(unset) {
                return Ok(Some(ReportItem::Unset(unset.len())));
            }
            if unset.starts_with(buf) {
                return Ok(None);
            }
        }
        if !buf.starts_with(TRAP) {
            return if TRAP.starts_with(buf) {
                Ok(None)
            } else {
                Err(NotTheLoops)
            };
        }
        let mut at = TRAP.len();
        loop {
            // Inside a quoted piece: it ends at the next quote.
            let Some(quote) = buf[at..].iter().position(|&b| b == b'\'') else {
                return Ok(None);
            };
            at += quote + 1;
            let rest = &buf[at..];
            if rest.starts_with(JOIN) {
                at += JOIN.len();
                continue;
            }
            if let Some(name) = NAMES.iter().find(|name| rest.starts_with(name)) {
                return Ok(Some(ReportItem::Trap(at + name.len())));
            }
            let could_grow = JOIN.starts_with(rest) || NAMES.iter().any(|n| n.starts_with(rest));
            return if could_grow {
                Ok(None)
            } else {
                Err(NotTheLoops)
            };
        }
    }
    let Some(end) = buf.iter().position(|&b| b == b'\n') else {
        return Ok(None);
    };
    let (seq, status) = parse_report(&buf[..end]).ok_or(NotTheLoops)?;
    Ok(Some(ReportItem::Status {
        seq,
        status,
        len: end + 1,
    }))
}

/// Parses the loop's report `<seq> <status>` (without the newline).
pub(crate) fn parse_report(line: &[u8]) -> Option<(u64, i32)> {
    let line = std::str::from_utf8(line).ok()?;
    let (seq, status) = line.split_once(' ')?;
    Some((seq.parse().ok()?, status.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_quotes_and_newlines() {
        assert_eq!(single_quote(b"a'b\nc"), b"'a'\\''b\nc'".to_vec());
        assert_eq!(single_quote(b""), b"''".to_vec());
    }

    #[test]
    fn quoted_values_round_trip_through_real_shells() {
        let nasty = "it's a \"dir\" with $HOME, `x`, \\ and\nnewline";
        for shell in ["bash", "sh"] {
            let mut script = b"x=".to_vec();
            script.extend_from_slice(&single_quote(nasty.as_bytes()));
            script.extend_from_slice(b"; printf %s \"$x\"");
            let out = std::process::Command::new(shell)
                .arg("-c")
                .arg(std::ffi::OsStr::from_bytes(&script))
                .output()
                .expect("shell runs");
            assert_eq!(String::from_utf8_lossy(&out.stdout), nasty, "{shell}");
        }
    }

    #[test]
    fn loops_use_the_file_names_of_this_module() {
        for script in [BASH_LOOP, POSIX_LOOP] {
            assert!(script.contains(&format!("\"$__ash_private_dir/{HEADER_FILE}\"")));
            assert!(script.contains(&format!("\"$__ash_private_dir/{COMMAND_FILE}\"")));
            assert!(script.contains(&format!(
                "\"$__ash_private_dir/{FIFO_PREFIX}$__ash_fifo_id\""
            )));
            assert!(script.contains(&format!("\"$__ash_private_dir/{TRIGGER_FIFO}\"")));
            assert!(script.contains(&format!("\"$__ash_private_dir/{REPORT_FIFO}\"")));
            assert!(script.contains(&format!("\"$__ash_private_dir/{GAVE_UP_FILE}.")));
        }
        assert!(BASH_LOOP.contains(&format!("\"$__ash_private_dir/{STOP_FILE}\"")));
        assert!(BASH_LOOP.contains(&format!("\"$__ash_private_dir/{UNWOUND_FILE}.")));
        assert!(PRE_PREFIX.contains(&format!("/{PRE_FILE}\"")));
    }

    #[test]
    fn reports_parse_strictly() {
        assert_eq!(parse_report(b"12 0"), Some((12, 0)));
        assert_eq!(parse_report(b"3 130"), Some((3, 130)));
        assert_eq!(parse_report(b"3"), None);
        assert_eq!(parse_report(b"x 1"), None);
        assert_eq!(parse_report(b"3 1 2"), None);
        assert_eq!(trigger(7, 2, HeaderState::Changed), "7 2 1\n");
    }

    #[test]
    fn report_items_frame_traps_quote_by_quote() {
        use ReportItem::{Status, Trap};
        let trap = b"trap -- 'echo '\\''x'\\''\n5 0\n' DEBUG\n";
        assert_eq!(next_report_item(trap), Ok(Some(Trap(trap.len()))));
        let mut both = trap.to_vec();
        both.extend_from_slice(b"7 1\n");
        assert_eq!(next_report_item(&both), Ok(Some(Trap(trap.len()))));
        assert_eq!(
            next_report_item(&both[trap.len()..]),
            Ok(Some(Status {
                seq: 7,
                status: 1,
                len: 4
            }))
        );
        assert_eq!(next_report_item(b"trap -- '' ERR\n"), Ok(Some(Trap(15))));
        // Every proper prefix is incomplete, never an error or an item.
        for cut in 0..trap.len() {
            assert_eq!(next_report_item(&trap[..cut]), Ok(None), "cut at {cut}");
        }
        assert_eq!(next_report_item(b"12 0"), Ok(None));
        assert_eq!(
            next_report_item(b"trap -- - ERR\n"),
            Ok(Some(ReportItem::Unset(14)))
        );
        assert_eq!(next_report_item(b"trap -- - ER"), Ok(None));
        for junk in [
            &b"x 1\n"[..],
            b"trap 'x' DEBUG\n",
            b"trap -- 'x' EXIT\n",
            b"trap -- 'x'y",
            b"3 1 2\n",
        ] {
            assert_eq!(next_report_item(junk), Err(NotTheLoops), "{junk:?}");
        }
    }

    #[test]
    fn report_items_match_what_bash_prints() {
        let text = ": 'it''s' \"$x\"\n\u{1} y";
        for mode in ["", "set -o posix; "] {
            let script = format!(
                "{mode}trap -p DEBUG ERR; trap \"$1\" DEBUG; trap false ERR; trap -p DEBUG ERR; \
                 trap - DEBUG ERR; echo 4 0"
            );
            let out = std::process::Command::new("bash")
                .arg("-c")
                .arg(script)
                .arg("bash")
                .arg(text)
                .output()
                .expect("bash runs");
            let mut rest = &out.stdout[..];
            let (mut traps, mut unset) = (Vec::new(), 0);
            loop {
                match next_report_item(rest) {
                    Ok(Some(ReportItem::Trap(len))) => {
                        traps.push(String::from_utf8_lossy(&rest[..len]).into_owned());
                        rest = &rest[len..];
                    }
                    Ok(Some(ReportItem::Unset(len))) => {
                        unset += 1;
                        rest = &rest[len..];
                    }
                    Ok(Some(ReportItem::Status { seq, status, len })) => {
                        assert_eq!((seq, status, len), (4, 0, rest.len()));
                        break;
                    }
                    other => panic!("{other:?} at {:?}", String::from_utf8_lossy(rest)),
                }
            }
            assert_eq!(traps.len(), 2, "{mode}");
            assert_eq!(unset, if mode.is_empty() { 0 } else { 2 });
            assert!(traps[1] == "trap -- 'false' ERR\n", "{traps:?}");
        }
    }

    #[test]
    fn give_up_files_name_the_command_and_its_status() {
        assert_eq!(
            parse_gave_up_file(b"gaveup.12.0", 12),
            Some(GaveUp::After(0))
        );
        assert_eq!(
            parse_gave_up_file(b"gaveup.12.130", 12),
            Some(GaveUp::After(130))
        );
        assert_eq!(parse_gave_up_file(b"gaveup.3.", 3), Some(GaveUp::Before));
        assert_eq!(GaveUp::Before.status(), None);
        assert_eq!(parse_gave_up_file(b"gaveup.12.0", 1), None);
        assert_eq!(parse_gave_up_file(b"gaveup.1.0", 12), None);
        assert_eq!(parse_gave_up_file(b"out1", 1), None);
        assert_eq!(parse_gave_up_file(b"gaveup.12.x", 12), None);
    }

    #[test]
    fn stop_signals_are_real_time_and_drawn_from_the_tag() {
        let drawn: std::collections::BTreeSet<i32> = (0..=255u8)
            .map(|b| stop_signal(&format!("{b:02x}0000")))
            .collect();
        assert_eq!(drawn.first(), Some(&35));
        assert_eq!(drawn.last(), Some(&62));
        assert_eq!(stop_signal(""), 35);
        let args = shell_args(ShellKind::Bash, Path::new("/d"), None, "0a1b2c");
        let script = args[3].to_string_lossy();
        assert!(script.contains(&format!("\"$__ash_stop_trap\" {}\n", stop_signal("0a1b2c"))));
    }

    #[test]
    fn every_shell_gets_its_placeholders_filled() {
        for kind in [ShellKind::Bash, ShellKind::Zsh, ShellKind::Sh] {
            let args = shell_args(kind, Path::new("/d"), None, "t");
            let script = args.iter().find(|a| a.len() > 200).expect("the loop");
            let script = script.to_string_lossy();
            for placeholder in ["BUILTIN", "REPAIR", "STOPSIG", "NOOP"] {
                assert!(!script.contains(placeholder), "{kind:?}: {placeholder}");
            }
        }
    }

    #[test]
    fn posix_loop_bypasses_functions_per_shell() {
        let args = shell_args(ShellKind::Sh, Path::new("/d"), None, "t");
        let script = args[1].to_string_lossy();
        assert!(script.contains("command read -r __ash_seq"));
        assert!(!script.contains("BUILTIN"));
        let args = shell_args(ShellKind::Zsh, Path::new("/d"), Some(Path::new("/s")), "t");
        assert_eq!(args[0], "-f");
        assert!(
            args[2]
                .to_string_lossy()
                .contains("builtin read -r __ash_seq")
        );
        assert_eq!(args[3], "zsh");
        assert_eq!(args[5], "/s");
        assert_eq!(args[6], "t");
    }
}
