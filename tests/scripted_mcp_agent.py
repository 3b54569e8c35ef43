"""A scripted outside agent for the tests: a separate process that plays the gold plan of an
AppBench example through its MCP session (``--agent-cmd``), as the offline ``reference`` model
plays it in the run.

It reads the request on standard input, looks the example up in the AppBench file named by
``SCRIPTED_DATA`` (the test's own copy of the data: the server reveals no gold), connects to
``TOOLEVAL_MCP_URL`` with ``TOOLEVAL_MCP_TOKEN`` (the official ``mcp`` SDK's client), makes the
plan's calls in order -- each referenced value taken from the earlier call's answer -- and
prints the plan's final answer. With ``SCRIPTED_HIERARCHICAL=1`` it opens each app first
(``tools_hierarchical``). It writes its usage (one call, 10 and 2 tokens) to
``TOOLEVAL_USAGE_FILE`` when ``SCRIPTED_USAGE=1``.

Misbehaviours on demand (``SCRIPTED_MODE``): ``crash`` (exit 3 after one call), ``hang``
(sleep, and its child too), ``garbage`` (invalid UTF-8), ``flood`` (2 MiB of output),
``late`` (a detached child calls a tool once the session has ended, then writes
``SCRIPTED_MARKER``), ``kill_me`` (on the example whose request holds ``SCRIPTED_KILL``: one
call, then write ``SCRIPTED_MARKER`` and wait to be killed).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tooleval_agents.graphs.appbench.planning import reference_sample
from tooleval_agents.graphs.appbench.tools import tool_plan

REQUEST = "Request: "


def gold_plan(request: str) -> Any:
    records = json.loads(Path(os.environ["SCRIPTED_DATA"]).read_text(encoding="utf-8"))
    wanted = request.rsplit(REQUEST, 1)[-1].strip()
    record = next(r for r in records if r["input"].strip() == wanted)
    sample = reference_sample(record["output"], record["input"])
    return tool_plan(sample, hierarchical=os.environ.get("SCRIPTED_HIERARCHICAL") == "1")


async def play(session: ClientSession, plan: Any, mode: str, request: str) -> None:
    answers: dict[str, Any] = {}
    for i, call in enumerate(plan.calls):
        args = dict(call.args)
        for key, ref in call.refs.items():
            value = answers.get(ref.call)
            args[key] = value.get(ref.key, "unknown") if isinstance(value, dict) else "unknown"
        result = await session.call_tool(call.name, args)
        text = result.content[0].text if result.content else ""
        try:
            answers[call.id] = json.loads(text) if not result.isError else None
        except ValueError:
            answers[call.id] = None
        if i == 0 and mode == "crash":
            sys.exit(3)
        if i == 0 and mode == "kill_me" and os.environ.get("SCRIPTED_KILL", "\0") in request:
            Path(os.environ["SCRIPTED_MARKER"]).write_text(str(os.getpid()), encoding="utf-8")
            await asyncio.sleep(3600)


def misbehave(mode: str) -> None:
    if mode == "hang":
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        time.sleep(3600)
    if mode == "garbage":
        sys.stdout.buffer.write(b"\xff\xfe not text \x80")
        sys.exit(0)
    if mode == "flood":
        sys.stdout.buffer.write(b"x" * (2 << 20))
        sys.exit(0)
    if mode == "late":  # a child that outlives its session (in a session of its own)
        subprocess.Popen([sys.executable, __file__, "--late"], start_new_session=True,
                         env=dict(os.environ))


async def late_call() -> None:
    """Call a tool until the session is gone (404), then mark it done."""
    url, token = os.environ["TOOLEVAL_MCP_URL"], os.environ["TOOLEVAL_MCP_TOKEN"]
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Authorization": f"Bearer {token}",
               "Accept": "application/json, text/event-stream"}
    async with httpx.AsyncClient(headers=headers) as http:
        for _ in range(600):
            status = (await http.post(url, json=body)).status_code
            if status == 404:
                break
            await asyncio.sleep(0.05)
    Path(os.environ["SCRIPTED_MARKER"]).write_text(str(status), encoding="utf-8")


async def main() -> None:
    mode = os.environ.get("SCRIPTED_MODE", "")
    misbehave(mode)
    request = sys.stdin.read()
    plan = gold_plan(request)
    headers = {"Authorization": f"Bearer {os.environ['TOOLEVAL_MCP_TOKEN']}"}
    async with (httpx.AsyncClient(headers=headers) as http,
                streamable_http_client(os.environ["TOOLEVAL_MCP_URL"],
                                       http_client=http) as (read, write, _),
                ClientSession(read, write) as session):
        await session.initialize()
        await play(session, plan, mode, request)
    if os.environ.get("SCRIPTED_USAGE") == "1":
        Path(os.environ["TOOLEVAL_USAGE_FILE"]).write_text(
            json.dumps({"input_tokens": 10, "output_tokens": 2, "model_calls": 1}))
    print(plan.final)


if __name__ == "__main__":
    asyncio.run(late_call() if sys.argv[1:] == ["--late"] else main())
