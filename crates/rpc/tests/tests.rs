//! The integration tests of agentsh-rpc, one binary: the library serving real Unix sockets to
//! real clients, with real shells.

mod host;
mod listen;
mod serve;
mod util;
