"""Native tool calling with a real model: SmolLM2-135M-Instruct served by llama-cpp-python with
the ``chatml-function-calling`` chat format (:data:`local_model.TOOL_FORMAT`), which decodes
tool calls under a grammar when the request sends ``tool_choice`` -- here through the model
argument ``tool_choice=auto`` and the request rewrite of :mod:`tooleval_agents.models.openai_compat`
(an assistant turn with calls and no text goes out with ``content: ""``; the server answers
``null`` with HTTP 500).

What a working setup gives is asserted: the model's answers carry structured tool calls
(``AIMessage.tool_calls``, counted in the run's ``agent`` trace record), the trajectory read
back from them is not empty, the turn after the calls was accepted by the server (no HTTP 500
on the ``null`` content) and ended the agent. The format's prompt shows no tool results, so a
model asked with ``tool_choice`` calls the same tool again on every turn: ``tool_choice_rounds``
sends it for one round of calls (two for ``tools_hierarchical``: open the app, then call its
API), after which the model answers in text. One example each, answers capped at 64 tokens.
``examples/mcp_agent.py`` is scored the same way as an agent command (``--agent-cmd``): it
takes the example's tools over MCP with ``langchain-mcp-adapters``; the session must log its
calls, the example be scored on them, and the agent report its usage. It gets one turn
(``--max-turns 1``: one answer with its calls, no second request).

Marked ``real_model``; skipped where the ``local`` extra is not installed (``.ci/run``
installs it and requires it).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import HANG_GUARD_S
from local_model import ALIAS, REQUIRE, missing

from tooleval_agents.mcp.log import CALLS, read_log
from tooleval_agents.models.retry import RetryPolicy
from tooleval_agents.results.rundir import RunDir
from tooleval_agents.run.runner import run_experiment

pytestmark = [pytest.mark.real_model,
              pytest.mark.skipif(missing() is not None and not REQUIRE,
                                 reason=f"no local model: {missing()}")]

REPORT = os.environ.get("TOOLEVAL_REAL_MODEL_REPORT")
"""A file to append each case's figures to (JSON Lines), as test_real_model does."""
CASES = [("tools", None, 1), ("tools_hierarchical", None, 2),
         ("tools", "langchain.agents:create_agent", 1)]
"""(strategy, agent, rounds of tool calls)."""


def tool_run(url: str, data_dir: Path, out: Path, strategy: str, agent: str | None,
             rounds: int) -> Any:
    """One AppBench SS example, native tool calling, structured calls asked for."""
    return run_experiment(
        "appbench", task="plan", subset="ss", strategy=strategy, agent=agent,
        model=f"openai:{ALIAS}",
        model_kwargs={"base_url": url, "api_key": "local", "temperature": 0, "max_tokens": 64,
                      "tool_choice": "auto", "tool_choice_rounds": rounds},
        limit=1, max_concurrency=1, data_dir=data_dir, out=out, upload=False, cache=False,
        progress=False, retry=RetryPolicy(max_attempts=1, timeout=HANG_GUARD_S))


@pytest.mark.parametrize(("strategy", "agent", "rounds"), CASES)
def test_a_real_model_makes_structured_tool_calls(tool_server: str, shared_data: Path,
                                                  tmp_path: Path, strategy: str,
                                                  agent: str | None, rounds: int,
                                                  record_property: Callable[[str, object], None]
                                                  ) -> None:
    started = time.perf_counter()
    summary = tool_run(tool_server, shared_data, tmp_path, strategy, agent, rounds)
    seconds = time.perf_counter() - started
    case = (f"appbench/{strategy}" + (f" --agent {agent}" if agent else "")
            + " (structured tool calls)")
    for key, value in (("case", case), ("n", 1), ("ok", summary.counts["ok"]),
                       ("model_calls", summary.usage.get("model_calls")),
                       ("input_tokens", summary.usage.get("input_tokens"))):
        record_property(key, value)
    (result,) = summary.results()
    assert result.status == "ok", (result.error_kind, result.error)
    assert result.usage.model_calls > 0 and result.usage.input_tokens > 0, result.usage
    trace = result.outputs["trace"]
    agent_record = next(r for r in trace if r.get("kind") == "agent")
    calls = [r for r in trace if r.get("kind") == "tool_call"]
    # Structured calls came back and were run; the trajectory is read from them.
    assert agent_record["tool_calls"] == len(calls) > 0, trace
    assert all(c["name"] and c["output"] is not None for c in calls), calls
    if strategy == "tools":  # every call is an API call: the plan read back has it
        assert result.outputs["prediction"], result.outputs
    # The rounds of calls, then an answer in text that the server accepted and that ended
    # the agent (no HTTP 500 on the null content, no call repeated until a limit).
    assert {c["turn"] for c in calls} <= set(range(rounds)), calls
    assert agent_record["turns"] == max(c["turn"] for c in calls) + 2
    if REPORT:
        row = {"case": case, "n": 1, "ok": summary.counts["ok"], "wall_s": round(seconds, 1),
               "tool_calls": len(calls), "source": "structured", "turns": agent_record["turns"],
               "usage": summary.usage}
        with open(REPORT, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "mcp_agent.py"


def test_the_example_agent_calls_tools_over_mcp(tool_server: str, shared_data: Path,
                                                tmp_path: Path) -> None:
    command = shlex.join([
        sys.executable, str(EXAMPLE), "--model", f"openai:{ALIAS}", "--model-arg",
        f"base_url={tool_server}", "--model-arg", "api_key=local", "--model-arg",
        "max_tokens=64", "--model-arg", 'model_kwargs={"tool_choice": "auto"}',
        "--max-turns", "1"])
    started = time.perf_counter()
    summary = run_experiment("appbench", task="plan", subset="ss", agent_cmd=command,
                             agent_name="mcp-agent", limit=1, max_concurrency=1,
                             agent_timeout=900, data_dir=shared_data, out=tmp_path,
                             cache=False, progress=False, upload=False)
    seconds = time.perf_counter() - started
    (result,) = RunDir(summary.run_dir).results().values()  # type: ignore[arg-type]
    assert result.status == "ok", (result.error_kind, result.error)
    calls = [r for r in read_log(Path(summary.run_dir) / CALLS)  # type: ignore[arg-type]
             if r["kind"] == "call"]
    assert calls, "the session logged no tool call"
    scored = [t for t in result.outputs["trace"] if t["kind"] == "tool_call"]
    assert [(t["name"], t["args"]) for t in scored] == [(c["tool"], c["arguments"])
                                                       for c in calls]
    assert result.usage_reported and result.usage.model_calls >= 1
    if REPORT:
        row = {"case": "appbench --agent-cmd examples/mcp_agent.py (MCP, structured tool calls)",
               "n": 1, "wall_s": round(seconds, 1), "tool_calls": len(calls),
               "metrics": {k: summary.metrics.get(k) for k in ("success", "executed_success")},
               "usage": summary.usage}
        with open(REPORT, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")
