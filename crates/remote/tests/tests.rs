//! The integration tests of agentsh-remote, one binary: a `RemoteHandle` over a scripted
//! transport whose channels are in-memory pipes to a far side the test plays, line by line, in
//! the wire of `agentsh_protocol::wire`. No ssh, no far-side binary.

mod calls;
mod connect;
mod events;
mod util;
