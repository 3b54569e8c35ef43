"""The project's own agents over MCP (``-O mcp=true``) lose nothing: the reference model
scores exactly what it scores in the process, example by example, on AppBench SS/SM/MS/MM and
UltraTool ``tool_usage`` zh/en (argument types, errors as ``isError`` results and the tool
descriptions all survive the trip), with ``tools_hierarchical``, a user's ``--agent``
(``create_agent``) and tool faults too; every call of the MCP run is in its call log. (UltraTool
``raw``, plan -> create -> use, over MCP: ``benchmarks/mcp_overhead.py --parity``.)

A few examples per split by default (:data:`LIMIT`); ``TOOLEVAL_MCP_PARITY_ALL=1`` runs every
example (``benchmarks/mcp_overhead.py --parity`` does too, and times it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tooleval_agents.mcp.log import CALLS, read_log
from tooleval_agents.results.rundir import RunDir
from tooleval_agents.run.runner import run_experiment

LIMIT = None if os.environ.get("TOOLEVAL_MCP_PARITY_ALL") else 4
SPLITS = [("appbench", "plan", s) for s in ("ss", "sm", "ms", "mm")] + [
    ("ultratool", "tool_usage", lang) for lang in ("zh", "en")]


def scored(data: Path, out: Path, benchmark: str, task: str, subset: str, *, mcp: bool,
           limit: int | None = LIMIT, **options: Any) -> tuple[Any, dict[int, Any]]:
    """One reference run, in the process or over MCP: its summary and each example's score
    (with its status and the calls it made)."""
    strategy_options = {**options.pop("strategy_options", {}), **({"mcp": True} if mcp else {})}
    summary = run_experiment(benchmark, task=task, subset=subset, model="reference",
                             data_dir=data, out=out, limit=limit, cache=False, progress=False,
                             upload=False, strategy_options=strategy_options or None, **options)
    results = RunDir(summary.run_dir).results().values()
    return summary, {r.index: (r.status, r.score, [
        (t["name"], t["args"], t["output"], t["error"]) for t in r.outputs.get("trace") or []
        if t.get("kind") == "tool_call"]) for r in results}


@pytest.mark.parametrize(("benchmark", "task", "subset"), SPLITS)
def test_the_reference_model_scores_the_same_over_mcp(shared_data: Path, tmp_path: Path,
                                                      benchmark: str, task: str,
                                                      subset: str) -> None:
    _, here = scored(shared_data, tmp_path, benchmark, task, subset, mcp=False,
                     strategy="tools")
    summary, there = scored(shared_data, tmp_path, benchmark, task, subset, mcp=True,
                            strategy="tools")
    assert there == here  # every example: status, every score and part, every call
    assert any(status == "ok" and calls for status, _, calls in here.values())
    log = list(read_log(Path(summary.run_dir) / CALLS))
    made = sum(len(calls) for _, _, calls in there.values())
    assert sum(r["kind"] == "call" for r in log) == made > 0
    sessions = [r for r in log if r["kind"] == "session"]
    assert len(sessions) == 2 * len(there)  # each example: opened, then closed


@pytest.mark.parametrize(("strategy", "agent", "subset", "faults"), [
    ("tools_hierarchical", None, "mm", "rate=0.3,kinds=error+malformed,seed=2"),
    ("tools", "langchain.agents:create_agent", "ss", "rate=0.3,seed=1"),
])
def test_other_agents_and_faults_score_the_same_over_mcp(
        shared_data: Path, tmp_path: Path, strategy: str, agent: str | None, subset: str,
        faults: str) -> None:
    # Faults are drawn where the agent runs its calls, as in the process: a call of a tool
    # the session does not list (an app not open) is answered by the server, undrawn, as the
    # run answers it before drawing.
    options = {"strategy": strategy, "agent": agent, "tool_faults": faults}
    here_summary, here = scored(shared_data, tmp_path, "appbench", "plan", subset, mcp=False,
                                **options)
    summary, there = scored(shared_data, tmp_path, "appbench", "plan", subset, mcp=True,
                            **options)
    assert there == here
    assert summary.metrics == here_summary.metrics
    if agent is None:  # the built-in agent draws them (a user's, through its tool node)
        assert summary.metrics["faulted_examples"] > 0
