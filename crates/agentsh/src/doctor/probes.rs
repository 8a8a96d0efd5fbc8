//! The checks of `agentsh doctor`, each returning its lines.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use agentsh_agent_session::{
    AgentSession, ArtifactStore, BangOptions, SessionOptions, SnapshotOutcome,
};
use agentsh_config::{NetworkSetting, SandboxMode, Settings};
use agentsh_output_sink::{OutputSink, SinkOptions};
use agentsh_protocol::format_size;
use agentsh_pty_runtime::{PtyCommand, PtyRun};
use agentsh_sandbox::{Kernel as SandboxKernel, probe_network_allowlist};

use super::Check;

/// How long one trial command may take.
const TRIAL_TIMEOUT_S: f64 = 20.0;
/// How long the PTY trial waits for its prompt.
const PTY_WAIT: Duration = Duration::from_secs(10);
/// The oldest Landlock ABI the sandbox takes.
const MIN_LANDLOCK_ABI: i32 = agentsh_sandbox::MIN_LANDLOCK_ABI;

/// `Linux 6.1.0-18-amd64`, from `/proc` (no `uname` to run).
pub(super) fn host_name() -> String {
    let read = |path: &str| std::fs::read_to_string(path).map(|text| text.trim().to_owned());
    match (
        read("/proc/sys/kernel/ostype"),
        read("/proc/sys/kernel/osrelease"),
    ) {
        (Ok(os), Ok(release)) => format!("{os} {release}"),
        _ => std::env::consts::OS.to_owned(),
    }
}

/// The first line a program prints for `args` (stdout, else stderr), or why there is none.
fn version_of(program: &str, args: &[&str]) -> Result<String, String> {
    let output = Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|err| match err.kind() {
            std::io::ErrorKind::NotFound => "not found on PATH".to_owned(),
            _ => format!("cannot run it: {err}"),
        })?;
    let first_line = |bytes: &[u8]| {
        String::from_utf8_lossy(bytes)
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty())
            .map(str::to_owned)
    };
    first_line(&output.stdout)
        .or_else(|| first_line(&output.stderr))
        .ok_or_else(|| format!("`{program} {}` printed nothing", args.join(" ")))
}

/// bash and zsh: the shells a session can run in.
pub(super) fn shells(settings: &Settings) -> Vec<Check> {
    let configured = settings
        .bash
        .shell
        .as_deref()
        .map(|shell| format!(" (bash.shell is {})", shell.display()));
    let mut checks = Vec::new();
    for (name, without) in [
        ("bash", "sessions fall back to sh, without bash's features"),
        ("zsh", "needed only for bash.shell = \"zsh\""),
    ] {
        checks.push(match version_of(name, &["--version"]) {
            Ok(version) => Check::pass(name, version),
            Err(why) => Check::fail(name, format!("{why}; {without}")),
        });
    }
    if let (Some(configured), Some(last)) = (configured, checks.last_mut()) {
        last.finding.push_str(&configured);
    }
    checks
}

/// A session with the user's configuration in `cwd`: its rc snapshot, a command run in it, and
/// the warnings it reports.
pub(super) async fn session(settings: &Settings, cwd: &Path) -> Vec<Check> {
    let session = match AgentSession::new(SessionOptions {
        settings: settings.clone(),
        cwd: cwd.to_path_buf(),
        mode: Some("doctor".to_owned()),
        ..SessionOptions::default()
    }) {
        Ok(session) => session,
        Err(err) => return vec![Check::fail("session", format!("cannot start one: {err}"))],
    };
    let mut checks = vec![snapshot_check(
        session.snapshot_outcome(),
        session.settings().bash.snapshot_timeout,
    )];
    let options = BangOptions {
        timeout: Some(TRIAL_TIMEOUT_S),
        exclude_from_context: true,
    };
    let started = Instant::now();
    checks.push(match session.execute_bash("true", options).await {
        Ok(result) if result.exit_code == Some(0) => Check::pass(
            "commands",
            format!(
                "`true` ran in {} in {} ({} ms, sandbox {})",
                session.shell_path().display(),
                cwd.display(),
                started.elapsed().as_millis(),
                session
                    .sandbox()
                    .map_or("off", |policy| policy.mode.as_str()),
            ),
        ),
        Ok(result) => Check::fail(
            "commands",
            format!(
                "`true` did not succeed: {}",
                result
                    .annotation
                    .unwrap_or_else(|| format!("exit status {:?}", result.exit_code))
            ),
        ),
        Err(err) => Check::fail("commands", format!("`true` could not run: {err}")),
    });
    let snapshot_warning = match session.snapshot_outcome() {
        SnapshotOutcome::Failed(warning) => Some(warning.clone()),
        _ => None,
    };
    for warning in session.take_warnings() {
        if Some(&warning) != snapshot_warning.as_ref() {
            checks.push(Check::fail("warning", warning));
        }
    }
    session.shutdown().await;
    checks
}

fn snapshot_check(outcome: &SnapshotOutcome, time_box: Duration) -> Check {
    const WHAT: &str = "rc snapshot";
    match outcome {
        SnapshotOutcome::Made { rc, took } => Check::pass(
            WHAT,
            format!(
                "{} sourced in {:.2} s (time box {} s, bash.snapshot_timeout) and cached for \
                 later sessions",
                rc.display(),
                took.as_secs_f64(),
                time_box.as_secs_f64()
            ),
        ),
        SnapshotOutcome::Cached { rc } => Check::pass(
            WHAT,
            format!("{} taken from the cache (made earlier)", rc.display()),
        ),
        SnapshotOutcome::Failed(warning) => Check::fail(WHAT, warning.clone()),
        // `NoRc`, and whatever a later version adds.
        _ => Check::pass(WHAT, "no rc file, nothing to snapshot"),
    }
}

/// `/proc`: how process trees are found, and jobs measured.
pub(super) fn proc_fs() -> Check {
    const WHAT: &str = "/proc";
    let own = std::fs::read_to_string("/proc/self/stat");
    let listed = std::fs::read_dir("/proc").map(|entries| {
        entries
            .filter_map(Result::ok)
            .filter(|entry| entry.file_name().to_string_lossy().parse::<u32>().is_ok())
            .count()
    });
    match (own, listed) {
        (Ok(_), Ok(count)) => Check::pass(
            WHAT,
            format!(
                "readable ({count} processes seen): process trees are found and ended whole, \
                 jobs' CPU and memory are measured"
            ),
        ),
        (Err(err), _) | (_, Err(err)) => Check::fail(
            WHAT,
            format!(
                "not readable ({err}): stray processes may survive, job usage and input waits \
                 are unknown"
            ),
        ),
    }
}

/// A program on a PTY that turns echo off and waits, as a password prompt does.
pub(super) async fn pty() -> Vec<Check> {
    let mut command = PtyCommand::new(
        "stty -echo; read -r _; stty echo",
        std::env::temp_dir(),
        Duration::from_secs_f64(TRIAL_TIMEOUT_S),
    );
    command.answers_prompts = true;
    let run = PtyRun::start(command, OutputSink::new(SinkOptions::default()));
    let controller = run.controller();
    let deadline = Instant::now() + PTY_WAIT;
    let mut started = false;
    let mut hidden = false;
    while Instant::now() < deadline && !controller.has_exited() {
        started |= controller.shell_pid().is_some();
        hidden = controller.input_hidden();
        if hidden {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    started |= controller.shell_pid().is_some();
    controller.kill();
    let result = run.wait().await;
    let pty = if started {
        Check::pass(
            "PTYs",
            "a program ran on a pseudo-terminal (PTY jobs and full-screen programs work)",
        )
    } else {
        let why = result
            .annotation
            .or_else(|| {
                let output = result.summary.output.trim().to_owned();
                (!output.is_empty()).then_some(output)
            })
            .unwrap_or_else(|| "no program started on a pseudo-terminal".to_owned());
        Check::fail("PTYs", format!("{why}; PTY jobs cannot run"))
    };
    let hidden = if hidden {
        Check::pass(
            "hidden input",
            "a prompt with echo off was seen: a person types a password past the model",
        )
    } else if started {
        Check::fail(
            "hidden input",
            "a prompt with echo off was not seen: password prompts look like any other input",
        )
    } else {
        Check::fail("hidden input", "needs PTYs")
    };
    vec![pty, hidden]
}

/// What the kernel offers a sandbox.
pub(super) fn kernel() -> Vec<Check> {
    let kernel = SandboxKernel::probe();
    let landlock = match kernel.landlock_abi {
        0 => Check::fail(
            "Landlock",
            "not enabled in this kernel (Linux 6.2 or later with `landlock` in `lsm=`): no sandbox",
        ),
        abi if abi < MIN_LANDLOCK_ABI => Check::fail(
            "Landlock",
            format!("ABI {abi}, at least {MIN_LANDLOCK_ABI} is needed (Linux 6.2): no sandbox"),
        ),
        abi => Check::pass("Landlock", format!("ABI {abi}")),
    };
    let user_namespaces = if kernel.user_namespaces {
        Check::pass("user namespaces", "allowed")
    } else {
        Check::fail(
            "user namespaces",
            "not allowed to this user (user.max_user_namespaces, \
             kernel.unprivileged_userns_clone or an AppArmor rule): no sandbox",
        )
    };
    let seccomp = if kernel.seccomp {
        Check::pass("seccomp", "available")
    } else {
        Check::fail("seccomp", "not available: a sandbox needs network = true")
    };
    vec![landlock, user_namespaces, seccomp]
}

/// How the resource limits (`[limits]`) of command trees are enforced here: by the kernel in
/// a cgroup per tree, or by a watchdog that samples the tree (and why not a cgroup).
pub(super) fn resource_limits() -> Check {
    const WHAT: &str = "resource limits";
    let mechanism = agentsh_process::limits_mechanism();
    if mechanism.is_kernel_enforced() {
        Check::pass(WHAT, mechanism.describe())
    } else {
        Check::fail(WHAT, mechanism.describe())
    }
}

/// Each sandbox mode tried for real: a session in a scratch directory, a write to its cwd,
/// and the network interfaces its commands see.
pub(super) async fn sandbox_modes() -> Vec<Check> {
    let mut checks = Vec::new();
    let mut namespaces: Option<Check> = None;
    for mode in [SandboxMode::ReadOnly, SandboxMode::WorkspaceWrite] {
        let what = format!("sandbox {}", mode.as_str());
        match sandbox_trial(mode).await {
            Ok(seen) => {
                let writes = mode == SandboxMode::WorkspaceWrite;
                checks.push(if seen.wrote == writes {
                    Check::pass(
                        what,
                        format!(
                            "a sandboxed session started; writing to its cwd was {}",
                            if writes { "allowed" } else { "refused" }
                        ),
                    )
                } else {
                    Check::fail(
                        what,
                        format!(
                            "a session started, but a write to its cwd {} (expected the opposite)",
                            if seen.wrote { "succeeded" } else { "failed" }
                        ),
                    )
                });
                namespaces.get_or_insert_with(|| {
                    if seen.interfaces == ["lo"] {
                        Check::pass(
                            "network namespaces",
                            "a sandboxed command sees loopback only (network = false)",
                        )
                    } else {
                        Check::fail(
                            "network namespaces",
                            format!(
                                "a sandboxed command sees the interfaces {:?}, not loopback only",
                                seen.interfaces
                            ),
                        )
                    }
                });
            }
            Err(why) => checks.push(Check::fail(what, why)),
        }
    }
    checks.push(
        namespaces.unwrap_or_else(|| {
            Check::fail("network namespaces", "untried: no sandbox could start")
        }),
    );
    checks
}

/// What a sandboxed command saw.
struct Seen {
    /// Its write to the session's cwd worked.
    wrote: bool,
    /// The network interfaces of its namespace.
    interfaces: Vec<String>,
}

async fn sandbox_trial(mode: SandboxMode) -> Result<Seen, String> {
    let scratch = tempfile::Builder::new()
        .prefix("agentsh-doctor-")
        .tempdir()
        .map_err(|err| format!("cannot make a scratch directory: {err}"))?;
    let cwd = scratch.path().join("project");
    std::fs::create_dir(&cwd).map_err(|err| format!("cannot make {}: {err}", cwd.display()))?;
    let mut settings = Settings::default();
    settings.sandbox.mode = Some(mode);
    settings.sandbox.network = NetworkSetting::Off;
    let session = AgentSession::new(SessionOptions {
        settings,
        cwd: cwd.clone(),
        // No rc to snapshot: the trial is about the sandbox, not the user's rc.
        home: Some(scratch.path().to_path_buf()),
        mode: Some("doctor".to_owned()),
        ..SessionOptions::default()
    })
    .map_err(|err| err.to_string())?;
    let command = "if { : > doctor-probe; } 2>/dev/null; then echo wrote; else echo refused; fi; \
                   tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '";
    let options = BangOptions {
        timeout: Some(TRIAL_TIMEOUT_S),
        exclude_from_context: true,
    };
    let result = session.execute_bash(command, options).await;
    session.shutdown().await;
    let result = result.map_err(|err| format!("a command could not run: {err}"))?;
    let output = result.summary.output;
    let mut lines = output
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty());
    match lines.next() {
        Some(first @ ("wrote" | "refused")) => Ok(Seen {
            wrote: first == "wrote",
            interfaces: lines.map(str::to_owned).collect(),
        }),
        _ => Err(format!(
            "a session started, but its command printed {:?}",
            output.trim()
        )),
    }
}

/// The network allowlist: a sandboxed command reaches agentsh's proxy and is refused a host.
pub(super) async fn network_allowlist() -> Check {
    const WHAT: &str = "network allowlist";
    match probe_network_allowlist().await {
        Ok(seen) => Check::pass(WHAT, seen),
        Err(why) => Check::fail(WHAT, why),
    }
}

/// tmux and ssh.
pub(super) fn programs() -> Vec<Check> {
    let tmux = match version_of("tmux", &["-V"]) {
        Ok(version) => Check::pass("tmux", version),
        Err(why) => Check::fail(
            "tmux",
            format!("{why}; needed only to drive the interactive mode from scripts"),
        ),
    };
    let ssh = match version_of("ssh", &["-V"]) {
        Ok(version) => Check::pass("ssh", format!("{version} (--remote ssh://… works)")),
        Err(why) => Check::fail("ssh", format!("{why}; --remote ssh://… cannot work")),
    };
    vec![tmux, ssh]
}

/// The artifact directory and what it holds.
pub(super) fn artifacts(settings: &Settings) -> Check {
    const WHAT: &str = "artifacts";
    let dir: PathBuf = match &settings.artifacts.dir {
        Some(dir) => dir.clone(),
        None => match ArtifactStore::default_dir() {
            Ok(dir) => dir,
            Err(err) => return Check::fail(WHAT, err.to_string()),
        },
    };
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Check::pass(WHAT, format!("{} (not made yet)", dir.display()));
        }
        Err(err) => return Check::fail(WHAT, format!("{}: {err}", dir.display())),
    };
    let (mut files, mut bytes) = (0u64, 0u64);
    for entry in entries.filter_map(Result::ok) {
        if let Ok(meta) = entry.metadata()
            && meta.is_file()
        {
            files += 1;
            bytes += meta.len();
        }
    }
    Check::pass(
        WHAT,
        format!(
            "{}, {} in {files} files (at most {} kept)",
            dir.display(),
            format_size(bytes),
            format_size(settings.artifacts.max_bytes)
        ),
    )
}
