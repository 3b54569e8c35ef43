"""What sealing an agent command costs (docs/security.md "What it costs"): the wall time per
example of a trivial agent, sealed (``--agent-sandbox``) against unsealed.

* **Per agent process**: :func:`~tooleval_agents.mcp.external.run_process` of a trivial
  command (``cat > /dev/null; echo done``) started three ways -- a plain ``/bin/sh`` (how
  agents ran before the reaper, and still do off Linux: nothing of theirs was followed beyond
  their process group), under the per-agent reaper (unsealed), and sealed (``bwrap``, its
  relay and the gate) -- alternating, ``--processes`` times each; the median wall time of each.
* **Per example of a run**: the same agent as ``--agent-cmd`` over the AppBench SS samples
  (``--epochs`` repeats them; one example at a time), unsealed and sealed, alternating, at two
  sizes, ``--rounds`` times; the median of each round's difference in wall time divided by
  the difference in examples (the run's fixed costs, the imports and the MCP server's start,
  drop out).

    .venv/bin/python benchmarks/sandbox_cost.py [--processes 40] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from unittest import mock

from tooleval_agents.mcp import external
from tooleval_agents.mcp.external import run_process
from tooleval_agents.mcp.sandbox import AgentSandbox, Seal, check_sandbox
from tooleval_agents.run.runner import run_experiment

AGENT = "cat > /dev/null; echo done"
SAMPLES = Path(__file__).resolve().parents[1] / "datasets"


def _plain(command: str, grace: float) -> list[str]:
    return ["/bin/sh", "-c", command]  # no reaper: as before it, and off Linux


async def _once(how: str, folder: Path) -> float:
    seal = None
    if how == "sealed":
        seal = Seal(AgentSandbox(), check_sandbox(), urls=("http://127.0.0.1:40999/",),
                    shared=(folder,))
    started = time.perf_counter()
    with mock.patch.object(external, "unsealed_argv", _plain) if how == "plain" \
            else contextlib.nullcontext():
        done = await run_process(AGENT, env={"PATH": "/usr/bin:/bin"}, stdin="request",
                                 timeout=60, seal=seal)
    assert done.stdout.strip() == b"done", done
    return time.perf_counter() - started


async def per_process(n: int) -> dict[str, float]:
    """The median milliseconds of one trivial agent process, each way."""
    times: dict[str, list[float]] = {"plain": [], "reaper": [], "sealed": []}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(n):
            for how, seen in times.items():
                seen.append(await _once(how, Path(tmp)))
    return {how: round(statistics.median(seen) * 1000, 1) for how, seen in times.items()}


def _run(epochs: int, sealed: bool, out: Path) -> float:
    started = time.perf_counter()
    summary = run_experiment("appbench", subset="ss", agent_cmd=AGENT, data_dir=SAMPLES,
                             out=out, epochs=epochs, max_concurrency=1, cache=False,
                             progress=False, upload=False, agent_sandbox=sealed, fresh=True)
    assert summary.counts["scored"] == 6 * epochs, summary.counts
    return time.perf_counter() - started


def per_example(rounds: int, small: int, large: int) -> dict[str, Any]:
    """Milliseconds per example of a run, unsealed and sealed (two sizes, differenced; the
    median over the rounds)."""
    seen: dict[str, list[float]] = {"unsealed": [], "sealed": []}
    with tempfile.TemporaryDirectory() as tmp:
        _run(1, False, Path(tmp) / "warm")  # first-call imports
        for _ in range(rounds):
            for name, sealed in (("unsealed", False), ("sealed", True)):
                walls = {e: _run(e, sealed, Path(tmp) / name) for e in (small, large)}
                seen[name].append((walls[large] - walls[small]) / (6 * (large - small)))
    found: dict[str, Any] = {k: round(statistics.median(v) * 1000, 1) for k, v in seen.items()}
    found["sealed_minus_unsealed"] = round(found["sealed"] - found["unsealed"], 1)
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--small", type=int, default=1, help="epochs of the small run")
    parser.add_argument("--large", type=int, default=5, help="epochs of the large run")
    args = parser.parse_args(argv)
    figures = {"per_process_ms": asyncio.run(per_process(args.processes)),
               "per_example_ms": per_example(args.rounds, args.small, args.large),
               "examples": {"small": 6 * args.small, "large": 6 * args.large}}
    json.dump(figures, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
