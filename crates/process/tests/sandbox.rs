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

use agentsh_process::sandbox::{
    self, Kernel, SandboxError, SandboxMode, SandboxNetwork, SandboxSpec,
};
use agentsh_process::{ChildStdio, SpawnError, SpawnSpec, Supervisor};
use agentsh_test_support::{
    alive_containing, assert_no_survivor, runtime, unique_marker, wait_for_process, which,
};

/// Whether the running kernel can sandbox at all; tests say why they skip when it cannot.
fn sandbox_available() -> bool {
    let policy = SandboxSpec {
        mode: SandboxMode::WorkspaceWrite,
        writable: Vec::new(),
        read_only: Vec::new(),
        network: SandboxNetwork::Off,
        temp_dir: None,
        temp_fs: None,
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

fn policy(mode: SandboxMode, dirs: &Dirs, network: bool) -> SandboxSpec {
    let writable = match mode {
        SandboxMode::WorkspaceWrite => vec![dirs.cwd.clone(), dirs.tmp.clone()],
        SandboxMode::ReadOnly => vec![dirs.tmp.clone()],
    };
    SandboxSpec {
        mode,
        writable,
        read_only: Vec::new(),
        network: if network {
            SandboxNetwork::On
        } else {
            SandboxNetwork::Off
        },
        temp_dir: None,
        temp_fs: None,
    }
}

/// Runs `script` in a sandboxed `bash -c` (cwd `dirs.cwd`), ends the tree, and returns its
/// exit code and output (stdout and stderr together).
fn run(policy: SandboxSpec, dirs: &Dirs, script: &str) -> (i32, String) {
    run_with(policy, dirs, script, Vec::new())
}

/// [`run`] with extra descriptors for the child.
fn run_with(
    policy: SandboxSpec,
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
    networked.network = SandboxNetwork::On;
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
        spec.sandbox = Some(SandboxSpec {
            mode: SandboxMode::WorkspaceWrite,
            writable: vec![spec.cwd.clone()],
            read_only: Vec::new(),
            network: SandboxNetwork::Off,
            temp_dir: None,
            temp_fs: None,
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
mod mounts;
mod network;
mod temp_dir;
mod temp_fs;
