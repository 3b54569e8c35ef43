"""A real model behind the gateway for each preset: SmolLM2-135M-Instruct (llama-cpp-python,
``chatml-function-calling``) served to Claude Code, Codex and the OpenAI Agents SDK's example
agent (``--agent-preset``) on one AppBench SS example. What a working setup gives: the example
is measured (not an agent or infrastructure error), the agent listed its session's tools, the
gateway logged each model call in the agent's own wire format with its tokens in the example's
transcript, the agent's own count of its tokens is the gateway's, and the calls the model made
were answered by the example's session and scored.

Marked ``real_model``; skipped where the ``local`` extra or the preset's program is not
installed (``.ci/run`` installs them and requires them).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from agent_clis import agent_program
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
"""A file to append the case's figures to (JSON Lines), as the other real-model tests do."""


FORMATS = {"claude-code": "messages", "codex": "responses", "openai-agents": "responses"}
"""The wire format each preset's program speaks to the gateway."""
TOOL_CHOICE = {"openai-agents": {"tool_choice": "auto", "tool_choice_rounds": 1}}
"""Model arguments by preset. The server's chat format lists the tools (and decodes a call)
only with ``tool_choice`` sent, and lists them in the request's system message: the SDK's
request has none, so its prompt stays short; Claude Code's and Codex's carry their own long
one, and with the 33 tools listed in it SmolLM2 took 9.5 minutes (3 calls, 29,839 tokens) on
one example for Claude Code. Without ``tool_choice`` they are sent the tools but the model is
shown none and answers in text: the route is measured all the same (docs/agents-people-use.md
"Measured")."""


@pytest.mark.parametrize("preset", sorted(FORMATS))
def test_each_preset_on_a_real_model_is_measured_and_counted(
        tool_server: str, shared_data: Path, tmp_path: Path, preset: str) -> None:
    program = agent_program(preset)
    started = time.perf_counter()
    summary = run_experiment(
        "appbench", task="plan", subset="ss", model=f"openai:{ALIAS}",
        model_kwargs={"base_url": tool_server, "api_key": "local", "temperature": 0,
                      "max_tokens": 512, **TOOL_CHOICE.get(preset, {})},
        agent_preset=preset, agent_bin=program, agent_timeout=HANG_GUARD_S, limit=1,
        max_concurrency=1, data_dir=shared_data, out=tmp_path, upload=False, cache=False,
        progress=False, retry=RetryPolicy(max_attempts=1, timeout=HANG_GUARD_S))
    seconds = time.perf_counter() - started
    (result,) = summary.results()
    assert result.status == "ok", (result.error_kind, result.error)
    # Every model call is the example's, with its tokens, as the gateway answered it.
    assert result.usage.model_calls >= 1 and result.usage.input_tokens > 0, result.usage
    assert len(result.model_calls) == result.usage.model_calls
    assert all(c.request and c.request["format"] == FORMATS[preset]
               for c in result.model_calls)
    process = next(t for t in result.outputs["trace"] if t["kind"] == "agent_process")
    assert process["preset"] == preset and process["exit_code"] == 0
    assert "failed" not in process["mcp_servers"].values() and process["listed"] >= 1
    # The agent's own count of what it was sent is the gateway's (the server's count).
    assert process["agent_usage"]["input_tokens"] == result.usage.input_tokens, process
    # The calls the model made are the session's, and the example was scored on them.
    calls = [t for t in result.outputs["trace"] if t.get("kind") == "tool_call"]
    logged = [r for r in read_log(Path(str(summary.run_dir)) / CALLS) if r["kind"] == "call"]
    assert len(calls) == len(logged) == process["calls"]
    assert result.score is not None and "success" in result.score["scores"]
    if REPORT:
        row = {"case": f"appbench/ss --agent-preset {preset} (through the gateway)",
               "n": 1, "ok": summary.counts["ok"], "wall_s": round(seconds, 1),
               "tool_calls": len(calls), "success": result.score["scores"]["success"],
               "usage": summary.usage,
               "config": RunDir(str(summary.run_dir)).read_config().agent_cmd}
        with open(REPORT, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")
