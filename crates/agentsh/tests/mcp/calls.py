"""MCP scenarios: the handshake, the tool list, and plain tool calls (SPEC §14, results §9)."""

import os
import re

from jsonschema import Draft202012Validator
from jsonschema.validators import validator_for

from common import (
    WORK,
    check,
    check_eq,
    check_structured,
    connect,
    dump,
    expect_mcp_error,
    run,
    text_of,
)

TOOLS = {"bash", "job_output", "job_input", "job_kill", "job_list"}
BLOCKED_CAT = (
    "Blocked: Use the `read` tool instead of cat/head/tail. It provides better context and "
    "handles binary files.\n\nOriginal command: cat file"
)


async def initialize():
    async with connect() as client:
        init = client.init
        check(init.serverInfo.name, "serverInfo.name is set", dump(init))
        check(init.serverInfo.version, "serverInfo.version is set", dump(init))
        caps = init.capabilities
        check(caps.tools is not None, "the tools capability", dump(init))
        check(caps.resources is not None, "the resources capability (artifacts)", dump(init))
        check(caps.logging is not None, "the logging capability (warnings)", dump(init))
        instructions = init.instructions or ""
        for word in ["bash", "job_output", "artifact://"]:
            check(word in instructions, f"the instructions mention {word}", instructions)
        # The session answers after the handshake.
        await client.session.send_ping()


def check_schema(schema, what):
    """A valid JSON Schema (its own `$schema` dialect, else 2020-12, MCP's default)."""
    check(isinstance(schema, dict), f"{what} is an object", schema)
    validator_for(schema, default=Draft202012Validator).check_schema(schema)
    check_eq(schema.get("type"), "object", f"{what}.type")
    return schema


async def list_tools():
    async with connect() as client:
        listed = await client.session.list_tools()
        tools = {tool.name: tool for tool in listed.tools}
        check_eq(set(tools), TOOLS, "tool names")
        for name, tool in tools.items():
            check(tool.description and len(tool.description) > 20, f"{name} has a description", dump(tool))
            check_schema(tool.inputSchema, f"{name}.inputSchema")
            output = check_schema(tool.outputSchema, f"{name}.outputSchema")
            check("text" in output.get("properties", {}), f"{name}.outputSchema has text", output)
        bash = tools["bash"].inputSchema
        props = bash.get("properties", {})
        for arg in ["command", "timeout", "cwd", "head", "tail", "run_in_background", "pty", "yield_after"]:
            check(arg in props, f"bash takes {arg}", bash)
        check_eq(props["command"].get("type"), "string", "bash.command type")
        check_eq(bash.get("required"), ["command"], "bash required arguments")
        check("jobId" in tools["job_output"].inputSchema.get("properties", {}), "job_output takes jobId")
        check_eq(tools["job_kill"].inputSchema.get("required"), ["jobId"], "job_kill required arguments")
        check(not tools["job_list"].inputSchema.get("required"), "job_list needs no argument")
        # What a model reads about bash (clients that drop the server instructions show only
        # this): the description and those of the arguments.
        seen = " ".join([tools["bash"].description, *(p.get("description", "") for p in props.values())])
        for needle in [r"persistent", r"50\s?KB", r"artifact", r"background", r"job_output", r"yield"]:
            check(re.search(needle, seen, re.I), f"the bash tool's descriptions mention {needle}", seen)


async def call_success():
    async with connect() as client:
        result = await client.bash("echo hi")
        check_eq(result.isError, False, "isError")
        check_eq(text_of(result), "hi", "text")
        structured = check_structured(result)
        check_eq(structured.get("exitCode"), 0, "structuredContent.exitCode")
        check_eq(structured.get("cwd"), WORK, "structuredContent.cwd")
        # One persistent shell: a variable survives to the next call; a cd does not move the next
        # call's cwd.
        await client.bash("answer=42; cd /")
        check_eq(text_of(await client.bash("echo $answer; pwd")), f"42\n{WORK}", "the next call")


async def nonzero_exit():
    async with connect() as client:
        result = await client.bash("echo out; (exit 3)")
        check_eq(result.isError, True, "isError")
        check_eq(text_of(result), "out\n\nCommand exited with code 3", "text")
        check_eq(check_structured(result).get("exitCode"), 3, "structuredContent.exitCode")


async def timeout():
    async with connect() as client:
        result = await client.bash("echo before; sleep 60", timeout=1)
        check_eq(result.isError, True, "isError")
        check_eq(text_of(result), "[Command timed out after 1 seconds]\nbefore", "text")
        structured = check_structured(result)
        check_eq(structured.get("timedOut"), True, "structuredContent.timedOut")
        check_eq(text_of(await client.bash("echo next")), "next", "the call after a timeout")


async def blocked():
    # The Rust side enables the interceptor in the config and passes `--tools read`.
    with open(os.path.join(WORK, "file"), "w") as f:
        f.write("secret\n")
    async with connect() as client:
        result = await client.bash("cat file")
        check_eq(result.isError, True, "isError")
        check_eq(text_of(result), BLOCKED_CAT, "text")
        structured = check_structured(result)
        check_eq((structured.get("interception") or {}).get("suggestedTool"), "read", "interception")
        # A tool that is not available blocks nothing: `grep` runs.
        check_eq(text_of(await client.bash("grep secret file")), "secret", "grep (no grep tool)")


async def structured_content():
    async with connect() as client:
        listed = await client.session.list_tools()
        schemas = {tool.name: tool.outputSchema for tool in listed.tools}
        results = {
            "bash (success)": ("bash", await client.bash("printf 'a\\nb\\n'")),
            "bash (error)": ("bash", await client.bash("echo x >&2; (exit 1)")),
            "bash (background)": ("bash", await client.bash("echo bg", run_in_background=True)),
            "job_list": ("job_list", await client.call("job_list", {})),
            "job_output": ("job_output", await client.call("job_output", {"jobId": "1", "wait": 5})),
            "job_output (unknown job)": ("job_output", await client.call("job_output", {"jobId": "9"})),
        }
        for what, (tool, result) in results.items():
            # A client that shows only structuredContent still shows the output, in a shape its
            # outputSchema allows (errors included).
            structured = check_structured(result)
            try:
                Draft202012Validator(schemas[tool]).validate(structured)
            except Exception as err:
                raise AssertionError(f"{what}: structuredContent does not match outputSchema: {err}")
        check_eq(results["bash (success)"][1].structuredContent["text"], "a\nb", "bash text")
        check_eq(results["job_output (unknown job)"][1].isError, True, "unknown job isError")
        check_eq(text_of(results["job_output (unknown job)"][1]), "No job 9. Jobs: 1", "unknown job")


async def unknown_tool():
    async with connect() as client:
        message = await expect_mcp_error("an unknown tool", client.session.call_tool("no_such_tool", {}))
        check("no_such_tool" in message, "the error names the tool", message)
        # The server keeps answering.
        check_eq(text_of(await client.bash("echo alive")), "alive", "the call after")
        await client.session.send_ping()


async def warning_as_log():
    # The Rust side writes an interceptor rule whose regex does not compile.
    async with connect() as client:
        await client.bash("true")
        await client.bash("true")
        warnings = [log for log in client.logs if log.level == "warning"]
        check_eq(len(warnings), 1, f"warning log messages (all: {[dump(l) for l in client.logs]})")
        data = warnings[0].data
        text = data if isinstance(data, str) else str(data)
        check("bash_interceptor.rules[0]" in text and "invalid regex" in text, "the warning text", text)


run(
    {
        "initialize": initialize,
        "list_tools": list_tools,
        "call_success": call_success,
        "nonzero_exit": nonzero_exit,
        "timeout": timeout,
        "blocked": blocked,
        "structured_content": structured_content,
        "unknown_tool": unknown_tool,
        "warning_as_log": warning_as_log,
    }
)
