"""``tooleval serve --model``: the model gateway beside the sessions, for an agent run by hand.
Its URLs and each example's key are printed (``--json``); the example agent on the openai SDK,
pointed at example 2's session and gateway, plays its gold calls on the reference model; the
key of example 3 is refused on example 2's URL; Ctrl-C stops both and says what was answered."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
from helpers import HANG_GUARD_S, default_sigint
from test_gateway_agent_cmd import AGENT

from tooleval_agents import agent_io_for, examples_for
from tooleval_agents.mcp.log import read_log
from tooleval_agents.mcp.sessions import request_text


def test_serve_model_serves_each_example_its_own_gateway(samples: Path, tmp_path: Path) -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "tooleval_agents", "serve", "appbench", "--category", "ss",
         "--json", "--data-dir", str(samples), "--out", str(tmp_path), "--model", "reference"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    try:
        assert server.stdout is not None
        served = json.loads(server.stdout.readline() or "{}")
        assert served, server.communicate()
        gateway = served["gateway"]
        assert gateway["model"] == "reference" and len(gateway["examples"]) == 6
        two, three = gateway["examples"][2], gateway["examples"][3]
        assert two["api_key"] != three["api_key"] and two["index"] == 2
        inputs = dict(examples_for("appbench", subset="ss", data_dir=samples)[2].inputs or {})
        request = request_text(agent_io_for("appbench", subset="ss").messages(inputs))
        agent = subprocess.run(
            AGENT, shell=True, input=request, capture_output=True, text=True,
            timeout=HANG_GUARD_S, env={
                **os.environ, "TOOLEVAL_MCP_URL": served["url"].replace("<index>", "2"),
                "TOOLEVAL_MCP_TOKEN": served["sessions"][2]["key"], "TOOLEVAL_MODEL": "reference",
                "OPENAI_BASE_URL": two["openai_base_url"], "OPENAI_API_KEY": two["api_key"]})
        assert agent.returncode == 0, agent.stderr[-2000:]
        assert agent.stdout.strip() == "All requested calls are done."
        refused = httpx.post(f"{two['openai_base_url']}/chat/completions",
                             json={"model": "reference", "messages": [
                                 {"role": "user", "content": request}]},
                             headers={"authorization": f"Bearer {three['api_key']}"})
        assert refused.status_code == 401 and refused.json()["error"]["code"] == "invalid_api_key"
    finally:
        server.send_signal(signal.SIGINT)
        _, err = server.communicate(timeout=HANG_GUARD_S)
    assert server.returncode == 0, err
    said = re.search(r"model gateway: (\d+) model call\(s\) answered, tokens (\d+) in", err)
    assert said is not None and int(said[1]) >= 2 and int(said[2]) > 0, err[-2000:]
    calls = [r for r in read_log(tmp_path / "serve-appbench-plan-ss" / "mcp_calls.jsonl")
             if r["kind"] == "call"]
    assert calls and {r["session"] for r in calls} == {"2"}
