"""MCP scenarios of calls that take a while: cancellation, progress, yield to a job, a job's
end reported back, a password prompt."""

import os
import time

import anyio

from common import (
    LIVENESS,
    WORK,
    alive_with_marker,
    check,
    check_eq,
    check_structured,
    connect,
    dump,
    marked_sleep,
    run,
    text_of,
    types,
    wait_until,
)

# Two marked sleepers, one escaped into its own session (`setsid`): a tree kill must end both.
ESCAPING = f"setsid {marked_sleep()} & {marked_sleep()}"


async def cancel():
    async with connect() as client:
        async with anyio.create_task_group() as group:
            outcome = {}

            async def call():
                outcome["result"] = await client.bash(ESCAPING)

            group.start_soon(call)
            await wait_until(lambda: len(alive_with_marker()) >= 2, "both sleepers run")
            request_id = client.tap.last_request("tools/call")["id"]
            await client.session.send_notification(
                types.ClientNotification(
                    types.CancelledNotification(
                        params=types.CancelledNotificationParams(requestId=request_id, reason="test")
                    )
                )
            )
            # The client gives up waiting, as a client that cancels does; stdin stays open.
            group.cancel_scope.cancel()
        check("result" not in outcome, "the cancelled call did not return first", outcome)
        await wait_until(lambda: not alive_with_marker(), "no sleeper left after the cancel", alive_with_marker)
        # The session goes on: the next call runs and answers, and so does a ping after it.
        check_eq(text_of(await client.bash("echo after")), "after", "the call after the cancel")
        await client.session.send_ping()
        check_eq(client.tap.responses_to(request_id), [], "responses to the cancelled request")


async def progress():
    async with connect() as client:
        updates = []

        async def on_progress(progress, total, message):
            updates.append((progress, message))

        # 20 KB at once first: a message is the tail, at most 2 KB of it.
        result = await client.call(
            "bash",
            {"command": "seq 5000; for i in 1 2 3 4; do echo line $i; sleep 1; done"},
            progress_callback=on_progress,
        )
        check_eq(result.isError, False, "isError")
        check(text_of(result).endswith("5000\nline 1\nline 2\nline 3\nline 4"), "text", text_of(result)[-200:])
        with_output = [(p, m) for p, m in updates if m and "line" in m]
        check(len(with_output) >= 2, "at least two progress messages with output", updates)
        counters = [p for p, _ in updates]
        check(all(a < b for a, b in zip(counters, counters[1:])), "progress strictly increases", counters)
        check(all(len((m or "").encode()) <= 2048 for _, m in updates), "messages ≤ 2 KB", updates)
        # On the wire, every progress notification came before the result.
        request_id = client.tap.last_request("tools/call")["id"]
        incoming = client.tap.incoming
        response_at = next(i for i, m in enumerate(incoming) if "method" not in m and m.get("id") == request_id)
        notes = [
            i
            for i, m in enumerate(incoming)
            if m.get("method") == "notifications/progress" and m["params"].get("progressToken") == request_id
        ]
        check(len(notes) >= 2 and max(notes) < response_at, "progress before the result", notes, response_at)


async def yield_to_job():
    # The Rust side sets `[mcp] yield_after = 2` in the config. The command cannot finish
    # before the scenario opens its gate, after the yield.
    gate = os.path.join(WORK, "yield-gate")
    async with connect() as client:
        result = await client.bash(f"echo started; until [ -e {gate} ]; do sleep 0.05; done; echo finished")
        check_eq(result.isError, False, "isError of a yielded call")
        text = text_of(result)
        check(text.startswith("started"), "the output so far", text)
        check("[Running in the background as job 1." in text, "the job line", text)
        job = check_structured(result).get("job") or {}
        check_eq((job.get("id"), job.get("state")), ("1", "running"), "structuredContent.job")
        # The session answers while the job runs.
        check_eq(text_of(await client.bash("echo meanwhile")), "meanwhile", "a call meanwhile")
        open(gate, "w").close()
        seen = ""
        for _ in range(20):
            output = await client.call("job_output", {"jobId": "1", "wait": LIVENESS})
            check_eq(output.isError, False, "job_output isError")
            seen += text_of(output)
            if "[job 1: exited with code 0]" in seen:
                break
        check("finished" in seen and "[job 1: exited with code 0]" in seen, "job_output finished it", seen)
        check_eq(check_structured(output).get("job", {}).get("state"), "exited", "the job's state")
        listing = text_of(await client.call("job_list", {}))
        check(listing.startswith("job 1 · exited"), "job_list", listing)


async def hidden_prompt():
    # MCP has no way for a person to answer a password prompt (its specification forbids
    # asking for secrets by elicitation): the model is told to send the user to a terminal.
    async with connect() as client:
        result = await client.call(
            "bash",
            {"command": "read -s -p 'Password: ' pw; echo \"got ${#pw}\"", "run_in_background": True, "pty": True},
        )
        check_eq(result.isError, False, "isError of the starting call")
        line = (
            "[job 1 is asking for hidden input (a password or passphrase): ask the user to answer "
            "it in a terminal; do not ask for it in the chat]"
        )
        deadline = time.monotonic() + LIVENESS
        while True:
            output = await client.call("job_output", {"jobId": "1", "wait": 0.25})
            job = check_structured(output).get("job") or {}
            if job.get("state") == "waiting_for_input" or time.monotonic() > deadline:
                break
        text = text_of(output)
        check_eq(job.get("hidden"), True, "structuredContent.job.hidden")
        check(text.endswith("[job 1: waiting for input]\n\n" + line), "the closing line", text)
        await client.call("job_kill", {"jobId": "1"})


async def job_end():
    # A job's end reaches the client at once as an `info` logging notification, and the next
    # result closes with its notice.
    async with connect() as client:
        started = await client.call("bash", {"command": "sleep 2; exit 3", "run_in_background": True})
        check_eq(started.isError, False, "isError of the starting call")
        ended = []
        for _ in range(100):
            ended = [log for log in client.logs if isinstance(log.data, dict) and log.data.get("type") == "job_end"]
            if ended:
                break
            await anyio.sleep(0.1)
        check_eq(len(ended), 1, f"job_end notifications (all: {[dump(l) for l in client.logs]})")
        log = ended[0]
        check_eq(log.level, "info", "the notification's level")
        data = log.data
        check_eq((data.get("jobId"), data.get("state"), data.get("exitCode")), ("1", "exited", 3), "the event")
        check(1900 <= data.get("runTimeMs", 0) < 10000, "runTimeMs", dump(log))
        # `2s`, or more where a loaded machine made the job take longer.
        after = f"{data['runTimeMs'] // 1000}s"
        check_eq(data.get("message"), f"job 1 (sleep 2; exit 3) exited with code 3 after {after}", "the line")
        text = text_of(await client.bash("true"))
        check(
            text.endswith(
                f"[job 1 (sleep 2; exit 3) exited with code 3 after {after}; job_output 1 shows its last output]"
            ),
            "the notice closes the next result",
            text,
        )


run(
    {
        "cancel": cancel,
        "progress": progress,
        "yield_to_job": yield_to_job,
        "hidden_prompt": hidden_prompt,
        "job_end": job_end,
    }
)
