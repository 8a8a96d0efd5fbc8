//! A request body passed on by its framing: a length, or chunks (sizes read with
//! `httparse::parse_chunk_size`, trailers included). The bytes are passed on as they came.

use std::time::Duration;

use tokio::net::tcp::OwnedWriteHalf;
use tokio::time::Instant;

use crate::head::{Framing, MAX_HEAD};
use crate::io::{Fill, Inbound, Pump, PumpEnd, send};

/// The longest chunk-size line taken (with extensions).
const MAX_CHUNK_LINE: usize = 4096;

/// Why a body was not passed on whole.
pub(crate) enum BodyEnd {
    /// The upstream's answers ended first.
    Upstream(PumpEnd),
    /// The client closed, stalled, failed, or sent a malformed chunk; or the upstream
    /// stopped reading.
    Broken,
}

/// One side of a body being passed on.
pub(crate) struct Body<'a> {
    pub(crate) inbound: &'a mut Inbound,
    pub(crate) upstream: &'a mut OwnedWriteHalf,
    pub(crate) pump: &'a mut Pump,
    /// How long a read from the client or a write to the upstream may wait.
    pub(crate) idle: Duration,
}

impl Body<'_> {
    /// Passes the body on.
    pub(crate) async fn forward(&mut self, framing: Framing) -> Result<(), BodyEnd> {
        match framing {
            Framing::None => Ok(()),
            Framing::Length(n) => self.exactly(n).await,
            Framing::Chunked => self.chunked().await,
        }
    }

    /// Reads more from the client.
    async fn more(&mut self) -> Result<(), BodyEnd> {
        let until = Instant::now() + self.idle;
        match self.inbound.fill(Some(until), Some(self.pump)).await {
            Fill::Data => Ok(()),
            Fill::UpstreamDone(end) => Err(BodyEnd::Upstream(end)),
            Fill::Eof | Fill::TimedOut | Fill::Failed => Err(BodyEnd::Broken),
        }
    }

    /// Passes on the first `n` bytes of the buffer.
    async fn pass(&mut self, n: usize) -> Result<(), BodyEnd> {
        if !send(self.upstream, &self.inbound.buf[..n], self.idle).await {
            return Err(BodyEnd::Broken);
        }
        self.inbound.consume(n);
        Ok(())
    }

    /// Passes on exactly `n` bytes.
    async fn exactly(&mut self, mut n: u64) -> Result<(), BodyEnd> {
        while n > 0 {
            if self.inbound.buf.is_empty() {
                self.more().await?;
            }
            let take = usize::try_from(n)
                .unwrap_or(usize::MAX)
                .min(self.inbound.buf.len());
            self.pass(take).await?;
            n -= take as u64;
        }
        Ok(())
    }

    /// Passes on a chunked body: chunks, the last chunk, trailers and the blank line.
    async fn chunked(&mut self) -> Result<(), BodyEnd> {
        loop {
            let (line, size) = loop {
                match httparse::parse_chunk_size(&self.inbound.buf) {
                    Ok(httparse::Status::Complete(found)) => break found,
                    Ok(httparse::Status::Partial) if self.inbound.buf.len() < MAX_CHUNK_LINE => {
                        self.more().await?;
                    }
                    _ => return Err(BodyEnd::Broken),
                }
            };
            self.pass(line).await?;
            if size == 0 {
                return self.trailers().await;
            }
            self.exactly(size).await?;
            while self.inbound.buf.len() < 2 {
                self.more().await?;
            }
            if &self.inbound.buf[..2] != b"\r\n" {
                return Err(BodyEnd::Broken);
            }
            self.pass(2).await?;
        }
    }

    /// Passes on trailer lines up to and including the blank line.
    async fn trailers(&mut self) -> Result<(), BodyEnd> {
        let mut total = 0;
        loop {
            let Some(end) = self.inbound.buf.iter().position(|&b| b == b'\n') else {
                if self.inbound.buf.len() + total > MAX_HEAD {
                    return Err(BodyEnd::Broken);
                }
                self.more().await?;
                continue;
            };
            let blank = matches!(&self.inbound.buf[..=end], b"\n" | b"\r\n");
            total += end + 1;
            if total > MAX_HEAD {
                return Err(BodyEnd::Broken);
            }
            self.pass(end + 1).await?;
            if blank {
                return Ok(());
            }
        }
    }
}
