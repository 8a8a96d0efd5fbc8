//! The run loop each persistent shell executes, and the per-command files it reads.
//!
//! The shell is started as `<shell> [flags] -c <LOOP> <name> <dir> <snapshot> <tag>` with the
//! command channel at fd 3 (a Unix socket; agentsh holds the other end) and `/dev/null` on 0, 1
//! and 2. `<dir>` is the shell's private directory (0700, on tmpfs where there is one), `<tag>`
//! the shell's marker tag. For each command agentsh writes the user's text, verbatim, into
//! [`COMMAND_FILE`] (and the working directory into [`HEADER_FILE`] when it changed), then sends
//! one line `<seq> <fifo id> <header changed: 0|1>` on the channel. The loop:
//!
//! 1. reads that line (blocks while idle), sources the header if it changed, exports the
//!    command marker [`agentsh_process::MARKER_VAR`] = `<tag>.<seq>`;
//! 2. opens the FIFO `out<fifo id>` (agentsh already has it open for reading) as fd 7 and,
//!    inside that redirection, `cd`s to the working directory and sources the command file at
//!    top level (so `declare`, aliases, functions and options persist as if typed), with stdin
//!    `/dev/null`, stdout and stderr on the FIFO, and fds 3 and 7 closed for the command;
//! 3. resets `errexit`, closes the FIFO, and only then sends `<seq> <status>` on the channel.
//!
//! Once, after sourcing the snapshot and (bash) installing its `USR1` trap, and before its first
//! `read`, the loop sends `0 0`: it is ready. agentsh does not wait for that line before sending
//! the first command — the trigger waits in the socket while the shell starts, so a new shell's
//! start-up overlaps with agentsh preparing the command — but it watches for it: a shell that
//! exits or hangs before it reported ready failed to start (a broken snapshot), which is not the
//! command's doing.
//!
//! The status travels on a channel no command can reach (fd 3 is closed for it, and the
//! shell's saved copy is close-on-exec), so no output and no child process can end a command
//! early or change its status. Everything the command wrote is in the FIFO before the status is
//! sent; agentsh takes exactly what the FIFO holds at that moment (`FIONREAD`) as the rest of
//! the output. Later writes — a background job that kept the FIFO — belong to no command.
//!
//! The loop's constants are read-only, and its own code is safe under any options a command may
//! leave behind (`set -u`, `-C`, `-x`: its traps and checks run with stderr on `/dev/null`, so
//! xtrace never shows them; a changed `IFS` does not reach its `read`s).
//!
//! The loop's variables are visible to commands (`set` lists them), so they carry the `__ash_`
//! prefix no user variable has, and say what they hold:
//!
//! | variable | holds |
//! |---|---|
//! | `__ash_private_dir` | the shell's private directory (read-only) |
//! | `__ash_marker_tag` | the shell's marker tag (read-only) |
//! | `__ash_snapshot` | the snapshot to source before the first command, then empty |
//! | `__ash_ready_sent` | `1` once the ready line was sent (read-only from then on) |
//! | `__ash_seq`, `__ash_fifo_id`, `__ash_header_changed` | the fields of the current trigger |
//! | `__ash_cwd` | the working directory (set by the header file) |
//! | `__ash_marker` | the running command's marker, `<tag>.<seq>` (bash) |
//! | `__ash_status` | the command's exit status, reported after it |
//! | `__ash_stop_marker` | the marker of the command to stop, read from [`STOP_FILE`] (bash) |
//! | `__ash_unwind_armed` | `1` while the unwinding `DEBUG` trap is installed (bash) |
//! | `__ash_unwind_trap` | that trap's text (read-only, bash) |
//!
//! Stopping (bash): agentsh writes the marker of the command to stop into [`STOP_FILE`] and sends
//! `SIGUSR1`. The loop's `USR1` trap (re-installed before every command) reads that marker and
//! arms a `DEBUG` trap which, under `extdebug`, simulates `return` at every command inside the
//! sourced command file or any function while the marker names the running command: the
//! command unwinds and nothing more of it runs. A command whose stop arrived before it started
//! is skipped; a late signal for an earlier command matches no marker and changes nothing. The
//! loop disarms the `DEBUG` trap before the next command, so it costs nothing otherwise (a
//! permanent one made a builtin loop 12× slower). zsh and sh have no such mechanism: a stopped
//! command replaces their shell.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use agentsh_process::shell::ShellKind;

/// File (in the shell's private directory) holding the working directory assignment.
pub(crate) const HEADER_FILE: &str = "header";
/// File holding the command text. Its path appears in the shell's own error messages
/// (`<dir>/command: line 1: foo: command not found`), so it has a plain name.
pub(crate) const COMMAND_FILE: &str = "command";
/// File agentsh writes the marker of a command to stop into before it sends `SIGUSR1` (bash).
pub(crate) const STOP_FILE: &str = "stop";
/// Descriptor of the command channel (a Unix socket) in the shell.
pub(crate) const COMMAND_FD: i32 = 3;

const BASH_LOOP: &str = r#"__ash_private_dir=$1 __ash_snapshot=$2 __ash_marker_tag=$3 __ash_stop_marker= __ash_unwind_armed= __ash_status=0 __ash_seq= __ash_fifo_id= __ash_header_changed= __ash_cwd=/ __ash_marker= __ash_ready_sent=
builtin set --
__ash_unwind_trap='{ if [[ -n ${__ash_stop_marker-} && ${__ash_stop_marker} == "${__ash_marker-}" && -n ${BASH_SOURCE[0]+x}${FUNCNAME[0]+x} ]]; then return 2; fi; } 2>/dev/null'
builtin readonly __ash_private_dir __ash_marker_tag __ash_unwind_trap
while :; do
  if [[ -n $__ash_snapshot ]]; then
    builtin . "$__ash_snapshot" </dev/null >/dev/null 2>&1 3<&-
    __ash_snapshot=
  fi
  if [[ -n $__ash_unwind_armed ]]; then
    builtin trap - DEBUG
    __ash_unwind_armed=
  fi
  builtin trap '{ IFS= builtin read -r __ash_stop_marker <"$__ash_private_dir/stop"; __ash_unwind_armed=1; builtin trap -- "$__ash_unwind_trap" DEBUG; } 2>/dev/null' USR1
  builtin shopt -s extdebug
  if [[ -z $__ash_ready_sent ]]; then
    builtin readonly __ash_ready_sent=1
    builtin printf '0 0\n' >&3
  fi
  IFS=' ' builtin read -r __ash_seq __ash_fifo_id __ash_header_changed <&3 || builtin exit 0
  if [[ $__ash_header_changed == 1 ]]; then
    builtin . "$__ash_private_dir/header"
  fi
  __ash_marker=$__ash_marker_tag.$__ash_seq
  builtin export AGENTSH_CMD="$__ash_marker"
  {
    if [[ ${__ash_stop_marker-} == "$__ash_marker" ]]; then
      __ash_status=130
    elif builtin cd -- "$__ash_cwd" 2>&1; then
      builtin . "$__ash_private_dir/command" </dev/null >&7 2>&1 3<&- 7>&-
      __ash_status=$?
    else
      __ash_status=1
    fi
    builtin set +e
  } 7>|"$__ash_private_dir/out$__ash_fifo_id" >&7
  builtin printf '%s %s\n' "$__ash_seq" "$__ash_status" >&3
done
"#;

/// The POSIX loop (sh, zsh); `BUILTIN` is replaced by the shell's way to bypass functions.
const POSIX_LOOP: &str = r#"__ash_private_dir=$1 __ash_snapshot=$2 __ash_marker_tag=$3 __ash_status=0 __ash_seq= __ash_fifo_id= __ash_header_changed= __ash_cwd=/ __ash_ready_sent=
set --
BUILTIN readonly __ash_private_dir __ash_marker_tag
while :; do
  if [ -n "$__ash_snapshot" ]; then
    BUILTIN . "$__ash_snapshot" </dev/null >/dev/null 2>&1 3<&-
    __ash_snapshot=
  fi
  if [ -z "$__ash_ready_sent" ]; then
    BUILTIN readonly __ash_ready_sent=1
    BUILTIN printf '0 0\n' >&3
  fi
  IFS=' ' BUILTIN read -r __ash_seq __ash_fifo_id __ash_header_changed <&3 || BUILTIN exit 0
  if [ "$__ash_header_changed" = 1 ]; then
    BUILTIN . "$__ash_private_dir/header"
  fi
  BUILTIN export AGENTSH_CMD="$__ash_marker_tag.$__ash_seq"
  {
    if BUILTIN cd -- "$__ash_cwd" 2>&1; then
      BUILTIN . "$__ash_private_dir/command" </dev/null >&7 2>&1 3<&- 7>&-
      __ash_status=$?
    else
      __ash_status=1
    fi
    BUILTIN set +e
  } 7>|"$__ash_private_dir/out$__ash_fifo_id" >&7
  BUILTIN printf '%s %s\n' "$__ash_seq" "$__ash_status" >&3
done
"#;

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
        ShellKind::Bash => BASH_LOOP.to_owned(),
        ShellKind::Zsh => POSIX_LOOP.replace("BUILTIN", "builtin"),
        ShellKind::Sh => POSIX_LOOP.replace("BUILTIN", "command"),
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
            assert!(script.contains(&format!("<&{COMMAND_FD}")));
            assert!(script.contains(r#"printf '%s %s\n' "$__ash_seq" "$__ash_status" >&3"#));
        }
        assert!(BASH_LOOP.contains(&format!("\"$__ash_private_dir/{STOP_FILE}\"")));
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
