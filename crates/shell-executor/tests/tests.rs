//! Integration tests of `agentsh-shell-executor`: real shells, real processes, no mocks.
//! One binary; modules by topic.

mod common;

mod attribution;
mod battery;
mod containment;
mod death;
mod flood;
mod forgery;
mod hangs;
mod head;
mod hostile;
mod isolation;
mod limits;
mod privacy;
mod shells;
mod state;
mod stopping;
