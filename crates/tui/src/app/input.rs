//! What each key does; inside a PTY overlay every key goes to the program
//! (Esc kills it unless it uses the alternate screen, where ctrl+] does), except while an
//! approval request waits: the question takes the screen and the keys.

use agentsh_renderer::Renderer;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::{App, Quit};
use crate::command::{HELP, Input, Slash, parse_input};
use crate::host::AppEvent;
use crate::key_bytes::key_bytes;
use crate::transcript::{EntryKind, NoteKind};

/// The question Ctrl+D asks while jobs run.
pub(crate) fn quit_question(running: usize) -> String {
    let jobs = if running == 1 { "job" } else { "jobs" };
    format!("{running} {jobs} running: Ctrl+D again ends them")
}

impl<R: Renderer> App<R> {
    /// Handles one event; returns whether the screen changed.
    pub(crate) fn handle(&mut self, event: AppEvent) -> bool {
        match event {
            AppEvent::Terminal(event) => self.terminal_event(event),
            AppEvent::InputClosed => {
                self.quit = Some(Quit::TerminalGone);
                false
            }
            other => self.call_event(other),
        }
    }

    fn terminal_event(&mut self, event: Event) -> bool {
        match event {
            Event::Key(key) => {
                if key.kind == KeyEventKind::Release {
                    return false;
                }
                if let Some(overlay) = self.shown_overlay() {
                    if let Some(bytes) = key_bytes(&key) {
                        overlay.controller.send_keys(&bytes);
                    }
                    return false;
                }
                self.key(key);
                true
            }
            Event::Paste(text) => {
                if let Some(overlay) = self.shown_overlay() {
                    let text = if overlay.controller.terminal().bracketed_paste() {
                        format!("\x1b[200~{text}\x1b[201~")
                    } else {
                        text
                    };
                    overlay.controller.write_input(text.as_bytes());
                    return false;
                }
                if !self.secret_paste(&text) && !self.search_paste(&text) {
                    self.completing = None;
                    self.line.insert(&text);
                }
                true
            }
            Event::Resize(cols, rows) => {
                self.resized(cols, rows);
                true
            }
            _ => false,
        }
    }

    fn key(&mut self, key: KeyEvent) {
        // While a request waits, its keys answer it (Esc denies it, rather than cancelling).
        if self.approval_key(&key) {
            self.quit_asked = false;
            return;
        }
        // While a job asks for hidden input, typing goes to the masked line.
        if self.secret_key(&key) {
            self.quit_asked = false;
            return;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if !(ctrl && matches!(key.code, KeyCode::Char('d'))) {
            self.quit_asked = false;
        }
        // Ctrl+R's search takes every key while open.
        if self.search_key(&key) {
            return;
        }
        // Tab's list: Tab cycles it, Esc closes it, any other key closes it and goes on.
        match key.code {
            KeyCode::Tab => {
                self.tab();
                return;
            }
            KeyCode::Esc if self.close_completion() => return,
            _ => {
                self.close_completion();
            }
        }
        match key.code {
            KeyCode::Char('r') if ctrl => self.reverse_search(),
            KeyCode::Char('c') if ctrl => {
                if self.line.is_empty() {
                    self.cancel_newest();
                } else {
                    self.line.clear();
                }
            }
            KeyCode::Char('d') if ctrl => {
                if self.line.is_empty() {
                    self.ask_quit();
                } else {
                    self.line.delete();
                }
            }
            KeyCode::Char('o') if ctrl => self.toggle_expanded(),
            KeyCode::Char('a') if ctrl => self.line.home(),
            KeyCode::Char('e') if ctrl => self.line.end(),
            KeyCode::Char('u') if ctrl => self.line.kill_to_start(),
            KeyCode::Char('k') if ctrl => self.line.kill_to_end(),
            KeyCode::Char('w') if ctrl => self.line.delete_word(),
            KeyCode::Char('l') if ctrl => {
                // Redraws the whole screen (after something else wrote on the terminal).
                self.scroll = 0;
                self.clear_screen = true;
            }
            KeyCode::Char(_) if ctrl => {}
            KeyCode::Char(c) => {
                let mut buf = [0; 4];
                self.line.insert(c.encode_utf8(&mut buf));
            }
            KeyCode::Esc => self.escape(),
            KeyCode::Enter if key.modifiers.contains(KeyModifiers::ALT) => self.line.insert("\n"),
            KeyCode::Enter => {
                let line = self.line.take();
                self.submit(&line);
            }
            KeyCode::Backspace => self.line.backspace(),
            KeyCode::Delete => self.line.delete(),
            KeyCode::Left => self.line.left(),
            KeyCode::Right if !self.accept_suggestion() => self.line.right(),
            KeyCode::Home if self.expanded.is_some() && self.line.is_empty() => {
                self.move_expanded(i64::MIN);
            }
            KeyCode::End if self.expanded.is_some() && self.line.is_empty() => {
                self.move_expanded(i64::MAX);
            }
            KeyCode::Home => self.line.home(),
            KeyCode::End if !self.accept_suggestion() => self.line.end(),
            KeyCode::Up => self.line.history_older(self.history.entries()),
            KeyCode::Down => self.line.history_newer(self.history.entries()),
            KeyCode::PageUp => self.page(true),
            KeyCode::PageDown => self.page(false),
            _ => {}
        }
    }

    /// Ctrl+D on an empty line, `/quit`: leaves at once without running jobs, else asks once.
    fn ask_quit(&mut self) {
        self.refresh_jobs();
        if self.jobs_running == 0 || self.quit_asked {
            self.quit = Some(Quit::Asked);
            return;
        }
        self.quit_asked = true;
        self.note(NoteKind::Warning, quit_question(self.jobs_running));
        self.scroll = 0;
    }

    /// Esc: cancels the newest running call; with none, collapses the expanded result.
    fn escape(&mut self) {
        if !self.cancel_newest() {
            self.expanded = None;
        }
    }

    /// Cancels every running call (leaving).
    pub(crate) fn cancel_all(&self) {
        for entry in self.transcript.iter().filter(|entry| entry.is_running()) {
            match &entry.kind {
                EntryKind::Tool(tool) => tool.cancel.cancel(),
                EntryKind::Bang(bang) => bang.abort.cancel(),
                _ => {}
            }
        }
    }

    /// Cancels the newest running call; returns whether there was one.
    pub(crate) fn cancel_newest(&mut self) -> bool {
        // A call already cancelled is on its way out: the next Esc is for the one before it.
        for entry in self.transcript.iter_mut().rev() {
            if !entry.is_running() {
                continue;
            }
            match &mut entry.kind {
                EntryKind::Tool(tool) if !tool.cancel.is_cancelled() => {
                    tool.cancel.cancel();
                    return true;
                }
                EntryKind::Bang(bang) if !bang.aborted => {
                    bang.abort.cancel();
                    bang.aborted = true;
                    return true;
                }
                _ => {}
            }
        }
        false
    }

    /// One submitted line.
    fn submit(&mut self, line: &str) {
        // The test-only trigger (AGENTSH_TUI_PANIC_LINE): the terminal must come back.
        assert!(
            self.panic_line.as_deref() != Some(line),
            "agentsh: test panic (AGENTSH_TUI_PANIC_LINE)"
        );
        if let Some(error) = self.history.push(line) {
            self.note(NoteKind::Warning, error);
        }
        self.scroll = 0;
        self.expanded = None;
        match parse_input(line) {
            Input::Empty => {}
            Input::Bang { command, .. } if command.is_empty() => {
                self.note(NoteKind::Warning, "usage: !cmd or !!cmd");
            }
            Input::Bang {
                command,
                exclude_from_context,
            } => self.start_bang(command, exclude_from_context),
            Input::ToolArgs(args) => self.start_tool(args),
            Input::Tool(command) => {
                let mut args = serde_json::Map::new();
                args.insert("command".into(), command.into());
                self.start_tool(args);
            }
            Input::Slash(slash) => self.slash(slash, line.trim()),
        }
    }

    fn slash(&mut self, slash: Slash, typed: &str) {
        match slash {
            Slash::Jobs => {
                let mut jobs = self.session.jobs_summary();
                for session in self.connections.values() {
                    jobs.extend(session.jobs_summary());
                }
                if jobs.is_empty() {
                    self.note(NoteKind::Info, format!("{typed}\nno jobs"));
                } else {
                    self.push_entry(EntryKind::Jobs(jobs));
                }
            }
            Slash::Job(id) => self.follow_job(id),
            Slash::Kill(id) => self.kill_job(id, typed),
            Slash::Context => {
                let messages = self.session.context_messages();
                let text = if messages.is_empty() {
                    format!("{typed}\n(no context messages: `!cmd` adds one)")
                } else {
                    format!("{typed}\n{}", messages.join("\n\n"))
                };
                self.note(NoteKind::Info, text);
            }
            Slash::Artifact(id) => self.open_artifact(id),
            Slash::Help => self.note(NoteKind::Info, HELP),
            Slash::Quit => self.ask_quit(),
            Slash::Usage(text) => self.note(NoteKind::Warning, text),
        }
    }
}
