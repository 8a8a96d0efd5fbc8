//! A private OpenSSH server on loopback for the remote-execution tests: a real
//! `sshd` on `127.0.0.1`, a key pair the client logs in with, and an `ssh -F` config that makes
//! the machine's own ssh setup irrelevant.
//!
//! Each [`Sshd`] has its own 0700 directory holding the host key, the client keys,
//! `authorized_keys` (0600), the server's `sshd_config`, its log, the client configs with their
//! `known_hosts`, and `home/`: the far side's `HOME`. Dropping it ends the server and every
//! process started through it, and removes the directory.
//!
//! ```
//! use agentsh_test_support::sshd::{skip_without_sshd, Sshd};
//!
//! if skip_without_sshd("doc example") {
//!     return;
//! }
//! let sshd = Sshd::start().expect("sshd starts");
//! std::fs::write(sshd.home().join(".bashrc"), "echo hello from the far side\n").unwrap();
//! // `ssh -F <config> -T -o BatchMode=yes -p PORT USER@127.0.0.1 'echo $SSH_CONNECTION'`
//! let output = sshd.command("echo $SSH_CONNECTION").output().unwrap();
//! let stdout = String::from_utf8_lossy(&output.stdout);
//! assert!(stdout.starts_with("hello from the far side\n127.0.0.1 "), "{}", sshd.log());
//! // What agentsh gets: `[remote] ssh_command` and `--remote`.
//! let (ssh_command, target) = (sshd.ssh_command(), sshd.target());
//! # let _ = (ssh_command, target);
//! ```
//!
//! What to know (measured with OpenSSH 9.2p1 on Debian 12, as root):
//!
//! - **The server.** `/usr/sbin/sshd -D -f <dir>/sshd_config -E <dir>/log`, a child of the test
//!   process (`-D`: not daemonised, so the harness holds it, sees it exit when its port was
//!   taken, and reaps it; it still writes its `PidFile`). The config: `Port` (a free port, found
//!   by binding port 0; when another process takes it before sshd binds it, sshd exits with
//!   `Bind to port … failed: Address already in use` and [`Sshd::start`] tries another),
//!   `ListenAddress 127.0.0.1`, `HostKey`, `AuthorizedKeysFile` (absolute), public keys only
//!   (`PasswordAuthentication no`, `KbdInteractiveAuthentication no`, `UsePAM no`), `PidFile`,
//!   `StrictModes no` (sshd would otherwise refuse keys in a directory under `/tmp`, which is
//!   world-writable), `PermitRootLogin prohibit-password`, `PermitUserRC no` (the real home's
//!   `~/.ssh/rc` must not run), `PrintMotd no`, and `SetEnv` for `HOME` and [`MARKER_VAR`].
//!   `sshd -f` reads no other config file: not `/etc/ssh/sshd_config` nor its
//!   `sshd_config.d` (it would still run an `/etc/ssh/sshrc`, which Debian does not ship). sshd
//!   needs `/run/sshd` (owned by root, not group/world-writable) for privilege separation;
//!   [`Sshd::start`] creates it when missing. It is ready when its log says
//!   `Server listening on 127.0.0.1 port PORT.` (logged after `listen`).
//! - **The far side's home.** sshd takes `HOME` from the passwd entry; `SetEnv HOME=<dir>/home`
//!   overrides it in the session (SetEnv wins over sshd's default environment), and bash reads
//!   `.bashrc` from `$HOME`, so a `.bashrc` written to [`Sshd::home`] runs before every command
//!   and its output comes first on stdout; the machine's own `~/.bashrc` does not run. Why it
//!   runs at all: sshd starts the command as `bash -c CMD` (not a login shell, not
//!   interactive, stdin a pipe), and Debian's bash is built with `SSH_SOURCE_BASHRC`, which
//!   sources `~/.bashrc` when `SSH_CLIENT` is set and `SHLVL` was below 2; a bash started
//!   inside that one (`SHLVL` 2) does not. The working directory is still the passwd home
//!   (`/root`): sshd changes to it before `HOME` matters. The session's environment is
//!   sshd's own, not the test's: `HOME`, `USER`, `LOGNAME`, `SHELL`, `MAIL`, `SSH_CLIENT`,
//!   `SSH_CONNECTION`, [`MARKER_VAR`] and a compiled-in `PATH`
//!   (`/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin` for root): run agentsh on
//!   the far side by its absolute path.
//! - **The client.** `ssh -F <config>` reads only that file (neither `~/.ssh/config` nor
//!   `/etc/ssh/ssh_config`); it sets `IdentityFile` with `IdentitiesOnly yes` (so no default
//!   `~/.ssh/id_*` key is tried), `IdentityAgent none` (no agent),
//!   `UserKnownHostsFile <dir>/known_hosts` (pre-filled: `[127.0.0.1]:PORT ssh-ed25519 …`),
//!   `GlobalKnownHostsFile /dev/null`, `StrictHostKeyChecking yes`, `UpdateHostKeys no` and
//!   `ControlMaster no`. ssh finds `~/.ssh` through the passwd home, not `$HOME`, so a test's
//!   own `HOME` would not isolate it; with this config ssh does not read `~/.ssh` at all (and
//!   does not create it).
//! - **Error variants.** [`Sshd::unknown_host_ssh_command`]: an empty `known_hosts` and
//!   `StrictHostKeyChecking` at its default (`ask`); with `-o BatchMode=yes` ssh cannot ask and
//!   fails at once with `Host key verification failed.` (exit 255), writing nothing.
//!   [`Sshd::refused_key_ssh_command`]: a second key, not in `authorized_keys`:
//!   `USER@127.0.0.1: Permission denied (publickey).` (exit 255).
//! - **Cleanup.** sshd hands sessions to per-connection processes, and a command may detach
//!   (`setsid cmd &`) and outlive both its session and the parent chain up to sshd (it is
//!   reparented to init). So every process of the instance carries [`MARKER_VAR`]`=<dir>` in
//!   its environment: sshd itself (set on its command, inherited by every sshd process) and
//!   each session (`SetEnv`). [`Sshd::processes`] finds them by that entry in
//!   `/proc/<pid>/environ`, plus the descendants of the server by their parent chains (a
//!   process that cleared its environment, `env -i`, is found only while its ancestors live).
//!   Drop `SIGKILL`s them all, the server included, until none is left (at most
//!   [`DROP_WAIT`]). A test that checks that the far side ends its own trees must look before
//!   the drop.
//! - **No sshd.** [`sshd_available`] / [`skip_without_sshd`]: tests skip with a note when
//!   OpenSSH is not installed, and fail instead when `CI` is set (`scripts/install-test-deps`
//!   installs `openssh-server` and `openssh-client`).

use std::ffi::CStr;
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The OpenSSH server binary (Debian's `openssh-server`; sshd re-executes itself, so the path
/// must be absolute).
pub const SSHD: &str = "/usr/sbin/sshd";

/// How long [`Sshd::start`] waits for the server to listen: generous, for a loaded 2-core
/// machine.
pub const START_TIMEOUT: Duration = Duration::from_secs(10);

/// How long drop keeps killing the instance's processes before it gives up on them.
pub const DROP_WAIT: Duration = Duration::from_secs(5);

/// The variable in the environment of every process of one instance (the server and every
/// session), set to the instance's directory: how [`Sshd::processes`] finds them.
pub const MARKER_VAR: &str = "AGENTSH_TEST_SSHD";

/// How many ports [`Sshd::start`] tries when another process takes the free port first.
const PORT_ATTEMPTS: u32 = 5;

/// How often the waits look again.
const POLL: Duration = Duration::from_millis(10);

/// Whether OpenSSH is installed: [`SSHD`], and `ssh` and `ssh-keygen` on `PATH`. Looked up once
/// per process.
pub fn sshd_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        Path::new(SSHD).is_file()
            && crate::which("ssh").is_some()
            && crate::which("ssh-keygen").is_some()
    })
}

/// True (and a note on stderr naming `test`) when OpenSSH is missing and the test should return
/// at once: `if skip_without_sshd("reconnect") { return; }`.
///
/// # Panics
///
/// When OpenSSH is missing and `CI` is set: the remote tests must run there.
pub fn skip_without_sshd(test: &str) -> bool {
    if sshd_available() {
        return false;
    }
    let message = format!(
        "{test}: OpenSSH ({SSHD}, ssh, ssh-keygen) is not installed \
         (scripts/install-test-deps installs it)"
    );
    assert!(
        std::env::var_os("CI").is_none(),
        "{message}; CI is set: the remote tests must run there"
    );
    eprintln!("{message}: skipped");
    true
}

/// A private sshd on `127.0.0.1` with its client side. See the [module documentation](self).
#[derive(Debug)]
pub struct Sshd {
    dir: PathBuf,
    home: PathBuf,
    ssh_config: PathBuf,
    port: u16,
    user: String,
    server: Child,
}

impl Sshd {
    /// Creates the directory and keys, starts sshd on a free port of `127.0.0.1` and returns
    /// once it listens (at most [`START_TIMEOUT`]; another port when its port was taken).
    ///
    /// # Errors
    ///
    /// What failed, by name: OpenSSH missing, `ssh-keygen` or a file that cannot be written,
    /// sshd exiting or not listening in time (with its log).
    pub fn start() -> Result<Self, String> {
        if !sshd_available() {
            return Err(format!(
                "OpenSSH ({SSHD}, ssh, ssh-keygen) is not installed \
                 (scripts/install-test-deps installs it)"
            ));
        }
        let user = current_user()?;
        // Removes the directory unless the server starts.
        let dir = DirGuard(private_dir()?);
        prepare(&dir.0)?;
        let mut last = String::new();
        for _ in 0..PORT_ATTEMPTS {
            let port = free_port()?;
            match listen(&dir.0, port)? {
                Listen::Ready(server) => {
                    let dir = dir.keep();
                    return Ok(Self {
                        home: dir.join("home"),
                        ssh_config: dir.join("ssh_config"),
                        dir,
                        port,
                        user,
                        server,
                    });
                }
                Listen::PortTaken(log) => last = log,
            }
        }
        Err(format!(
            "sshd found no free port in {PORT_ATTEMPTS} attempts; its last log:\n{last}"
        ))
    }

    /// The port sshd listens on (on `127.0.0.1`).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The user the client logs in as: the one running the tests (from `getuid` and passwd).
    pub fn user(&self) -> &str {
        &self.user
    }

    /// `ssh://USER@127.0.0.1:PORT`, the `--remote` target.
    pub fn target(&self) -> String {
        format!("ssh://{}@127.0.0.1:{}", self.user, self.port)
    }

    /// The far side's `HOME` (an empty 0700 directory at first): a test writes its `.bashrc`
    /// there.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The instance's private directory (keys, configs, log, [`Sshd::home`]).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The client config that logs in (`ssh -F` it).
    pub fn ssh_config(&self) -> &Path {
        &self.ssh_config
    }

    /// `["ssh", "-F", <ssh_config>]`: `[remote] ssh_command` for a connection that logs in.
    pub fn ssh_command(&self) -> Vec<String> {
        command_with(&self.ssh_config)
    }

    /// `["ssh", "-F", <config>]` with a config whose `known_hosts` is empty and whose
    /// `StrictHostKeyChecking` is left at its default: with `-o BatchMode=yes` the connection
    /// fails with `Host key verification failed.` instead of asking.
    pub fn unknown_host_ssh_command(&self) -> Vec<String> {
        command_with(&self.dir.join("ssh_config_unknown_host"))
    }

    /// `["ssh", "-F", <config>]` with a config whose key is not in `authorized_keys`: the
    /// connection fails with `Permission denied (publickey).`
    pub fn refused_key_ssh_command(&self) -> Vec<String> {
        command_with(&self.dir.join("ssh_config_refused_key"))
    }

    /// `ssh -F <ssh_config> -T -o BatchMode=yes -p PORT USER@127.0.0.1 <remote>` with stdin
    /// from `/dev/null`: `remote` runs in the far side's shell (bash, after `.bashrc`).
    pub fn command(&self, remote: &str) -> Command {
        let mut command = Command::new("ssh");
        command
            .arg("-F")
            .arg(&self.ssh_config)
            .args(["-T", "-o", "BatchMode=yes", "-p"])
            .arg(self.port.to_string())
            .arg(format!("{}@127.0.0.1", self.user))
            .arg(remote)
            .stdin(Stdio::null());
        command
    }

    /// sshd's log so far (for failure messages; empty when it cannot be read).
    pub fn log(&self) -> String {
        read_log(&self.dir)
    }

    /// The server's pid (the listener).
    pub fn pid(&self) -> u32 {
        self.server.id()
    }

    /// Live processes of this instance other than the server itself: sshd's per-connection
    /// processes, the sessions' shells and everything they started that still carries
    /// [`MARKER_VAR`] or descends from the server. Empty once nothing runs over it.
    pub fn processes(&self) -> Vec<u32> {
        let server = self.server.id();
        let mut processes = self.members();
        processes.retain(|&pid| pid != server);
        processes
    }

    /// Live processes of this instance, the server included: [`MARKER_VAR`] in their
    /// environment, or a descendant of such a process.
    fn members(&self) -> Vec<u32> {
        let mut entry = format!("{MARKER_VAR}=").into_bytes();
        entry.extend_from_slice(self.dir.as_os_str().as_encoded_bytes());
        let parents: Vec<(u32, u32)> = crate::proc_pids()
            .filter_map(|pid| Some((pid, parent(pid)?)))
            .collect();
        let mut members: Vec<u32> = parents
            .iter()
            .map(|&(pid, _)| pid)
            .filter(|&pid| {
                std::fs::read(format!("/proc/{pid}/environ"))
                    .is_ok_and(|environ| environ.split(|&b| b == 0).any(|var| var == entry))
            })
            .collect();
        // Their descendants by parent chain (those that cleared their environment), to a
        // fixed point.
        loop {
            let before = members.len();
            for &(pid, ppid) in &parents {
                if members.contains(&ppid) && !members.contains(&pid) {
                    members.push(pid);
                }
            }
            if members.len() == before {
                break;
            }
        }
        members.retain(|&pid| !crate::is_zombie(pid));
        members
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        // Until nothing of the instance is left: a SIGKILL takes effect when the process next
        // runs, and a child forked meanwhile is found by the next scan.
        let deadline = Instant::now() + DROP_WAIT;
        loop {
            let left = self.members();
            if left.is_empty() || Instant::now() >= deadline {
                break;
            }
            for pid in left {
                crate::send_signal(pid, libc::SIGKILL);
            }
            std::thread::sleep(POLL);
        }
        let _ = self.server.kill();
        let _ = self.server.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Removes a directory on drop unless [`DirGuard::keep`] takes it.
struct DirGuard(PathBuf);

impl DirGuard {
    fn keep(mut self) -> PathBuf {
        std::mem::take(&mut self.0)
    }
}

impl Drop for DirGuard {
    fn drop(&mut self) {
        if !self.0.as_os_str().is_empty() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// How one attempt to start the server ended (other than by an error).
enum Listen {
    /// The server listens.
    Ready(Child),
    /// Another process had the port; sshd's log.
    PortTaken(String),
}

/// `["ssh", "-F", <config>]`.
fn command_with(config: &Path) -> Vec<String> {
    vec![
        "ssh".to_owned(),
        "-F".to_owned(),
        config.to_string_lossy().into_owned(),
    ]
}

/// Keys, `authorized_keys`, `home/` and `/run/sshd` in `dir`: what does not depend on the port.
fn prepare(dir: &Path) -> Result<(), String> {
    let path = dir.to_str().ok_or("the temporary directory is not UTF-8")?;
    if path.contains(['"', '\n', '\r']) {
        return Err(format!(
            "{path}: a quote or newline in the path cannot go into sshd_config"
        ));
    }
    for key in ["host_key", "client_key", "refused_key"] {
        keygen(&dir.join(key))?;
    }
    let public = read(&dir.join("client_key.pub"))?;
    write_private(&dir.join("authorized_keys"), &public)?;
    write_private(&dir.join("known_hosts_empty"), "")?;
    let home = dir.join("home");
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&home)
        .map_err(|err| format!("cannot create {}: {err}", home.display()))?;
    // Privilege separation: sshd insists on this directory (root-owned, 0755 as Debian makes
    // it).
    match std::fs::DirBuilder::new().mode(0o755).create("/run/sshd") {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(err) => Err(format!("cannot create /run/sshd: {err}")),
    }
}

/// Writes the configs for `port`, starts sshd on it and waits until it listens.
fn listen(dir: &Path, port: u16) -> Result<Listen, String> {
    write_configs(dir, port)?;
    // A fresh log per attempt: readiness and port errors are read from it.
    write_private(&dir.join("log"), "")?;
    let mut server = Command::new(SSHD)
        .arg("-D")
        .arg("-f")
        .arg(dir.join("sshd_config"))
        .arg("-E")
        .arg(dir.join("log"))
        .env(MARKER_VAR, dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|err| format!("cannot start {SSHD}: {err}"))?;
    let ready = format!("Server listening on 127.0.0.1 port {port}.");
    let deadline = Instant::now() + START_TIMEOUT;
    let failure = loop {
        if read_log(dir).contains(&ready) {
            return Ok(Listen::Ready(server));
        }
        match server.try_wait() {
            Ok(Some(status)) => {
                let log = read_log(dir);
                if log.contains("Address already in use") {
                    return Ok(Listen::PortTaken(log));
                }
                break format!("sshd exited ({status}) before it listened on port {port}");
            }
            Ok(None) => {}
            Err(err) => break format!("cannot wait for sshd: {err}"),
        }
        if Instant::now() >= deadline {
            break format!("sshd did not listen on port {port} within {START_TIMEOUT:?}");
        }
        std::thread::sleep(POLL);
    };
    let _ = server.kill();
    let _ = server.wait();
    Err(format!("{failure}; its log:\n{}", read_log(dir)))
}

/// `sshd_config`, the three client configs and `known_hosts` in `dir` for `port`.
fn write_configs(dir: &Path, port: u16) -> Result<(), String> {
    let path = dir.display();
    let sshd_config = format!(
        "# A private sshd for agentsh's tests (agentsh_test_support::sshd).\n\
         Port {port}\n\
         ListenAddress 127.0.0.1\n\
         HostKey \"{path}/host_key\"\n\
         AuthorizedKeysFile \"{path}/authorized_keys\"\n\
         PubkeyAuthentication yes\n\
         PasswordAuthentication no\n\
         KbdInteractiveAuthentication no\n\
         UsePAM no\n\
         PidFile \"{path}/sshd.pid\"\n\
         StrictModes no\n\
         PermitRootLogin prohibit-password\n\
         PermitUserRC no\n\
         PrintMotd no\n\
         SetEnv \"HOME={path}/home\" \"{MARKER_VAR}={path}\"\n"
    );
    write_private(&dir.join("sshd_config"), &sshd_config)?;
    let host_key = read(&dir.join("host_key.pub"))?;
    let mut fields = host_key.split_whitespace();
    let (Some(kind), Some(key)) = (fields.next(), fields.next()) else {
        return Err(format!("host_key.pub is not a public key: {host_key:?}"));
    };
    write_private(
        &dir.join("known_hosts"),
        &format!("[127.0.0.1]:{port} {kind} {key}\n"),
    )?;
    let client = |identity: &str, known_hosts: &str, strict: Option<&str>| {
        let strict = strict.map_or_else(String::new, |value| {
            format!("StrictHostKeyChecking {value}\n")
        });
        format!(
            "# The client side of a private sshd for agentsh's tests.\n\
             IdentityFile \"{path}/{identity}\"\n\
             IdentitiesOnly yes\n\
             IdentityAgent none\n\
             UserKnownHostsFile \"{path}/{known_hosts}\"\n\
             GlobalKnownHostsFile /dev/null\n\
             {strict}\
             UpdateHostKeys no\n\
             PreferredAuthentications publickey\n\
             ControlMaster no\n\
             ControlPath none\n\
             ForwardAgent no\n\
             ForwardX11 no\n"
        )
    };
    write_private(
        &dir.join("ssh_config"),
        &client("client_key", "known_hosts", Some("yes")),
    )?;
    write_private(
        &dir.join("ssh_config_unknown_host"),
        &client("client_key", "known_hosts_empty", None),
    )?;
    write_private(
        &dir.join("ssh_config_refused_key"),
        &client("refused_key", "known_hosts", Some("yes")),
    )
}

/// sshd's log in `dir` (empty when it cannot be read).
fn read_log(dir: &Path) -> String {
    std::fs::read(dir.join("log"))
        .map(|log| String::from_utf8_lossy(&log).into_owned())
        .unwrap_or_default()
}

/// The name of the user running the tests (`getuid`, then passwd).
fn current_user() -> Result<String, String> {
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    let mut buf = vec![0u8; 4096];
    loop {
        // SAFETY: an all-zero passwd is a valid value of this plain C struct.
        let mut passwd: libc::passwd = unsafe { std::mem::zeroed() };
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: every pointer points into live memory of the given length; getpwuid_r writes
        // only there and sets `result` to `&passwd` or null.
        let rc = unsafe {
            libc::getpwuid_r(
                uid,
                &raw mut passwd,
                buf.as_mut_ptr().cast(),
                buf.len(),
                &raw mut result,
            )
        };
        if rc == libc::ERANGE && buf.len() < 1 << 20 {
            buf.resize(buf.len() * 2, 0);
            continue;
        }
        if rc != 0 || result.is_null() || passwd.pw_name.is_null() {
            return Err(format!("uid {uid} has no passwd entry (rc {rc})"));
        }
        // SAFETY: pw_name points to a NUL-terminated string in `buf`, alive here.
        let name = unsafe { CStr::from_ptr(passwd.pw_name) };
        return name
            .to_str()
            .map(str::to_owned)
            .map_err(|_| format!("the name of uid {uid} is not UTF-8"));
    }
}

/// A new 0700 directory under the temporary directory.
fn private_dir() -> Result<PathBuf, String> {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let base = std::env::temp_dir();
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("agentsh-sshd-{}-{n}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(err) => return Err(format!("cannot create {}: {err}", dir.display())),
        }
    }
}

/// A port of `127.0.0.1` that was free a moment ago (the kernel's pick for port 0).
fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .map_err(|err| format!("cannot find a free port on 127.0.0.1: {err}"))
}

/// `ssh-keygen -q -t ed25519 -N '' -f <path>`: `path` (0600) and `path.pub`.
fn keygen(path: &Path) -> Result<(), String> {
    let output = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "agentsh-test", "-f"])
        .arg(path)
        .stdin(Stdio::null())
        .output()
        .map_err(|err| format!("cannot run ssh-keygen: {err}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ssh-keygen -f {} failed ({}): {}",
            path.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|err| format!("cannot read {}: {err}", path.display()))
}

/// Writes `text` to `path`, created 0600 (or truncated).
fn write_private(path: &Path, text: &str) -> Result<(), String> {
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .and_then(|mut file| file.write_all(text.as_bytes()))
        .map_err(|err| format!("cannot write {}: {err}", path.display()))
}

/// The parent of `pid` (field 4 of `/proc/<pid>/stat`), if it still exists.
fn parent(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_taken_before_sshd_binds_it_is_reported_for_a_retry() {
        if skip_without_sshd("a_port_taken_before_sshd_binds_it") {
            return;
        }
        let dir = DirGuard(private_dir().expect("a directory"));
        prepare(&dir.0).expect("keys");
        // Another process got there first.
        let taken = std::net::TcpListener::bind(("127.0.0.1", 0)).expect("a port");
        let port = taken.local_addr().expect("its address").port();
        match listen(&dir.0, port).expect("no other error") {
            Listen::PortTaken(log) => assert!(log.contains("Address already in use"), "{log}"),
            Listen::Ready(mut server) => {
                let _ = server.kill();
                let _ = server.wait();
                panic!("sshd listened on a taken port: {}", read_log(&dir.0));
            }
        }
    }

    #[test]
    fn the_configs_name_the_port_and_the_instance_files() {
        let dir = DirGuard(private_dir().expect("a directory"));
        std::fs::write(dir.0.join("host_key.pub"), "ssh-ed25519 AAAAkey comment\n").unwrap();
        write_configs(&dir.0, 4711).expect("configs");
        let path = dir.0.display();
        let known_hosts = std::fs::read_to_string(dir.0.join("known_hosts")).unwrap();
        assert_eq!(known_hosts, "[127.0.0.1]:4711 ssh-ed25519 AAAAkey\n");
        let sshd_config = std::fs::read_to_string(dir.0.join("sshd_config")).unwrap();
        assert!(sshd_config.contains("Port 4711\n"), "{sshd_config}");
        assert!(
            sshd_config.contains(&format!(
                "SetEnv \"HOME={path}/home\" \"{MARKER_VAR}={path}\""
            )),
            "{sshd_config}"
        );
        let unknown = std::fs::read_to_string(dir.0.join("ssh_config_unknown_host")).unwrap();
        assert!(!unknown.contains("StrictHostKeyChecking"), "{unknown}");
        assert!(unknown.contains("known_hosts_empty"), "{unknown}");
        for name in [
            "sshd_config",
            "ssh_config",
            "ssh_config_refused_key",
            "known_hosts",
        ] {
            let mode = std::fs::metadata(dir.0.join(name)).unwrap().permissions();
            assert_eq!(
                std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
                0o600,
                "{name}"
            );
        }
    }
}
