"""A client we did not write: the official MCP Inspector's command-line mode drives
``tooleval serve`` over streamable HTTP -- it lists the tools, then makes a ``tools/call``.

The Inspector (npm ``@modelcontextprotocol/inspector``, version 2: ``mcp-inspector --cli URL
--transport http --header ... --method ...``) needs Node.js 22.19 or newer. The test finds it
at ``TOOLEVAL_MCP_INSPECTOR`` (its ``mcp-inspector`` script) run by ``TOOLEVAL_NODE`` (default:
``node`` on the PATH), else ``mcp-inspector`` on the PATH; it skips with the reason where either
is missing, and fails instead where ``TOOLEVAL_REQUIRE_MCP_INSPECTOR`` is set (``.ci/run``
installs both and sets it).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import HANG_GUARD_S, default_sigint

from tooleval_agents.mcp.log import read_log

REQUIRE = os.environ.get("TOOLEVAL_REQUIRE_MCP_INSPECTOR", "") not in ("", "0")
NEEDED = (22, 19)


def inspector() -> list[str]:
    """The command that runs the Inspector, or a skip (a failure when it is required)."""
    node = os.environ.get("TOOLEVAL_NODE") or shutil.which("node")
    script = os.environ.get("TOOLEVAL_MCP_INSPECTOR") or shutil.which("mcp-inspector")
    why = None
    if node is None:
        why = "node is not installed (the MCP Inspector runs on Node.js)"
    elif script is None:
        why = ("the MCP Inspector is not installed: npm install @modelcontextprotocol/inspector, "
               "then TOOLEVAL_MCP_INSPECTOR=<its node_modules/.bin/mcp-inspector>")
    else:
        version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout
        found = tuple(int(x) for x in version.strip().lstrip("v").split(".")[:2])
        if found < NEEDED:
            why = (f"node {version.strip()} is older than the MCP Inspector 2 needs (22.19): "
                   "TOOLEVAL_NODE=<a newer node>")
    if why is not None:
        if REQUIRE:
            pytest.fail(f"TOOLEVAL_REQUIRE_MCP_INSPECTOR is set but {why}")
        pytest.skip(why)
    assert node is not None and script is not None
    return [node, script]


def test_the_mcp_inspector_lists_the_tools_and_calls_one(samples: Path, tmp_path: Path) -> None:
    command = inspector()
    server = subprocess.Popen(
        [sys.executable, "-m", "tooleval_agents", "serve", "appbench", "--category", "ss",
         "--json", "--data-dir", str(samples), "--out", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    try:
        assert server.stdout is not None
        served = json.loads(server.stdout.readline() or "{}")
        assert served, server.communicate()
        example = served["sessions"][2]  # its URL and its own key
        target = [example["url"], "--transport", "http",
                  "--header", f"Authorization: Bearer {example['key']}"]

        def inspect(*args: str) -> object:
            done = subprocess.run([*command, "--cli", *target, *args], capture_output=True,
                                  text=True, timeout=HANG_GUARD_S)
            assert done.returncode == 0, done.stderr[-2000:]
            return json.loads(done.stdout)

        listed = inspect("--method", "tools/list")
        called = inspect("--method", "tools/call", "--tool-name", "Weather__getweather",
                         "--tool-arg", "city=Paris")
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=HANG_GUARD_S)
    names = [t["name"] for t in listed["tools"]]  # type: ignore[index]
    assert len(names) == 33 and "Weather__getweather" in names
    assert called["isError"] is False  # type: ignore[index]
    assert json.loads(called["content"][0]["text"])["city"] == "Paris"  # type: ignore[index]
    assert server.returncode == 0  # Ctrl-C stops it cleanly
    log = list(read_log(tmp_path / "serve-appbench-plan-ss" / "mcp_calls.jsonl"))
    assert [(r["session"], r["tool"], r["arguments"]) for r in log if r["kind"] == "call"] == [
        ("2", "Weather__getweather", {"city": "Paris"})]
