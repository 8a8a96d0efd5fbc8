//! `PtyRun`: one command in the user's shell on a pseudo-terminal.
//!
//! ```text
//! PtyRun::start ──► driver task (tokio) ──────────────────────────────────────────────┐
//!   PtyController ── Control (input, resize, kill) ──►│ master (AsyncFd, non-blocking)    │
//!   Terminal ◄── same bytes ──────────────────────────┤   read ─► OutputSink + Terminal   │
//!   updates (watch) ◄── one tick per chunk ───────────┤   write ◄─ input, terminal replies│
//!   wait() ◄── BashResult ────────────────────────────┘ Supervisor (process): shell ─ tree┘
//! ```
//!
//! The driver owns the master side of the PTY, the supervisor and the sink. It ends when the
//! shell exits, the timeout passes, the command is killed, the head capture of the sink is
//! satisfied, or the tree passed a resource limit. It then ends what is left of the process
//! tree (SIGTERM, [`TERM_GRACE`], SIGKILL — SIGKILL at once for a tree over a limit — through
//! `agentsh_process::Supervisor::kill_tree` on everything below the supervisor, then the
//! supervisor's own sweep), reads the master until every holder of the slave is gone (EIO),
//! and drops the master: no descriptor outlives the session.
//!
//! Resource limits ([`PtyCommand::limits`]) hold the whole tree, the shell included, as they
//! hold a piped command: where the kernel enforces them the shell starts inside a command
//! cgroup of its own (it joins it before its `execve`, so everything it starts is born
//! inside), else the watchdog measures the tree (see `crate::limits`).

use std::collections::VecDeque;
use std::io;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use agentsh_output_sink::{OutputSink, SinkOptions};
use agentsh_process::{ChildExit, InputWait, StartMark, Supervisor, TERM_GRACE};
use agentsh_protocol::{BashResult, CANCELLED_ANNOTATION, LimitHit, LimitKind, timeout_annotation};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::command::PtyCommand;
use crate::error::PtyError;
use crate::keys::{KeyAction, classify_keys};
use crate::limits::{TreeLimits, command_cgroup, limit_check_due};
use crate::pty;
use crate::terminal::{Terminal, TerminalSize};

/// The line written to the output when the PTY fails: `PTY error: <reason>`.
pub const PTY_ERROR_PREFIX: &str = "PTY error: ";

/// How long the driver waits for the last output after the process tree is gone (the kernel
/// reports EIO as soon as every holder of the slave has closed it; this only bounds a
/// descriptor passed to a process outside the tree).
const DRAIN_LIMIT: Duration = Duration::from_secs(2);
/// Bytes read from the master per system call.
const READ_BUFFER: usize = 64 * 1024;
/// Reads per wake-up before the driver looks at input, kills and timers again.
const READS_PER_TURN: usize = 32;

/// Requests from the handles to the driver.
#[derive(Debug)]
enum Control {
    Input(Vec<u8>),
    Resize(TerminalSize),
    Kill,
}

/// A cheap, cloneable handle to a running [`PtyRun`]: input, resize, kill, and the
/// terminal. Every method is a no-op once the command has exited.
#[derive(Debug, Clone)]
pub struct PtyController {
    control: mpsc::UnboundedSender<Control>,
    terminal: Terminal,
    exited: Arc<AtomicBool>,
    updates: watch::Receiver<u64>,
    /// Set once the shell has started.
    pub(crate) shell: Arc<OnceLock<ShellOnTerminal>>,
    /// Bytes of input sent and not yet written to the terminal.
    pending: Arc<AtomicUsize>,
    /// When output last reached the terminal (the start, before any).
    last_output: Arc<Mutex<Instant>>,
}

/// The started shell and the terminal it runs on.
#[derive(Debug)]
pub(crate) struct ShellOnTerminal {
    pub(crate) pid: u32,
    /// `st_rdev` of the PTY's slave side.
    pub(crate) terminal: u64,
    /// A copy of the master side, to read the terminal's modes (echo, line mode) through;
    /// closed when the command ends (the terminal is then gone for good).
    pub(crate) modes: Mutex<Option<OwnedFd>>,
}

impl PtyController {
    /// Writes bytes to the program as typed input, unchanged. Returns false (and drops the
    /// bytes) when the command has already exited.
    pub fn write_input(&self, bytes: &[u8]) -> bool {
        if self.has_exited() {
            return false;
        }
        if bytes.is_empty() {
            return true;
        }
        self.pending.fetch_add(bytes.len(), Ordering::SeqCst);
        let sent = self.control.send(Control::Input(bytes.to_vec())).is_ok();
        if !sent {
            self.pending.fetch_sub(bytes.len(), Ordering::SeqCst);
        }
        sent
    }

    /// Bytes of input sent with [`write_input`](Self::write_input) (and terminal replies) that
    /// the program's terminal has not taken yet: 0 once everything went in. Input waits while
    /// the program does not read and the terminal's buffer is full.
    pub fn input_pending(&self) -> usize {
        if self.has_exited() {
            return 0;
        }
        self.pending.load(Ordering::SeqCst)
    }

    /// Handles keyboard input from the host terminal: normalises it for the
    /// program's current modes, or kills the command when it contains the kill key (Esc; on
    /// the alternate screen Ctrl+]). Returns what was done; ignored after exit.
    pub fn send_keys(&self, input: &[u8]) -> KeyAction {
        let action = classify_keys(input, self.terminal.key_modes());
        match &action {
            KeyAction::Kill => self.kill(),
            KeyAction::Forward(bytes) => {
                self.write_input(bytes);
            }
        }
        action
    }

    /// Resizes the PTY and the terminal, clamped to 20–400 columns × 5–200 rows; returns the
    /// size applied.
    pub fn resize(&self, cols: u16, rows: u16) -> TerminalSize {
        let size = TerminalSize::clamped(cols, rows);
        let _ = self.control.send(Control::Resize(size));
        size
    }

    /// Ends the command's whole process tree. The result is `cancelled: true`.
    pub fn kill(&self) {
        let _ = self.control.send(Control::Kill);
    }

    /// The headless terminal fed with the command's output.
    pub fn terminal(&self) -> &Terminal {
        &self.terminal
    }

    /// A receiver that changes whenever new output reached the terminal (values are a
    /// counter; only the change matters). Its sender is dropped when the session ends.
    pub fn updates(&self) -> watch::Receiver<u64> {
        self.updates.clone()
    }

    /// How long no output has reached the terminal: since the last chunk (a prompt without a
    /// line end counts), or since the start before any. What "the output is quiet" means for
    /// a program that may be waiting for input.
    pub fn quiet_for(&self) -> Duration {
        lock(&self.last_output).elapsed()
    }

    /// Whether the command has exited (or was never started).
    pub fn has_exited(&self) -> bool {
        self.exited.load(Ordering::SeqCst)
    }

    /// The process id of the shell the command runs in, once it has started (`None` before,
    /// and when it could not be started).
    pub fn shell_pid(&self) -> Option<u32> {
        self.shell.get().map(|shell| shell.pid)
    }
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One command running on a pseudo-terminal.
///
/// Started with [`PtyRun::start`]; [`PtyRun::wait`] returns its [`BashResult`]. The
/// output goes through the given [`OutputSink`] (sanitised, bounded, spilled) and, unchanged,
/// into a headless [`Terminal`]. A session dropped before it finished kills its command.
#[derive(Debug)]
pub struct PtyRun {
    controller: PtyController,
    task: Option<JoinHandle<(BashResult, OutputSink)>>,
}

impl PtyRun {
    /// Starts `command` on a new PTY, its output going into `sink`. Never fails: when the PTY
    /// or the shell cannot be started, the session ends at once with the line
    /// `PTY error: <reason>` in its output and `exitCode: null`.
    ///
    /// Must be called within a tokio runtime.
    pub fn start(command: PtyCommand, sink: OutputSink) -> Self {
        Self::start_inner(command, sink, None)
    }

    /// Like [`PtyRun::start`], also handing `on_text` the sanitised text the sink commits,
    /// in order (the unfinished last line when the command ends): a job's reader sees the same
    /// stream without sanitising it twice.
    pub fn start_with_text(command: PtyCommand, sink: OutputSink, on_text: TextCallback) -> Self {
        Self::start_inner(command, sink, Some(on_text))
    }

    fn start_inner(command: PtyCommand, sink: OutputSink, on_text: Option<TextCallback>) -> Self {
        let size = TerminalSize::clamped(command.size.cols, command.size.rows);
        let terminal = Terminal::with_scrollback(size, command.scrollback);
        // What the screen shows is redacted like the stream.
        terminal.set_secrets(sink.secrets().cloned());
        let (control, requests) = mpsc::unbounded_channel();
        let (updates_tx, updates) = watch::channel(0);
        let exited = Arc::new(AtomicBool::new(false));
        let shell = Arc::new(OnceLock::new());
        let pending = Arc::new(AtomicUsize::new(0));
        let last_output = Arc::new(Mutex::new(Instant::now()));
        let driver = Driver {
            pending: Arc::clone(&pending),
            last_output: Arc::clone(&last_output),
            shell: Arc::clone(&shell),
            terminal: terminal.clone(),
            sink,
            updates: updates_tx,
            exited: Arc::clone(&exited),
            requests,
            last_byte: b'\n',
            input: VecDeque::new(),
            on_text,
            blocked_hosts: Vec::new(),
            limits: None,
            limit: None,
        };
        let task = tokio::spawn(driver.run(command, size));
        Self {
            controller: PtyController {
                control,
                terminal,
                exited,
                updates,
                shell,
                pending,
                last_output,
            },
            task: Some(task),
        }
    }

    /// A handle for input, resizes and kills that can live elsewhere (a UI task) while this
    /// session is awaited.
    pub fn controller(&self) -> PtyController {
        self.controller.clone()
    }

    /// See [`PtyController::write_input`].
    pub fn write_input(&self, bytes: &[u8]) -> bool {
        self.controller.write_input(bytes)
    }

    /// See [`PtyController::send_keys`].
    pub fn send_keys(&self, input: &[u8]) -> KeyAction {
        self.controller.send_keys(input)
    }

    /// See [`PtyController::resize`].
    pub fn resize(&self, cols: u16, rows: u16) -> TerminalSize {
        self.controller.resize(cols, rows)
    }

    /// See [`PtyController::kill`].
    pub fn kill(&self) {
        self.controller.kill();
    }

    /// The headless terminal fed with the command's output.
    pub fn terminal(&self) -> &Terminal {
        self.controller.terminal()
    }

    /// See [`PtyController::updates`].
    pub fn updates(&self) -> watch::Receiver<u64> {
        self.controller.updates()
    }

    /// See [`PtyController::input_wait`].
    pub fn input_wait(&self) -> InputWait {
        self.controller.input_wait()
    }

    /// Waits for the command to end (exit, timeout, kill) and returns its result; its process
    /// tree is gone and the PTY closed by then. Dropping the future kills the command.
    pub async fn wait(self) -> BashResult {
        self.wait_with_sink().await.0
    }

    /// Like [`PtyRun::wait`], and gives the sink back (already dumped) for what the result
    /// does not carry, such as the head capture ([`OutputSink::head_text`]).
    pub async fn wait_with_sink(mut self) -> (BashResult, OutputSink) {
        let Some(task) = self.task.take() else {
            return (
                BashResult::default(),
                OutputSink::new(SinkOptions::default()),
            );
        };
        let guard = KillOnDrop(self.controller.clone());
        let outcome = match task.await {
            Ok(outcome) => outcome,
            Err(err) => {
                // The driver panicked: its sink is gone; report the failure like a PTY error.
                let mut sink = OutputSink::new(SinkOptions::default());
                sink.push(format!("{PTY_ERROR_PREFIX}the PTY driver failed: {err}\n").as_bytes());
                (
                    BashResult {
                        summary: sink.dump(),
                        ..BashResult::default()
                    },
                    sink,
                )
            }
        };
        std::mem::forget(guard);
        outcome
    }
}

impl Drop for PtyRun {
    fn drop(&mut self) {
        if self.task.is_some() {
            self.controller.kill();
        }
    }
}

struct KillOnDrop(PtyController);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        self.0.kill();
    }
}

/// Why the command stopped before its shell exited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Timeout,
    Killed,
    Head,
    /// The tree passed a resource limit ([`Driver::limit`]).
    Limit,
}

enum Ending {
    Exited(ChildExit),
    Stopped(Stop),
    Failed(PtyError),
}

struct Driver {
    terminal: Terminal,
    sink: OutputSink,
    updates: watch::Sender<u64>,
    exited: Arc<AtomicBool>,
    shell: Arc<OnceLock<ShellOnTerminal>>,
    requests: mpsc::UnboundedReceiver<Control>,
    /// The last byte passed to the sink (to start the error line on a line of its own).
    last_byte: u8,
    /// Input not yet written to the master.
    input: VecDeque<u8>,
    /// Gets the text the sink commits (see [`PtyRun::start_with_text`]).
    on_text: Option<TextCallback>,
    /// Shared with the controllers: bytes in `input` and on their way to it.
    pending: Arc<AtomicUsize>,
    /// Shared with the controllers: when output last came.
    last_output: Arc<Mutex<Instant>>,
    /// What a sandbox's network allowlist refused for the command's namespace (its own: a PTY
    /// session is a tree of its own), taken when the tree ends.
    blocked_hosts: Vec<String>,
    /// The tree's resource limits as its watchdog watches them, once the shell started.
    limits: Option<TreeLimits>,
    /// The resource limit the tree passed.
    limit: Option<LimitHit>,
}

/// Receives the sanitised text a session's sink commits, in order.
pub type TextCallback = Box<dyn FnMut(&str) + Send>;

impl Driver {
    /// Closes the copy of the master kept for reading the terminal's modes.
    fn close_modes(&self) {
        if let Some(shell) = self.shell.get() {
            drop(lock(&shell.modes).take());
        }
    }

    async fn run(mut self, command: PtyCommand, size: TerminalSize) -> (BashResult, OutputSink) {
        let (ending, master) = match self.start(&command, size).await {
            Ok((master, supervisor)) => {
                let mut buf = vec![0u8; READ_BUFFER];
                let ending = self
                    .supervise(&master, supervisor, command.timeout, &mut buf)
                    .await;
                (ending, Some(master))
            }
            Err(err) => (Ending::Failed(err), None),
        };
        self.exited.store(true, Ordering::SeqCst);
        self.close_modes();
        drop(master);
        self.finish(ending, command.timeout)
    }

    async fn start(
        &mut self,
        command: &PtyCommand,
        size: TerminalSize,
    ) -> Result<(AsyncFd<OwnedFd>, Supervisor), PtyError> {
        let pair = pty::open(size).map_err(PtyError::Open)?;
        let cgroup = command_cgroup(&command.limits);
        let spec = command
            .spawn_spec(&pair.slave, cgroup.as_deref())
            .map_err(PtyError::Open)?;
        // Every process of the tree starts after this.
        let started = StartMark::now();
        let mut terminal = rustix::fs::fstat(&pair.slave)
            .map_err(|err| PtyError::Open(err.into()))?
            .st_rdev;
        drop(pair.slave);
        let mut supervisor = Supervisor::spawn(spec).await.map_err(PtyError::Spawn)?;
        // A sandboxed shell runs on a copy of the PTY made in its private `devpts` (the one
        // opened here has no name there): its master replaces ours.
        let master = match supervisor.take_terminal() {
            Some(inside) => {
                terminal = pty::slave_device(&inside).map_err(PtyError::Open)?;
                pty::set_nonblocking(&inside).map_err(PtyError::Open)?;
                inside
            }
            None => pair.master,
        };
        let modes = master.try_clone().map_err(PtyError::Open)?;
        self.limits = TreeLimits::new(
            command.limits,
            cgroup,
            supervisor.pid(),
            supervisor.child_pid(),
            started,
        );
        let _ = self.shell.set(ShellOnTerminal {
            pid: supervisor.child_pid(),
            terminal,
            modes: Mutex::new(Some(modes)),
        });
        // SAFETY: the OwnedFd owns its descriptor for the whole life of the AsyncFd.
        let master = unsafe {
            AsyncFd::register_with_interest(master, Interest::READABLE | Interest::WRITABLE)
        }
        .map_err(|err| PtyError::Open(err.into()))?;
        Ok((master, supervisor))
    }

    /// Runs until the shell exits or the command is stopped, then ends the tree and reads the
    /// last output.
    async fn supervise(
        &mut self,
        master: &AsyncFd<OwnedFd>,
        mut supervisor: Supervisor,
        timeout: Duration,
        buf: &mut [u8],
    ) -> Ending {
        let deadline = Instant::now() + timeout;
        let mut failure: Option<PtyError> = None;
        let mut closed = false;
        let ending = loop {
            tokio::select! {
                biased;
                request = self.requests.recv() => match request {
                    Some(Control::Input(bytes)) => self.input.extend(bytes),
                    Some(Control::Resize(size)) => {
                        self.terminal.resize(size);
                        if let Err(err) = pty::set_size(master.get_ref(), size) {
                            break Ending::Failed(PtyError::Resize(err));
                        }
                    }
                    // `None`: every handle is gone, nobody can see or stop the command.
                    Some(Control::Kill) | None => break Ending::Stopped(Stop::Killed),
                },
                exit = supervisor.wait_child() => match exit {
                    Ok(exit) => break Ending::Exited(exit),
                    Err(err) => break Ending::Failed(PtyError::ExitStatus(err)),
                },
                () = tokio::time::sleep_until(deadline) => break Ending::Stopped(Stop::Timeout),
                () = limit_check_due(self.limits.as_ref()) => {
                    if self.on_limit_check() {
                        break Ending::Stopped(Stop::Limit);
                    }
                }
                guard = master.writable(), if !self.input.is_empty() => {
                    if let Ok(mut guard) = guard {
                        let before = self.input.len();
                        let written = guard.try_io(|fd| write_some(fd.get_ref(), &mut self.input));
                        if let Ok(Err(_)) = written {
                            // The slave is gone (or the input cannot be written): drop it.
                            self.input.clear();
                        }
                        self.pending.fetch_sub(before - self.input.len(), Ordering::SeqCst);
                    }
                }
                ready = master.readable(), if !closed => {
                    match ready.and_then(|mut guard| self.read_turn(&mut guard, buf)) {
                        // `true`: nobody holds the slave any more; the shell's exit follows.
                        Ok(slave_closed) => closed = slave_closed,
                        Err(err) => break Ending::Failed(PtyError::Read(err)),
                    }
                    if self.sink.head_satisfied() {
                        break Ending::Stopped(Stop::Head);
                    }
                }
            }
        };
        self.exited.store(true, Ordering::SeqCst);
        // An EIO read while the command ran is not the end of its output: Linux can report
        // it while the last lines written before the exit are still on their way to the
        // master (an answered `read -p` then its `echo` lost "hi Bob" about once in fifteen
        // runs). Read again until the terminal says so once more, now that the tree is over.
        closed = false;
        self.close_modes();
        self.input.clear();
        self.pending.store(0, Ordering::SeqCst);

        // After the end a read error is kept (the first one) and ends the reading.
        let mut read_rest = |driver: &mut Self, ready: io::Result<_>| match ready
            .and_then(|mut guard| driver.read_turn(&mut guard, buf))
        {
            Ok(slave_closed) => slave_closed,
            Err(err) => {
                failure.get_or_insert(PtyError::Read(err));
                true
            }
        };
        // What the kernel enforced after the last look (an OOM kill that ended the command
        // within its first look's interval, its shell then exiting on its own).
        let ending = self.enforced_at_end(ending);
        // End whatever is left of the tree while still reading, so that nothing blocks on a
        // full terminal on its way out. A tree over a limit gets no grace to grow further in.
        let grace = if matches!(ending, Ending::Stopped(Stop::Limit)) {
            Duration::ZERO
        } else {
            TERM_GRACE
        };
        {
            let ending_tree = supervisor.kill_tree(grace);
            tokio::pin!(ending_tree);
            loop {
                tokio::select! {
                    _ = &mut ending_tree => break,
                    ready = master.readable(), if !closed => closed = read_rest(self, ready),
                }
            }
        }
        self.blocked_hosts = supervisor
            .network_link()
            .map(|link| link.refused_since(0))
            .unwrap_or_default();
        supervisor.shutdown().await;
        // The tree's cgroup goes with it.
        if let Some(limits) = self.limits.take() {
            limits.release();
        }

        // Read the rest: EIO comes once every holder of the slave has closed it.
        let drain_until = Instant::now() + DRAIN_LIMIT;
        while !closed {
            match tokio::time::timeout_at(drain_until, master.readable()).await {
                Err(_elapsed) => break,
                Ok(ready) => closed = read_rest(self, ready),
            }
        }
        match (ending, failure) {
            (Ending::Exited(_), Some(err)) => Ending::Failed(err),
            (ending, _) => ending,
        }
    }

    /// Looks at the tree against its limits; `true` when it passed one and must end.
    fn on_limit_check(&mut self) -> bool {
        let Some(limits) = self.limits.as_mut() else {
            return false;
        };
        match limits.check() {
            Some((hit, true)) => {
                self.limit = Some(hit);
                true
            }
            // Told once; the command goes on without what the kernel refused it.
            Some((hit, false)) => {
                self.limit.get_or_insert(hit);
                false
            }
            None => false,
        }
    }

    /// `ending`, or the end by a limit when the kernel ended the tree's biggest process for
    /// its memory limit since the last look; refused forks found now are told too.
    fn enforced_at_end(&mut self, ending: Ending) -> Ending {
        let Some(hit) = self.limits.as_ref().and_then(TreeLimits::enforced) else {
            return ending;
        };
        match ending {
            Ending::Exited(_) if hit.kind == LimitKind::Memory => {
                self.limit = Some(hit);
                Ending::Stopped(Stop::Limit)
            }
            ending => {
                self.limit.get_or_insert(hit);
                ending
            }
        }
    }

    /// Reads what is available (a bounded number of reads) and passes it on. `Ok(true)` once
    /// every holder of the slave has closed it.
    fn read_turn(
        &mut self,
        guard: &mut tokio::io::unix::AsyncFdReadyGuard<'_, OwnedFd>,
        buf: &mut [u8],
    ) -> io::Result<bool> {
        for _ in 0..READS_PER_TURN {
            match guard.try_io(|fd| read_once(fd.get_ref(), buf)) {
                Err(_would_block) => return Ok(false),
                Ok(Ok(0)) => return Ok(true),
                Ok(Ok(n)) => self.output(&buf[..n]),
                // The slave side is closed by everyone (Linux reports EIO, not EOF).
                Ok(Err(err))
                    if err.raw_os_error() == Some(rustix::io::Errno::IO.raw_os_error()) =>
                {
                    return Ok(true);
                }
                Ok(Err(err)) if err.kind() == io::ErrorKind::Interrupted => {}
                Ok(Err(err)) => return Err(err),
            }
        }
        Ok(false)
    }

    fn output(&mut self, bytes: &[u8]) {
        match self.on_text.as_mut() {
            Some(on_text) => self.sink.push_with(bytes, &mut **on_text),
            None => self.sink.push(bytes),
        }
        self.terminal.process(bytes);
        if let Some(&last) = bytes.last() {
            self.last_byte = last;
        }
        let replies = self.terminal.take_replies();
        if !replies.is_empty() && !self.exited.load(Ordering::SeqCst) {
            self.pending.fetch_add(replies.len(), Ordering::SeqCst);
            self.input.extend(replies);
        }
        *lock(&self.last_output) = Instant::now();
        self.updates
            .send_modify(|tick| *tick = tick.wrapping_add(1));
    }

    fn finish(mut self, ending: Ending, timeout: Duration) -> (BashResult, OutputSink) {
        let (exit_code, stop, error) = match ending {
            Ending::Exited(exit) => (Some(exit.shell_code()), None, None),
            // The limit line says why it ended: no exit status of its own.
            Ending::Stopped(Stop::Limit) => (None, Some(Stop::Limit), None),
            Ending::Stopped(Stop::Head) => (Some(0), Some(Stop::Head), None),
            Ending::Stopped(stop) => (None, Some(stop), None),
            Ending::Failed(err) => (None, None, Some(err)),
        };
        if let Some(err) = error {
            let mut line = Vec::new();
            if self.last_byte != b'\n' {
                line.push(b'\n');
            }
            line.extend_from_slice(format!("{PTY_ERROR_PREFIX}{err}\n").as_bytes());
            self.sink.push(&line);
            self.terminal.process(&line);
        }
        let annotation = match stop {
            Some(Stop::Timeout) => Some(timeout_annotation(timeout.as_secs_f64())),
            Some(Stop::Killed) => Some(CANCELLED_ANNOTATION.to_owned()),
            Some(Stop::Head | Stop::Limit) | None => None,
        };
        self.updates
            .send_modify(|tick| *tick = tick.wrapping_add(1));
        let summary = match self.on_text.as_mut() {
            Some(on_text) => self.sink.dump_with(&mut **on_text),
            None => self.sink.dump(),
        };
        let result = BashResult {
            summary,
            annotation,
            exit_code,
            cancelled: matches!(stop, Some(Stop::Timeout | Stop::Killed)),
            timed_out: stop == Some(Stop::Timeout),
            session_restarted: false,
            blocked_hosts: std::mem::take(&mut self.blocked_hosts),
            needs_terminal: None,
            limit: self.limit,
        };
        (result, self.sink)
    }
}

fn read_once(fd: &OwnedFd, buf: &mut [u8]) -> io::Result<usize> {
    Ok(rustix::io::read(fd, buf)?)
}

/// Writes as much of `input` as the master takes.
fn write_some(fd: &OwnedFd, input: &mut VecDeque<u8>) -> io::Result<()> {
    while !input.is_empty() {
        let (front, _) = input.as_slices();
        match rustix::io::write(fd, front) {
            Ok(n) => {
                input.drain(..n);
            }
            Err(rustix::io::Errno::INTR) => {}
            Err(err) => return Err(err.into()),
        }
    }
    Ok(())
}
