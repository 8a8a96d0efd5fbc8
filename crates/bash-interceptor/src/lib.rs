#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod interceptor;
mod rules;

pub use agentsh_protocol::InterceptionDetails;
pub use interceptor::{Interception, Interceptor};
pub use rules::{Rule, RuleDiagnostic, default_rules};
