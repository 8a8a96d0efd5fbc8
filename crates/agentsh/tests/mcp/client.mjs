// A second MCP client in another language: the official TypeScript SDK
// (@modelcontextprotocol/sdk, pinned by scripts/install-test-deps) against the real `agentsh mcp`.
// Lists the tools, calls `bash`, reads an artifact resource whole and by range (SPEC §14).
//
// Run by crates/agentsh/tests/mcp.rs with AGENTSH_BIN, AGENTSH_TEST_CONFIG and
// AGENTSH_TEST_NODE_DIR (the folder whose node_modules holds the SDK); exits 1 on a failure.

import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const sdk = createRequire(join(process.env.AGENTSH_TEST_NODE_DIR, "package.json"));
const load = (name) => import(pathToFileURL(sdk.resolve(`@modelcontextprotocol/sdk/${name}`)).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");

const transport = new StdioClientTransport({
  command: process.env.AGENTSH_BIN,
  args: ["mcp", "--config", process.env.AGENTSH_TEST_CONFIG],
  // The SDK passes only a few variables by default: the test's XDG tree must reach agentsh.
  env: { ...process.env },
  cwd: process.cwd(),
  stderr: "inherit",
});
const client = new Client({ name: "agentsh-test-client", version: "1.0.0" });
const timeout = { timeout: 20_000 };
await client.connect(transport, timeout);

try {
  const { tools } = await client.listTools(undefined, timeout);
  assert.deepEqual(
    tools.map((tool) => tool.name).sort(),
    ["bash", "job_input", "job_kill", "job_list", "job_output"],
  );

  // callTool checks structuredContent against the tool's outputSchema (ajv).
  const hi = await client.callTool({ name: "bash", arguments: { command: "echo hi" } }, undefined, timeout);
  assert.equal(hi.isError, false);
  assert.deepEqual(hi.content, [{ type: "text", text: "hi" }]);
  assert.equal(hi.structuredContent.text, "hi");

  const failed = await client.callTool({ name: "bash", arguments: { command: "(exit 4)" } }, undefined, timeout);
  assert.equal(failed.isError, true);
  assert.equal(failed.content[0].text, "(no output)\n\nCommand exited with code 4");

  const big = await client.callTool({ name: "bash", arguments: { command: "seq 100000" } }, undefined, timeout);
  const id = big.structuredContent.meta.truncation.artifactId;
  assert.match(id, /^[0-9]+$/);
  const { resources } = await client.listResources(undefined, timeout);
  assert.equal(resources[0].uri, `artifact://${id}`);
  const whole = await client.readResource({ uri: `artifact://${id}` }, timeout);
  assert.equal(whole.contents[0].text.split("\n").length, 100001);
  const range = await client.readResource({ uri: `artifact://${id}?offset=2&limit=3` }, timeout);
  assert.equal(range.contents[0].text, "2\n3\n4\n");
  console.log("client.mjs: passed");
} finally {
  await client.close();
}
