"""``examples/mcp_agent.py`` with a real model: SmolLM2-135M-Instruct served by llama-cpp-python
with the tool-calling chat format (:data:`local_model.TOOL_FORMAT`), as an agent command
(``--agent-cmd``) on one AppBench SS example. The agent takes the example's tools over MCP with
``langchain-mcp-adapters``; what a working setup gives is asserted: the session logged the
agent's tool calls, the example was scored on them, and the agent reported its usage.

The server's chat format decodes calls under a grammar only when the request sends
``tool_choice`` (``--model-arg model_kwargs=...``) and shows the model no tool results, so the
agent gets one turn (``--max-turns 1``: one answer with its calls, no second request).
Marked ``real_model``; skipped where the ``local`` extra is not installed (``.ci/run`` installs
it and requires it).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from local_model import ALIAS, REQUIRE, TOOL_FORMAT, missing, serve

from tooleval_agents.mcp.log import CALLS, read_log
from tooleval_agents.results.rundir import RunDir
from tooleval_agents.run.runner import run_experiment

pytestmark = [pytest.mark.real_model,
              pytest.mark.skipif(missing() is not None and not REQUIRE,
                                 reason=f"no local model: {missing()}")]
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "mcp_agent.py"
REPORT = os.environ.get("TOOLEVAL_REAL_MODEL_REPORT")


@pytest.fixture(scope="module")
def tool_server() -> Iterator[str]:
    if missing() is not None:
        raise AssertionError(f"TOOLEVAL_REQUIRE_REAL_MODEL is set but {missing()}")
    with serve(chat_format=TOOL_FORMAT) as url:
        yield url


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
