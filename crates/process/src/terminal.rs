//! Programs that need a terminal: full-screen editors and viewers that, started without one
//! (stdin `/dev/null`, output to a pipe), wait for keys that never come until the command's
//! timeout. [`terminal_program`] judges a command line; [`command_terminal_program`] looks for
//! such a program among a running command's processes, so that it is found however it was
//! started (typed, from a script, as `$EDITOR` of another program).
//!
//! Batch uses run as they do (`vim -es`, `vim -c 'wq'`, `--version`, `--help`, `emacs
//! --batch`, `nvim --headless`). `less` and `man` are not here: without a terminal they print
//! as `cat` would (`LESS=FRX`, `MANPAGER=cat`).

use crate::procfs;
use crate::tree::{CommandScope, command_processes};

/// The program `argv` runs when it is one that needs a terminal and is not used in batch mode:
/// its name as the user knows it (`vim` for `/usr/bin/vim.basic`). `gui_display`: a graphical
/// display is set (then `emacs` without `-nw` opens a window instead).
pub(crate) fn terminal_program(argv: &[&[u8]], gui_display: bool) -> Option<&'static str> {
    let (first, args) = argv.split_first()?;
    let base = first.rsplit(|&b| b == b'/').next().unwrap_or(first);
    let base = std::str::from_utf8(base).ok()?;
    // Debian's alternatives: `vim.basic`, `vim.tiny`, `emacs-nox`, `emacs-gtk`.
    let name = base.split('.').next().unwrap_or(base);
    let name = if name.starts_with("emacs-") {
        "emacs"
    } else {
        name
    };
    // Options end at `--`; what follows is files.
    let options: Vec<&[u8]> = args.iter().copied().take_while(|a| *a != b"--").collect();
    let has = |flags: &[&str]| {
        options
            .iter()
            .any(|o| flags.iter().any(|f| o == &f.as_bytes()))
    };
    match name {
        "vim" | "vi" | "nvim" | "view" | "vimdiff" | "rvim" | "rview" => {
            let program = match name {
                "vi" => "vi",
                "nvim" => "nvim",
                _ => "vim",
            };
            (!options.iter().any(|o| vim_batch_option(o))).then_some(program)
        }
        "nano" | "pico" => {
            let program = if name == "nano" { "nano" } else { "pico" };
            (!has(&["--version", "-V", "--help", "-h"])).then_some(program)
        }
        "emacs" => {
            let batch = has(&[
                "--batch",
                "-batch",
                "--script",
                "-script",
                "--version",
                "-version",
                "--help",
                "-help",
                "--daemon",
                "--bg-daemon",
                "--fg-daemon",
            ]) || options.iter().any(|o| {
                o.starts_with(b"--script=")
                    || o.starts_with(b"--daemon=")
                    || o.starts_with(b"--bg-daemon=")
                    || o.starts_with(b"--fg-daemon=")
            });
            let in_terminal = has(&["-nw", "--no-window-system", "-t"])
                || options.iter().any(|o| o.starts_with(b"--terminal"))
                || !gui_display;
            (!batch && in_terminal).then_some("emacs")
        }
        "htop" | "watch" => {
            let program = if name == "htop" { "htop" } else { "watch" };
            (!has(&["--version", "-V", "-v", "--help", "-h"])).then_some(program)
        }
        _ => None,
    }
}

/// Whether a vim option makes the run a batch one: Ex mode and silent mode (`-e`, `-E`, `-es`,
/// clusters with them), commands or a script to run (`-c`, `--cmd`, `-S`, `-s`, `+cmd`),
/// `--version`, `--help`, `-h`, and nvim's `--headless` and `--embed`. `+N` and `+/pat` only
/// move the cursor: still interactive.
fn vim_batch_option(option: &[u8]) -> bool {
    match option {
        b"--version" | b"--help" | b"--headless" | b"--embed" | b"--cmd" | b"-c" | b"-S" => true,
        [b'+', rest @ ..] => rest
            .first()
            .is_some_and(|&b| !b.is_ascii_digit() && b != b'/'),
        [b'-', b'-', ..] => false,
        [b'-', letters @ ..] => {
            !letters.is_empty()
                && letters.iter().all(u8::is_ascii_alphabetic)
                && letters
                    .iter()
                    .any(|b| matches!(b, b'e' | b'E' | b's' | b'h'))
        }
        _ => false,
    }
}

/// The first program among the live processes of the command `scope` that needs a terminal
/// (see [`terminal_program`]), from one pass over `/proc` and the command lines of the
/// command's processes.
pub fn command_terminal_program(scope: &CommandScope) -> Option<&'static str> {
    let gui_display = ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|var| std::env::var_os(var).is_some_and(|v| !v.is_empty()));
    let mut buf = vec![0u8; procfs::CMDLINE_READ];
    command_processes(scope).iter().find_map(|process| {
        terminal_program(&procfs::read_args(process.pid, &mut buf)?, gui_display)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge(line: &str) -> Option<&'static str> {
        let argv: Vec<&[u8]> = line.split(' ').map(str::as_bytes).collect();
        terminal_program(&argv, false)
    }

    #[test]
    fn editors_and_viewers_need_a_terminal_unless_run_in_batch() {
        let cases: &[(&str, Option<&str>)] = &[
            ("vim calc.py", Some("vim")),
            ("/usr/bin/vim.basic f", Some("vim")),
            ("vim.tiny", Some("vim")),
            ("vi f", Some("vi")),
            ("nvim f", Some("nvim")),
            ("view f", Some("vim")),
            ("vim +10 f", Some("vim")),
            ("vim +/main f", Some("vim")),
            ("vim -R f", Some("vim")),
            ("vim -- -es", Some("vim")),
            ("vim -es f", None),
            ("vim -Es", None),
            ("vim -e f", None),
            ("vim -Nes", None),
            ("vim -c wq f", None),
            ("vim +wq f", None),
            ("vim +%s/a/b/|x f", None),
            ("vim -S s.vim", None),
            ("vim --version", None),
            ("vim -h", None),
            ("nvim --headless +q", None),
            ("nano f", Some("nano")),
            ("nano --version", None),
            ("emacs -nw f", Some("emacs")),
            ("emacs f", Some("emacs")),
            ("emacs-nox f", Some("emacs")),
            ("emacs --batch -l x.el", None),
            ("emacs --script=x.el", None),
            ("htop", Some("htop")),
            ("htop --version", None),
            ("watch -n 1 date", Some("watch")),
            ("watch --version", None),
            ("less f", None),
            ("man ls", None),
            ("vimrc-check", None),
            ("vim-addon-manager list", None),
            ("sh -c vim", None),
        ];
        for &(line, want) in cases {
            assert_eq!(judge(line), want, "{line}");
        }
    }

    #[test]
    fn emacs_opens_a_window_where_a_display_is_set() {
        let argv: [&[u8]; 2] = [b"emacs", b"f"];
        assert_eq!(terminal_program(&argv, true), None);
        let argv: [&[u8]; 3] = [b"emacs", b"-nw", b"f"];
        assert_eq!(terminal_program(&argv, true), Some("emacs"));
        assert_eq!(terminal_program(&[], false), None);
    }
}
