//! Servers on the machine's loopback for the allowlist tests: a small HTTP/1.1 file server
//! (keep-alive, `Content-Length`) whose routes are files, a truncated answer or a slow
//! stream; nothing here is reachable beyond this machine.

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What a path answers.
#[derive(Clone)]
pub enum Route {
    /// `200` with these bytes.
    File(Arc<Vec<u8>>, &'static str),
    /// `200` announcing `claimed` bytes, then `sent` bytes, then the connection closes.
    Truncated { claimed: usize, sent: usize },
    /// `200` announcing `total` bytes and sending them in 64 KiB pieces, 50 ms apart.
    Slow { total: usize },
}

/// A threaded HTTP/1.1 server on `127.0.0.1`.
pub struct HttpServer {
    port: u16,
    routes: Arc<Mutex<HashMap<String, Route>>>,
    /// The request lines it was sent, in order.
    requests: Arc<Mutex<Vec<String>>>,
}

impl HttpServer {
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback server");
        let port = listener.local_addr().expect("address").port();
        let routes: Arc<Mutex<HashMap<String, Route>>> = Arc::default();
        let requests: Arc<Mutex<Vec<String>>> = Arc::default();
        let (served_routes, served_requests) = (Arc::clone(&routes), Arc::clone(&requests));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { break };
                let routes = Arc::clone(&served_routes);
                let requests = Arc::clone(&served_requests);
                std::thread::spawn(move || serve(stream, &routes, &requests));
            }
        });
        Self {
            port,
            routes,
            requests,
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Serves `bytes` at `path`.
    pub fn file(&self, path: &str, bytes: impl Into<Vec<u8>>, content_type: &'static str) {
        self.route(path, Route::File(Arc::new(bytes.into()), content_type));
    }

    pub fn route(&self, path: &str, route: Route) {
        self.routes
            .lock()
            .expect("routes")
            .insert(path.to_owned(), route);
    }

    /// Serves every file below `dir` at `prefix/<relative path>`.
    pub fn directory(&self, prefix: &str, dir: &Path) {
        for entry in walk(dir) {
            let relative = entry.strip_prefix(dir).expect("below the directory");
            let path = format!("{prefix}/{}", relative.display());
            self.file(
                &path,
                std::fs::read(&entry).expect("read a served file"),
                "application/octet-stream",
            );
        }
    }

    /// The request lines received so far.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("requests").clone()
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read a served directory") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

fn serve(stream: TcpStream, routes: &Mutex<HashMap<String, Route>>, requests: &Mutex<Vec<String>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let mut reader = BufReader::new(stream.try_clone().expect("clone the stream"));
    let mut writer = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0usize;
        let mut close = false;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            let lower = header.to_ascii_lowercase();
            if let Some(value) = lower.strip_prefix("content-length:") {
                length = value.trim().parse().unwrap_or(0);
            }
            if lower.starts_with("connection:") && lower.contains("close") {
                close = true;
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let request_line = request_line.trim_end().to_owned();
        requests
            .lock()
            .expect("requests")
            .push(request_line.clone());
        let path = request_line
            .split(' ')
            .nth(1)
            .unwrap_or("/")
            .split('?')
            .next()
            .unwrap_or("/")
            .to_owned();
        let route = routes.lock().expect("routes").get(&path).cloned();
        let written = match route {
            Some(Route::File(bytes, content_type)) => writer
                .write_all(
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
                        bytes.len()
                    )
                    .as_bytes(),
                )
                .and_then(|()| writer.write_all(&bytes)),
            Some(Route::Truncated { claimed, sent }) => {
                let _ = writer.write_all(
                    format!("HTTP/1.1 200 OK\r\nContent-Length: {claimed}\r\n\r\n").as_bytes(),
                );
                let _ = writer.write_all(&vec![b'x'; sent]);
                return;
            }
            Some(Route::Slow { total }) => {
                let _ = writer.write_all(
                    format!("HTTP/1.1 200 OK\r\nContent-Length: {total}\r\n\r\n").as_bytes(),
                );
                let piece = vec![b's'; 64 * 1024];
                let mut left = total;
                while left > 0 {
                    let n = left.min(piece.len());
                    if writer.write_all(&piece[..n]).is_err() {
                        return;
                    }
                    left -= n;
                    std::thread::sleep(Duration::from_millis(50));
                }
                Ok(())
            }
            None => writer.write_all(
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found",
            ),
        };
        if written.is_err() || close {
            return;
        }
    }
}
