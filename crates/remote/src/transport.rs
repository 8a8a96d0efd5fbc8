//! Channels to a far-side `agentsh rpc`: the [`Transport`] seam, the system `ssh`
//! ([`SshTransport`]) and any command whose stdin and stdout reach one ([`CommandTransport`]).

use std::fmt;
use std::io;
use std::process::Stdio;
use std::time::Duration;

pub use agentsh_protocol::SshTarget;
use agentsh_seam::BoxFuture;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::process::{Child, Command};

/// The options agentsh always gives `ssh`: no terminal, never a password or
/// host-key prompt, the user's `RemoteCommand` ignored, a bounded connect and keep-alives.
pub const SSH_OPTIONS: &[&str] = &[
    "-T",
    "-o",
    "BatchMode=yes",
    "-o",
    "RemoteCommand=none",
    "-o",
    "RequestTTY=no",
    "-o",
    "ConnectTimeout=10",
    "-o",
    "ServerAliveInterval=15",
];

/// What a far side is started with: its working directory and its lease.
#[derive(Debug, Clone, PartialEq)]
pub struct FarSide {
    /// `--cwd DIR` for the far side's session; `None` leaves it where the channel starts it
    /// (the login directory for ssh, the container's working directory for `docker exec`).
    pub cwd: Option<String>,
    /// `--lease S`: the far side ends everything after this long without a request.
    pub lease: Duration,
}

impl FarSide {
    /// The words appended to the far side's `agentsh rpc` command: `--cwd DIR --lease S`.
    pub fn rpc_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(cwd) = &self.cwd {
            args.push("--cwd".to_owned());
            args.push(cwd.clone());
        }
        args.push("--lease".to_owned());
        args.push(format_seconds(self.lease));
        args
    }
}

/// Seconds as the shortest decimal that says them (`30`, `1.5`).
fn format_seconds(duration: Duration) -> String {
    let seconds = duration.as_secs_f64();
    if seconds.fract() == 0.0 {
        format!("{}", duration.as_secs())
    } else {
        format!("{seconds}")
    }
}

/// One open channel: bytes to the far side's stdin, from its stdout, and the transport's own
/// diagnostics.
pub struct Channel {
    /// The far side's stdin. Dropping it is end of input there.
    pub writer: Box<dyn AsyncWrite + Send + Unpin>,
    /// The far side's stdout.
    pub reader: Box<dyn AsyncRead + Send + Unpin>,
    /// What the transport itself prints (ssh's errors), shown in connection errors.
    pub stderr: Option<Box<dyn AsyncRead + Send + Unpin>>,
    /// The local process carrying the channel (`ssh`, `kubectl`), if any: killed when the
    /// connection is dropped, waited for its exit status when the channel ends.
    pub child: Option<Child>,
}

impl fmt::Debug for Channel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Channel")
            .field("child", &self.child.as_ref().and_then(Child::id))
            .finish_non_exhaustive()
    }
}

/// How to reach a far-side `agentsh rpc`. Implement it to supply a channel of your own (a TCP
/// stream, a vsock, an in-process pipe); the far side must answer the RPC protocol (`docs/rpc.md`) on it.
pub trait Transport: Send + Sync + fmt::Debug {
    /// Opens a new channel to a far side started with `far` (each call is a new far-side
    /// session).
    fn open<'a>(&'a self, far: &'a FarSide) -> BoxFuture<'a, io::Result<Channel>>;

    /// What this transport reaches, for messages (`ssh://host`, `kubectl exec …`).
    fn describe(&self) -> String;

    /// Turns the transport's diagnostics (its stderr) into the reason a connection failed, if
    /// it recognises them; `None` keeps the text as it is.
    fn explain(&self, stderr: &str) -> Option<String> {
        let _ = stderr;
        None
    }
}

/// The system `ssh` to a host, running `agentsh_path rpc --cwd DIR --lease S` there.
#[derive(Debug, Clone)]
pub struct SshTransport {
    /// Where.
    pub target: SshTarget,
    /// The program and its leading arguments (`[remote] ssh_command`, default `["ssh"]`).
    pub ssh_command: Vec<String>,
    /// The far side's binary (`[remote] agentsh_path`, default `agentsh`); a leading `~/` is
    /// expanded there.
    pub agentsh_path: String,
}

impl SshTransport {
    /// The whole argument vector for running `remote_command` (a shell command line for the
    /// far side's login shell) on the target.
    pub fn argv(&self, remote_command: &str) -> Vec<String> {
        let mut argv = self.ssh_command.clone();
        argv.extend(SSH_OPTIONS.iter().map(|&option| option.to_owned()));
        if let Some(port) = self.target.port {
            argv.push("-p".to_owned());
            argv.push(port.to_string());
        }
        if let Some(user) = &self.target.user {
            argv.push("-l".to_owned());
            argv.push(user.clone());
        }
        argv.push("--".to_owned());
        argv.push(self.target.host.clone());
        argv.push(remote_command.to_owned());
        argv
    }

    /// The far side's command line for `far`: the binary and `rpc --cwd DIR --lease S`,
    /// quoted for its shell.
    pub fn rpc_command(&self, far: &FarSide) -> String {
        let mut words = vec![shell_word(&self.agentsh_path), "rpc".to_owned()];
        words.extend(far.rpc_args().iter().map(|word| shell_word(word)));
        words.join(" ")
    }

    /// Runs `remote_command` on the target with `stdin` and returns its output: for the
    /// install step of `--remote-install` and its checks.
    pub async fn run(&self, remote_command: &str, stdin: Option<Vec<u8>>) -> io::Result<SshRun> {
        let mut command = spawnable(&self.argv(remote_command))?;
        command
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .map_err(|err| spawn_error(&self.ssh_command, &err))?;
        if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
            use tokio::io::AsyncWriteExt;
            // A far side that stops reading shows in its exit status and stderr.
            let written = pipe.write_all(&bytes).await;
            drop(pipe);
            if let Err(err) = written
                && err.kind() != io::ErrorKind::BrokenPipe
            {
                return Err(err);
            }
        }
        let output = child.wait_with_output().await?;
        Ok(SshRun {
            status: output.status.code(),
            stdout: output.stdout,
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        })
    }
}

/// What a command run through [`SshTransport::run`] gave back.
#[derive(Debug, Clone)]
pub struct SshRun {
    /// Its exit status (`None`: killed by a signal).
    pub status: Option<i32>,
    /// Its stdout.
    pub stdout: Vec<u8>,
    /// The far side's and ssh's stderr.
    pub stderr: String,
}

impl Transport for SshTransport {
    fn open<'a>(&'a self, far: &'a FarSide) -> BoxFuture<'a, io::Result<Channel>> {
        Box::pin(async move { spawn_channel(&self.argv(&self.rpc_command(far))) })
    }

    fn describe(&self) -> String {
        self.target.to_string()
    }

    fn explain(&self, stderr: &str) -> Option<String> {
        explain_ssh(&self.target, stderr)
    }
}

/// Recognises ssh's own failures in its stderr.
fn explain_ssh(target: &SshTarget, stderr: &str) -> Option<String> {
    let host = match target.port {
        Some(port) => format!("[{}]:{port}", target.host),
        None => target.host.clone(),
    };
    let mut connect = String::from("ssh ");
    if let Some(port) = target.port {
        connect = format!("ssh -p {port} ");
    }
    if let Some(user) = &target.user {
        connect.push_str(user);
        connect.push('@');
    }
    connect.push_str(&target.host);
    if stderr.contains("REMOTE HOST IDENTIFICATION HAS CHANGED") {
        return Some(format!(
            "the host key of {host} has changed (possibly a different machine): check it, then update known_hosts (`ssh-keygen -R {host}`)"
        ));
    }
    if stderr.contains("Host key verification failed") || stderr.contains("host key is known") {
        return Some(format!(
            "the host key of {host} is not known: check and accept it by connecting once with `{connect}`, or add it to known_hosts"
        ));
    }
    if let Some(line) = stderr
        .lines()
        .find(|line| line.contains("Permission denied"))
    {
        return Some(format!("{target} refused the login: {}", line.trim()));
    }
    None
}

/// Any command whose stdin and stdout reach a far-side `agentsh rpc` (`kubectl exec -i POD --
/// agentsh rpc`, `docker exec -i CONTAINER agentsh rpc`); `--cwd DIR --lease S` is appended.
#[derive(Debug, Clone)]
pub struct CommandTransport {
    /// The program and its arguments (`[remote] command`).
    pub command: Vec<String>,
}

impl Transport for CommandTransport {
    fn open<'a>(&'a self, far: &'a FarSide) -> BoxFuture<'a, io::Result<Channel>> {
        Box::pin(async move {
            let mut argv = self.command.clone();
            argv.extend(far.rpc_args());
            spawn_channel(&argv)
        })
    }

    fn describe(&self) -> String {
        self.command.join(" ")
    }
}

/// `argv` as a command, or an error for an empty one.
fn spawnable(argv: &[String]) -> io::Result<Command> {
    let (program, args) = argv.split_first().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "the transport command is empty",
        )
    })?;
    let mut command = Command::new(program);
    command.args(args);
    Ok(command)
}

/// The error of a program that could not be started, naming it.
fn spawn_error(argv: &[String], err: &io::Error) -> io::Error {
    let program = argv.first().map_or("", String::as_str);
    io::Error::new(err.kind(), format!("cannot run `{program}`: {err}"))
}

/// Starts `argv` with its three standard streams as the channel.
fn spawn_channel(argv: &[String]) -> io::Result<Channel> {
    let mut command = spawnable(argv)?;
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(|err| spawn_error(argv, &err))?;
    let (Some(writer), Some(reader), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(io::Error::other("the transport's pipes were not opened"));
    };
    Ok(Channel {
        writer: Box::new(writer),
        reader: Box::new(reader),
        stderr: Some(Box::new(stderr)),
        child: Some(child),
    })
}

/// `word` for a POSIX shell: as it is when it needs no quoting, else in single quotes; a
/// leading `~/` stays outside them so the far side expands it.
pub fn shell_word(word: &str) -> String {
    if let Some(rest) = word.strip_prefix("~/") {
        return if rest.is_empty() {
            "~/".to_owned()
        } else {
            format!("~/{}", shell_word(rest))
        };
    }
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> SshTarget {
        SshTarget {
            user: Some("dev".into()),
            host: "box.example".into(),
            port: Some(2222),
        }
    }

    #[test]
    fn ssh_gets_exactly_the_spec_options() {
        let ssh = SshTransport {
            target: target(),
            ssh_command: vec!["ssh".into(), "-F".into(), "/t/cfg".into()],
            agentsh_path: "agentsh".into(),
        };
        let far = FarSide {
            cwd: Some("/srv/my project".into()),
            lease: Duration::from_secs(30),
        };
        assert_eq!(
            ssh.argv(&ssh.rpc_command(&far)),
            [
                "ssh",
                "-F",
                "/t/cfg",
                "-T",
                "-o",
                "BatchMode=yes",
                "-o",
                "RemoteCommand=none",
                "-o",
                "RequestTTY=no",
                "-o",
                "ConnectTimeout=10",
                "-o",
                "ServerAliveInterval=15",
                "-p",
                "2222",
                "-l",
                "dev",
                "--",
                "box.example",
                "agentsh rpc --cwd '/srv/my project' --lease 30",
            ]
        );
    }

    #[test]
    fn shell_words_are_quoted_and_tilde_stays_expandable() {
        assert_eq!(shell_word("agentsh"), "agentsh");
        assert_eq!(shell_word("~/.local/bin/agentsh"), "~/.local/bin/agentsh");
        assert_eq!(shell_word("~/my dir"), "~/'my dir'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word("$(rm -rf /)"), "'$(rm -rf /)'");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("a;b"), "'a;b'");
    }

    #[test]
    fn leases_print_as_seconds() {
        let far = |lease| FarSide { cwd: None, lease };
        assert_eq!(far(Duration::from_secs(30)).rpc_args(), ["--lease", "30"]);
        assert_eq!(
            far(Duration::from_millis(1500)).rpc_args(),
            ["--lease", "1.5"]
        );
    }

    #[test]
    fn ssh_failures_are_explained() {
        let t = target();
        let unknown = explain_ssh(&t, "No ED25519 host key is known for [box.example]:2222 and you have requested strict checking.\r\nHost key verification failed.\r\n").expect("explained");
        assert!(unknown.contains("not known"), "{unknown}");
        assert!(unknown.contains("ssh -p 2222 dev@box.example"), "{unknown}");
        let refused = explain_ssh(&t, "dev@box.example: Permission denied (publickey).\n")
            .expect("explained");
        assert_eq!(
            refused,
            "ssh://dev@box.example:2222 refused the login: dev@box.example: Permission denied (publickey)."
        );
        assert_eq!(explain_ssh(&t, "bash: agentsh: command not found"), None);
    }

    #[test]
    fn targets_print_as_urls() {
        assert_eq!(target().to_string(), "ssh://dev@box.example:2222");
        let v6 = SshTarget {
            user: None,
            host: "::1".into(),
            port: None,
        };
        assert_eq!(v6.to_string(), "ssh://[::1]");
    }
}
