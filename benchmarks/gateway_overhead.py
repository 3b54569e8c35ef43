"""What the model gateway costs per model call (docs/gateway.md "What it costs").

The same model -- the offline ``reference`` model on AppBench SS example 0, wrapped as a run
wraps it (:class:`~tooleval_agents.models.retry.RetryingChatModel`: accounting and transcript;
no response cache, so every call is answered by the model) and bound to the split's 33 tools --
asked the example's first turn:

* **in the process**: ``bound.ainvoke(messages)``, as the project's own agents call it;
* **through the gateway**: the same request over HTTP on 127.0.0.1
  (:class:`~tooleval_agents.gateway.server.ModelGateway`), in each wire format, streamed and
  not, from a kept-alive ``httpx`` client in a process of its own (an agent is one: a client
  in the gateway's process would contend for its interpreter lock), the request body made
  once (what a client spends building it is the client's).

The median wall milliseconds of ``--calls`` calls each, after a warm-up, alternating the
routes ``--rounds`` times (the median of the rounds' medians), this process's CPU time per
call (the gateway's thread and the model's), and the client process's CPU time per call (its
HTTP work, shown apart: an agent pays it for any provider it calls). The overhead
is the gateway's median minus the in-process one. Goal: under 3 ms per call.

    .venv/bin/python benchmarks/gateway_overhead.py [--calls 500] [--rounds 3] [--routes TEXT]
        [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from langchain_core.messages import convert_to_openai_messages
from langchain_core.utils.function_calling import convert_to_openai_tool

from tooleval_agents import agent_io_for, examples_for, reference_model
from tooleval_agents.gateway.server import ModelGateway
from tooleval_agents.mcp.sessions import request_text
from tooleval_agents.models.accounting import CallStats, use_stats
from tooleval_agents.models.retry import RetryingChatModel

SAMPLES = Path(__file__).resolve().parents[1] / "datasets"
GOAL_MS = 3.0
WARM_UP = 20


def bodies(tools: list[dict[str, Any]], request: str) -> dict[str, tuple[str, dict[str, Any]]]:
    """Each route's path and request body (``route`` -> ``(path, body)``)."""
    functions = [t["function"] for t in tools]
    user = [{"role": "user", "content": request}]
    chat: dict[str, Any] = {"model": "reference", "messages": user, "tools": tools}
    responses: dict[str, Any] = {
        "model": "reference", "input": request, "store": False,
        "tools": [{"type": "function", "strict": False, **f} for f in functions]}
    messages: dict[str, Any] = {
        "model": "reference", "max_tokens": 1024, "messages": user,
        "tools": [{"name": f["name"], "description": f.get("description", ""),
                   "input_schema": f["parameters"]} for f in functions]}
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    routes: dict[str, tuple[str, dict[str, Any]]] = {
        "chat.completions": ("/v1/chat/completions", chat),
        "responses": ("/v1/responses", responses), "messages": ("/v1/messages", messages)}
    for name, (path, body) in routes.items():
        out[name] = (path, body)
        out[f"{name} (stream)"] = (path, {**body, "stream": True})
    return out


async def timed(calls: int, call: Callable[[], Awaitable[Any]]) -> tuple[float, float]:
    """Median wall ms of ``call()`` over ``calls`` calls (after a warm-up), CPU ms per call."""
    for _ in range(WARM_UP):
        await call()
    times = []
    cpu = time.process_time()
    for _ in range(calls):
        started = time.perf_counter()
        await call()
        times.append(1000 * (time.perf_counter() - started))
    return statistics.median(times), 1000 * (time.process_time() - cpu) / calls


CLIENT = """
import json, statistics, sys, time
import httpx
job = json.load(sys.stdin)
out = {}
with httpx.Client(headers=job["headers"], timeout=120) as http:
    for name, (url, body) in job["routes"].items():
        data = body.encode()
        for _ in range(job["warm_up"]):
            http.post(url, content=data).raise_for_status()
        times = []
        cpu = time.process_time()
        for _ in range(job["calls"]):
            started = time.perf_counter()
            http.post(url, content=data).raise_for_status()
            times.append(1000 * (time.perf_counter() - started))
        out[name] = [statistics.median(times),
                     1000 * (time.process_time() - cpu) / job["calls"]]
print(json.dumps(out))
"""
"""The client: each route's calls in turn, their median wall milliseconds and the client's
CPU milliseconds per call (JSON on stdout)."""


def over_http(url: str, body: str, headers: dict[str, str],
              calls: int) -> tuple[float, float, float]:
    """One route's median wall ms from a client process, this process's CPU ms per call
    meanwhile (the gateway's thread and the model's: the gateway's share), and the client's
    CPU ms per call (its HTTP work: what an agent pays for any provider)."""
    job = json.dumps({"routes": {"route": (url, body)}, "headers": headers, "calls": calls,
                      "warm_up": WARM_UP})
    cpu = time.process_time()
    done = subprocess.run([sys.executable, "-c", CLIENT], input=job, capture_output=True,
                          text=True, check=True)
    wall, client = json.loads(done.stdout)["route"]
    return wall, 1000 * (time.process_time() - cpu) / (calls + WARM_UP), client


class Recent(dict[str, dict[str, Any]]):
    """A transcript that keeps an example's worth of calls (a run writes each example's and
    drops it; thousands of calls kept alive would make every garbage collection slower)."""

    def __setitem__(self, key: str, value: dict[str, Any]) -> None:
        if len(self) >= 10:
            del self[next(iter(self))]
        super().__setitem__(key, value)


def measure(calls: int, rounds: int, only: str = "") -> dict[str, dict[str, float]]:
    """Each route's median wall ms, gateway CPU ms and client CPU ms per call (routes whose
    name contains ``only``; the in-process one always)."""
    inputs = dict(examples_for("appbench", subset="ss", data_dir=SAMPLES)[0].inputs or {})
    io = agent_io_for("appbench", subset="ss")
    messages = io.messages(inputs)
    tools = [convert_to_openai_tool(t) for t in io.tools(inputs)]
    model = RetryingChatModel(inner=reference_model("appbench", subset="ss",
                                                    data_dir=SAMPLES))
    bound = model.bind_tools(tools)
    gateway = ModelGateway(model, name="reference")
    grant = gateway.grant("bench", CallStats(transcript=Recent()))
    # The agent's request, as OpenAI messages (what a client sends the gateway).
    request = convert_to_openai_messages(messages)[0]["content"]
    assert request == request_text(messages)
    routes = {name: (gateway.url(grant) + path, json.dumps(body))
              for name, (path, body) in bodies(tools, request).items() if only in name}
    headers = {"authorization": f"Bearer {grant.key}", "x-api-key": grant.key,
               "content-type": "application/json"}
    stats = CallStats(transcript=Recent())

    async def in_process() -> None:
        with use_stats(stats):
            await bound.ainvoke(messages)

    got: dict[str, list[tuple[float, ...]]] = {}
    try:
        for _ in range(rounds):
            got.setdefault("in process", []).append(asyncio.run(timed(calls, in_process)))
            for name, (url, body) in routes.items():
                got.setdefault(name, []).append(over_http(url, body, headers, calls))
    finally:
        gateway.stop()
    columns = ("wall_ms", "cpu_ms", "client_cpu_ms")
    return {name: {column: statistics.median(r[i] for r in runs)
                   for i, column in enumerate(columns) if i < len(runs[0])}
            for name, runs in got.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500, help="timed calls per route and round")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--routes", default="", metavar="TEXT",
                        help="only the routes whose name contains TEXT (e.g. stream)")
    args = parser.parse_args()
    before = os.getloadavg()
    figures = measure(args.calls, args.rounds, args.routes)
    load = [max(pair) for pair in zip(before, os.getloadavg(), strict=True)]
    base = figures["in process"]
    for got in figures.values():
        got["overhead_ms"] = round(got["wall_ms"] - base["wall_ms"], 3)
        got["cpu_overhead_ms"] = round(got["cpu_ms"] - base["cpu_ms"], 3)
    if args.json:
        print(json.dumps({"load_average": load, "routes": figures}, indent=2))
        return
    print(f"load average {load[0]:.1f} (1 min), {load[1]:.1f} (5 min), the larger of before "
          f"and after, on {os.cpu_count()} cores (others' work slows every row)")
    print(f"{'route':28} {'wall ms':>8} {'overhead':>9} {'cpu ms':>8} {'cpu overhead':>13} "
          f"{'client cpu':>11}")
    for name, got in figures.items():
        client = f"{got['client_cpu_ms']:11.2f}" if "client_cpu_ms" in got else ""
        print(f"{name:28} {got['wall_ms']:8.2f} {got['overhead_ms']:9.2f} {got['cpu_ms']:8.2f} "
              f"{got['cpu_overhead_ms']:13.2f} {client}")
    worst = max(v["overhead_ms"] for v in figures.values())
    print(f"largest overhead {worst:.2f} ms per call (goal: under {GOAL_MS:g} ms): "
          f"{'met' if worst < GOAL_MS else 'NOT met'}")


if __name__ == "__main__":
    main()
