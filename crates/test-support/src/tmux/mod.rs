//! A real terminal for tests: a program in a tmux pane, driven by keys and read back as text,
//! the way a person at a terminal would use it.
//!
//! Each [`TmuxPane`] runs its own tmux server on a private socket (`tmux -S <dir>/sock`, the
//! directory 0700 and removed on drop, `-f /dev/null` so no user configuration applies), with
//! one session whose single pane runs the program. Dropping the pane kills that server and
//! every process still in the program's session, so a failing test leaves nothing behind.
//!
//! ```
//! use agentsh_test_support::tmux::{skip_without_tmux, TmuxPane, TIMEOUT};
//!
//! if skip_without_tmux("doc example") {
//!     return;
//! }
//! let pane = TmuxPane::builder(["bash", "--norc", "--noprofile", "-i"])
//!     .size(80, 24)
//!     .env("GREETING", "hello")
//!     .start()
//!     .expect("tmux starts");
//! pane.send_text("echo \"$GREETING, world\"");
//! pane.send_enter();
//! // On timeout the error shows the last screen, so `expect` reports what was on it.
//! pane.wait_for_text("hello, world", TIMEOUT).expect("the echo");
//! pane.send_keys(&["C-d"]);
//! let status = pane.wait_exit(TIMEOUT).expect("bash exits on C-d");
//! assert!(status.success());
//! ```
//!
//! What to know:
//!
//! - **Environment.** The program gets exactly: `PATH` and `HOME` of the test process (or
//!   `/usr/local/bin:/usr/bin:/bin` and `/`), `LANG=C.UTF-8`, `TERM=`[`TERM`] (`xterm-256color`,
//!   which crossterm handles and every terminfo has), `SHELL=/bin/sh`, then whatever
//!   [`PaneBuilder::env`] sets (which wins, `TERM` and `SHELL` included) — plus what tmux adds:
//!   `TMUX`, `TMUX_PANE`, `TERM_PROGRAM=tmux`, `TERM_PROGRAM_VERSION`, `PWD`. Nothing else of
//!   the test's environment leaks in unless [`PaneBuilder::inherit_env`] asks for it. (The
//!   tmux server is started with exactly that environment, which tmux gives every pane; `TERM`
//!   and `SHELL` are tmux options, `default-terminal` and `default-shell`, set from it.)
//! - **Keys.** [`TmuxPane::send_keys`] takes tmux key names (`Escape`, `Enter`, `C-c`, `M-x`,
//!   `Up`, `F1`, `BSpace`, `PageDown`, …); [`TmuxPane::send_text`] sends text literally
//!   (`send-keys -l`, nothing interpreted, a trailing `;` included). Every call is delivered to
//!   the program's terminal at once (`escape-time` is 0, and keys injected with `send-keys`
//!   never wait for it anyway), so an `Escape` followed straight away by `j` may reach the
//!   program in one read, which reads as `Alt-j`: to send a lone Esc and then a key, wait for
//!   the screen to show the Esc's effect in between.
//! - **Screens.** [`TmuxPane::capture`] is the visible pane, one `String` per row (trailing
//!   spaces trimmed by tmux, a wide character once without its padding cell);
//!   [`TmuxPane::capture_styled`] has the SGR sequences in it too (`capture-pane -e`). A
//!   program in the alternate screen is captured there.
//! - **Waiting.** Never sleep-and-look: wait with [`TmuxPane::wait_for`],
//!   [`TmuxPane::wait_for_text`] or [`TmuxPane::wait_gone`] (polling every [`POLL`]), with
//!   [`TIMEOUT`] (10 s) unless a test has a reason; the machine may be a loaded 2-core box.
//! - **Exit.** The pane stays after the program exits (`remain-on-exit on`), so
//!   [`TmuxPane::wait_exit`] can read its status. tmux then scrolls the screen up one row and
//!   writes `Pane is dead (status N, <time>)` on the last row: a screen captured after the exit
//!   usually shows that (not when tmux 3.3a missed the exit, which it does now and then under
//!   load; the status then comes from `/proc`).
//! - **Starting.** [`PaneBuilder::start`] returns once tmux has forked the program; it may not
//!   have exec'd yet, so a test that looks for it in `/proc` (by its argv, or at
//!   [`TmuxPane::pane_pid`]) waits for it first, or waits for its first screen.
//! - **Resizing.** [`TmuxPane::resize`] resizes the window (`resize-window`); the program gets
//!   `SIGWINCH` and sees the new size.
//! - **Closing the terminal.** [`TmuxPane::kill_server`] is a person closing the terminal: the
//!   program gets the hangup, and nothing else is done to it. Drop does the same and then
//!   `SIGKILL`s whatever is still in the program's session after a grace period
//!   ([`DROP_GRACE`]); processes that left that session (`setsid`) are not tracked.
//! - **No tmux.** [`tmux_available`] / [`skip_without_tmux`]: tests skip with a note when tmux
//!   is not installed (`scripts/install-test-deps` installs it).

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

mod builder;
mod screen;

pub use builder::PaneBuilder;
pub use screen::{WaitError, format_screen};

/// How long the waits of a test should allow unless it has a reason to differ: generous, for
/// a loaded 2-core machine.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// How often the waits look at the screen (or the pane's state) again.
pub const POLL: Duration = Duration::from_millis(50);

/// The `TERM` the program sees unless [`PaneBuilder::env`] sets another: tmux's
/// `default-terminal`. crossterm writes plain xterm/ANSI sequences whatever `TERM` says, and
/// `xterm-256color` is in every terminfo database (Debian's `ncurses-base`), so `tput` and
/// curses programs inside work too.
pub const TERM: &str = "xterm-256color";

/// The pane's size, columns and rows, unless [`PaneBuilder::size`] sets another.
pub const DEFAULT_SIZE: (u16, u16) = (100, 30);

/// How long drop lets the program's session end on the hangup before it `SIGKILL`s what is
/// left.
pub const DROP_GRACE: Duration = Duration::from_secs(1);

/// How long [`TmuxPane::kill_server`] waits for the server to exit before it `SIGKILL`s it.
const SERVER_EXIT: Duration = Duration::from_secs(5);

/// How long a `SIGKILL`ed process may take to be gone before drop gives up on it.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// The longest piece of text one `send-keys -l` carries (tmux refuses commands over ~16 KiB).
const TEXT_CHUNK: usize = 4096;

/// Whether a working `tmux` is on `PATH` (`tmux -V` runs); looked up once per process.
pub fn tmux_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        crate::which("tmux").is_some_and(|tmux| {
            Command::new(tmux)
                .arg("-V")
                .stdin(Stdio::null())
                .output()
                .is_ok_and(|out| out.status.success())
        })
    })
}

/// True (and a note on stderr naming `test`) when tmux is missing and the test should return
/// at once: `if skip_without_tmux("resize") { return; }`.
pub fn skip_without_tmux(test: &str) -> bool {
    if tmux_available() {
        return false;
    }
    eprintln!("{test}: skipped, tmux is not installed (scripts/install-test-deps installs it)");
    true
}

/// A program running in a pane of its own tmux server: keys in, screens out. See the
/// [module documentation](self).
///
/// Methods that talk to tmux panic (a test failure) with tmux's message when tmux fails, except
/// the waits, which return it in their error.
#[derive(Debug)]
pub struct TmuxPane {
    tmux: PathBuf,
    dir: PathBuf,
    socket: PathBuf,
    pane_id: String,
    pane_pid: u32,
    server_pid: Option<u32>,
    server_started: bool,
    server_killed: bool,
}

impl TmuxPane {
    /// What to run: `argv[0]` is looked up on the program's `PATH`. Set size, environment and
    /// directory on the builder, then [`PaneBuilder::start`].
    pub fn builder<S: AsRef<OsStr>>(argv: impl IntoIterator<Item = S>) -> PaneBuilder {
        PaneBuilder::new(
            argv.into_iter()
                .map(|arg| arg.as_ref().to_owned())
                .collect(),
        )
    }

    /// Sends tmux key names (`Escape`, `Enter`, `C-c`, `Up`, `F5`, …), in order, in one
    /// `send-keys`.
    ///
    /// # Panics
    ///
    /// When tmux refuses (an unknown key name, the server gone).
    pub fn send_keys(&self, keys: &[&str]) {
        let mut args: Vec<OsString> =
            vec!["send-keys".into(), "-t".into(), self.pane_id.clone().into()];
        args.extend(keys.iter().map(|key| tmux_arg(OsStr::new(key))));
        self.tmux_or_panic(&args);
    }

    /// Types `text` literally (`send-keys -l`): no key names, no `;` separators, UTF-8 as is.
    ///
    /// # Panics
    ///
    /// When tmux refuses (the server gone).
    pub fn send_text(&self, text: &str) {
        let mut rest = text;
        while !rest.is_empty() {
            let mut end = rest.len().min(TEXT_CHUNK);
            while !rest.is_char_boundary(end) {
                end -= 1;
            }
            let (chunk, tail) = rest.split_at(end);
            let args: Vec<OsString> = vec![
                "send-keys".into(),
                "-t".into(),
                self.pane_id.clone().into(),
                "-l".into(),
                "--".into(),
                tmux_arg(OsStr::new(chunk)),
            ];
            self.tmux_or_panic(&args);
            rest = tail;
        }
    }

    /// Presses Enter (`send-keys Enter`: a carriage return, as a terminal sends).
    ///
    /// # Panics
    ///
    /// When tmux refuses (the server gone).
    pub fn send_enter(&self) {
        self.send_keys(&["Enter"]);
    }

    /// The visible screen, one `String` a row (trailing spaces trimmed).
    ///
    /// # Panics
    ///
    /// When tmux fails (the server gone).
    pub fn capture(&self) -> Vec<String> {
        self.try_capture(false)
            .unwrap_or_else(|err| panic!("{err}"))
    }

    /// The pane's scrollback and its visible screen (`capture-pane -S -`), one `String` a row:
    /// everything the pane still holds, also what scrolled off the top and what the
    /// alternate screen covers.
    ///
    /// # Panics
    ///
    /// When tmux fails (the server gone).
    pub fn capture_history(&self) -> Vec<String> {
        assert!(!self.server_killed, "the tmux server was killed");
        let mut rows = Vec::new();
        // The normal screen and its history, then the alternate screen when one is shown.
        for extra in [&["-a"][..], &[]] {
            let mut args = vec!["capture-pane", "-p", "-S", "-", "-t", &self.pane_id];
            args.extend_from_slice(extra);
            if let Ok(out) = self.tmux_args(&args) {
                rows.extend(out.lines().map(str::to_owned));
            }
        }
        rows
    }

    /// The visible screen with its colours and attributes as SGR escape sequences
    /// (`capture-pane -e`), one `String` a row.
    ///
    /// # Panics
    ///
    /// When tmux fails (the server gone).
    pub fn capture_styled(&self) -> Vec<String> {
        self.try_capture(true).unwrap_or_else(|err| panic!("{err}"))
    }

    /// Waits until `ready(screen)` holds, looking every [`POLL`]; returns that screen.
    ///
    /// # Errors
    ///
    /// When `timeout` passes first or the server is gone: the error has the last screen.
    pub fn wait_for(
        &self,
        ready: impl Fn(&[String]) -> bool,
        timeout: Duration,
    ) -> Result<Vec<String>, WaitError> {
        self.wait_until("the screen to satisfy the condition", ready, timeout)
    }

    /// Waits until a row of the screen contains `text` (within one row); returns that screen.
    ///
    /// # Errors
    ///
    /// As [`TmuxPane::wait_for`].
    pub fn wait_for_text(&self, text: &str, timeout: Duration) -> Result<Vec<String>, WaitError> {
        self.wait_until(
            &format!("the screen to show {text:?}"),
            |screen| screen.iter().any(|row| row.contains(text)),
            timeout,
        )
    }

    /// Waits until no row of the screen contains `text`; returns that screen.
    ///
    /// # Errors
    ///
    /// As [`TmuxPane::wait_for`].
    pub fn wait_gone(&self, text: &str, timeout: Duration) -> Result<Vec<String>, WaitError> {
        self.wait_until(
            &format!("{text:?} to leave the screen"),
            |screen| !screen.iter().any(|row| row.contains(text)),
            timeout,
        )
    }

    /// Resizes the pane (its window, `resize-window`) to `cols` x `rows`; the program gets
    /// `SIGWINCH`.
    ///
    /// # Panics
    ///
    /// When tmux refuses (a size out of 1..=10000, the server gone) or the pane did not take
    /// the size.
    pub fn resize(&self, cols: u16, rows: u16) {
        let args: Vec<OsString> = vec![
            "resize-window".into(),
            "-t".into(),
            self.pane_id.clone().into(),
            "-x".into(),
            cols.to_string().into(),
            "-y".into(),
            rows.to_string().into(),
        ];
        self.tmux_or_panic(&args);
        let size = self.size();
        assert_eq!(
            size,
            (cols, rows),
            "tmux resized the pane to {size:?}, not {:?}",
            (cols, rows)
        );
    }

    /// The pane's size, columns and rows.
    ///
    /// # Panics
    ///
    /// When tmux fails (the server gone) or prints no size.
    pub fn size(&self) -> (u16, u16) {
        self.two_numbers("#{pane_width} #{pane_height}")
    }

    /// The cursor's position, column and row from 0 at the top left.
    ///
    /// # Panics
    ///
    /// When tmux fails (the server gone) or prints no position.
    pub fn cursor(&self) -> (u16, u16) {
        self.two_numbers("#{cursor_x} #{cursor_y}")
    }

    /// The pid of the program (the pane's first process; a one-word argv is exec'd through
    /// `env`, which keeps the pid).
    pub fn pane_pid(&self) -> u32 {
        self.pane_pid
    }

    /// The pid of the tmux server.
    pub fn server_pid(&self) -> Option<u32> {
        self.server_pid
    }

    /// The server's socket (in the pane's private directory).
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Whether the program is still running (false once it exited or the server is gone).
    pub fn is_alive(&self) -> bool {
        matches!(self.state(), Ok(None))
    }

    /// How the program ended, once tmux has its status; `None` while it runs.
    ///
    /// # Errors
    ///
    /// When tmux fails (the server gone): its message.
    pub fn exit_status(&self) -> Result<Option<ExitStatus>, String> {
        self.state()
    }

    /// Waits up to `timeout` for the program to exit; its status, or `None` when it still runs
    /// (or the server is gone).
    pub fn wait_exit(&self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.state() {
                Ok(Some(status)) => return Some(status),
                Err(_) => return None,
                Ok(None) if Instant::now() >= deadline => return None,
                Ok(None) => std::thread::sleep(POLL),
            }
        }
    }

    /// Closes the terminal, as a person closing its window would: kills the tmux server (the
    /// program gets the hangup) and waits for the server to exit (`SIGKILL` after 5 s). Does
    /// nothing to the program beyond that; drop later sweeps its session.
    pub fn kill_server(&mut self) {
        if std::mem::replace(&mut self.server_killed, true) || !self.server_started {
            return;
        }
        let child = self
            .client()
            .arg("kill-server")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let deadline = Instant::now() + SERVER_EXIT;
        if let Ok(mut child) = child {
            while child.try_wait().is_ok_and(|status| status.is_none()) && Instant::now() < deadline
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(server) = self.server_pid {
            while is_running(server) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            if is_running(server) {
                crate::send_signal(server, libc::SIGKILL);
                let deadline = Instant::now() + KILL_WAIT;
                while is_running(server) && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
        }
    }

    /// `None` while the program runs, its status once tmux has it (a dead pane whose status
    /// is not collected yet still counts as running).
    fn state(&self) -> Result<Option<ExitStatus>, String> {
        if self.server_killed {
            return Err("the tmux server was killed".into());
        }
        let out = self.tmux_args(&[
            "display-message",
            "-p",
            "-t",
            &self.pane_id,
            "#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}",
        ])?;
        let mut fields = out.trim().split(':');
        let (dead, code, signal) = (fields.next(), fields.next(), fields.next());
        if dead != Some("1") {
            return Ok(None);
        }
        if let Some(code) = code.and_then(|code| code.parse::<i32>().ok()) {
            return Ok(Some(ExitStatus::from_raw(code << 8)));
        }
        if let Some(signal) = signal.and_then(|signal| signal.parse::<i32>().ok()) {
            return Ok(Some(ExitStatus::from_raw(signal)));
        }
        // tmux 3.3a now and then misses a quick program's SIGCHLD (seen with many servers
        // starting at once): the pane is dead, its status never comes, and the program stays
        // a zombie of the server. The kernel keeps its wait status in /proc.
        Ok(self.zombie_status())
    }

    /// The wait status of the program when it is a zombie child of the server (field 52 of
    /// `/proc/<pid>/stat`, `exit_code`).
    fn zombie_status(&self) -> Option<ExitStatus> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pane_pid)).ok()?;
        let (_, rest) = stat.rsplit_once(')')?;
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let is_servers_zombie = fields.first() == Some(&"Z")
            && fields.get(1).and_then(|ppid| ppid.parse::<u32>().ok()) == self.server_pid;
        let status = fields.get(49)?.parse::<i32>().ok()?;
        is_servers_zombie.then(|| ExitStatus::from_raw(status))
    }

    fn wait_until(
        &self,
        waited_for: &str,
        ready: impl Fn(&[String]) -> bool,
        timeout: Duration,
    ) -> Result<Vec<String>, WaitError> {
        let start = Instant::now();
        let mut screen = Vec::new();
        let program = loop {
            match self.try_capture(false) {
                Ok(now) if ready(&now) => return Ok(now),
                Ok(now) => screen = now,
                Err(err) => break err,
            }
            if start.elapsed() >= timeout {
                break match self.state() {
                    Ok(None) => "running".to_owned(),
                    Ok(Some(status)) => format!("exited, {status}"),
                    Err(err) => err,
                };
            }
            std::thread::sleep(POLL);
        };
        Err(WaitError {
            waited_for: waited_for.to_owned(),
            waited: start.elapsed(),
            program,
            screen,
        })
    }

    fn try_capture(&self, styled: bool) -> Result<Vec<String>, String> {
        if self.server_killed {
            return Err("the tmux server was killed".into());
        }
        let mut args = vec!["capture-pane", "-p", "-t", &self.pane_id];
        if styled {
            args.push("-e");
        }
        let out = self.tmux_args(&args)?;
        Ok(out.lines().map(str::to_owned).collect())
    }

    fn two_numbers(&self, format: &str) -> (u16, u16) {
        let out = self
            .tmux_args(&["display-message", "-p", "-t", &self.pane_id, format])
            .unwrap_or_else(|err| panic!("{err}"));
        let mut numbers = out.split_whitespace().map(str::parse::<u16>);
        match (numbers.next(), numbers.next()) {
            (Some(Ok(a)), Some(Ok(b))) => (a, b),
            _ => panic!("tmux display-message {format:?} printed {out:?}, not two numbers"),
        }
    }

    fn tmux_args(&self, args: &[&str]) -> Result<String, String> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        self.run(self.client(), &args)
    }

    fn tmux_or_panic(&self, args: &[OsString]) {
        if let Err(err) = self.run(self.client(), args) {
            panic!("{err}");
        }
    }

    /// A tmux client of the pane's server, with an empty environment (`-u`: UTF-8 whatever
    /// the locale; `-f /dev/null`: no configuration file).
    fn client(&self) -> Command {
        let mut command = Command::new(&self.tmux);
        command
            .env_clear()
            .arg("-u")
            .arg("-S")
            .arg(&self.socket)
            .arg("-f")
            .arg("/dev/null")
            .stdin(Stdio::null());
        command
    }

    /// Runs `command` (a [`TmuxPane::client`]) with `args` (a `;` of its own separates
    /// commands: arguments from outside go through [`tmux_arg`]); its stdout, or an error with
    /// its stderr.
    fn run(&self, mut command: Command, args: &[OsString]) -> Result<String, String> {
        command.args(args);
        let out = command
            .output()
            .map_err(|err| format!("cannot run {}: {err}", self.tmux.display()))?;
        if out.status.success() {
            return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
        }
        let shown: Vec<_> = args.iter().map(|arg| arg.to_string_lossy()).collect();
        Err(format!(
            "tmux {} failed ({}): {}",
            shown.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

impl Drop for TmuxPane {
    fn drop(&mut self) {
        self.kill_server();
        if self.pane_pid != 0 {
            // The program leads its session (tmux made it with setsid): whatever of that
            // session outlives the hangup is killed after the grace period.
            let deadline = Instant::now() + DROP_GRACE;
            while !session_members(self.pane_pid).is_empty() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            // Until the session is gone (a SIGKILL takes effect when the process next runs;
            // a child forked meanwhile is found by the next scan).
            let deadline = Instant::now() + KILL_WAIT;
            loop {
                let left = session_members(self.pane_pid);
                if left.is_empty() || Instant::now() >= deadline {
                    break;
                }
                for pid in left {
                    crate::send_signal(pid, libc::SIGKILL);
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `arg` as tmux's command line takes it literally: tmux ends a command at an argument ending
/// in `;` (the `;` dropped, a lone `;` is a separator) unless that `;` is escaped as `\;`.
fn tmux_arg(arg: &OsStr) -> OsString {
    match arg.as_bytes().strip_suffix(b";") {
        Some(head) => {
            let mut bytes = head.to_vec();
            bytes.extend_from_slice(b"\\;");
            OsString::from_vec(bytes)
        }
        _ => arg.to_owned(),
    }
}

/// A new 0700 directory for one server's socket: short, because a socket's path must fit in
/// 108 bytes.
fn private_dir() -> Result<PathBuf, String> {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let base = std::env::temp_dir();
    let base = if base.as_os_str().len() > 60 {
        PathBuf::from("/tmp")
    } else {
        base
    };
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("agentsh-tmux-{}-{n}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(err) => return Err(format!("cannot create {}: {err}", dir.display())),
        }
    }
}

/// Whether `pid` exists and is not a zombie.
fn is_running(pid: u32) -> bool {
    !crate::is_zombie(pid)
}

/// Live (not zombie) processes whose session id is `sid`.
fn session_members(sid: u32) -> Vec<u32> {
    crate::proc_pids()
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                let Some((_, rest)) = stat.rsplit_once(')') else {
                    return false;
                };
                // After the name: state, ppid, pgrp, session, …
                let fields: Vec<&str> = rest.split_whitespace().take(4).collect();
                fields.len() == 4 && fields[0] != "Z" && fields[3].parse() == Ok(sid)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_trailing_semicolon_is_escaped_for_tmux() {
        for (arg, escaped) in [
            ("a;", "a\\;"),
            (";", "\\;"),
            ("b\\;", "b\\\\;"),
            ("a;b", "a;b"),
            ("", ""),
            ("Enter", "Enter"),
        ] {
            assert_eq!(tmux_arg(OsStr::new(arg)), OsStr::new(escaped), "{arg:?}");
        }
    }
}
