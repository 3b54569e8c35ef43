"""What taking the tools over MCP costs (docs/mcp.md "What it costs"), and parity on every example.

* **Per tool call**: one AppBench API call answered in the process
  (:func:`~tooleval_agents.tool_execution.run_tool_call` on the stub) against the same call over
  streamable HTTP through the run's server (:class:`~tooleval_agents.mcp.server.ToolServer`,
  on 127.0.0.1) -- with the official SDK's client, and with the tools the project's agents get
  (``langchain-mcp-adapters``, :class:`~tooleval_agents.mcp.client.McpToolbox`). The median of
  ``--calls`` calls each, after a warm-up, and the process's CPU time per call (both ends run
  in it). Goal: under 5 ms per call more than in the process.
* **A run**: the reference agent (strategy ``tools``) on ``--examples`` AppBench SS examples,
  in the process and with ``-O mcp=true`` (a session per example, every call logged),
  alternating, ``--rounds`` times each; the median wall and CPU times and their ratios. Goal:
  at most 1.5x.
* ``--parity``: the reference model over MCP against the process on every example of AppBench
  SS/SM/MS/MM and UltraTool ``tool_usage`` zh/en (and ``raw`` en, plan -> create -> use): the
  examples whose score or calls differ (none expected).

    .venv/bin/python benchmarks/mcp_overhead.py [--data-dir ../shared/data] [--parity]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tooleval_agents import agent_io_for
from tooleval_agents.mcp.client import McpToolbox
from tooleval_agents.mcp.server import ToolServer
from tooleval_agents.results.rundir import RunDir
from tooleval_agents.run.runner import run_experiment
from tooleval_agents.tool_execution import run_tool_call

INPUTS = {"input": "Find a Thai restaurant in San Francisco."}
TOOL, ARGS = "Restaurants__findrestaurants", {"location": "San Francisco", "category": "Thai"}
PARITY = [("appbench", "plan", s, "tools", None) for s in ("ss", "sm", "ms", "mm")] + [
    ("ultratool", "tool_usage", "zh", "tools", None),
    ("ultratool", "tool_usage", "en", "tools", None),
    ("appbench", "plan", "mm", "tools_hierarchical", None),
    ("ultratool", "raw", "en", "tools", 100)]
"""(benchmark, task, subset, strategy, examples: None for all): raw plans, creates and uses
tools per example (seconds each in the process), so 100 of its examples."""


async def _timed(calls: int, call: Any) -> tuple[float, float]:
    """The median wall milliseconds of ``call()`` over ``calls`` calls (after 20 untimed), and
    the process's CPU milliseconds per call (both ends: the server is a thread of it)."""
    for _ in range(20):
        await call()
    times = []
    cpu = time.process_time()
    for _ in range(calls):
        started = time.perf_counter()
        await call()
        times.append(1000 * (time.perf_counter() - started))
    return statistics.median(times), 1000 * (time.process_time() - cpu) / calls


async def per_call(calls: int) -> dict[str, float]:
    io = agent_io_for("appbench", subset="ss")
    tool = next(t for t in io.tools(INPUTS) if t.name == TOOL)
    request = {"id": "c", "name": TOOL, "args": ARGS}
    out = {"in_process": await _timed(calls, lambda: run_tool_call(tool, request))}
    with ToolServer() as server:
        session = await server.open(io.open(INPUTS), io.messages(INPUTS), label="bench")
        headers = {"Authorization": f"Bearer {server.key(session)}"}
        async with (httpx.AsyncClient(headers=headers, verify=False) as http,
                    streamable_http_client(server.url(session), http_client=http) as (r, w, _),
                    ClientSession(r, w) as client):
            await client.initialize()
            out["mcp_sdk_client"] = await _timed(calls, lambda: client.call_tool(TOOL, ARGS))
        async with McpToolbox.connect(server.url(session), server.key(session)) as box:
            served = box.tool(TOOL)
            out["mcp_adapters"] = await _timed(calls, lambda: run_tool_call(served, request))
    return {**{f"{k}_ms": round(v[0], 2) for k, v in out.items()},
            **{f"{k}_cpu_ms": round(v[1], 2) for k, v in out.items()},
            "overhead_ms": round(out["mcp_adapters"][0] - out["in_process"][0], 2),
            "overhead_cpu_ms": round(out["mcp_adapters"][1] - out["in_process"][1], 2)}


def a_run(data: Path, examples: int, rounds: int) -> dict[str, Any]:
    walls: dict[bool, list[float]] = {False: [], True: []}
    cpus: dict[bool, list[float]] = {False: [], True: []}
    with tempfile.TemporaryDirectory() as out:
        for _ in range(rounds):
            for mcp in (False, True):
                started, cpu = time.perf_counter(), time.process_time()
                summary = run_experiment(
                    "appbench", subset="ss", strategy="tools", model="reference",
                    data_dir=data, out=out, limit=examples, cache=False, progress=False,
                    upload=False, fresh=True, strategy_options={"mcp": True} if mcp else None)
                walls[mcp].append(time.perf_counter() - started)
                cpus[mcp].append(time.process_time() - cpu)
                assert summary.counts["scored"] == examples, summary.counts
    here, there = statistics.median(walls[False]), statistics.median(walls[True])
    cpu_here, cpu_there = statistics.median(cpus[False]), statistics.median(cpus[True])
    return {"examples": examples, "rounds": rounds, "in_process_s": round(here, 2),
            "mcp_s": round(there, 2), "ratio": round(there / here, 2),
            "per_example_ms": round(1000 * (there - here) / examples, 1),
            "in_process_cpu_s": round(cpu_here, 2), "mcp_cpu_s": round(cpu_there, 2),
            "cpu_ratio": round(cpu_there / cpu_here, 2)}


def parity(data: Path) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory() as out:
        for benchmark, task, subset, strategy, limit in PARITY:
            scores = []
            for mcp in (False, True):
                summary = run_experiment(
                    benchmark, task=task, subset=subset, strategy=strategy, model="reference",
                    data_dir=data, out=out, cache=False, progress=False, upload=False,
                    fresh=True, limit=limit, strategy_options={"mcp": True} if mcp else None)
                scores.append({r.index: (r.status, r.score, [
                    (t["name"], t["args"], t["output"]) for t in r.outputs.get("trace") or []
                    if t.get("kind") == "tool_call"])
                    for r in RunDir(summary.run_dir).results().values()})  # type: ignore[arg-type]
            differ = sorted(i for i in scores[0] if scores[0][i] != scores[1].get(i))
            rows.append({"split": f"{benchmark}-{task}-{subset}", "strategy": strategy,
                         "examples": len(scores[0]), "differ": differ})
            print(json.dumps(rows[-1]), file=sys.stderr)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data"))
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--parity", action="store_true", help="every example of the splits")
    args = parser.parse_args()
    report: dict[str, Any] = {"per_call": asyncio.run(per_call(args.calls)),
                              "run": a_run(args.data_dir, args.examples, args.rounds)}
    if args.parity:
        report["parity"] = parity(args.data_dir)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
