//! A network allowlist on a far side: the `[sandbox]` list travels in the hello, the far
//! side's session runs the proxy, and its refusals come back in the result's sandbox line.

use serde_json::json;

use super::setup::{Far, body, tool_call};
use crate::network::servers::HttpServer;
use crate::util::LIVENESS;

#[test]
fn a_far_side_enforces_the_allowlist_and_names_what_it_refused() {
    let far = Far::Unshare;
    let env =
        far.env("[sandbox]\nmode = \"workspace-write\"\nnetwork = [\"web.test\", \"127.0.0.1\"]\n");
    let server = HttpServer::start();
    server.file("/hello.txt", "hello from loopback", "text/plain");
    let port = server.port();
    // The far side is this machine's agentsh under `unshare`: it inherits the test resolver.
    let mut rpc = far.rpc_with(
        &env,
        &[(
            "AGENTSH_TEST_RESOLVE",
            "web.test=127.0.0.1,evil.test=127.0.0.1",
        )],
    );
    let (_, allowed) = tool_call(
        &mut rpc,
        "allowed",
        "bash",
        &json!({"command": format!("curl -sS http://web.test:{port}/hello.txt")}),
    );
    assert_eq!(body(&allowed), "hello from loopback", "{allowed}");
    let (_, denied) = tool_call(
        &mut rpc,
        "denied",
        "bash",
        &json!({"command": format!("curl -sS http://evil.test:{port}/hello.txt")}),
    );
    let text = body(&denied);
    assert!(
        text.contains(&format!(
            "agentsh sandbox: evil.test:{port} is not in the allowed hosts (web.test, 127.0.0.1)"
        )),
        "{denied}"
    );
    assert!(
        text.lines()
            .last()
            .is_some_and(|line| line.ends_with(&format!(
                "; network: web.test, 127.0.0.1; blocked evil.test:{port}]"
            ))),
        "{denied}"
    );
    assert_eq!(server.requests().len(), 1, "{:?}", server.requests());
    rpc.close(LIVENESS);
}
