//! Helpers shared by the test modules: a proxy on a loopback listener, tiny loopback servers
//! (HTTP, echo, a stream of bytes), raw clients, and `curl`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use agentsh_net_proxy::{Allowlist, Link, Proxy, ProxyConfig, Resolver};

/// How long a test client waits for an answer before failing.
pub const CLIENT_WAIT: Duration = Duration::from_secs(10);

/// A proxy serving one loopback listener, on its own runtime.
pub struct Harness {
    pub proxy: Proxy,
    pub link: Link,
    pub port: u16,
    // Dropped last: the proxy's tasks run on it.
    _runtime: tokio::runtime::Runtime,
}

/// The settings for `entries`, with names resolved by the map `resolve`.
pub fn config(entries: &[&str], resolve: &str) -> ProxyConfig {
    let entries: Vec<String> = entries.iter().map(|&e| e.to_owned()).collect();
    let allowlist = Allowlist::parse(&entries).expect("a valid test allowlist");
    let resolver = Resolver::test_map(resolve).expect("a valid test map");
    ProxyConfig::new(allowlist, resolver)
}

/// A proxy allowing `entries`, names resolved by the map `resolve`.
pub fn harness(entries: &[&str], resolve: &str) -> Harness {
    harness_with(config(entries, resolve))
}

/// A proxy with `config`.
pub fn harness_with(config: ProxyConfig) -> Harness {
    let runtime = agentsh_test_support::runtime();
    let proxy = Proxy::new(config, runtime.handle().clone());
    let (link, port) = attach(&proxy);
    Harness {
        proxy,
        link,
        port,
        _runtime: runtime,
    }
}

/// Attaches a new loopback listener to `proxy`.
pub fn attach(proxy: &Proxy) -> (Link, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback listener");
    let port = listener.local_addr().expect("its address").port();
    (proxy.attach(listener), port)
}

impl Harness {
    /// A client connected to the proxy.
    pub fn client(&self) -> TcpStream {
        client(self.port)
    }

    /// Sends `request` on a new connection and reads everything until the proxy closes it.
    pub fn exchange(&self, request: &[u8]) -> String {
        let mut stream = self.client();
        stream.write_all(request).expect("the request is sent");
        read_all(&mut stream)
    }

    /// Waits until the proxy holds no connection.
    pub fn settle(&self) {
        wait_for(
            || self.proxy.open_connections() == 0,
            "every connection to close",
        );
    }
}

/// A client connected to `port` on 127.0.0.1, with read and write timeouts.
pub fn client(port: u16) -> TcpStream {
    let stream = TcpStream::connect(("127.0.0.1", port)).expect("the proxy accepts");
    stream.set_read_timeout(Some(CLIENT_WAIT)).expect("timeout");
    stream
        .set_write_timeout(Some(CLIENT_WAIT))
        .expect("timeout");
    stream
}

/// Everything until the end of the stream, as text.
pub fn read_all(stream: &mut TcpStream) -> String {
    let mut out = Vec::new();
    stream
        .read_to_end(&mut out)
        .expect("the answer ends with the connection");
    String::from_utf8_lossy(&out).into_owned()
}

/// Reads up to and including the blank line ending a response head.
pub fn read_head(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            other => panic!(
                "the head ended early ({other:?}): {:?}",
                String::from_utf8_lossy(&head)
            ),
        }
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// Reads one HTTP response with a `Content-Length`: `(head, body)`.
pub fn read_response(stream: &mut TcpStream) -> (String, String) {
    let head = read_head(stream);
    let length: usize = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .expect("a Content-Length");
    let mut body = vec![0; length];
    stream.read_exact(&mut body).expect("the body");
    (head, String::from_utf8_lossy(&body).into_owned())
}

/// The exact 403 a denied `target` gets under the allowlist `list`.
pub fn forbidden(target: &str, list: &str) -> String {
    let body = format!("agentsh sandbox: {target} is not in the allowed hosts ({list})");
    status_response("403 Forbidden", &body)
}

/// A response of the proxy's own: status, the three headers, body.
pub fn status_response(status: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
}

/// Polls `done` for up to 10 s.
pub fn wait_for(mut done: impl FnMut() -> bool, what: &str) {
    let start = std::time::Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "timed out waiting for {what}"
        );
        thread::sleep(Duration::from_millis(10));
    }
}

/// A loopback HTTP/1.1 server answering every request with
/// `<METHOD> <target> host=<Host> body=<body>` (keep-alive; `/close` answers without a length
/// and closes). It records each request head as received.
pub struct HttpServer {
    pub port: u16,
    pub heads: Arc<Mutex<Vec<String>>>,
}

impl HttpServer {
    /// Starts on `ip` (such as `127.0.0.1`), on a free port.
    pub fn start(ip: &str) -> Self {
        let listener = TcpListener::bind((ip, 0)).expect("a server listener");
        let port = listener.local_addr().expect("its address").port();
        let heads = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&heads);
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let recorded = Arc::clone(&recorded);
                thread::spawn(move || serve_http(stream, &recorded));
            }
        });
        Self { port, heads }
    }

    /// The heads received so far.
    pub fn heads(&self) -> Vec<String> {
        self.heads.lock().expect("heads").clone()
    }
}

fn serve_http(stream: TcpStream, heads: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut writer = stream;
    loop {
        let mut head = String::new();
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            head.push_str(&line);
            if line == "\r\n" {
                break;
            }
        }
        heads.lock().expect("heads").push(head.clone());
        let header = |name: &str| {
            head.lines().skip(1).find_map(|line| {
                let (n, v) = line.split_once(':')?;
                n.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
            })
        };
        let mut body = Vec::new();
        if header("transfer-encoding").is_some_and(|te| te.eq_ignore_ascii_case("chunked")) {
            loop {
                let mut size = String::new();
                reader.read_line(&mut size).expect("a chunk size");
                let size = usize::from_str_radix(size.trim().split(';').next().unwrap_or(""), 16)
                    .expect("a hex chunk size");
                if size == 0 {
                    let mut trailer = String::new();
                    while reader
                        .read_line(&mut trailer)
                        .is_ok_and(|_| trailer != "\r\n")
                    {
                        body.extend_from_slice(format!("[trailer {}]", trailer.trim()).as_bytes());
                        trailer.clear();
                    }
                    break;
                }
                let mut chunk = vec![0; size + 2];
                reader.read_exact(&mut chunk).expect("a chunk");
                body.extend_from_slice(&chunk[..size]);
            }
        } else if let Some(length) = header("content-length") {
            let mut chunk = vec![0; length.parse().expect("a length")];
            reader.read_exact(&mut chunk).expect("the body");
            body = chunk;
        }
        let mut words = head.split_whitespace();
        let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
        let answer = format!(
            "{method} {target} host={} body={}",
            header("host").unwrap_or_default(),
            String::from_utf8_lossy(&body)
        );
        let response = if target == "/close" {
            format!("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{answer}")
        } else {
            format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{answer}",
                answer.len()
            )
        };
        if writer.write_all(response.as_bytes()).is_err() || target == "/close" {
            return;
        }
    }
}

/// A loopback server that echoes every connection's bytes back, on `ip`.
pub fn echo_server(ip: &str) -> SocketAddr {
    let listener = TcpListener::bind((ip, 0)).expect("an echo listener");
    let addr = listener.local_addr().expect("its address");
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            thread::spawn(move || {
                let mut reader = stream.try_clone().expect("clone");
                let mut writer = stream;
                let _ = std::io::copy(&mut reader, &mut writer);
                let _ = writer.shutdown(Shutdown::Write);
            });
        }
    });
    addr
}

/// A loopback server that sends `bytes` bytes (or without end, for `None`) on each connection,
/// then closes it; the count of connections whose sending ended is kept.
pub fn stream_server(bytes: Option<usize>) -> (u16, Arc<Mutex<usize>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a stream listener");
    let port = listener.local_addr().expect("its address").port();
    let ended = Arc::new(Mutex::new(0));
    let count = Arc::clone(&ended);
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let count = Arc::clone(&count);
            thread::spawn(move || {
                let mut stream = stream;
                let block = vec![b'x'; 64 * 1024];
                let mut left = bytes.unwrap_or(usize::MAX);
                while left > 0 {
                    let n = left.min(block.len());
                    if stream.write_all(&block[..n]).is_err() {
                        break;
                    }
                    left -= n;
                }
                drop(stream);
                *count.lock().expect("count") += 1;
            });
        }
    });
    (port, ended)
}

/// Runs `curl` with `args` (no proxy settings from the environment): `(exit code, stdout)`.
pub fn curl(args: &[&str]) -> (i32, String) {
    let output = std::process::Command::new("curl")
        .args(["--silent", "--show-error", "--max-time", "10"])
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .output()
        .expect("curl runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

/// Whether `program` is on `PATH` (a test that needs it says so and passes without it).
pub fn have(program: &str) -> bool {
    let found = agentsh_test_support::which(program).is_some();
    if !found {
        eprintln!("skipped: no {program} on PATH");
    }
    found
}
