//! The network allowlist through the real binary: real clients (curl, Python's urllib, git,
//! pip, npm) inside the real sandbox reach loopback servers through the session's proxy when
//! their host is listed, and nothing else; refusals are named in the result's sandbox line.
//!
//! No test reaches beyond this machine: the proxy's test resolver
//! (`AGENTSH_TEST_RESOLVE`) maps the test names to loopback, and refuses every other name
//! without asking the system's resolver.

mod faults;
pub(crate) mod servers;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::util::{LIVENESS, Rpc, TestEnv};
use servers::HttpServer;

/// The names the tests use, all on the machine's loopback.
const RESOLVE: &str = "web.test=127.0.0.1,files.pkg.test=127.0.0.1,evil.test=127.0.0.1,\
                       evil2.test=127.0.0.1,inner.test=127.0.0.1";

/// The list of most tests: two names (one a wildcard) and the loopback address the test names
/// resolve to (special addresses are dropped unless listed).
const LISTED: &str = r#"["web.test", "*.pkg.test", "127.0.0.1"]"#;
const LISTED_TEXT: &str = "web.test, *.pkg.test, 127.0.0.1";

const HELLO: &str = "hello from loopback";

/// A session's environment whose sandbox allows `list` (TOML).
fn env_with(list: &str) -> TestEnv {
    TestEnv::with_config(&format!(
        "[sandbox]\nmode = \"workspace-write\"\nnetwork = {list}\n"
    ))
}

/// `agentsh rpc` in `env`, with the test resolver.
fn rpc(env: &TestEnv) -> Rpc {
    let config = env.config_path();
    let mut command = env.command(&["rpc", "--config", config.to_str().expect("utf-8")]);
    command.env("AGENTSH_TEST_RESOLVE", RESOLVE);
    Rpc::spawn(command)
}

/// Runs `command` as an RPC `bash` request; its response's data (`output`, `exitCode`, `text`
/// with the sandbox line).
fn bash(rpc: &mut Rpc, id: &str, command: &str) -> Value {
    rpc.send_json(&json!({"id": id, "type": "bash", "command": command, "timeout": 120}));
    let response = rpc.response_within(id, std::time::Duration::from_secs(150));
    assert_eq!(response["success"], true, "{response}");
    response["data"].clone()
}

fn text(data: &Value) -> &str {
    data["text"].as_str().expect("the result's text")
}

fn output(data: &Value) -> &str {
    data["output"].as_str().expect("the result's output")
}

/// The sandbox line naming `blocked` (in that order), at the end of `text` (before a job's
/// state line, which closes a job's result).
#[track_caller]
fn assert_blocked(env: &TestEnv, text: &str, list: &str, blocked: &[String]) {
    let mut lines = text.lines().rev().filter(|line| !line.is_empty());
    let mut last = lines.next().unwrap_or_default();
    if last.starts_with("[job ") {
        last = lines.next().unwrap_or_default();
    }
    let work = env.work_dir().canonicalize().expect("work dir");
    assert!(
        last.starts_with(&format!(
            "[sandbox: workspace-write; writable: {}, ",
            work.display()
        )) && last.ends_with(&format!(
            "; network: {list}; blocked {}]",
            blocked.join(", ")
        )),
        "{text}"
    );
}

/// The line naming `evil.test:<port>` as the one refused host, under the common list.
#[track_caller]
fn assert_evil_blocked(env: &TestEnv, data: &Value, port: u16) {
    assert_blocked(env, text(data), LISTED_TEXT, &[format!("evil.test:{port}")]);
}

/// No sandbox line at all.
#[track_caller]
fn assert_no_sandbox_line(text: &str) {
    assert!(!text.contains("[sandbox:"), "{text}");
}

fn denied_body(host_port: &str) -> String {
    format!("agentsh sandbox: {host_port} is not in the allowed hosts ({LISTED_TEXT})")
}

/// A session allowing `list`, the web server it reaches, and its RPC connection.
fn session(list: &str) -> (TestEnv, HttpServer, Rpc) {
    let env = env_with(list);
    let rpc = rpc(&env);
    (env, web(), rpc)
}

fn web() -> HttpServer {
    let server = HttpServer::start();
    server.file("/hello.txt", HELLO, "text/plain");
    server
}

/// Every command gets the proxy variables, in both cases, naming one port.
#[test]
fn commands_get_the_proxy_environment() {
    let env = env_with(LISTED);
    let mut rpc = rpc(&env);
    let data = bash(
        &mut rpc,
        "1",
        "env | grep -i -E '^(http|https|all|no)_proxy=' | sort",
    );
    let out = output(&data);
    let port = out
        .lines()
        .find_map(|line| line.strip_prefix("HTTP_PROXY=http://127.0.0.1:"))
        .expect("HTTP_PROXY");
    for line in [
        format!("HTTP_PROXY=http://127.0.0.1:{port}"),
        format!("HTTPS_PROXY=http://127.0.0.1:{port}"),
        format!("ALL_PROXY=socks5h://127.0.0.1:{port}"),
        "NO_PROXY=localhost,127.0.0.1,::1".to_owned(),
        format!("http_proxy=http://127.0.0.1:{port}"),
        format!("https_proxy=http://127.0.0.1:{port}"),
        format!("all_proxy=socks5h://127.0.0.1:{port}"),
        "no_proxy=localhost,127.0.0.1,::1".to_owned(),
    ] {
        assert!(out.lines().any(|l| l == line), "{line} missing in {out}");
    }
    rpc.close(LIVENESS);
}

/// curl through `HTTP_PROXY` (absolute URI), through `HTTPS_PROXY` with a tunnel (CONNECT),
/// and over SOCKS5 with names: the listed host answers; an unlisted one gets the 403 body (or
/// SOCKS5's refusal) and the result names it.
#[test]
fn curl_reaches_a_listed_host_by_every_protocol_and_no_other() {
    let (env, server, mut rpc) = session(LISTED);
    let port = server.port();
    let url = |host: &str| format!("http://{host}:{port}/hello.txt");
    let allowed = format!(
        "curl -sS {web}; echo; curl -sS --proxytunnel {web}; echo; \
         curl -sS -x \"$ALL_PROXY\" {web}; echo; \
         curl -sS --socks5-hostname \"${{ALL_PROXY#socks5h://}}\" {web}",
        web = url("web.test")
    );
    let data = bash(&mut rpc, "1", &allowed);
    assert_eq!(data["exitCode"], 0, "{data}");
    assert_eq!(output(&data).matches(HELLO).count(), 4, "{data}");
    assert_no_sandbox_line(text(&data));
    // The absolute URI reached the server in origin form.
    assert!(
        server
            .requests()
            .iter()
            .all(|line| line == "GET /hello.txt HTTP/1.1"),
        "{:?}",
        server.requests()
    );

    let evil = format!("evil.test:{port}");
    let data = bash(&mut rpc, "2", &format!("curl -sS {}", url("evil.test")));
    // curl succeeds on a 403 without -f: the line comes anyway.
    assert_eq!(data["exitCode"], 0, "{data}");
    assert_eq!(output(&data).trim_end(), denied_body(&evil), "{data}");
    assert_blocked(&env, text(&data), LISTED_TEXT, std::slice::from_ref(&evil));

    let data = bash(
        &mut rpc,
        "3",
        &format!("curl -sS --proxytunnel {}", url("evil.test")),
    );
    assert_ne!(data["exitCode"], 0, "{data}");
    assert!(output(&data).contains("403"), "{data}");
    assert_blocked(&env, text(&data), LISTED_TEXT, std::slice::from_ref(&evil));

    let data = bash(
        &mut rpc,
        "4",
        &format!(
            "curl -sS --socks5-hostname \"${{ALL_PROXY#socks5h://}}\" {}",
            url("evil.test")
        ),
    );
    assert_ne!(data["exitCode"], 0, "{data}");
    assert_blocked(&env, text(&data), LISTED_TEXT, std::slice::from_ref(&evil));

    // A call without refusals has no line: refusals belong to the call they happened in.
    let data = bash(&mut rpc, "5", &format!("curl -sS {}", url("web.test")));
    assert_eq!(output(&data), HELLO, "{data}");
    assert_no_sandbox_line(text(&data));
    assert_eq!(
        server.requests().len(),
        5,
        "nothing of evil.test reached the server"
    );
    rpc.close(LIVENESS);
}

/// Python's `urllib` follows the variables too.
#[test]
fn python_urllib_reaches_a_listed_host_only() {
    let (env, server, mut rpc) = session(LISTED);
    let port = server.port();
    let fetch = |host: &str| {
        format!(
            "python3 -c 'import urllib.request as u; print(u.urlopen(\"http://{host}:{port}/hello.txt\").read().decode())'"
        )
    };
    let data = bash(&mut rpc, "1", &fetch("web.test"));
    assert_eq!(output(&data).trim_end(), HELLO, "{data}");
    let data = bash(&mut rpc, "2", &fetch("evil.test"));
    assert_ne!(data["exitCode"], 0, "{data}");
    assert!(output(&data).contains("403"), "{data}");
    assert_evil_blocked(&env, &data, port);
    rpc.close(LIVENESS);
}

/// Runs `git` with `args` in `dir` (outside any sandbox), failing the test on an error.
fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .status()
        .expect("run git");
    assert!(status.success(), "git {args:?}");
}

/// `git clone` over git's dumb HTTP protocol from a loopback server.
#[test]
fn git_clones_from_a_listed_host_only() {
    let env = env_with(LISTED);
    let server = web();
    let port = server.port();
    let source = tempfile::tempdir().expect("temp dir");
    let src = source.path().join("src");
    std::fs::create_dir(&src).expect("mkdir");
    std::fs::write(src.join("README"), "cloned through the proxy\n").expect("write");
    git(&src, &["init", "-q"]);
    git(&src, &["add", "README"]);
    git(&src, &["commit", "-q", "-m", "first"]);
    git(source.path(), &["clone", "-q", "--bare", "src", "repo.git"]);
    git(&source.path().join("repo.git"), &["update-server-info"]);
    server.directory("/repo.git", &source.path().join("repo.git"));

    let mut rpc = rpc(&env);
    let data = bash(
        &mut rpc,
        "1",
        &format!("git clone -q http://web.test:{port}/repo.git clone && cat clone/README"),
    );
    assert_eq!(data["exitCode"], 0, "{data}");
    assert_eq!(output(&data), "cloned through the proxy\n", "{data}");
    let data = bash(
        &mut rpc,
        "2",
        &format!("git clone -q http://evil.test:{port}/repo.git denied"),
    );
    assert_ne!(data["exitCode"], 0, "{data}");
    assert_evil_blocked(&env, &data, port);
    rpc.close(LIVENESS);
}

/// A minimal wheel of `tinypkg` 1.0, made by the host's Python.
fn wheel(dir: &Path) -> PathBuf {
    let path = dir.join("tinypkg-1.0-py3-none-any.whl");
    let script = r#"
import sys, zipfile
files = {
    "tinypkg/__init__.py": "VALUE = 1\n",
    "tinypkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
    "tinypkg-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
with zipfile.ZipFile(sys.argv[1], "w") as whl:
    for name, text in files.items():
        whl.writestr(name, text)
    whl.writestr("tinypkg-1.0.dist-info/RECORD", "".join(f"{n},,\n" for n in files) + "tinypkg-1.0.dist-info/RECORD,,\n")
"#;
    let status = Command::new("python3")
        .args(["-c", script])
        .arg(&path)
        .status()
        .expect("python3");
    assert!(status.success(), "making the wheel");
    path
}

/// The Python of the test dependencies' virtualenv (it has pip), when installed.
fn venv_python() -> Option<PathBuf> {
    let python = crate::mcp::test_deps().join("venv/bin/python");
    if python.exists() {
        return Some(python);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "no {}: run scripts/install-test-deps",
        python.display()
    );
    eprintln!(
        "skipped: no {} (scripts/install-test-deps)",
        python.display()
    );
    None
}

/// `pip download` from a loopback simple index (a `*.pkg.test` name).
#[test]
fn pip_downloads_from_a_listed_index_only() {
    let Some(python) = venv_python() else {
        return;
    };
    let env = env_with(LISTED);
    let server = HttpServer::start();
    let port = server.port();
    let dir = tempfile::tempdir().expect("temp dir");
    let wheel = wheel(dir.path());
    let name = "tinypkg-1.0-py3-none-any.whl";
    server.file(
        &format!("/files/{name}"),
        std::fs::read(&wheel).expect("read the wheel"),
        "application/octet-stream",
    );
    let index = format!(
        "<!DOCTYPE html><html><body><a href=\"http://files.pkg.test:{port}/files/{name}\">{name}</a></body></html>"
    );
    for path in ["/simple/tinypkg/", "/simple/tinypkg"] {
        server.file(path, index.clone(), "text/html");
    }
    let mut rpc = rpc(&env);
    let pip = |host: &str, into: &str| {
        format!(
            "{python} -m pip download --no-deps --no-cache-dir --disable-pip-version-check \
             --retries 0 --timeout 20 -d {into} --index-url http://{host}:{port}/simple/ \
             --trusted-host {host} tinypkg",
            python = python.display()
        )
    };
    let data = bash(
        &mut rpc,
        "1",
        &format!("{} && ls dl", pip("files.pkg.test", "dl")),
    );
    assert_eq!(data["exitCode"], 0, "{data}");
    assert!(output(&data).ends_with(&format!("{name}\n")), "{data}");
    let data = bash(&mut rpc, "2", &pip("evil.test", "dl2"));
    assert_ne!(data["exitCode"], 0, "{data}");
    assert_evil_blocked(&env, &data, port);
    rpc.close(LIVENESS);
}

/// `npm view` against a loopback registry document.
#[test]
fn npm_views_a_package_from_a_listed_registry_only() {
    if which("npm").is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "no npm: run scripts/install-test-deps"
        );
        eprintln!("skipped: no npm");
        return;
    }
    let env = env_with(LISTED);
    let server = HttpServer::start();
    let port = server.port();
    let document = json!({
        "name": "tinypkg",
        "dist-tags": {"latest": "1.0.0"},
        "versions": {"1.0.0": {
            "name": "tinypkg", "version": "1.0.0", "description": "served on loopback",
            "dist": {"tarball": format!("http://files.pkg.test:{port}/tinypkg/-/tinypkg-1.0.0.tgz"),
                     "shasum": "0000000000000000000000000000000000000000"},
        }},
        "time": {"1.0.0": "2026-01-01T00:00:00.000Z"},
    });
    server.file("/tinypkg", document.to_string(), "application/json");
    let mut rpc = rpc(&env);
    let npm = |host: &str| {
        format!(
            "npm view tinypkg version description --registry http://{host}:{port}/ \
             --cache \"$TMPDIR/npm-cache\" --no-update-notifier --fetch-retries 0"
        )
    };
    let data = bash(&mut rpc, "1", &npm("files.pkg.test"));
    assert_eq!(data["exitCode"], 0, "{data}");
    assert!(output(&data).contains("1.0.0"), "{data}");
    assert!(output(&data).contains("served on loopback"), "{data}");
    let data = bash(&mut rpc, "2", &npm("evil.test"));
    assert_ne!(data["exitCode"], 0, "{data}");
    assert_evil_blocked(&env, &data, port);
    rpc.close(LIVENESS);
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(program))
            .find(|candidate| candidate.is_file())
    })
}

/// Raw requests a client library would never send as written: a Python script that sends
/// `request` on a fresh connection to the proxy and prints the status line (and the body).
fn raw_request(request: &str) -> String {
    format!(
        r#"python3 - <<'EOF'
import os, socket
port = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])
s = socket.create_connection(("127.0.0.1", port))
s.sendall({request:?}.encode())
data = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
print(data.decode(errors="replace").split("\r\n")[0])
print(data.decode(errors="replace").split("\r\n\r\n", 1)[-1])
EOF"#
    )
}

/// What no listed host lets through: non-canonical numbers, an unlisted address, a second
/// request on a kept-alive connection, direct connections, UDP, Unix sockets — also from a
/// setsid'd background child. Each refusal is named in the call's line.
#[test]
fn everything_unlisted_is_refused() {
    let (env, server, mut rpc) = session(LISTED);
    let port = server.port();

    for (id, host) in [("1", "127.1"), ("2", "2130706433"), ("3", "0x7f.1")] {
        let data = bash(
            &mut rpc,
            id,
            &raw_request(&format!(
                "GET http://{host}:{port}/hello.txt HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n"
            )),
        );
        assert!(output(&data).starts_with("HTTP/1.1 403"), "{host}: {data}");
        assert!(!output(&data).contains(HELLO), "{host}: {data}");
        assert_blocked(&env, text(&data), LISTED_TEXT, &[format!("{host}:{port}")]);
    }

    // An address not listed (also loopback, also a server there: the control below).
    let other = std::net::TcpListener::bind("127.0.0.2:0").expect("bind 127.0.0.2");
    let other_port = other.local_addr().expect("address").port();
    let data = bash(
        &mut rpc,
        "4",
        &format!("curl -sS http://127.0.0.2:{other_port}/"),
    );
    assert_eq!(
        output(&data).trim_end(),
        denied_body(&format!("127.0.0.2:{other_port}")),
        "{data}"
    );

    // A kept-alive connection: the first request (listed) is answered, the second (not) is
    // refused.
    let keep_alive = format!(
        r#"python3 - <<'EOF'
import os, socket
port = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])
s = socket.create_connection(("127.0.0.1", port))
s.sendall(b"GET http://web.test:{port}/hello.txt HTTP/1.1\r\nHost: web.test:{port}\r\n\r\n")
data = b""
while b"{HELLO}" not in data:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
s.sendall(b"GET http://evil.test:{port}/hello.txt HTTP/1.1\r\nHost: evil.test:{port}\r\n\r\n")
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
print(data.decode(errors="replace"))
EOF"#
    );
    let data = bash(&mut rpc, "5", &keep_alive);
    let out = output(&data);
    assert!(out.starts_with("HTTP/1.1 200"), "{data}");
    assert!(out.contains(HELLO), "{data}");
    assert!(
        out.contains("HTTP/1.1 403") && out.contains(&denied_body(&format!("evil.test:{port}"))),
        "{data}"
    );
    assert_evil_blocked(&env, &data, port);

    // Direct connections, UDP and Unix sockets fail as with no network at all; so does the
    // same from a setsid'd background child, whose refusal is named too.
    let script = format!(
        r#"(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo direct-reached || echo direct-refused
python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("192.0.2.1", 53))' 2>/dev/null && echo udp-sent || echo udp-failed
python3 -c 'import socket; socket.socket(socket.AF_UNIX)' 2>/dev/null && echo unix-made || echo unix-refused
setsid sh -c '(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo child-direct-reached || echo child-direct-refused; curl -sS http://evil2.test:{port}/hello.txt; echo' &
wait"#
    );
    let data = bash(&mut rpc, "6", &script);
    let out = output(&data);
    for line in [
        "direct-refused",
        "udp-failed",
        "unix-refused",
        "child-direct-refused",
    ] {
        assert!(out.lines().any(|l| l == line), "{line}: {data}");
    }
    assert!(
        out.contains(&denied_body(&format!("evil2.test:{port}"))),
        "{data}"
    );
    assert_blocked(
        &env,
        text(&data),
        LISTED_TEXT,
        &[format!("evil2.test:{port}")],
    );
    // The positive control: the server the direct connections tried is up and answers
    // through the proxy.
    let data = bash(
        &mut rpc,
        "7",
        &format!("curl -sS http://web.test:{port}/hello.txt"),
    );
    assert_eq!(output(&data), HELLO, "{data}");
    drop(other);
    rpc.close(LIVENESS);
}

/// A listed name whose every address is special (loopback here) is refused unless the
/// address is listed too.
#[test]
fn a_listed_name_resolving_to_an_unlisted_loopback_is_refused() {
    let env = env_with(r#"["web.test"]"#);
    let server = web();
    let port = server.port();
    let mut rpc = rpc(&env);
    let data = bash(
        &mut rpc,
        "1",
        &format!("curl -sS http://web.test:{port}/hello.txt"),
    );
    assert_eq!(
        output(&data).trim_end(),
        "agentsh sandbox: web.test resolves to 127.0.0.1, which is not listed",
        "{data}"
    );
    assert_blocked(&env, text(&data), "web.test", &[format!("web.test:{port}")]);
    assert!(server.requests().is_empty(), "{:?}", server.requests());
    rpc.close(LIVENESS);
}

/// A list without a sandbox is a configuration error, naming the key.
#[test]
fn a_list_without_a_sandbox_is_a_config_error() {
    let env = TestEnv::with_config("[sandbox]\nnetwork = [\"github.com\"]\n");
    let done = env.exec(&["--", "true"]);
    assert_eq!(done.code(), 2, "{done:?}");
    assert!(done.stderr.contains("sandbox.network"), "{done:?}");
    assert!(done.stderr.contains("sandbox.mode"), "{done:?}");
    let env = env_with(r#"["127.1"]"#);
    let done = env.exec(&["--", "true"]);
    assert_eq!(done.code(), 2, "{done:?}");
    assert!(done.stderr.contains("sandbox.network[0]"), "{done:?}");
}

/// A `tool_call` of `name` with `arguments` over RPC; the result's text.
fn tool_text(rpc: &mut Rpc, id: &str, name: &str, arguments: &Value) -> String {
    rpc.send_json(
        &json!({"id": id, "type": "tool_call", "toolCallId": id, "name": name,
        "arguments": arguments}),
    );
    let response = rpc.response_within(id, std::time::Duration::from_secs(60));
    assert_eq!(response["success"], true, "{response}");
    response["data"]["content"][0]["text"]
        .as_str()
        .expect("a text result")
        .to_owned()
}

/// Jobs have namespaces of their own, on a terminal or not: both reach a listed host, and a
/// job's result names what was refused for it once it ended.
#[test]
fn background_jobs_on_a_terminal_or_not_go_through_the_proxy() {
    let (env, server, mut rpc) = session(LISTED);
    let port = server.port();
    for (n, pty) in [(1, false), (2, true)] {
        let command = format!(
            "curl -sS http://web.test:{port}/hello.txt; echo; curl -sS http://evil.test:{port}/x; echo; sleep 0.5"
        );
        let started = tool_text(
            &mut rpc,
            &format!("start-{n}"),
            "bash",
            &json!({"command": command, "run_in_background": true, "pty": pty}),
        );
        let ended = (0..10)
            .map(|i| {
                tool_text(
                    &mut rpc,
                    &format!("read-{n}-{i}"),
                    "job_output",
                    &json!({"jobId": n.to_string(), "wait": 10}),
                )
            })
            .scan(started, |all, text| {
                all.push_str(&text);
                all.push('\n');
                Some((all.clone(), text))
            })
            .find(|(_, text)| text.contains(&format!("[job {n}: exited")))
            .expect("the job ended");
        let (all, last) = ended;
        assert!(all.contains(HELLO), "pty={pty}: {all}");
        assert!(
            all.contains(&denied_body(&format!("evil.test:{port}"))),
            "pty={pty}: {all}"
        );
        assert_blocked(&env, &last, LISTED_TEXT, &[format!("evil.test:{port}")]);
    }
    rpc.close(LIVENESS);
}
