//! The integration tests of agentsh-mcp, one binary: the server run over an in-memory pipe,
//! spoken to in JSON-RPC lines as an MCP client writes them, driving a scripted session
//! (`agentsh_test_support::session::FakeSession`). No binary, no shell.

mod calls;
mod events;
mod tools;
mod util;
