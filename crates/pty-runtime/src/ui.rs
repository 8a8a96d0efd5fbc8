//! The seam between a PTY session and an interactive UI: the UI draws the headless terminal's
//! screen and hands over the user's keys and resizes; [`run_with_ui`] connects the two.

use std::future::Future;
use std::time::Duration;

use agentsh_protocol::BashResult;

use crate::run::PtyRun;
use crate::terminal::TerminalSize;

/// Shortest time between two draws (20 per second at most, the rate of agentsh's live output
/// updates):
/// output arriving faster is drawn at most this often. Each draw brings the emulator up to date
/// (see `Terminal`), so a lower rate also leaves more bulk output to the fast-forward.
pub const MIN_DRAW_INTERVAL: Duration = Duration::from_millis(50);

/// Something the user did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UiEvent {
    /// Raw bytes from the host terminal's keyboard (Kitty or legacy encoding); normalised and
    /// checked for the kill key by [`PtyController::send_keys`](crate::PtyController::send_keys).
    Keys(Vec<u8>),
    /// The overlay changed size (clamped to 20–400 × 5–200 before it reaches the PTY).
    Resize(TerminalSize),
}

/// An interactive UI showing a PTY session (an overlay in interactive mode).
///
/// Kept small on purpose: the session owns the program and the emulator; the UI only shows a
/// screen and reports what the user does.
pub trait TerminalUi {
    /// Shows `screen` (cells, colours, cursor: see `vt100::Screen`). Called when output changed
    /// it (at most every [`MIN_DRAW_INTERVAL`]) and once more when the command ended.
    fn draw(&mut self, screen: &vt100::Screen);

    /// The user's next action, or `None` once the UI has no more input to give. Must be
    /// cancel-safe (a channel receive is): it is polled alongside the session and dropped when
    /// output arrives first.
    fn next_event(&mut self) -> impl Future<Output = Option<UiEvent>> + Send;
}

/// Runs `session` with `ui` until the command ends: draws the screen as output arrives,
/// forwards keys (the kill key ends the command) and resizes, and returns the result.
pub async fn run_with_ui(session: PtyRun, ui: &mut impl TerminalUi) -> BashResult {
    let controller = session.controller();
    let terminal = controller.terminal().clone();
    let mut updates = controller.updates();
    let wait = session.wait();
    tokio::pin!(wait);
    let mut input_open = true;
    let mut updates_open = true;
    let mut last_draw: Option<tokio::time::Instant> = None;
    loop {
        tokio::select! {
            result = &mut wait => {
                terminal.with_screen(|screen| ui.draw(screen));
                return result;
            }
            changed = updates.changed(), if updates_open => {
                if changed.is_err() {
                    // The driver is done; the result follows.
                    updates_open = false;
                    continue;
                }
                if let Some(last) = last_draw {
                    tokio::time::sleep_until(last + MIN_DRAW_INTERVAL).await;
                }
                updates.mark_unchanged();
                terminal.with_screen(|screen| ui.draw(screen));
                last_draw = Some(tokio::time::Instant::now());
            }
            event = ui.next_event(), if input_open => match event {
                Some(UiEvent::Keys(keys)) => {
                    controller.send_keys(&keys);
                }
                Some(UiEvent::Resize(size)) => {
                    controller.resize(size.cols, size.rows);
                }
                None => input_open = false,
            },
        }
    }
}
