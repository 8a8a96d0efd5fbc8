"""MCP scenarios of artifacts as resources (SPEC §14, errors §4)."""

import json
import subprocess

from pydantic import AnyUrl

from common import (
    BIN,
    CONFIG,
    LIVENESS,
    check,
    check_eq,
    connect,
    dump,
    expect_mcp_error,
    run,
    text_of,
)

TEMPLATE = "artifact://{id}?offset={offset}&limit={limit}"
# 64-byte lines, 20 MiB in all: past the 8 MiB whole-read bound.
BIG_LINE = "x" * 63
BIG_BYTES = 20 * 1024 * 1024
BIG_LINES = BIG_BYTES // 64


async def artifact_of(client, command):
    """Runs `command` (whose output must spill) and returns its artifact id."""
    result = await client.bash(command)
    check_eq(result.isError, False, f"isError of {command}")
    truncation = ((result.structuredContent or {}).get("meta") or {}).get("truncation") or {}
    artifact = truncation.get("artifactId")
    check(artifact and artifact.isdigit(), f"{command} has an artifactId", dump(result))
    check(f"Full: artifact://{artifact}]" in text_of(result), "the notice points at it", text_of(result))
    return artifact


async def read(client, uri):
    result = await client.session.read_resource(AnyUrl(uri))
    check_eq(len(result.contents), 1, f"contents of {uri}")
    content = result.contents[0]
    check_eq(content.mimeType, "text/plain", f"mimeType of {uri}")
    check(hasattr(content, "text"), f"{uri} is text", dump(result))
    return content.text


async def list_and_read():
    # An artifact of another process in the same store: readable, but not this session's.
    other = subprocess.run(
        [BIN, "exec", "--config", CONFIG, "--json", "--", "seq 100000"], capture_output=True, text=True, timeout=LIVENESS
    )
    check_eq(other.returncode, 0, f"agentsh exec ({other.stderr})")
    other = json.loads(other.stdout)["details"]["meta"]["truncation"]["artifactId"]
    async with connect() as client:
        first = await artifact_of(client, "seq 100000")
        second = await artifact_of(client, "seq 2 100001")
        listed = (await client.session.list_resources()).resources
        uris = [str(resource.uri) for resource in listed]
        check_eq(uris, [f"artifact://{second}", f"artifact://{first}"], "the session's artifacts, newest first")
        check(all(r.mimeType == "text/plain" for r in listed), "listed as text/plain", [dump(r) for r in listed])
        templates = (await client.session.list_resource_templates()).resourceTemplates
        check(TEMPLATE in [t.uriTemplate for t in templates], "the range template", [dump(t) for t in templates])

        whole = await read(client, f"artifact://{first}")
        check(whole == "".join(f"{i}\n" for i in range(1, 100001)), "the whole artifact", whole[:100], whole[-100:])
        check_eq(await read(client, f"artifact://{first}?offset=2&limit=3"), "2\n3\n4\n", "lines 2-4")
        check_eq(await read(client, f"artifact://{second}?offset=99999"), "100000\n100001\n", "to the end")
        check_eq(await read(client, f"artifact://{second}?limit=2"), "2\n3\n", "from the start")
        check_eq(await read(client, f"artifact://{other}?offset=100000"), "100000\n", "another process's artifact")


async def big_artifact():
    async with connect() as client:
        artifact = await artifact_of(client, f"yes {BIG_LINE} | head -c {BIG_BYTES}")
        message = await expect_mcp_error(
            "reading 20 MiB whole", client.session.read_resource(AnyUrl(f"artifact://{artifact}"))
        )
        check("20.0MB" in message or str(BIG_BYTES) in message, "the error says the size", message)
        check("offset" in message or "range" in message, "the error says to read by range", message)
        tail = await read(client, f"artifact://{artifact}?offset={BIG_LINES - 1}&limit=5")
        check_eq(tail, f"{BIG_LINE}\n{BIG_LINE}\n", "the last two lines by range")
        check_eq(await read(client, f"artifact://{artifact}?offset=1&limit=1"), f"{BIG_LINE}\n", "line 1")


async def bad_uri():
    async with connect() as client:
        artifact = await artifact_of(client, "seq 100000")
        cases = {
            "artifact://abc": "artifact:// ID must be numeric, got: abc",
            "artifact://999999": f"Artifact 999999 not found. Available: {artifact}",
            "artifact://1x?offset=2": "artifact:// ID must be numeric, got: 1x",
        }
        for uri, expected in cases.items():
            message = await expect_mcp_error(uri, client.session.read_resource(AnyUrl(uri)))
            check(expected in message, f"the error of {uri}", message)
        message = await expect_mcp_error("file://", client.session.read_resource(AnyUrl("file:///etc/passwd")))
        check("root:" not in message, "nothing read outside the store", message)
        # The server keeps answering.
        check_eq(await read(client, f"artifact://{artifact}?offset=1&limit=1"), "1\n", "a good read after")
        check_eq(text_of(await client.bash("echo alive")), "alive", "a call after")


run({"list_and_read": list_and_read, "big_artifact": big_artifact, "bad_uri": bad_uri})
