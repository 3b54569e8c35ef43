"""A real model behind the gateway for a preset: SmolLM2-135M-Instruct (llama-cpp-python,
``chatml-function-calling``) served to the OpenAI Agents SDK's example agent
(``--agent-preset openai-agents``) on one AppBench SS example. What a working setup gives:
the example is measured (not an agent or infrastructure error), the gateway logged each model
call with its tokens in the example's transcript, the calls the model made were answered by
the example's session and scored, and the SDK's own count of its requests matches the
gateway's.

(Claude Code and Codex on this model are not tested here: their prompts are 10,000 tokens and
more, which SmolLM2 on two cores takes minutes to read, beyond what each waits for an answer:
docs/agents-people-use.md "Measured".)

Marked ``real_model``; skipped where the ``local`` extra or the Agents SDK is not installed
(``.ci/run`` installs both and requires them).
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


def test_the_agents_sdk_preset_on_a_real_model_is_measured_and_counted(
        tool_server: str, shared_data: Path, tmp_path: Path) -> None:
    python = agent_program("openai-agents")
    started = time.perf_counter()
    summary = run_experiment(
        "appbench", task="plan", subset="ss", model=f"openai:{ALIAS}",
        model_kwargs={"base_url": tool_server, "api_key": "local", "temperature": 0,
                      "max_tokens": 512, "tool_choice": "auto", "tool_choice_rounds": 1},
        agent_preset="openai-agents", agent_bin=python, agent_timeout=HANG_GUARD_S, limit=1,
        max_concurrency=1, data_dir=shared_data, out=tmp_path, upload=False, cache=False,
        progress=False, retry=RetryPolicy(max_attempts=1, timeout=HANG_GUARD_S))
    seconds = time.perf_counter() - started
    (result,) = summary.results()
    assert result.status == "ok", (result.error_kind, result.error)
    # Every model call is the example's, with its tokens, as the gateway answered it.
    assert result.usage.model_calls >= 1 and result.usage.input_tokens > 0, result.usage
    assert len(result.model_calls) == result.usage.model_calls
    assert all(c.request and c.request["format"] == "responses" for c in result.model_calls)
    process = next(t for t in result.outputs["trace"] if t["kind"] == "agent_process")
    assert process["preset"] == "openai-agents" and process["exit_code"] == 0
    assert process["mcp_servers"] == {"bench": "connected"} and process["listed"] >= 1
    # The calls the model made are the session's, and the example was scored on them.
    calls = [t for t in result.outputs["trace"] if t.get("kind") == "tool_call"]
    logged = [r for r in read_log(Path(str(summary.run_dir)) / CALLS) if r["kind"] == "call"]
    assert len(calls) == len(logged) == process["calls"]
    assert result.score is not None and "success" in result.score["scores"]
    if REPORT:
        row = {"case": "appbench/ss --agent-preset openai-agents (through the gateway)",
               "n": 1, "ok": summary.counts["ok"], "wall_s": round(seconds, 1),
               "tool_calls": len(calls), "success": result.score["scores"]["success"],
               "usage": summary.usage,
               "config": RunDir(str(summary.run_dir)).read_config().agent_cmd}
        with open(REPORT, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")
