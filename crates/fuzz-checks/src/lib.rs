#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod mcp;
mod parsers;
mod rpc;

pub use mcp::mcp_line;
pub use parsers::{config, normalize, policy, proxy_head, sanitize, tool_args};
pub use rpc::rpc_line;

/// A check: panics when what must hold of `data` does not.
pub type Check = fn(&[u8]);

/// Every fuzz target, by the name of its directory under `fuzz/fuzz_targets` and
/// `fuzz/corpus`, with its check.
pub const TARGETS: [(&str, Check); 8] = [
    ("rpc_line", rpc_line),
    ("mcp_line", mcp_line),
    ("tool_args", tool_args),
    ("config", config),
    ("normalize", normalize),
    ("sanitize", sanitize),
    ("policy", policy),
    ("proxy_head", proxy_head),
];

/// The JSON `text` holds, read as both servers read a line: as JSON allows, a lone surrogate
/// escape and a number beyond `f64` included (`agentsh-jsonl`).
fn lenient_json(text: &str) -> Option<serde_json::Value> {
    serde_json::from_str(text).ok().or_else(|| {
        let repaired = agentsh_jsonl::repair(text)?;
        serde_json::from_str(&repaired).ok()
    })
}

/// The token of the `id` of `text`'s outermost object when it is the number `value` holds
/// (the first `id` key's token, read as the servers read it, is the value they took): the
/// text an answer must echo.
fn number_token<'t>(text: &'t str, value: &serde_json::Value) -> Option<&'t str> {
    if !value.is_number() {
        return None;
    }
    let token = agentsh_jsonl::id_token(text)?;
    (lenient_json(token).as_ref() == Some(value)).then_some(token)
}

/// The JSON text of the `id` member of the answer line `answer`, as written (a number's token
/// is not read as a number); `None` when it has none.
fn written_answer_id(answer: &str) -> Option<String> {
    let members: std::collections::HashMap<String, Box<serde_json::value::RawValue>> =
        serde_json::from_str(answer).expect("an answer is a JSON object");
    members.get("id").map(|id| id.get().to_owned())
}
