//! Test support: a private world, the library serving a socket in it, a client over a real
//! `UnixStream`, process checks.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentsh_agent_session::{AgentSession, LocalHandle, SessionOptions, Settings};
use agentsh_rpc::{CallHost, CancellationToken, Handle, Value};
use tempfile::TempDir;

/// A generous bound for things that should take milliseconds, on a loaded 2-core machine.
pub const LIVENESS: Duration = Duration::from_secs(20);

/// A private directory: home, artifact store, working directory, and the socket's place.
pub struct World {
    dir: TempDir,
    extra_toml: String,
}

impl World {
    /// A fresh world whose sessions are configured by `extra_toml` on top of its artifact
    /// store.
    pub fn new(extra_toml: &str) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("agentsh-rpc-test-")
            .tempdir()
            .expect("temp dir");
        for sub in ["home", "work"] {
            std::fs::create_dir_all(dir.path().join(sub)).expect("create dir");
        }
        Self {
            dir,
            extra_toml: extra_toml.to_owned(),
        }
    }

    /// The world's root.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Where the server listens.
    pub fn socket_path(&self) -> PathBuf {
        self.root().join("agentsh.sock")
    }

    /// What makes a new session in this world (the `new_session` of `serve_listener`).
    pub fn session_factory(
        &self,
    ) -> impl Fn() -> Result<Handle, agentsh_agent_session::SessionError> + Send + Sync + 'static
    {
        let root = self.root().to_owned();
        let toml = format!(
            "[artifacts]\ndir = \"{}\"\n{}",
            root.join("artifacts").display(),
            self.extra_toml
        );
        move || {
            let home = root.join("home");
            let settings = Settings::from_toml(&toml, &root.join("config.toml"), Some(&home))
                .expect("valid test config");
            AgentSession::new(SessionOptions {
                settings,
                cwd: root.join("work"),
                home: Some(home),
                ..SessionOptions::default()
            })
            .map(|session| LocalHandle::new(session).into_handle())
        }
    }
}

/// `serve_listener` running on a runtime of its own, in a [`World`].
pub struct Served {
    /// The runtime the server runs on.
    pub runtime: tokio::runtime::Runtime,
    /// Cancelling it shuts the server down.
    pub shutdown: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
    path: PathBuf,
}

impl Served {
    /// Listens on the world's socket and serves sessions of the world, telling `host`.
    pub fn start(world: &World, host: Option<Arc<dyn CallHost>>) -> Self {
        let runtime = agentsh_test_support::runtime();
        let path = world.socket_path();
        let listener = {
            let _entered = runtime.enter();
            agentsh_rpc::listen(&path).expect("listen")
        };
        let shutdown = CancellationToken::new();
        let served = runtime.spawn(agentsh_rpc::serve_listener(
            listener,
            world.session_factory(),
            host,
            shutdown.clone(),
        ));
        Self {
            runtime,
            shutdown,
            task: Some(served),
            path,
        }
    }

    /// A new client connection.
    pub fn connect(&self) -> Client {
        Client::connect(&self.path)
    }

    /// Cancels the shutdown token and waits (at most [`LIVENESS`]) until serving returned.
    pub fn shut_down(&mut self) {
        self.shutdown.cancel();
        let served = self.task.take().expect("still serving");
        self.runtime.block_on(async {
            tokio::time::timeout(LIVENESS, served)
                .await
                .expect("serve_listener returns after shutdown")
                .expect("serve_listener does not panic");
        });
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if self.task.is_some() && !std::thread::panicking() {
            self.shut_down();
        }
    }
}

/// A client over a real `UnixStream`.
pub struct Client {
    stream: UnixStream,
    lines: BufReader<UnixStream>,
}

impl Client {
    /// Connects to `path`.
    pub fn connect(path: &Path) -> Self {
        let stream = UnixStream::connect(path).expect("connect");
        let lines = BufReader::new(stream.try_clone().expect("clone the stream"));
        Self { stream, lines }
    }

    /// Writes the JSON of `value` as one line.
    pub fn send(&mut self, value: &Value) {
        let mut line = value.to_string();
        line.push('\n');
        self.stream
            .write_all(line.as_bytes())
            .expect("write to the server");
    }

    /// The next line within `limit`, or `None` at end of stream.
    pub fn next_line(&mut self, limit: Duration) -> Option<Value> {
        self.stream
            .set_read_timeout(Some(limit))
            .expect("set a read timeout");
        let mut line = String::new();
        match self.lines.read_line(&mut line) {
            Ok(0) => None,
            Ok(_) => Some(
                serde_json::from_str(&line)
                    .unwrap_or_else(|err| panic!("not one JSON object ({err}): {line:?}")),
            ),
            Err(err) => panic!("no line within {limit:?}: {err}"),
        }
    }

    /// Lines until (and including) the first for which `done` holds, within [`LIVENESS`].
    pub fn until(&mut self, done: impl Fn(&Value) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + LIVENESS;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(line) = self.next_line(left.max(Duration::from_millis(1))) else {
                panic!("the connection ended; seen: {seen:#?}");
            };
            let finished = done(&line);
            seen.push(line);
            if finished {
                return seen;
            }
        }
    }

    /// Every line until the response with `id`, that response last.
    pub fn until_response(&mut self, id: &str) -> Vec<Value> {
        self.until(|line| line["type"] == "response" && line["id"] == id)
    }

    /// The response with `id` (other lines are dropped).
    pub fn response(&mut self, id: &str) -> Value {
        self.until_response(id).pop().expect("the response")
    }

    /// Whether the server closed the connection within [`LIVENESS`] (lines before the end are
    /// returned).
    pub fn rest_until_closed(&mut self) -> Vec<Value> {
        let mut rest = Vec::new();
        while let Some(line) = self.next_line(LIVENESS) {
            rest.push(line);
        }
        rest
    }
}

/// A string found in no other process's command line.
pub fn unique_marker() -> String {
    agentsh_test_support::unique_marker("agentsh-rpc-marker")
}

/// A command that sleeps 100 s in a child of an `sh` whose argv holds `marker`.
pub fn marked_sleep(marker: &str) -> String {
    agentsh_test_support::marked_sleep(marker)
}

/// Waits until a process with `marker` runs (the command really started).
pub fn wait_for_process(marker: &str) {
    agentsh_test_support::wait_for_process(marker, LIVENESS);
}

/// Asserts that no process with `marker` is left, allowing a moment for the last to be reaped.
pub fn assert_no_survivor(marker: &str) {
    agentsh_test_support::assert_no_survivor(marker, Duration::from_secs(5));
}

/// Waits (at most [`LIVENESS`]) until `done` holds.
pub fn wait_until(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + LIVENESS;
    while !done() {
        assert!(Instant::now() < deadline, "not within {LIVENESS:?}: {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}
