//! [`PaneBuilder`]: what to run in a pane, and how; starting its server.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use super::{DEFAULT_SIZE, TERM, TmuxPane, private_dir, tmux_arg};

/// What to run in a pane, and how: made by [`TmuxPane::builder`], started by
/// [`PaneBuilder::start`].
#[derive(Debug, Clone)]
pub struct PaneBuilder {
    argv: Vec<OsString>,
    env: Vec<(OsString, Option<OsString>)>,
    inherit_env: bool,
    cwd: Option<PathBuf>,
    size: (u16, u16),
}

impl PaneBuilder {
    /// A builder for `argv` with the defaults.
    pub(super) fn new(argv: Vec<OsString>) -> Self {
        Self {
            argv,
            env: Vec::new(),
            inherit_env: false,
            cwd: None,
            size: DEFAULT_SIZE,
        }
    }

    /// The pane's size in columns and rows (default [`DEFAULT_SIZE`]; tmux takes 1..=10000).
    #[must_use]
    pub fn size(mut self, cols: u16, rows: u16) -> Self {
        self.size = (cols, rows);
        self
    }

    /// Sets `key=value` in the program's environment (over the defaults; `TERM` and `SHELL`
    /// included).
    #[must_use]
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env
            .push((key.as_ref().to_owned(), Some(value.as_ref().to_owned())));
        self
    }

    /// Sets each pair of `vars` as [`PaneBuilder::env`] does.
    #[must_use]
    pub fn envs<K: AsRef<OsStr>, V: AsRef<OsStr>>(
        mut self,
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        for (key, value) in vars {
            self = self.env(key, value);
        }
        self
    }

    /// Leaves `key` out of the program's environment (`TERM` and `SHELL` excepted: tmux always
    /// sets them).
    #[must_use]
    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Self {
        self.env.push((key.as_ref().to_owned(), None));
        self
    }

    /// Starts from the whole environment of the test process (less tmux's own `TMUX` and
    /// `TMUX_PANE`) instead of the few defaults.
    #[must_use]
    pub fn inherit_env(mut self) -> Self {
        self.inherit_env = true;
        self
    }

    /// The program's working directory (default: the test process's).
    #[must_use]
    pub fn cwd(mut self, dir: impl AsRef<Path>) -> Self {
        self.cwd = Some(dir.as_ref().to_owned());
        self
    }

    /// The environment the program is to get, sorted (before tmux adds its own variables).
    fn environment(&self) -> BTreeMap<OsString, OsString> {
        let mut env: BTreeMap<OsString, OsString> = if self.inherit_env {
            std::env::vars_os()
                .filter(|(key, _)| key != "TMUX" && key != "TMUX_PANE")
                .collect()
        } else {
            let path =
                std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
            let home = std::env::var_os("HOME").unwrap_or_else(|| "/".into());
            [
                ("PATH".into(), path),
                ("HOME".into(), home),
                ("LANG".into(), "C.UTF-8".into()),
            ]
            .into_iter()
            .collect()
        };
        env.insert("TERM".into(), TERM.into());
        env.insert("SHELL".into(), "/bin/sh".into());
        for (key, value) in &self.env {
            match value {
                Some(value) => env.insert(key.clone(), value.clone()),
                None => env.remove(key),
            };
        }
        env
    }

    /// Starts a private tmux server running the program in a pane of the given size.
    ///
    /// # Errors
    ///
    /// When tmux is not installed, the private directory cannot be made, or tmux refuses to
    /// start (its message is in the error). A program that cannot be executed is not an
    /// error here: its pane shows why and dies with status 1 ([`TmuxPane::wait_exit`]).
    pub fn start(self) -> Result<TmuxPane, String> {
        if self.argv.is_empty() {
            return Err("TmuxPane: no program to run (an empty argv)".into());
        }
        let tmux = crate::which("tmux")
            .ok_or("tmux is not installed (scripts/install-test-deps installs it)")?;
        let dir = private_dir()?;
        let socket = dir.join("sock");
        let mut pane = TmuxPane {
            tmux,
            dir,
            socket,
            pane_id: String::new(),
            pane_pid: 0,
            server_pid: None,
            server_started: false,
            server_killed: false,
        };
        // From here on, drop cleans up whatever was started.
        let cwd = match &self.cwd {
            Some(dir) => dir.clone(),
            None => std::env::current_dir()
                .map_err(|err| format!("TmuxPane: the current directory: {err}"))?,
        };
        let mut env = self.environment();
        let term = env
            .remove(OsStr::new("TERM"))
            .unwrap_or_else(|| TERM.into());
        let shell = env
            .get(OsStr::new("SHELL"))
            .cloned()
            .unwrap_or_else(|| "/bin/sh".into());
        // tmux runs a one-word command through `default-shell -c`: make it two words, so
        // the argv is exec'd as given (env exec's the program, which keeps the pane's pid).
        let mut argv = self.argv.clone();
        if argv.len() == 1 {
            let env_program = crate::which("env").unwrap_or_else(|| "/usr/bin/env".into());
            argv.splice(0..0, [env_program.into_os_string(), "--".into()]);
        }
        // The server is started by a client of its own, with the program's environment,
        // which becomes the server's global environment that every pane gets (no session
        // environment is imported: `update-environment` is emptied). Its command line, which
        // the server keeps as its own argv, does not hold the program's argv, so a search of
        // `/proc` for a test's marker argument finds the program only.
        let mut server: Vec<OsString> = vec!["start-server".into()];
        for option in [
            ["-s", "exit-empty", "off"],
            ["-s", "escape-time", "0"],
            ["-g", "status", "off"],
            ["-g", "remain-on-exit", "on"],
            ["-g", "update-environment", ""],
        ] {
            server.extend([";", "set", option[0], option[1], option[2]].map(OsString::from));
        }
        for (option, value) in [("default-terminal", term), ("default-shell", shell)] {
            server.extend([";".into(), "set".into(), "-g".into(), option.into()]);
            server.push(tmux_arg(&value));
        }
        let mut command = pane.client();
        command.envs(&env).current_dir("/");
        pane.server_started = true;
        pane.run(command, &server)?;
        // The server daemonised; its command line names the private socket, and nothing else's
        // does (the client has exited).
        let socket = pane.socket.to_string_lossy().into_owned();
        pane.server_pid = crate::alive_containing(&socket).first().copied();

        let mut session: Vec<OsString> = [
            "new-session",
            "-d",
            "-P",
            "-F",
            "#{pane_id} #{pane_pid}",
            "-s",
            "test",
        ]
        .map(OsString::from)
        .into();
        session.extend([
            "-x".into(),
            self.size.0.to_string().into(),
            "-y".into(),
            self.size.1.to_string().into(),
            "-c".into(),
            tmux_arg(cwd.as_os_str()),
            "--".into(),
        ]);
        session.extend(argv.iter().map(|arg| tmux_arg(arg)));
        let mut command = pane.client();
        command.envs(&env).current_dir("/");
        let out = pane.run(command, &session)?;
        let mut fields = out.split_whitespace();
        let (Some(id), Some(Ok(pid))) = (fields.next(), fields.next().map(str::parse)) else {
            return Err(format!("tmux new-session printed {out:?}, not `%id pid`"));
        };
        id.clone_into(&mut pane.pane_id);
        pane.pane_pid = pid;
        Ok(pane)
    }
}
