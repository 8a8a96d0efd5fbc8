//! The sandbox's mount namespace: `.agentsh/` kept read-only inside a writable root, and a
//! private `/dev/pts` (another terminal out of reach, the command's own and the PTYs it opens
//! working).

use super::*;

fn outside_pty() -> (OwnedFd, OwnedFd, String) {
    use rustix::pty::{OpenptFlags, grantpt, ioctl_tiocgptpeer, openpt, ptsname, unlockpt};
    let master =
        openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).expect("openpt");
    grantpt(&master).expect("grantpt");
    unlockpt(&master).expect("unlockpt");
    let slave = ioctl_tiocgptpeer(
        &master,
        OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC,
    )
    .expect("peer");
    let name = ptsname(&master, Vec::new()).expect("ptsname");
    let name = name.to_str().expect("a UTF-8 name").to_owned();
    (master, slave, name)
}

/// Everything `master` delivers until every holder of its slave has closed it (EIO).
fn drain(master: &OwnedFd) -> String {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = rustix::io::read(master, &mut buf) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Runs `script` in a bash on the terminal `slave` as its controlling terminal, sandboxed by
/// `sandbox`; returns the exit code, the master the sandbox made (`None` unsandboxed), and the
/// output of that master (or of `master` without one).
fn run_on_terminal(
    dirs: &Dirs,
    sandbox: Option<SandboxSpec>,
    master: &OwnedFd,
    slave: OwnedFd,
    script: &str,
) -> (i32, bool, String) {
    let mut spec = SpawnSpec::new("/bin/bash");
    spec.args = vec!["-c".into(), script.into()];
    spec.env = vec![("PATH".into(), std::env::var_os("PATH").unwrap_or_default())];
    spec.cwd.clone_from(&dirs.cwd);
    spec.stdio = [
        ChildStdio::Fd(slave.try_clone().expect("dup")),
        ChildStdio::Fd(slave.try_clone().expect("dup")),
        ChildStdio::Fd(slave),
    ];
    spec.controlling_terminal = true;
    spec.sandbox = sandbox;
    let (code, inside) = runtime().block_on(async {
        let mut sup = Supervisor::spawn(spec).await.expect("spawn");
        let inside = sup.take_terminal();
        let exit = sup.wait_child().await.expect("status");
        sup.shutdown().await;
        (exit.shell_code(), inside)
    });
    let out = drain(inside.as_ref().unwrap_or(master));
    (code, inside.is_some(), out)
}

#[test]
fn a_sandboxed_terminal_program_can_use_its_terminal() {
    if !sandbox_available() {
        return;
    }
    if which("script").is_none() {
        eprintln!("skipped: script (util-linux) is not installed");
        return;
    }
    let dirs = dirs();
    let (master, slave, _) = outside_pty();
    rustix::termios::tcsetwinsize(
        &master,
        rustix::termios::Winsize {
            ws_row: 33,
            ws_col: 111,
            ws_xpixel: 0,
            ws_ypixel: 0,
        },
    )
    .expect("size");
    // Its own terminal by name and through /dev/tty, its size, a prompt read from /dev/tty
    // with echo off, and PTYs of its own (`script` opens one and runs `tty` on it).
    let script = r"echo via-tty > /dev/tty && stty -echo && echo via-$(tty | cut -c1-9) > $(tty)
echo size-$(stty size)
tty | grep -qx '/dev/pts/[0-9]*' && echo named-ok
script -qc 'tty; echo in-script' /dev/null && echo script-ok
script -qc true /dev/null && echo script-true-ok
echo done-ok";
    let (code, inside, out) = run_on_terminal(
        &dirs,
        Some(policy(SandboxMode::ReadOnly, &dirs, false)),
        &master,
        slave,
        script,
    );
    assert_eq!(code, 0, "{out}");
    assert!(inside, "the sandbox made no terminal of its own");
    for want in [
        "via-tty",
        "via-/dev/pts/",
        "size-33 111",
        "named-ok",
        "in-script",
        "script-ok",
        "script-true-ok",
        "done-ok",
    ] {
        assert!(out.contains(want), "no {want} in {out:?}");
    }
    assert!(!out.contains("not a tty"), "{out:?}");
    // The terminal the test handed over sees nothing: the program ran on the new one.
    let _ = rustix::fs::fcntl_setfl(&master, rustix::fs::OFlags::NONBLOCK);
    let handed = drain(&master);
    assert!(!handed.contains("done-ok"), "{handed:?}");
}

#[test]
fn another_terminal_cannot_be_opened_from_the_sandbox() {
    if !sandbox_available() {
        return;
    }
    let dirs = dirs();
    // Someone else's terminal, outside the sandbox: its slave open here, its keystrokes
    // waiting to be read.
    let (master, slave, name) = outside_pty();
    rustix::io::write(&master, b"secret-keys\n").expect("type");
    let me = std::process::id();
    let slave_fd = std::os::fd::AsRawFd::as_raw_fd(&slave);
    let script = format!(
        r"if exec 3<{name}; then echo opened-read; fi
if exec 4<>{name}; then echo opened-rw; fi
if timeout 2 cat {name}; then echo cat-ok; fi
if exec 5</proc/{me}/fd/{slave_fd}; then echo opened-proc; fi
ls /dev/pts/ | tr '\n' ' '; echo
echo done-ok"
    );
    let (code, out) = run(
        policy(SandboxMode::WorkspaceWrite, &dirs, false),
        &dirs,
        &script,
    );
    assert_eq!(code, 0, "{out}");
    has_line(&out, "done-ok");
    for reached in [
        "opened-read",
        "opened-rw",
        "cat-ok",
        "opened-proc",
        "secret-keys",
    ] {
        assert!(
            !out.contains(reached),
            "{reached}: another terminal reached:\n{out}"
        );
    }
    // The private /dev/pts holds only its own `ptmx`.
    has_line(&out, "ptmx ");

    // The control: unsandboxed, the same script reaches it (and reads what was typed).
    let mut spec_out = {
        let mut spec = SpawnSpec::new("/bin/bash");
        spec.args = vec!["-c".into(), script.into()];
        spec.env = vec![("PATH".into(), std::env::var_os("PATH").unwrap_or_default())];
        spec.cwd.clone_from(&dirs.cwd);
        let (reader, writer) = std::io::pipe().expect("pipe");
        let writer: OwnedFd = writer.into();
        spec.stdio = [
            ChildStdio::Null,
            ChildStdio::Fd(writer.try_clone().expect("dup")),
            ChildStdio::Fd(writer),
        ];
        let code = runtime().block_on(async {
            let mut sup = Supervisor::spawn(spec).await.expect("spawn");
            let exit = sup.wait_child().await.expect("status");
            sup.shutdown().await;
            exit.shell_code()
        });
        assert_eq!(code, 0);
        reader
    };
    let mut unconfined = String::new();
    spec_out
        .read_to_string(&mut unconfined)
        .expect("the output");
    for reached in ["opened-read", "opened-rw", "opened-proc", "secret-keys"] {
        assert!(
            unconfined.contains(reached),
            "the control did not reach {reached}:\n{unconfined}"
        );
    }
    drop((master, slave));
}

fn tree(dir: &Path) -> Vec<(String, String)> {
    let mut entries = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).expect("read_dir") {
            let path = entry.expect("entry").path();
            let name = path.strip_prefix(dir).expect("below").display().to_string();
            let meta = std::fs::symlink_metadata(&path).expect("metadata");
            if meta.is_dir() {
                stack.push(path);
                entries.push((name, "/".to_owned()));
            } else {
                entries.push((name, std::fs::read_to_string(&path).unwrap_or_default()));
            }
        }
    }
    entries.sort();
    entries
}

/// Every way a command might change, move or remove `.agentsh` or what it holds; each prints
/// `changed:<name>` when it succeeded.
const AGENTSH_ATTEMPTS: &str = r#"try() { if eval "$2" 2>/dev/null; then echo "changed:$1"; fi; }
try rm 'rm -rf .agentsh'
try mv 'mv .agentsh moved'
try touch 'touch .agentsh/x'
try write 'echo > .agentsh/policy.toml'
try append 'echo more >> .agentsh/policy.toml'
try truncate 'truncate -s 0 .agentsh/policy.toml'
try rm-file 'rm -f .agentsh/policy.toml && ! test -e .agentsh/policy.toml'
try mv-file 'mv .agentsh/policy.toml .agentsh/old'
try mkdir 'mkdir .agentsh/sub/new'
try chmod 'chmod 777 .agentsh'
try umount 'umount .agentsh'
try umount-lazy 'umount -l .agentsh'
try remount 'mount -o remount,rw .agentsh'
try unshare-umount 'unshare -rm sh -c "umount .agentsh && echo x > .agentsh/policy.toml"'
echo ok > other && echo wrote-other
mkdir -p sub && echo ok > sub/file && echo wrote-sub
echo done-ok"#;

#[test]
fn the_agentsh_dir_stays_read_only_while_the_cwd_stays_writable() {
    if !sandbox_available() {
        return;
    }
    let dirs = dirs();
    let project = dirs.cwd.join(".agentsh");
    std::fs::create_dir_all(project.join("sub")).expect("mkdir");
    std::fs::write(project.join("policy.toml"), "[policy]\nask = [\"rm\"]\n").expect("policy");
    std::fs::write(project.join("sub/settings.toml"), "x = 1\n").expect("settings");
    let before = tree(&project);
    let mut sandbox = policy(SandboxMode::WorkspaceWrite, &dirs, false);
    sandbox.read_only = vec![project.clone()];
    let (code, out) = run(sandbox, &dirs, AGENTSH_ATTEMPTS);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("changed:"), "the directory changed:\n{out}");
    for line in ["wrote-other", "wrote-sub", "done-ok"] {
        has_line(&out, line);
    }
    assert_eq!(tree(&project), before, "{out}");
    assert!(!dirs.cwd.join("moved").exists());
    assert_eq!(
        std::fs::read_to_string(dirs.cwd.join("sub/file")).expect("written"),
        "ok\n"
    );

    // The control: without the path kept read-only the same commands change it (the cwd is
    // a writable root like any other).
    let (_, out) = run(
        policy(SandboxMode::WorkspaceWrite, &dirs, false),
        &dirs,
        "echo > .agentsh/policy.toml && echo changed:write; rm -rf .agentsh && echo changed:rm",
    );
    has_line(&out, "changed:write");
    has_line(&out, "changed:rm");
    assert!(!project.exists());
}

#[test]
fn a_read_only_path_must_be_a_directory_at_spawn() {
    if !sandbox_available() {
        return;
    }
    let dirs = dirs();
    std::os::unix::fs::symlink(&dirs.outside, dirs.cwd.join(".agentsh")).expect("symlink");
    for path in [dirs.cwd.join(".agentsh"), dirs.cwd.join("missing")] {
        let mut sandbox = policy(SandboxMode::WorkspaceWrite, &dirs, false);
        sandbox.read_only = vec![path.clone()];
        let mut spec = SpawnSpec::new("/bin/sh");
        spec.args = vec!["-c".into(), "echo ran > ran".into()];
        spec.cwd.clone_from(&dirs.cwd);
        spec.sandbox = Some(sandbox);
        let err = runtime()
            .block_on(Supervisor::spawn(spec))
            .expect_err("no spawn");
        let text = err.to_string();
        assert!(
            text.starts_with(&format!(
                "Sandbox unavailable: the read-only path {}: ",
                path.display()
            )),
            "{text}"
        );
        assert!(!dirs.cwd.join("ran").exists(), "the program ran");
    }
}
