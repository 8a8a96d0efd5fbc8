//! A network allowlist's way out: the listener each sandboxed tree makes at `127.0.0.1:<port>`
//! in its network namespace reaches the server outside, for every process of the tree (also a
//! setsid'd, double-forked one), while nothing else leaves the namespace and the listener
//! itself is out of the commands' hands.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use agentsh_process::sandbox::{NetworkLink, NetworkProxy, ProxyServer};

use super::*;

/// A server that answers every connection with `pong <what the client sent>` from outside the
/// namespace, and counts the listeners it was given.
#[derive(Default)]
struct EchoServer {
    listeners: Mutex<usize>,
}

struct EchoLink;

impl NetworkLink for EchoLink {
    fn mark(&self) -> u64 {
        0
    }
    fn refused_since(&self, _mark: u64) -> Vec<String> {
        Vec::new()
    }
}

impl ProxyServer for EchoServer {
    fn attach(&self, listener: TcpListener) -> Box<dyn NetworkLink> {
        *self.listeners.lock().expect("count") += 1;
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { break };
                std::thread::spawn(move || {
                    let mut line = String::new();
                    let mut reader = BufReader::new(&stream);
                    if reader.read_line(&mut line).is_ok() {
                        let _ = (&stream).write_all(format!("pong {line}").as_bytes());
                    }
                });
            }
        });
        Box::new(EchoLink)
    }
}

/// A port for the listener inside (any: the namespace is new and empty).
const PORT: u16 = 24_681;

fn allowlisted(dirs: &Dirs, server: &Arc<EchoServer>) -> SandboxSpec {
    let mut policy = policy(SandboxMode::WorkspaceWrite, dirs, false);
    policy.network = SandboxNetwork::Allowlist(NetworkProxy {
        port: PORT,
        hosts: vec!["example.test".to_owned()],
        server: Arc::clone(server) as Arc<dyn ProxyServer>,
    });
    policy
}

#[test]
fn every_process_of_the_tree_reaches_the_proxy_and_nothing_else() {
    if !sandbox_available() {
        return;
    }
    let dirs = dirs();
    let server = Arc::new(EchoServer::default());
    // A server on the machine's loopback: outside the namespace, out of reach.
    let outside = TcpListener::bind("127.0.0.1:0").expect("bind");
    let outside_port = outside.local_addr().expect("addr").port();
    let script = format!(
        r#"
ask() {{ exec 3<>/dev/tcp/127.0.0.1/{PORT} && echo "$1" >&3 && head -n1 <&3; exec 3>&-; }}
ask direct
setsid bash -c 'ask() {{ exec 3<>/dev/tcp/127.0.0.1/{PORT} && echo "$1" >&3 && head -n1 <&3; }}; ({{ ask detached; : > "$TMPDIR/detached"; }} &) ; until [ -e "$TMPDIR/detached" ]; do sleep 0.02; done' 
wait
(exec 4<>/dev/tcp/127.0.0.1/{outside_port}) 2>/dev/null && echo outside-reached || echo outside-refused
python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"x", ("192.0.2.1", 53))' 2>/dev/null && echo udp-sent || echo udp-failed
python3 -c 'import socket; socket.socket(socket.AF_UNIX)' 2>/dev/null && echo unix-made || echo unix-refused
python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", {PORT}))' 2>/dev/null && echo port-taken || echo port-held
ls -l /proc/$$/fd | grep -c socket: || true
"#
    );
    let (code, out) = run(allowlisted(&dirs, &server), &dirs, &script);
    assert_eq!(code, 0, "{out}");
    has_line(&out, "pong direct");
    has_line(&out, "pong detached");
    has_line(&out, "outside-refused");
    has_line(&out, "udp-failed");
    has_line(&out, "unix-refused");
    has_line(&out, "port-held");
    // The shell holds no socket: the listener went out before the program ran.
    has_line(&out, "0");
    assert_eq!(*server.listeners.lock().expect("count"), 1);
    drop(outside);
}

#[test]
fn without_an_allowlist_no_listener_is_made() {
    if !sandbox_available() {
        return;
    }
    let dirs = dirs();
    let script =
        format!("(exec 3<>/dev/tcp/127.0.0.1/{PORT}) 2>/dev/null && echo reached || echo refused");
    let (code, out) = run(
        policy(SandboxMode::WorkspaceWrite, &dirs, false),
        &dirs,
        &script,
    );
    assert_eq!(code, 0, "{out}");
    has_line(&out, "refused");
}

#[test]
fn each_tree_gets_a_namespace_and_listener_of_its_own() {
    if !sandbox_available() {
        return;
    }
    let dirs = dirs();
    let server = Arc::new(EchoServer::default());
    let policy = allowlisted(&dirs, &server);
    for round in 0..3 {
        let script =
            format!("exec 3<>/dev/tcp/127.0.0.1/{PORT} && echo r{round} >&3 && head -n1 <&3");
        let (code, out) = run(policy.clone(), &dirs, &script);
        assert_eq!(code, 0, "{out}");
        has_line(&out, &format!("pong r{round}"));
    }
    assert_eq!(*server.listeners.lock().expect("count"), 3);
}

#[test]
fn a_direct_connection_to_a_machine_address_fails() {
    if !sandbox_available() {
        return;
    }
    let dirs = dirs();
    let echo = Arc::new(EchoServer::default());
    let server = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = server.local_addr().expect("addr").port();
    // Reachable from here: the positive control.
    TcpStream::connect(("127.0.0.1", port)).expect("reachable outside the sandbox");
    let script = format!("(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>&1; echo status=$?");
    let (_, out) = run(allowlisted(&dirs, &echo), &dirs, &script);
    assert!(out.contains("Connection refused"), "{out}");
    has_line(&out, "status=1");
}
