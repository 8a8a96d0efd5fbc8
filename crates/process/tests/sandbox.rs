//! The sandbox: real bash under the real supervisor, confined by the real kernel
//! (user namespace, Landlock, network namespace, seccomp) — also when the tests run as root.

use std::fmt::Write as _;
use std::io::Read;
use std::net::{TcpListener, UdpSocket};
use std::os::fd::OwnedFd;
use std::os::linux::net::SocketAddrExt as _;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agentsh_process::sandbox::{self, Kernel, SandboxError, SandboxMode, SandboxPolicy};
use agentsh_process::{ChildStdio, SpawnError, SpawnSpec, Supervisor};
use agentsh_test_support::{
    alive_containing, assert_no_survivor, runtime, unique_marker, wait_for_process, which,
};

/// Whether the running kernel can sandbox at all; tests say why they skip when it cannot.
fn sandbox_available() -> bool {
    let policy = SandboxPolicy {
        mode: SandboxMode::WorkspaceWrite,
        writable: Vec::new(),
        read_only: Vec::new(),
        network: false,
    };
    match sandbox::check(&policy) {
        Ok(()) => true,
        Err(err) => {
            eprintln!("skipped: {err}");
            false
        }
    }
}

/// A test's directories: the writable cwd and private tmp, and a HOME and an `outside`
/// directory that are not writable roots.
struct Dirs {
    _base: tempfile::TempDir,
    cwd: PathBuf,
    tmp: PathBuf,
    home: PathBuf,
    outside: PathBuf,
}

fn dirs() -> Dirs {
    let base = tempfile::tempdir().expect("tempdir");
    let make = |name: &str| {
        let dir = base.path().join(name);
        std::fs::create_dir(&dir).expect("mkdir");
        dir
    };
    Dirs {
        cwd: make("cwd"),
        tmp: make("tmp"),
        home: make("home"),
        outside: make("outside"),
        _base: base,
    }
}

fn policy(mode: SandboxMode, dirs: &Dirs, network: bool) -> SandboxPolicy {
    let writable = match mode {
        SandboxMode::WorkspaceWrite => vec![dirs.cwd.clone(), dirs.tmp.clone()],
        SandboxMode::ReadOnly => vec![dirs.tmp.clone()],
    };
    SandboxPolicy {
        mode,
        writable,
        read_only: Vec::new(),
        network,
    }
}

/// Runs `script` in a sandboxed `bash -c` (cwd `dirs.cwd`), ends the tree, and returns its
/// exit code and output (stdout and stderr together).
fn run(policy: SandboxPolicy, dirs: &Dirs, script: &str) -> (i32, String) {
    run_with(policy, dirs, script, Vec::new())
}

/// [`run`] with extra descriptors for the child.
fn run_with(
    policy: SandboxPolicy,
    dirs: &Dirs,
    script: &str,
    fds: Vec<(OwnedFd, i32)>,
) -> (i32, String) {
    let mut spec = SpawnSpec::new("/bin/bash");
    spec.args = vec!["-c".into(), script.into()];
    spec.env = vec![
        ("PATH".into(), std::env::var_os("PATH").unwrap_or_default()),
        ("HOME".into(), dirs.home.clone().into()),
        ("TMPDIR".into(), dirs.tmp.clone().into()),
        ("OUT".into(), dirs.outside.clone().into()),
    ];
    spec.cwd.clone_from(&dirs.cwd);
    let (mut reader, writer) = std::io::pipe().expect("pipe");
    let writer: OwnedFd = writer.into();
    spec.stdio = [
        ChildStdio::Null,
        ChildStdio::Fd(writer.try_clone().expect("dup")),
        ChildStdio::Fd(writer),
    ];
    spec.fds = fds;
    spec.sandbox = Some(policy);
    let code = runtime().block_on(async {
        let mut sup = Supervisor::spawn(spec)
            .await
            .expect("spawn a sandboxed bash");
        let exit = sup.wait_child().await.expect("status");
        sup.shutdown().await;
        exit.shell_code()
    });
    let mut out = String::new();
    reader.read_to_string(&mut out).expect("read the output");
    (code, out)
}

/// Asserts that `out` has the line `line`.
#[track_caller]
fn has_line(out: &str, line: &str) {
    assert!(
        out.lines().any(|l| l == line),
        "no line {line:?} in:\n{out}"
    );
}

fn no_entries(dir: &Path) {
    let names: Vec<_> = std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert!(names.is_empty(), "{} gained {names:?}", dir.display());
}

#[test]
fn workspace_write_allows_only_its_roots() {
    if !sandbox_available() {
        return;
    }
    let dirs = dirs();
    std::os::unix::fs::symlink(&dirs.outside, dirs.cwd.join("link")).expect("symlink");
    // Only the test's own files are at stake, even when the sandbox is broken: a unique name
    // in /etc (removed again below), everything else in temporary directories.
    std::fs::write(dirs.outside.join("keep"), "kept").expect("keep");
    let etc = format!("/etc/{}", unique_marker("agentsh-x"));
    let script = format!(
        r#"
        try() {{ if ( eval "$2" ) 2>/dev/null; then echo "ok:$1"; else echo "no:$1"; fi; }}
        try cwd 'echo x > in-cwd'
        try tmp 'echo x > "$TMPDIR/in-tmp"'
        try null 'echo x > /dev/null'
        try read 'cat /etc/hostname >/dev/null'
        try etc 'touch {etc}'
        try home 'echo x > "$HOME/x"'
        try outside 'echo x > "$OUT/x"'
        try symlink 'echo x > link/x'
        try mkdir 'mkdir "$OUT/d"'
        try rename 'mv in-cwd "$OUT/moved"'
        try hardlink 'ln in-cwd "$OUT/hard"'
        try truncate 'truncate -s 0 "$OUT/keep"'
        echo x > "$HOME/denied"
        "#
    );
    let (_, out) = run(
        policy(SandboxMode::WorkspaceWrite, &dirs, false),
        &dirs,
        &script,
    );
    for ok in ["cwd", "tmp", "null", "read"] {
        has_line(&out, &format!("ok:{ok}"));
    }
    for no in [
        "etc", "home", "outside", "symlink", "mkdir", "rename", "hardlink", "truncate",
    ] {
        has_line(&out, &format!("no:{no}"));
    }
    assert!(out.contains("Permission denied"), "{out}");
    assert!(dirs.cwd.join("in-cwd").exists() && dirs.tmp.join("in-tmp").exists());
    let created = std::fs::remove_file(&etc).is_ok();
    assert!(!created, "{etc} was created");
    no_entries(&dirs.home);
    assert_eq!(
        std::fs::read_to_string(dirs.outside.join("keep")).expect("keep"),
        "kept"
    );
    std::fs::remove_file(dirs.outside.join("keep")).expect("rm keep");
    no_entries(&dirs.outside);
}

#[test]
fn a_setsid_double_forked_child_is_just_as_confined() {
    if !sandbox_available() {
        return;
    }
    let dirs = dirs();
    // The shell waits for the grandchild's verdict: the supervisor ends the tree with it.
    let script = r#"setsid bash -c '( if touch "$OUT/escaped"; then echo ok > done; else echo no > done; fi ) & wait' &
        wait; while [ ! -s done ]; do sleep 0.05; done"#;
    run(
        policy(SandboxMode::WorkspaceWrite, &dirs, false),
        &dirs,
        script,
    );
    assert_eq!(
        std::fs::read_to_string(dirs.cwd.join("done")).expect("done"),
        "no\n"
    );
    no_entries(&dirs.outside);
}

#[test]
fn read_only_leaves_only_the_private_tmp_writable() {
    if !sandbox_available() {
        return;
    }
    let dirs = dirs();
    let script = r#"
        try() { if ( eval "$2" ) 2>/dev/null; then echo "ok:$1"; else echo "no:$1"; fi; }
        try cwd 'echo x > in-cwd'
        try tmp 'echo x > "$TMPDIR/in-tmp"'
        try null 'echo x > /dev/null'
        try read 'cat /etc/hostname >/dev/null'
        "#;
    let (_, out) = run(policy(SandboxMode::ReadOnly, &dirs, false), &dirs, script);
    for line in ["no:cwd", "ok:tmp", "ok:null", "ok:read"] {
        has_line(&out, line);
    }
    no_entries(&dirs.cwd);
}

/// The listeners a network test reaches for, outside the sandbox.
struct Listeners {
    tcp: TcpListener,
    udp: UdpSocket,
    unix: UnixListener,
    unix_path: PathBuf,
    abstract_unix: UnixListener,
    abstract_name: String,
}

fn listeners(dirs: &Dirs) -> Listeners {
    let tcp = TcpListener::bind("127.0.0.1:0").expect("tcp");
    tcp.set_nonblocking(true).expect("nonblocking");
    let udp = UdpSocket::bind("127.0.0.1:0").expect("udp");
    let unix_path = dirs.outside.join("sock");
    let unix = UnixListener::bind(&unix_path).expect("unix");
    unix.set_nonblocking(true).expect("nonblocking");
    let abstract_name = unique_marker("agentsh-abstract");
    let abstract_unix = UnixListener::bind_addr(
        &std::os::unix::net::SocketAddr::from_abstract_name(&abstract_name).expect("name"),
    )
    .expect("abstract unix");
    abstract_unix.set_nonblocking(true).expect("nonblocking");
    Listeners {
        tcp,
        udp,
        unix,
        unix_path,
        abstract_unix,
        abstract_name,
    }
}

fn network_script(l: &Listeners) -> String {
    let tcp = l.tcp.local_addr().expect("addr").port();
    let udp = l.udp.local_addr().expect("addr").port();
    format!(
        r#"
        try() {{ if ( eval "$2" ) 2>/dev/null; then echo "ok:$1"; else echo "no:$1"; fi; }}
        try tcp 'exec 3<>/dev/tcp/127.0.0.1/{tcp}'
        echo sandboxed > /dev/udp/127.0.0.1/{udp}
        try lookup 'getent hosts example.com'
        try unix 'python3 -c "import socket; socket.socket(socket.AF_UNIX).connect(\"{sock}\")"'
        python3 -c 'import socket; socket.socket(socket.AF_UNIX)' 2>&1 | tail -n 1
        try socketpair 'python3 -c "import socket; socket.socketpair()"'
        try loopback 'python3 -c "import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen(); socket.create_connection(s.getsockname())"'
        try abstract 'python3 -c "import socket; socket.socket(socket.AF_UNIX).connect(\"\\0{name}\")"'
        try signal 'kill -0 {me}'
        "#,
        sock = l.unix_path.display(),
        name = l.abstract_name,
        me = std::process::id(),
    )
}

#[test]
fn network_off_reaches_nothing_outside() {
    if !sandbox_available() || which("python3").is_none() {
        return;
    }
    let dirs = dirs();
    let l = listeners(&dirs);
    let (_, out) = run(
        policy(SandboxMode::WorkspaceWrite, &dirs, false),
        &dirs,
        &network_script(&l),
    );
    for line in [
        "no:tcp",
        "no:lookup",
        "no:unix",
        "ok:socketpair",
        "ok:loopback",
        "no:abstract",
        "no:signal",
    ] {
        has_line(&out, line);
    }
    has_line(&out, "PermissionError: [Errno 1] Operation not permitted");
    assert!(l.tcp.accept().is_err(), "a TCP connection arrived");
    assert!(l.unix.accept().is_err(), "a Unix connection arrived");
    // The first datagram to arrive is this one, sent after the sandboxed one would have been.
    let me = UdpSocket::bind("127.0.0.1:0").expect("udp");
    me.send_to(b"test", l.udp.local_addr().expect("addr"))
        .expect("send");
    let mut buf = [0u8; 64];
    let n = l.udp.recv(&mut buf).expect("recv");
    assert_eq!(&buf[..n], b"test");
}

#[test]
fn network_on_connects() {
    if !sandbox_available() || which("python3").is_none() {
        return;
    }
    let dirs = dirs();
    let l = listeners(&dirs);
    let (_, out) = run(
        policy(SandboxMode::WorkspaceWrite, &dirs, true),
        &dirs,
        &network_script(&l),
    );
    for line in ["ok:tcp", "ok:unix", "ok:loopback"] {
        has_line(&out, line);
    }
    assert!(l.tcp.accept().is_ok(), "no TCP connection arrived");
    // Landlock's scopes (ABI 6): no abstract Unix socket and no signal outside the sandbox,
    // also with the network on.
    if sandbox::Kernel::probe().landlock_abi >= 6 {
        has_line(&out, "no:abstract");
        has_line(&out, "no:signal");
        assert!(
            l.abstract_unix.accept().is_err(),
            "an abstract connection arrived"
        );
    }
}

#[test]
fn escape_attempts_still_cannot_write_or_connect() {
    if !sandbox_available() {
        return;
    }
    let tools: Vec<&str> = ["unshare", "nsenter", "setpriv"]
        .into_iter()
        .filter(|tool| {
            let found = which(tool).is_some();
            if !found {
                eprintln!("skipped the {tool} attempts: {tool} (util-linux) is not installed");
            }
            found
        })
        .collect();
    let dirs = dirs();
    let l = listeners(&dirs);
    let tcp = l.tcp.local_addr().expect("addr").port();
    let me = std::process::id();
    // The probe: the same outside write and the same connect, after each attempt.
    let probe = format!(
        r#"if echo x > "$OUT/escaped-$1"; then echo "wrote:$1"; fi; if exec 3<>/dev/tcp/127.0.0.1/{tcp}; then echo "connected:$1"; fi"#
    );
    std::fs::write(dirs.cwd.join("probe"), probe).expect("probe");
    let mut attempts: Vec<(&str, String)> = vec![(
        "attr",
        "echo unconfined > /proc/self/attr/current; bash probe attr".to_owned(),
    )];
    if tools.contains(&"unshare") {
        attempts.extend([
            ("unshare-r", "unshare -r bash probe unshare-r".to_owned()),
            (
                "unshare-rm",
                r#"unshare -rm bash -c 'mount -t tmpfs tmpfs "$OUT"; bash probe unshare-rm'"#
                    .to_owned(),
            ),
            (
                "unshare-U-mount",
                r#"unshare -U --map-root-user -m bash -c 'mount --bind "$PWD" "$OUT"; bash probe unshare-U-mount'"#
                    .to_owned(),
            ),
            (
                "unshare-net",
                "unshare -rn bash probe unshare-net".to_owned(),
            ),
            // Without `-r` there is no map to write: a nested user namespace with every
            // capability inside it, then a mount over a path.
            (
                "unshare-Um",
                r#"unshare -Um --propagation unchanged bash -c 'mount -t tmpfs tmpfs "$OUT"; bash probe unshare-Um'"#
                    .to_owned(),
            ),
        ]);
    }
    if tools.contains(&"setpriv") {
        attempts.push((
            "setpriv",
            "setpriv --reuid=0 --regid=0 --clear-groups --inh-caps=+all --ambient-caps=+all bash probe setpriv; setpriv --reuid=0 bash probe setpriv2".to_owned(),
        ));
    }
    if tools.contains(&"nsenter") {
        attempts.extend([
            (
                "nsenter-net",
                format!("nsenter --net=/proc/{me}/ns/net bash probe nsenter-net"),
            ),
            (
                "nsenter-all",
                format!("nsenter -t {me} -a bash probe nsenter-all"),
            ),
            // The test's own network namespace, handed in as descriptor 3: no `/proc` check
            // stands in the way, only the missing capability over its owner.
            (
                "nsenter-fd",
                "nsenter --net=/proc/self/fd/3 bash probe nsenter-fd".to_owned(),
            ),
            (
                "nsenter-user",
                format!("nsenter -t {me} -U -m -n --preserve-credentials bash probe nsenter-user"),
            ),
        ]);
    }
    let mut script = String::new();
    for (name, attempt) in &attempts {
        let _ = writeln!(script, "{attempt}\nbash probe after-{name}");
    }
    let own_net: OwnedFd = std::fs::File::open("/proc/self/ns/net")
        .expect("the test's network namespace")
        .into();
    let (_, out) = run_with(
        policy(SandboxMode::WorkspaceWrite, &dirs, false),
        &dirs,
        &script,
        vec![(own_net, 3)],
    );
    assert!(!out.contains("wrote:"), "an attempt wrote outside:\n{out}");
    assert!(!out.contains("connected:"), "an attempt connected:\n{out}");
    if tools.contains(&"nsenter") {
        assert!(
            out.contains(
                "nsenter: reassociate to namespace 'ns/net' failed: Operation not permitted"
            ),
            "nsenter with the descriptor did not fail for want of a capability:\n{out}"
        );
    }
    let entries: Vec<_> = std::fs::read_dir(&dirs.outside)
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name())
        .filter(|name| name != "sock")
        .collect();
    assert!(entries.is_empty(), "written outside: {entries:?}\n{out}");
    assert!(l.tcp.accept().is_err(), "a TCP connection arrived:\n{out}");
}

/// A sandboxed bash sleeping beside a `setsid` child whose argv holds `marker`.
fn sandboxed_sleepers(dirs: &Dirs, marker: &str) -> SpawnSpec {
    let mut spec = SpawnSpec::new("/bin/bash");
    spec.args = vec![
        "-c".into(),
        format!("setsid sh -c 'sleep 100; : {marker}' & sleep 100").into(),
    ];
    spec.env = vec![("PATH".into(), std::env::var_os("PATH").unwrap_or_default())];
    spec.cwd.clone_from(&dirs.cwd);
    spec.sandbox = Some(policy(SandboxMode::WorkspaceWrite, dirs, false));
    spec
}

#[test]
fn the_supervisor_still_ends_a_sandboxed_tree() {
    if !sandbox_available() {
        return;
    }
    let dirs = dirs();
    let marker = unique_marker("sandboxed-sleep");
    let spec = sandboxed_sleepers(&dirs, &marker);
    runtime().block_on(async {
        let sup = Supervisor::spawn(spec).await.expect("spawn");
        wait_for_process(&marker, Duration::from_secs(5));
        sup.shutdown().await;
    });
    assert_no_survivor(&marker, Duration::from_secs(5));
}

#[test]
fn a_sandboxed_tree_ends_when_its_supervisor_is_killed() {
    if !sandbox_available() {
        return;
    }
    let dirs = dirs();
    let marker = unique_marker("sandboxed-orphan");
    let spec = sandboxed_sleepers(&dirs, &marker);
    runtime().block_on(async {
        let mut sup = Supervisor::spawn(spec).await.expect("spawn");
        wait_for_process(&marker, Duration::from_secs(5));
        // From outside: the sandboxed tree cannot signal its supervisor, but agentsh can.
        rustix::process::kill_process(
            rustix::process::Pid::from_raw(sup.pid() as i32).expect("pid"),
            rustix::process::Signal::KILL,
        )
        .expect("kill the supervisor");
        assert_no_survivor(&marker, Duration::from_secs(5));
        let _ = sup.wait_child().await;
        sup.shutdown().await;
    });
    assert!(alive_containing(&marker).is_empty());
}

#[test]
fn a_kernel_that_offers_less_gets_unavailable_and_nothing_runs() {
    let dirs = dirs();
    let policy = policy(SandboxMode::WorkspaceWrite, &dirs, false);
    let weak = [
        Kernel {
            landlock_abi: 0,
            user_namespaces: true,
            seccomp: true,
        },
        Kernel {
            landlock_abi: 2,
            user_namespaces: true,
            seccomp: true,
        },
        Kernel {
            landlock_abi: 7,
            user_namespaces: false,
            seccomp: true,
        },
        Kernel {
            landlock_abi: 7,
            user_namespaces: true,
            seccomp: false,
        },
    ];
    for kernel in weak {
        let err = sandbox::check_with(&policy, kernel).expect_err("refused");
        assert!(matches!(err, SandboxError::Unavailable(_)), "{err:?}");
        assert!(
            err.to_string().starts_with("Sandbox unavailable: "),
            "{err}"
        );

        let mut spec = SpawnSpec::new("/bin/sh");
        spec.args = vec!["-c".into(), "echo ran > ran".into()];
        spec.cwd.clone_from(&dirs.cwd);
        spec.sandbox = Some(policy.clone());
        spec.sandbox_kernel = Some(kernel);
        let err = runtime()
            .block_on(Supervisor::spawn(spec))
            .expect_err("no spawn");
        assert!(
            matches!(err, SpawnError::Sandbox(SandboxError::Unavailable(_))),
            "{err:?}"
        );
        assert!(
            err.to_string().starts_with("Sandbox unavailable: "),
            "{err}"
        );
        assert!(!dirs.cwd.join("ran").exists(), "the program ran");
    }
    // Without seccomp, network = true needs none.
    let mut networked = policy.clone();
    networked.network = true;
    assert_eq!(sandbox::check_with(&networked, weak[3]), Ok(()));
    // A writable root of `/` is refused.
    let mut everything = networked;
    everything.writable.push("/".into());
    assert_eq!(
        sandbox::check_with(&everything, weak[3]),
        Err(SandboxError::RefusedRoot("/".into()))
    );
}

#[test]
fn a_missing_writable_root_is_unavailable_not_ignored() {
    if !sandbox_available() {
        return;
    }
    let dirs = dirs();
    let mut policy = policy(SandboxMode::WorkspaceWrite, &dirs, false);
    policy.writable.push(dirs.outside.join("missing"));
    let mut spec = SpawnSpec::new("/bin/sh");
    spec.args = vec!["-c".into(), "echo ran > ran".into()];
    spec.cwd.clone_from(&dirs.cwd);
    spec.sandbox = Some(policy);
    let err = runtime()
        .block_on(Supervisor::spawn(spec))
        .expect_err("no spawn");
    assert!(err.to_string().contains("missing"), "{err}");
    assert!(!dirs.cwd.join("ran").exists());
}

/// A PTY pair opened by the test, outside any sandbox: the master, the slave (by
/// `TIOCGPTPEER`) and the slave's path.
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
    sandbox: Option<SandboxPolicy>,
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

#[test]
fn the_rc_snapshot_runs_sandboxed_and_is_cached_apart() {
    use agentsh_process::env::{TerminalKind, hardened_env};
    use agentsh_process::shell::discover_shell;
    use agentsh_process::snapshot::snapshot_for_sandboxed;
    if !sandbox_available() {
        return;
    }
    let dirs = dirs();
    let cache = dirs.tmp.join("cache");
    std::fs::write(
        dirs.home.join(".bashrc"),
        "alias sbcheck='echo sandboxed-alias'\necho x > \"$HOME/rc-wrote\"\necho x > \"$OUT_DIR/rc-wrote\"\n",
    )
    .expect("bashrc");
    let shell = discover_shell(Some(Path::new("bash")), |name| std::env::var_os(name))
        .expect("bash on PATH");
    let mut env = hardened_env(
        std::env::vars_os(),
        &std::collections::BTreeMap::new(),
        TerminalKind::Pipe,
    );
    env.push(("OUT_DIR".into(), dirs.outside.clone().into()));
    let policy = policy(SandboxMode::WorkspaceWrite, &dirs, false);
    let snapshot = snapshot_for_sandboxed(&shell, &dirs.home, &cache, &env, Some(&policy))
        .expect("a snapshot")
        .expect("bash has one");
    let name = snapshot.path.file_name().expect("name").to_string_lossy();
    assert!(name.ends_with("-sandboxed.sh"), "{name}");
    let content = std::fs::read_to_string(&snapshot.path).expect("snapshot");
    assert!(content.contains("sandboxed-alias"), "{content}");
    assert!(!dirs.home.join("rc-wrote").exists(), "the rc wrote to HOME");
    no_entries(&dirs.outside);
}

/// Set in the copy of the test binary that runs inside a sandbox.
const INNER_VAR: &str = "AGENTSH_TEST_INSIDE_SANDBOX";

#[test]
fn a_step_the_kernel_refuses_in_the_child_is_unavailable_and_nothing_runs() {
    if !sandbox_available() {
        return;
    }
    if std::env::var_os(INNER_VAR).is_some() {
        // Inside a sandbox, a nested one cannot write its id maps (the outer Landlock forbids
        // every write to /proc): the kernel refuses a step in the forked child.
        let mut spec = SpawnSpec::new("/bin/sh");
        spec.args = vec!["-c".into(), "echo ran > ran".into()];
        spec.cwd = std::env::current_dir().expect("cwd");
        spec.sandbox = Some(SandboxPolicy {
            mode: SandboxMode::WorkspaceWrite,
            writable: vec![spec.cwd.clone()],
            read_only: Vec::new(),
            network: false,
        });
        let err = runtime()
            .block_on(Supervisor::spawn(spec))
            .expect_err("no spawn");
        assert!(
            matches!(err, SpawnError::Sandbox(SandboxError::Unavailable(_))),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "Sandbox unavailable: mapping the shell's user and group in its user namespace: \
             Permission denied (os error 13)"
        );
        assert!(!Path::new("ran").exists(), "the program ran");
        return;
    }
    let dirs = dirs();
    let mut spec = SpawnSpec::new(std::env::current_exe().expect("the test binary"));
    spec.args = [
        "--exact",
        "sandbox::a_step_the_kernel_refuses_in_the_child_is_unavailable_and_nothing_runs",
        "--nocapture",
        "--test-threads",
        "1",
    ]
    .map(Into::into)
    .into();
    let (code, out) = {
        spec.env = vec![
            ("PATH".into(), std::env::var_os("PATH").unwrap_or_default()),
            (INNER_VAR.into(), "1".into()),
        ];
        spec.cwd.clone_from(&dirs.cwd);
        let (mut reader, writer) = std::io::pipe().expect("pipe");
        let writer: OwnedFd = writer.into();
        spec.stdio = [
            ChildStdio::Null,
            ChildStdio::Fd(writer.try_clone().expect("dup")),
            ChildStdio::Fd(writer),
        ];
        spec.sandbox = Some(policy(SandboxMode::WorkspaceWrite, &dirs, false));
        let code = runtime().block_on(async {
            let mut sup = Supervisor::spawn(spec).await.expect("spawn");
            let exit = sup.wait_child().await.expect("status");
            sup.shutdown().await;
            exit.shell_code()
        });
        let mut out = String::new();
        reader.read_to_string(&mut out).expect("output");
        (code, out)
    };
    assert!(code == 0 && out.contains("1 passed"), "{code}: {out}");
}

/// The names and contents below `dir`, sorted (a directory's content is `/`).
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
