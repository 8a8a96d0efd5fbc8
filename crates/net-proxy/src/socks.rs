//! SOCKS5 (RFC 1928) on the proxy's port: no authentication, `CONNECT` only, to an IPv4 or
//! IPv6 address or a name the proxy checks and resolves itself (`socks5h`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use tokio::net::tcp::OwnedWriteHalf;
use tokio::time::Instant;

use crate::ctx::Ctx;
use crate::dial::dial;
use crate::io::{Inbound, linger_close, send, tunnel};

/// The protocol version, the first byte of every message.
pub(crate) const VERSION: u8 = 5;
/// The method "no authentication required".
const NO_AUTH: u8 = 0;
/// The reply "no acceptable methods".
const NO_METHOD: u8 = 0xff;
/// The command `CONNECT`.
const CONNECT: u8 = 1;
/// Reply codes.
const GENERAL_FAILURE: u8 = 1;
const COMMAND_NOT_SUPPORTED: u8 = 7;
const ADDRESS_NOT_SUPPORTED: u8 = 8;

/// Serves SOCKS5 on a client's connection whose first bytes are in `inbound`; the greeting
/// and the request must be complete by `deadline`.
pub(crate) async fn serve(
    mut inbound: Inbound,
    mut write: OwnedWriteHalf,
    ctx: &Ctx,
    deadline: Instant,
) {
    let limit = ctx.config.head_timeout;
    if !inbound.need(2, deadline).await {
        return;
    }
    let methods = usize::from(inbound.buf[1]);
    if !inbound.need(2 + methods, deadline).await {
        return;
    }
    let offers_no_auth = inbound.buf[2..2 + methods].contains(&NO_AUTH);
    inbound.consume(2 + methods);
    if !offers_no_auth {
        if send(&mut write, &[VERSION, NO_METHOD], limit).await {
            linger_close(write, inbound).await;
        }
        return;
    }
    if !send(&mut write, &[VERSION, NO_AUTH], limit).await || !inbound.need(4, deadline).await {
        return;
    }
    let (version, command, kind) = (inbound.buf[0], inbound.buf[1], inbound.buf[3]);
    let failure = |code: u8| reply(code, None);
    if version != VERSION {
        if send(&mut write, &failure(GENERAL_FAILURE), limit).await {
            linger_close(write, inbound).await;
        }
        return;
    }
    let Some((host, port, len)) = read_address(&mut inbound, kind, deadline).await else {
        // An address type that is unknown, or a request that never completed.
        if ![1, 3, 4].contains(&kind)
            && send(&mut write, &failure(ADDRESS_NOT_SUPPORTED), limit).await
        {
            linger_close(write, inbound).await;
        }
        return;
    };
    inbound.consume(len);
    if command != CONNECT {
        if send(&mut write, &failure(COMMAND_NOT_SUPPORTED), limit).await {
            linger_close(write, inbound).await;
        }
        return;
    }
    match dial(&ctx.config, &host, port).await {
        Ok(upstream) => {
            let bound = upstream.local_addr().ok();
            if send(&mut write, &reply(0, bound), limit).await {
                tunnel(inbound, write, upstream).await;
            }
        }
        Err(refusal) => {
            ctx.refused(&refusal);
            if send(&mut write, &failure(refusal.socks_reply()), limit).await {
                linger_close(write, inbound).await;
            }
        }
    }
}

/// The destination of a request whose first four bytes are in the buffer: the host as text
/// (a name, or an address without brackets), the port, and the request's length. `None` for
/// an unknown address type or a request cut short.
async fn read_address(
    inbound: &mut Inbound,
    kind: u8,
    deadline: Instant,
) -> Option<(String, u16, usize)> {
    let (host, at) = match kind {
        1 => {
            inbound.need(4 + 4 + 2, deadline).await.then_some(())?;
            let octets: [u8; 4] = inbound.buf[4..8].try_into().ok()?;
            (Ipv4Addr::from(octets).to_string(), 8)
        }
        3 => {
            inbound.need(5, deadline).await.then_some(())?;
            let len = usize::from(inbound.buf[4]);
            inbound.need(5 + len + 2, deadline).await.then_some(())?;
            let name = String::from_utf8_lossy(&inbound.buf[5..5 + len]).into_owned();
            let name = match name.strip_prefix('[').and_then(|n| n.strip_suffix(']')) {
                Some(bare) => bare.to_owned(),
                None => name,
            };
            (name, 5 + len)
        }
        4 => {
            inbound.need(4 + 16 + 2, deadline).await.then_some(())?;
            let octets: [u8; 16] = inbound.buf[4..20].try_into().ok()?;
            (Ipv6Addr::from(octets).to_string(), 20)
        }
        _ => return None,
    };
    let port = u16::from_be_bytes([inbound.buf[at], inbound.buf[at + 1]]);
    Some((host, port, at + 2))
}

/// A reply with `code` and the bound address (`0.0.0.0:0` when there is none).
fn reply(code: u8, bound: Option<SocketAddr>) -> Vec<u8> {
    let bound = bound.unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0)));
    let mut out = vec![VERSION, code, 0];
    match bound.ip() {
        IpAddr::V4(ip) => {
            out.push(1);
            out.extend_from_slice(&ip.octets());
        }
        IpAddr::V6(ip) => {
            out.push(4);
            out.extend_from_slice(&ip.octets());
        }
    }
    out.extend_from_slice(&bound.port().to_be_bytes());
    out
}
