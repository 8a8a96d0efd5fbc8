//! Taking over the host terminal and giving it back: raw mode, the alternate screen and
//! bracketed paste on entry; all of it undone on every way out (return, error, signal, panic).

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{DisableBracketedPaste, EnableBracketedPaste};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute};

/// Whether the terminal is currently taken over (so restoring twice does nothing).
static ENTERED: AtomicBool = AtomicBool::new(false);

/// Owns the terminal's interactive state; dropping it restores the terminal.
#[derive(Debug)]
pub(crate) struct TerminalGuard(());

impl TerminalGuard {
    /// Raw mode, the alternate screen, bracketed paste; a panic from here on restores the
    /// terminal before its message is printed.
    pub(crate) fn enter() -> io::Result<Self> {
        install_panic_hook();
        enable_raw_mode()?;
        ENTERED.store(true, Ordering::SeqCst);
        let entered = execute!(
            io::stdout(),
            EnterAlternateScreen,
            EnableBracketedPaste,
            cursor::Hide
        );
        if let Err(err) = entered {
            restore();
            return Err(err);
        }
        Ok(Self(()))
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Gives the terminal back as it was: alternate screen left, bracketed paste off, cursor
/// shown, raw mode off (the saved `termios` restored: echo, icanon). Safe to call twice and
/// from the panic hook.
pub(crate) fn restore() {
    if !ENTERED.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut stdout = io::stdout();
    // Each step is tried even when an earlier one fails: the terminal may be half gone.
    let _ = execute!(stdout, DisableBracketedPaste);
    let _ = execute!(stdout, LeaveAlternateScreen);
    let _ = execute!(stdout, cursor::Show);
    let _ = stdout.flush();
    let _ = disable_raw_mode();
}

/// Chains a hook that restores the terminal before the previous hook prints the panic, so the
/// message lands on a usable terminal. Installed once.
fn install_panic_hook() {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
}
