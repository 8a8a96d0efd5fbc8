"""MCP scenarios of the approval policy: a client that declared elicitation answers the
server's `elicitation/create` (allow, allow for the session, deny, decline, cancel); a client
without it is denied at once; a deny rule never asks.

The Rust side writes a policy that asks before `touch` (reason `REASON`), or one that denies it
(`deny_rule`), or one that waits 1 s for an answer (`timeout`).
"""

import os

import anyio

from common import (
    LIVENESS,
    WORK,
    check,
    check_eq,
    check_structured,
    connect,
    run,
    text_of,
    types,
    wait_until,
)

REASON = "Creating files needs a yes."
COMMAND = "touch marker"
MARKER_FILE = os.path.join(WORK, "marker")
DECISIONS = ["allow", "allow_session", "deny"]


class Person:
    """An elicitation callback that answers every request with `answer(context, params)` and
    records what it was asked."""

    def __init__(self, answer):
        self.answer = answer
        self.asked = []

    async def __call__(self, context, params):
        self.asked.append(params)
        return await self.answer(context, params)


def accept(decision):
    async def answer(_context, _params):
        return types.ElicitResult(action="accept", content={"decision": decision})

    return answer


def act(action):
    async def answer(_context, _params):
        return types.ElicitResult(action=action)

    return answer


def check_request(params, command=COMMAND):
    """The request names the command and the reason, and its form is the one decision field."""
    check_eq(params.mode, "form", "elicitation mode")
    check(command in params.message, "the message names the command", params.message)
    check(REASON in params.message, "the message names the reason", params.message)
    schema = params.requestedSchema
    check_eq(schema.get("type"), "object", "requestedSchema.type")
    check_eq(schema.get("required"), ["decision"], "requestedSchema.required")
    check_eq(list(schema.get("properties", {})), ["decision"], "the form's fields")
    field = schema["properties"]["decision"]
    check_eq(field.get("type"), "string", "decision.type")
    check_eq([choice.get("const") for choice in field.get("oneOf", [])], DECISIONS, "decision's values")
    check(all(choice.get("title") for choice in field["oneOf"]), "every value has a title", field)


def check_ran(result):
    check_eq(result.isError, False, "isError of an approved call")
    check(os.path.exists(MARKER_FILE), "the approved command ran", text_of(result))
    os.remove(MARKER_FILE)


def check_declined(result, command=COMMAND):
    check_eq(result.isError, True, "isError of a declined call")
    check_eq(text_of(result), f"The user declined to run: {command}", "the declined text")
    check_structured(result)
    check(not os.path.exists(MARKER_FILE), "the declined command did not run")


def elicitations(client):
    """The elicitation requests that came over the wire."""
    return [m for m in client.tap.incoming if m.get("method") == "elicitation/create"]


async def allow():
    person = Person(accept("allow"))
    async with connect(elicitation_callback=person) as client:
        check_ran(await client.bash(COMMAND))
        check_eq(len(person.asked), 1, "requests for the first call")
        check_request(person.asked[0])
        # Allowed once: the same command is asked again.
        check_ran(await client.bash(COMMAND))
        check_eq(len(person.asked), 2, "requests after the second call")
        # A command no rule asks about runs without a request.
        check_eq(text_of(await client.bash("echo free")), "free", "a command that needs no yes")
        check_eq(len(person.asked), 2, "requests after a free command")


async def allow_session():
    person = Person(accept("allow_session"))
    async with connect(elicitation_callback=person) as client:
        check_ran(await client.bash(COMMAND))
        check_ran(await client.bash(COMMAND))
        check_eq(len(person.asked), 1, "requests for the same command, allowed for the session")
        # The answer covers that command only.
        other = await client.bash("touch other")
        check_eq(other.isError, False, "isError of another command")
        check_eq(len(person.asked), 2, "requests after another command")
        check_request(person.asked[1], "touch other")


async def deny():
    person = Person(accept("deny"))
    async with connect(elicitation_callback=person) as client:
        check_declined(await client.bash(COMMAND))
        check_eq(len(person.asked), 1, "requests")
        # Denied once: asked again next time, and then it may run.
        person.answer = accept("allow")
        check_ran(await client.bash(COMMAND))
        check_eq(len(person.asked), 2, "requests after the second call")


async def decline_and_cancel():
    person = Person(act("decline"))
    async with connect(elicitation_callback=person) as client:
        check_declined(await client.bash(COMMAND))
        person.answer = act("cancel")
        check_declined(await client.bash(COMMAND))
        check_eq(len(person.asked), 2, "requests")


async def client_error():
    async def refuse(_context, _params):
        return types.ErrorData(code=types.INVALID_REQUEST, message="no person here")

    person = Person(refuse)
    async with connect(elicitation_callback=person) as client:
        result = await client.bash(COMMAND)
        check_eq(result.isError, True, "isError when the client could not ask")
        check_eq(
            text_of(result),
            f"Command needs approval and nobody can be asked in this session: {COMMAND} ({REASON})\n"
            "Do not retry it in another form; tell the user what you wanted to run.",
            "the text when the client could not ask",
        )
        check(not os.path.exists(MARKER_FILE), "the command did not run")
        check_eq(len(person.asked), 1, "requests")


async def no_elicitation():
    async with connect() as client:
        result = await client.bash(COMMAND)
        check_eq(result.isError, True, "isError without elicitation")
        check_eq(
            text_of(result),
            f"Command needs approval and nobody can be asked in this session: {COMMAND} ({REASON})\n"
            "Do not retry it in another form; tell the user what you wanted to run.",
            "the text without elicitation",
        )
        check(not os.path.exists(MARKER_FILE), "the command did not run")
        check_eq(elicitations(client), [], "elicitation requests")
        check_eq(text_of(await client.bash("echo free")), "free", "a command that needs no yes")


async def deny_rule():
    person = Person(accept("allow"))
    async with connect(elicitation_callback=person) as client:
        result = await client.bash(COMMAND)
        check_eq(result.isError, True, "isError of a denied command")
        check_eq(
            text_of(result),
            f"Command denied by policy: {COMMAND} (No new files here.)\n"
            "Do not retry it in another form; tell the user what you wanted to run.",
            "the denied text",
        )
        check(not os.path.exists(MARKER_FILE), "the denied command did not run")
        check_eq(person.asked, [], "requests for a denied command")


async def timeout():
    # The SDK runs the callback in its receive loop: the tap sees what arrives meanwhile.
    async def wait_for_withdrawal(context, _params):
        await wait_until(
            lambda: any(
                m.get("method") == "notifications/cancelled" and m["params"].get("requestId") == context.request_id
                for m in client.tap.incoming
            ),
            "the unanswered request is withdrawn",
            lambda: client.tap.incoming[-5:],
        )
        return types.ElicitResult(action="accept", content={"decision": "allow"})

    person = Person(wait_for_withdrawal)
    async with connect(elicitation_callback=person) as client:
        result = await client.bash(COMMAND)
        check_eq(result.isError, True, "isError of an unanswered request")
        check_eq(
            text_of(result),
            f"No answer to the approval request within 1 s: {COMMAND}",
            "the timeout text",
        )
        check(not os.path.exists(MARKER_FILE), "the unanswered command did not run")
        # A late answer changes nothing, and the session goes on.
        check_eq(text_of(await client.bash("echo after")), "after", "the call after the timeout")
        check(not os.path.exists(MARKER_FILE), "the late answer ran nothing")


async def heartbeat():
    # The call's progress heartbeat goes on while the question waits: the person answers only
    # once one came (a heartbeat every 15 s).
    async def after_a_heartbeat(_context, _params):
        call = client.tap.last_request("tools/call")
        token = call["params"]["_meta"]["progressToken"]
        await wait_until(
            lambda: any(
                m.get("method") == "notifications/progress" and m["params"].get("progressToken") == token
                for m in client.tap.incoming
            ),
            "a progress heartbeat while the question waits",
            limit=LIVENESS + 15,
        )
        return types.ElicitResult(action="accept", content={"decision": "allow"})

    person = Person(after_a_heartbeat)
    updates = []

    async def on_progress(progress, total, message):
        updates.append(progress)

    async with connect(elicitation_callback=person) as client:
        with anyio.fail_after(LIVENESS * 3):
            result = await client.session.call_tool("bash", {"command": COMMAND}, progress_callback=on_progress)
        check_ran(result)
        check(updates, "the progress callback saw the heartbeat", updates)


run(
    {
        "allow": allow,
        "allow_session": allow_session,
        "deny": deny,
        "decline_and_cancel": decline_and_cancel,
        "client_error": client_error,
        "no_elicitation": no_elicitation,
        "deny_rule": deny_rule,
        "timeout": timeout,
        "heartbeat": heartbeat,
    }
)
