"""The OpenAI Agents SDK (PyPI ``openai-agents``) as a preset: ``examples/openai_agents_sdk.py``
run by a Python that has the SDK.

The SDK is a library, not a program: its agent is the example's few lines (an ``Agent`` with
the example's session as its ``MCPServerStreamableHttp``, on an ``AsyncOpenAI`` client that
reads ``OPENAI_BASE_URL`` -- the gateway -- through ``OpenAIResponsesModel``, tracing off). The
preset runs that file with ``--json`` in a fresh HOME and working folder, and reads the one
JSON object it prints (final answer, turns, the SDK's own usage) or, when its MCP session did
not open, the one it prints on standard error (``no_tools``). Its program is the Python that
runs it (default: this one); its version is the SDK's there, and the file's digest is part of
the run's identity with it.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

from tooleval_agents.mcp.presets.base import (
    Launch,
    Preset,
    PresetMissing,
    Report,
    Served,
    environment,
    version_of,
)
from tooleval_agents.mcp.presets.events import events, integer

SCRIPT = "openai_agents_sdk.py"
"""The example that is the agent (``examples/`` of a checkout, ``tooleval_agents/examples/``
of an installed package)."""
FLAGS = ("--json",)
ENV = {"OPENAI_AGENTS_DISABLE_TRACING": "1"}
"""Tracing off (the example turns it off too): the SDK would send its traces to OpenAI."""
_PACKAGE = Path(__file__).resolve().parents[2]


def script() -> Path:
    """The example's file.

    Raises:
        PresetMissing: neither an installed package nor a checkout has it.
    """
    for folder in (_PACKAGE / "examples", _PACKAGE.parent / "examples"):
        if (folder / SCRIPT).is_file():
            return folder / SCRIPT
    raise PresetMissing(f"--agent-preset openai-agents: its agent, examples/{SCRIPT}, is "
                        "neither in the installed package nor beside it")


class OpenAIAgents(Preset):
    """The Agents SDK's example agent (see the module docstring)."""

    name = "openai-agents"
    program = "python"
    install = "pip install 'tooleval-agents[openai-agents]'"

    def default_program(self, path: str | None = None) -> str | None:
        return sys.executable or None

    def version(self, program: Path) -> str:
        script()  # a missing agent file is said before anything runs
        return version_of(program, [str(program), "-c", "import importlib.metadata as m; "
                                    "print(m.version('openai-agents'))"],
                          f"; install the SDK for it: {program} -m pip install openai-agents")

    def launch(self, program: Path, work: Path, served: Served) -> Launch:
        cwd = work / "work"
        cwd.mkdir(exist_ok=True)
        env = environment({}, work / "home", served, {
            **ENV, "OPENAI_BASE_URL": served.openai_base_url,
            "OPENAI_API_KEY": served.api_key})
        return Launch([str(program), str(script()), *FLAGS], env, cwd)

    def read(self, stdout: str, stderr: str) -> Report:
        report = Report()
        for said in events(stdout, report):
            if isinstance(said.get("final"), str):
                report.final = said["final"]
                report.turns = integer(said.get("turns"))
                report.servers["bench"] = str(said.get("mcp"))
                raw = said.get("usage")
                usage: dict[str, Any] = raw if isinstance(raw, dict) else {}
                report.usage = {k: integer(usage.get(k)) or 0 for k in
                                ("input_tokens", "output_tokens", "cached_input_tokens")}
        for said in events(stderr, Report()):  # its MCP session did not open
            if said.get("mcp") == "failed":
                report.servers["bench"] = "failed"
                report.no_tools = (f"its MCP session did not open "
                                   f"({str(said.get('error'))[:300]})")
        return report

    def settings(self) -> dict[str, Any]:
        return {"script": SCRIPT, "digest": hashlib.sha256(script().read_bytes()).hexdigest(),
                "flags": list(FLAGS), "env": ENV}


__all__ = ["FLAGS", "SCRIPT", "OpenAIAgents", "script"]
