//! The handshake, the tools offered, and calls refused before they reach the session.

use serde_json::json;

use crate::util::{Mcp, options, result, text};

#[tokio::test]
async fn initialize_names_agentsh_its_capabilities_and_the_configured_limits() {
    let mut mcp = Mcp::start();
    let result = mcp.initialize(json!({})).await;
    assert_eq!(result["protocolVersion"], "2025-06-18", "{result}");
    assert_eq!(result["serverInfo"]["name"], "agentsh");
    assert_eq!(
        result["serverInfo"]["version"],
        env!("CARGO_PKG_VERSION"),
        "{result}"
    );
    let capabilities = &result["capabilities"];
    for capability in ["tools", "resources", "logging"] {
        assert!(
            capabilities.get(capability).is_some(),
            "{capability}: {result}"
        );
    }
    let instructions = result["instructions"].as_str().expect("instructions");
    assert!(
        instructions.contains("output over 50 KB is cut"),
        "{instructions}"
    );
    assert!(instructions.contains("(45 by default)"), "{instructions}");
}

#[tokio::test]
async fn tools_list_offers_bash_and_the_job_tools_with_their_schemas() {
    let mut mcp = Mcp::initialized().await;
    let response = mcp.request("tools/list", json!({})).await;
    let tools = response["result"]["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools
        .iter()
        .map(|tool| tool["name"].as_str().expect("a name"))
        .collect();
    assert_eq!(
        names,
        ["bash", "job_output", "job_input", "job_kill", "job_list"]
    );
    for (tool, spec) in tools.iter().zip(options().tools) {
        assert_eq!(
            tool["description"],
            json!(spec.description),
            "{}",
            spec.name
        );
        assert_eq!(tool["inputSchema"], spec.input_schema, "{}", spec.name);
        assert_eq!(
            tool["outputSchema"]["required"],
            json!(["text"]),
            "{}",
            spec.name
        );
    }
    // The bash tool's schema is the real one: the command is required.
    assert!(
        tools[0]["inputSchema"]["required"]
            .as_array()
            .is_some_and(|required| required.contains(&json!("command"))),
        "{}",
        tools[0]
    );
    assert!(mcp.session.calls().is_empty());
}

#[tokio::test]
async fn an_unknown_tool_is_invalid_params_naming_the_tools_and_reaches_no_session() {
    let mut mcp = Mcp::initialized().await;
    let response = mcp.call("rm_rf", json!({"path": "/"})).await;
    let error = &response["error"];
    assert_eq!(error["code"], -32602, "{response}");
    let expected = agentsh_protocol::unknown_tool("rm_rf").expect("unknown");
    assert_eq!(error["message"], json!(expected), "{response}");
    for tool in ["bash", "job_output", "job_list"] {
        assert!(expected.contains(tool), "{expected}");
    }
    assert!(mcp.session.calls().is_empty());
}

#[tokio::test]
async fn arguments_that_are_no_object_are_an_error_and_the_server_serves_on() {
    let mut mcp = Mcp::initialized().await;
    let id = mcp.id();
    mcp.send_request(
        id,
        "tools/call",
        json!({"name": "bash", "arguments": "echo hi"}),
    )
    .await;
    // A JSON-RPC error under the request's id (rmcp reads such a call as a request it does
    // not know), and nothing reaches the session.
    let response = mcp.response(id).await;
    assert!(response["error"]["code"].is_i64(), "{response}");
    assert!(response.get("result").is_none(), "{response}");
    assert!(mcp.session.calls().is_empty());
    // The same id is free again, and a good call goes through.
    mcp.send_request(
        id,
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "true"}}),
    )
    .await;
    let response = mcp.response(id).await;
    assert_eq!(text(result(&response)), "fake: bash ran");
    assert_eq!(mcp.session.calls().len(), 1);
}

#[tokio::test]
async fn a_line_that_is_no_json_is_a_parse_error_with_a_null_id() {
    let mut mcp = Mcp::initialized().await;
    mcp.send_line("{\"jsonrpc\": \"2.0\", \"id\": 3, \"method\"")
        .await;
    let answer = mcp.next().await;
    assert_eq!(answer["id"], json!(null), "{answer}");
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    let pong = mcp.request("ping", json!({})).await;
    assert_eq!(pong["result"], json!({}), "{pong}");
}
