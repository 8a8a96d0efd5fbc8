"""Shared harness of the MCP scenarios: the official Python SDK (PyPI `mcp`) against the real
`agentsh mcp`, written from SPEC §14 (not from the server's code).

A scenario file maps names to `async def scenario(env)` and ends with `run(SCENARIOS)`; the Rust
test (crates/agentsh/tests/mcp.rs) runs `python <file> <name>` with:

- AGENTSH_BIN: the binary under test; AGENTSH_TEST_CONFIG: its config file;
- AGENTSH_TEST_MARKER: a string for the argv of processes a scenario starts (the Rust side checks
  too that none is left once the scenario ended);
- AGENTSH_TEST_ARGS: extra arguments of `agentsh mcp`, separated by spaces;
- the private HOME/XDG tree of the test; the working directory is the test's `work/`.

A failed `check` or any exception makes the process exit 1 with a traceback.
"""

import json
import os
import sys
import time
import traceback
from contextlib import asynccontextmanager

import anyio
from mcp import ClientSession, McpError, types
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.message import SessionMessage

# A generous bound for what should take milliseconds, on a loaded 2-core machine.
LIVENESS = 20.0
# The whole scenario (a backstop for a hang: the traceback shows where it waited).
SCENARIO_LIMIT = 90.0

BIN = os.environ["AGENTSH_BIN"]
CONFIG = os.environ["AGENTSH_TEST_CONFIG"]
MARKER = os.environ["AGENTSH_TEST_MARKER"]
EXTRA_ARGS = os.environ.get("AGENTSH_TEST_ARGS", "").split()
WORK = os.getcwd()


class CheckFailed(AssertionError):
    pass


def check(condition, what, *context):
    """Fails the scenario with `what` and the values in `context` unless `condition` holds."""
    if not condition:
        details = "\n".join(
            f"  {json.dumps(value, default=str, indent=1)[:4000]}" for value in context
        )
        raise CheckFailed(f"{what}\n{details}" if details else what)


def check_eq(actual, expected, what):
    check(actual == expected, f"{what}: expected {expected!r}, got {actual!r}")


def marked_sleep(seconds=300):
    """A command whose `sleep` carries the test's marker in its argv (bash `exec -a`), so /proc
    finds the sleeper itself, not only a shell around it."""
    return f"bash -c 'exec -a {MARKER}-sleep sleep {seconds}'"


def alive_with_marker():
    """Pids of live (not zombie) processes whose command line contains the marker."""
    found = []
    needle = MARKER.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if needle in cmdline and state != b"Z":
            found.append(int(entry))
    return found


async def wait_until(condition, what, show=lambda: None, limit=LIVENESS):
    """Polls `condition` until it holds; fails after `limit` seconds, with what `show` returns."""
    deadline = time.monotonic() + limit
    while not condition():
        check(time.monotonic() < deadline, f"not within {limit} s: {what}", show())
        await anyio.sleep(0.02)


class Tap:
    """Sits between the SDK's stdio transport and its ClientSession and records every JSON-RPC
    message both ways (as dicts, in order), so a scenario can check what went over the wire:
    progress before the result, no response to a cancelled request."""

    def __init__(self, read, write):
        self._server_read = read
        self._server_write = write
        self.to_session, self.session_read = anyio.create_memory_object_stream(100)
        self.session_write, self._from_session = anyio.create_memory_object_stream(100)
        self.incoming = []
        self.outgoing = []

    async def pump_in(self):
        async with self.to_session:
            async for item in self._server_read:
                if isinstance(item, SessionMessage):
                    self.incoming.append(dump(item.message))
                else:
                    self.incoming.append({"transport error": repr(item)})
                await self.to_session.send(item)

    async def pump_out(self):
        async for item in self._from_session:
            self.outgoing.append(dump(item.message))
            await self._server_write.send(item)

    def responses_to(self, request_id):
        return [m for m in self.incoming if "method" not in m and m.get("id") == request_id]

    def last_request(self, method):
        requests = [m for m in self.outgoing if m.get("method") == method and "id" in m]
        check(requests, f"no {method} request was sent")
        return requests[-1]


def dump(message):
    return message.model_dump(by_alias=True, mode="json", exclude_none=True)


class Client:
    """An initialised SDK session to one `agentsh mcp` process."""

    def __init__(self, session, tap, init, logs):
        self.session = session
        self.tap = tap
        self.init = init
        self.logs = logs

    async def bash(self, command, **arguments):
        return await self.call("bash", {"command": command, **arguments})

    async def call(self, name, arguments, **options):
        with anyio.fail_after(LIVENESS * 3):
            return await self.session.call_tool(name, arguments, **options)


@asynccontextmanager
async def connect(extra_args=(), **session_options):
    """Starts `agentsh mcp --config <config> [args]` through the SDK's stdio transport and yields
    an initialised [`Client`]; `session_options` go to the SDK's ClientSession (an
    `elicitation_callback` declares the elicitation capability)."""
    params = StdioServerParameters(
        command=BIN,
        args=["mcp", "--config", CONFIG, *EXTRA_ARGS, *extra_args],
        # The SDK passes only a few variables by default: the test's XDG tree must reach agentsh.
        env=dict(os.environ),
        cwd=WORK,
    )
    logs = []

    async def on_log(params):
        logs.append(params)

    async with stdio_client(params, errlog=sys.stderr) as (read, write):
        tap = Tap(read, write)
        async with anyio.create_task_group() as pumps:
            pumps.start_soon(tap.pump_in)
            pumps.start_soon(tap.pump_out)
            async with ClientSession(
                tap.session_read, tap.session_write, logging_callback=on_log, **session_options
            ) as session:
                with anyio.fail_after(LIVENESS):
                    init = await session.initialize()
                yield Client(session, tap, init, logs)
            pumps.cancel_scope.cancel()


def text_of(result):
    """The one text block of a tool result."""
    check_eq([c.type for c in result.content], ["text"], "content block types")
    return result.content[0].text


def check_structured(result):
    """structuredContent carries the text of content (SPEC §14) and returns it."""
    text = text_of(result)
    structured = result.structuredContent
    check(isinstance(structured, dict), "structuredContent is an object", dump(result))
    check_eq(structured.get("text"), text, "structuredContent.text")
    return structured


async def expect_mcp_error(what, awaitable):
    """The request fails with a JSON-RPC error (McpError); returns its message."""
    try:
        with anyio.fail_after(LIVENESS):
            result = await awaitable
    except McpError as err:
        return err.error.message
    raise CheckFailed(f"{what}: a JSON-RPC error expected, got a result: {dump(result)}")


def leaves(err):
    """The exceptions inside (nested) exception groups of task groups, or `err` itself."""
    if isinstance(err, BaseExceptionGroup):
        return [leaf for inner in err.exceptions for leaf in leaves(inner)]
    return [err]


def run(scenarios):
    name = sys.argv[1] if len(sys.argv) > 1 else ""
    if name not in scenarios:
        print(f"unknown scenario {name!r}; known: {', '.join(scenarios)}", file=sys.stderr)
        sys.exit(2)

    async def main():
        with anyio.fail_after(SCENARIO_LIMIT):
            await scenarios[name]()

    try:
        anyio.run(main)
    except BaseException as err:  # noqa: BLE001 - every failure is reported the same way
        for leaf in leaves(err):
            traceback.print_exception(leaf)
        print(f"scenario {name}: FAILED: {'; '.join(str(leaf).splitlines()[0] for leaf in leaves(err))}")
        sys.exit(1)
    print(f"scenario {name}: passed")


__all__ = [
    "BIN",
    "CONFIG",
    "LIVENESS",
    "MARKER",
    "WORK",
    "McpError",
    "alive_with_marker",
    "check",
    "check_eq",
    "check_structured",
    "connect",
    "dump",
    "expect_mcp_error",
    "marked_sleep",
    "run",
    "text_of",
    "types",
    "wait_until",
]
