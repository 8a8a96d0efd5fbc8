//! What `/proc` and the terminal's modes tell about the program on a [`PtyController`]'s
//! terminal: its name and command line, whether it waits for input, and whether that input is
//! hidden.

use agentsh_process::InputWait;

use crate::run::{PtyController, lock};

impl PtyController {
    /// The command name of the program in the terminal's foreground (`bash` at the shell's
    /// prompt, `python3` while it runs); `None` once the command has exited, before its shell
    /// has started, or where `/proc` cannot tell.
    pub fn foreground_program(&self) -> Option<String> {
        if self.has_exited() {
            return None;
        }
        let shell = self.shell.get()?;
        let name = agentsh_process::foreground_program(shell.pid);
        // The shell may have exited (and its pid gone to another process) meanwhile.
        name.filter(|_| !self.has_exited())
    }

    /// The command line of the program that waits for input on the terminal, when it is not
    /// the terminal's own shell (`ssh-keygen -p -f key` run by the job's command); `None` when
    /// the shell itself reads (a `read` builtin, or the program it became), nothing waits,
    /// the command has exited, or `/proc` cannot tell. A `/proc` scan, as
    /// [`input_wait`](Self::input_wait).
    pub fn asking_command_line(&self) -> Option<String> {
        if self.has_exited() {
            return None;
        }
        let shell = self.shell.get()?;
        let waiter = agentsh_process::input_waiter(shell.pid, Some(shell.terminal))?;
        if waiter == shell.pid {
            return None;
        }
        let line = agentsh_process::command_line(waiter);
        // The shell may have exited (and its pids gone to others) meanwhile.
        line.filter(|_| !self.has_exited())
    }

    /// Whether the terminal takes input hidden as it is set now: echo off and line mode on, as
    /// `sudo`, an `ssh` passphrase prompt, `read -s` and `getpass` set it (a REPL at its prompt
    /// turns both off, and is not hidden). False before the shell started and after it ended.
    pub fn input_hidden(&self) -> bool {
        use rustix::termios::LocalModes;
        if self.has_exited() {
            return false;
        }
        self.shell.get().is_some_and(|shell| {
            lock(&shell.modes).as_ref().is_some_and(|fd| {
                rustix::termios::tcgetattr(fd).is_ok_and(|modes| {
                    !modes.local_modes.contains(LocalModes::ECHO)
                        && modes.local_modes.contains(LocalModes::ICANON)
                })
            })
        })
    }

    /// Whether a process of the terminal's foreground process group waits for input from
    /// it, as the kernel shows it in `/proc` (a job's `waiting_for_input`; see
    /// [`agentsh_process::input_wait`] for what counts). [`InputWait::NotWaiting`] once the
    /// command has exited, [`InputWait::Unknown`] before its shell has started or where
    /// `/proc` cannot tell.
    ///
    /// A synchronous `/proc` scan (one `stat` read per process on the system, a few more per
    /// foreground thread: some microseconds per process): ask when the output has been quiet
    /// for a while, not on every chunk.
    pub fn input_wait(&self) -> InputWait {
        if self.has_exited() {
            return InputWait::NotWaiting;
        }
        let Some(shell) = self.shell.get() else {
            return InputWait::Unknown;
        };
        let answer = agentsh_process::input_wait(shell.pid, Some(shell.terminal));
        // The shell may have exited (and its pid gone to another process) meanwhile.
        if self.has_exited() {
            InputWait::NotWaiting
        } else {
            answer
        }
    }
}
