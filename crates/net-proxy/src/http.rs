//! HTTP on the proxy's port: `CONNECT host:port` tunnels, and absolute `http://` requests
//! passed on in origin form, each request of a kept-alive connection checked.

use tokio::net::tcp::OwnedWriteHalf;
use tokio::time::Instant;

use crate::body::{Body, BodyEnd};
use crate::ctx::Ctx;
use crate::dial::dial;
use crate::head::{Head, MAX_HEAD, Parsed, absolute, parse_head};
use crate::host::{split_authority, target};
use crate::io::{Fill, Inbound, Pump, PumpEnd, linger_close, send, tunnel};

/// The answer to a `CONNECT` that went through.
const ESTABLISHED: &[u8] = b"HTTP/1.1 200 Connection established\r\n\r\n";

/// Serves HTTP on a client's connection whose first bytes are in `inbound`; the first head
/// must be complete by `deadline`.
pub(crate) async fn serve(inbound: Inbound, write: OwnedWriteHalf, ctx: &Ctx, deadline: Instant) {
    Session {
        ctx,
        inbound,
        client: Some(write),
        upstream: None,
    }
    .run(deadline)
    .await;
}

/// The upstream of the latest plain request.
struct Upstream {
    /// `host:port`, as the requests wrote it.
    key: String,
    write: OwnedWriteHalf,
    /// Copies the upstream's answers to the client; it holds the client's write half.
    pump: Pump,
}

/// How reading the next head ended, when no head came.
enum End {
    /// Answer with a status and a body, then close.
    Respond(&'static str, String),
    /// The client sent everything it will: pass the upstream's answers on, then close.
    ClientDone,
    /// The upstream closed: close the client, after its answers.
    UpstreamClosed(PumpEnd),
    /// Close now.
    Drop,
}

struct Session<'a> {
    ctx: &'a Ctx,
    inbound: Inbound,
    /// The client's write half, when no pump holds it.
    client: Option<OwnedWriteHalf>,
    upstream: Option<Upstream>,
}

impl Session<'_> {
    async fn run(mut self, mut deadline: Instant) {
        loop {
            let head = match self.next_head(deadline).await {
                Ok(head) => head,
                Err(end) => return self.end(end).await,
            };
            if head.method.eq_ignore_ascii_case("CONNECT") {
                return self.connect(&head).await;
            }
            if let Err(end) = self.forward(&head).await {
                return self.end(end).await;
            }
            deadline = Instant::now() + self.ctx.config.idle_timeout;
        }
    }

    /// Reads the next request head: its first byte by `deadline`, all of it within the head
    /// timeout of its first byte.
    async fn next_head(&mut self, mut deadline: Instant) -> Result<Head, End> {
        let mut scanned = 0;
        let mut started = !self.inbound.buf.is_empty();
        loop {
            match parse_head(&self.inbound.buf, &mut scanned) {
                Parsed::Complete(head) => {
                    self.inbound.consume(head.len);
                    return Ok(head);
                }
                Parsed::Partial => {}
                Parsed::TooLarge => {
                    return Err(End::Respond(
                        "431 Request Header Fields Too Large",
                        format!(
                            "agentsh sandbox: the request head is over {} KiB",
                            MAX_HEAD / 1024
                        ),
                    ));
                }
                Parsed::Malformed(what) => {
                    return Err(End::Respond(
                        "400 Bad Request",
                        format!("agentsh sandbox: malformed request head: {what}"),
                    ));
                }
            }
            let pump = self.upstream.as_mut().map(|u| &mut u.pump);
            match self.inbound.fill(Some(deadline), pump).await {
                Fill::Data if !started => {
                    started = true;
                    deadline = deadline.min(Instant::now() + self.ctx.config.head_timeout);
                }
                Fill::Data => {}
                Fill::Eof if self.inbound.buf.is_empty() => return Err(End::ClientDone),
                Fill::UpstreamDone(end) => return Err(End::UpstreamClosed(end)),
                Fill::Eof | Fill::TimedOut | Fill::Failed => return Err(End::Drop),
            }
        }
    }

    /// Passes a plain request on, to the upstream it names (a new one when it names another
    /// `host:port` than the previous request).
    async fn forward(&mut self, head: &Head) -> Result<(), End> {
        let bad = |body: String| End::Respond("400 Bad Request", body);
        let uri = absolute(&head.target).map_err(bad)?;
        let framing = head
            .framing()
            .map_err(|what| bad(format!("agentsh sandbox: bad request: {what}")))?;
        let key = target(uri.host, uri.port);
        if self.upstream.as_ref().is_none_or(|u| u.key != key) {
            self.release_client().await?;
            let stream = match dial(&self.ctx.config, uri.host, uri.port).await {
                Ok(stream) => stream,
                Err(refusal) => {
                    self.ctx.refused(&refusal);
                    return Err(End::Respond(refusal.http_status(), refusal.message));
                }
            };
            let (read, write) = stream.into_split();
            let client = self.client.take().ok_or(End::Drop)?;
            self.upstream = Some(Upstream {
                key,
                write,
                pump: Pump::start(read, client),
            });
        }
        let upstream = self.upstream.as_mut().ok_or(End::Drop)?;
        let idle = self.ctx.config.idle_timeout;
        let forwarded = head.forwarded(&uri.origin, uri.authority, framing);
        if !send(&mut upstream.write, &forwarded, idle).await {
            return Err(End::Drop);
        }
        let mut body = Body {
            inbound: &mut self.inbound,
            upstream: &mut upstream.write,
            pump: &mut upstream.pump,
            idle,
        };
        match body.forward(framing).await {
            Ok(()) if head.upgrades() => Err(End::ClientDone),
            Ok(()) => Ok(()),
            Err(BodyEnd::Upstream(end)) => Err(End::UpstreamClosed(end)),
            Err(BodyEnd::Broken) => Err(End::Drop),
        }
    }

    /// Ends the previous upstream, if any, taking the client's write half back.
    async fn release_client(&mut self) -> Result<(), End> {
        if let Some(previous) = self.upstream.take() {
            self.client = Some(previous.pump.stop().await.ok_or(End::Drop)?);
        }
        Ok(())
    }

    /// A `CONNECT host:port`: checked, connected, answered, then a raw tunnel.
    async fn connect(mut self, head: &Head) -> () {
        let (host, port) = match split_authority(&head.target, None) {
            Ok(found) => found,
            Err(err) => {
                let body = format!("agentsh sandbox: bad CONNECT target: {err}");
                return self.end(End::Respond("400 Bad Request", body)).await;
            }
        };
        if self.release_client().await.is_err() {
            return;
        }
        let upstream = match dial(&self.ctx.config, host, port).await {
            Ok(upstream) => upstream,
            Err(refusal) => {
                self.ctx.refused(&refusal);
                let end = End::Respond(refusal.http_status(), refusal.message);
                return self.end(end).await;
            }
        };
        let Some(mut client) = self.client.take() else {
            return;
        };
        if send(&mut client, ESTABLISHED, self.ctx.config.idle_timeout).await {
            tunnel(self.inbound, client, upstream).await;
        }
    }

    /// Closes the connection the way `end` says.
    async fn end(mut self, end: End) {
        match end {
            End::Respond(status, body) => {
                let _ = self.release_client().await;
                let Some(mut client) = self.client.take() else {
                    return;
                };
                let response = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                if send(
                    &mut client,
                    response.as_bytes(),
                    self.ctx.config.head_timeout,
                )
                .await
                {
                    linger_close(client, self.inbound).await;
                }
            }
            End::ClientDone => self.raw().await,
            End::UpstreamClosed(PumpEnd::UpstreamClosed(client)) => {
                linger_close(client, self.inbound).await;
            }
            End::UpstreamClosed(_) | End::Drop => {}
        }
    }

    /// Copies what the client still sends to the upstream as it comes (an upgraded
    /// connection, or a client that shut its sending side), while the pump passes the
    /// upstream's answers on; then closes both.
    async fn raw(mut self) {
        let Some(mut upstream) = self.upstream.take() else {
            return;
        };
        loop {
            let pending = self.inbound.buf.len();
            if pending > 0 {
                if !send(
                    &mut upstream.write,
                    &self.inbound.buf,
                    self.ctx.config.idle_timeout,
                )
                .await
                {
                    return;
                }
                self.inbound.consume(pending);
            }
            match self.inbound.fill(None, Some(&mut upstream.pump)).await {
                Fill::Data => {}
                Fill::Eof => break,
                Fill::UpstreamDone(PumpEnd::UpstreamClosed(client)) => {
                    return linger_close(client, self.inbound).await;
                }
                Fill::UpstreamDone(_) | Fill::TimedOut | Fill::Failed => return,
            }
        }
        // The client is done sending: so is the upstream's side of the conversation.
        drop(upstream.write);
        if let PumpEnd::UpstreamClosed(client) = upstream.pump.finished().await {
            drop(client);
        }
    }
}
