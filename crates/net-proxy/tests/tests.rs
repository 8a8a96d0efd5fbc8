//! Integration tests of agentsh-net-proxy (one binary, modules below): real sockets on
//! loopback, real clients (`curl`, Python), tiny servers started by the tests.

mod connect;
mod http;
mod lifecycle;
mod socks;
mod support;
