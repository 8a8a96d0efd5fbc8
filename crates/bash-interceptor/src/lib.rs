//! Blocks shell commands that have a better dedicated tool (SPEC §2).
//!
//! A model that runs `cat src/main.rs` through its `bash` tool gets a raw dump; the agent's
//! `read` tool would have given it line numbers and binary-file handling. When interception is
//! enabled (`bash_interceptor.enabled`), an [`Interceptor`] built from the configured [`Rule`]s
//! (or, with none configured, the seven [`default_rules`]) turns such a call into a tool error
//! that names the better tool.
//!
//! - A rule blocks only when its regex matches **and** its `tool` is among the tools available
//!   in the calling context.
//! - Matching runs on the whole command and on the first pipeline stage of each top-level list
//!   element: `cd src && cat main.rs` is caught; `echo "cat x"` and `ls | grep x` are not.
//! - Invalid rules (bad regex, unknown flag, empty tool) are skipped and returned as
//!   [`RuleDiagnostic`]s for the caller to report as warnings.
//!
//! ```
//! use agentsh_bash_interceptor::Interceptor;
//!
//! let interceptor = Interceptor::with_default_rules();
//! let tools = ["read", "grep", "find", "edit", "write"];
//! let blocked = interceptor.check("cd src && cat main.rs", &tools).expect("blocked");
//! assert_eq!(blocked.suggested_tool, "read");
//! assert!(blocked.text("cd src && cat main.rs").starts_with("Blocked: Use the `read` tool"));
//!
//! // Not blocked when the suggested tool is not available here.
//! assert!(interceptor.check("cat main.rs", &["grep"]).is_none());
//! // Not blocked: `cat x` is only an argument.
//! assert!(interceptor.check("echo \"cat x\"", &tools).is_none());
//! ```
#![deny(missing_docs)]

mod interceptor;
mod rules;

pub use interceptor::{Interception, Interceptor};
pub use rules::{Rule, RuleDiagnostic, default_rules};
