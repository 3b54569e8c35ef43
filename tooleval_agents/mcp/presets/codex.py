"""Codex CLI (npm ``@openai/codex``, 0.171) as a preset.

Per example it runs ``codex exec -`` (the request on standard input) with a fresh HOME and
``CODEX_HOME`` whose ``config.toml`` says:

* the model: a ``model_providers`` entry of its own whose ``base_url`` is the example's
  gateway URL and whose key is ``OPENAI_API_KEY`` (the example's), ``wire_api = "responses"``
  (Codex speaks the Responses API only), ``model`` the served name;
* the example's session: ``mcp_servers.bench`` with its ``url``, the bearer token read from
  ``TOOLEVAL_MCP_TOKEN`` (``bearer_token_env_var``: the token is in no file),
  ``default_tools_approval_mode = "approve"`` (its tools run without a prompt) and
  ``required = true`` (a server that fails to start fails the run instead of running it
  without tools); Codex lists its tools to the model as a ``namespace`` tool;
* quiet and offline: ``analytics.enabled = false`` (else it sends metrics to
  ``ab.chatgpt.com``), ``features.plugins = false`` (else it syncs its plugin catalogue from
  ``api.github.com`` and ``chatgpt.com``), ``check_for_update_on_startup = false`` (checked:
  it then resolves and connects to no outside host);
* its tools: the session's, with no shell (``features.shell_tool = false``), no web search
  (``web_search = "disabled"``), no sub-agents or goals.

``--json`` prints one event a line: each item (an ``agent_message`` is an answer, an
``mcp_tool_call`` a call), ``turn.completed`` with its ``usage``, ``turn.failed`` and
``error`` for what went wrong. A required MCP server that failed shows on standard error
("required MCP servers failed to initialize") and the process exits 1: here it is
``no_tools``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tooleval_agents.mcp.presets.base import (
    SERVER,
    Launch,
    Preset,
    Report,
    Served,
    environment,
)
from tooleval_agents.mcp.presets.events import events, integer

FLAGS = ("exec", "--json", "--skip-git-repo-check", "--ephemeral", "--ignore-rules",
         "--sandbox", "read-only", "--color", "never")
"""Its command line besides ``--cd`` and ``-`` (the prompt from standard input)."""
TOP = {"web_search": "disabled", "check_for_update_on_startup": False}
"""Top-level settings of its ``config.toml`` besides the model."""
TABLES: dict[str, dict[str, Any]] = {
    "analytics": {"enabled": False},
    "features": {"plugins": False, "shell_tool": False, "multi_agent": False, "goals": False},
}
"""Tables of its ``config.toml`` besides the model provider and the MCP server."""
PROVIDER = "tooleval"
NO_TOOLS = "required MCP servers failed to initialize"
"""What it says on standard error when its required MCP server did not start."""


def toml(tables: dict[str, dict[str, Any]], top: dict[str, Any]) -> str:
    """A ``config.toml`` of plain values (strings, booleans): keys written bare, strings as
    JSON strings, which TOML reads as its basic strings.

    >>> print(toml({"a.b": {"x": "1"}}, {"y": True}))
    y = true
    <BLANKLINE>
    [a.b]
    x = "1"
    <BLANKLINE>
    """
    def line(key: str, value: Any) -> str:
        return f"{key} = {json.dumps(value)}"

    out = [line(k, v) for k, v in top.items()]
    for name, table in tables.items():
        out += ["", f"[{name}]", *(line(k, v) for k, v in table.items())]
    return "\n".join(out) + "\n"


class Codex(Preset):
    """Codex CLI, ``codex exec`` (see the module docstring)."""

    name = "codex"
    program = "codex"
    install = "npm install -g @openai/codex"

    def launch(self, program: Path, work: Path, served: Served) -> Launch:
        home = work / "codex"
        home.mkdir(exist_ok=True)
        config = toml({**TABLES,
                       f"model_providers.{PROVIDER}": {
                           "name": "tooleval gateway", "base_url": served.openai_base_url,
                           "env_key": "OPENAI_API_KEY", "wire_api": "responses"},
                       f"mcp_servers.{SERVER}": {
                           "url": served.mcp_url, "bearer_token_env_var": "TOOLEVAL_MCP_TOKEN",
                           "default_tools_approval_mode": "approve", "required": True}},
                      {"model": served.model, "model_provider": PROVIDER, **TOP})
        (home / "config.toml").write_text(config, encoding="utf-8")
        cwd = work / "work"
        cwd.mkdir(exist_ok=True)
        env = environment({}, work / "home", served, {
            "CODEX_HOME": str(home), "OPENAI_BASE_URL": served.openai_base_url,
            "OPENAI_API_KEY": served.api_key})
        return Launch([str(program), *FLAGS, "--cd", str(cwd), "-"], env, cwd)

    def read(self, stdout: str, stderr: str) -> Report:
        report = Report()
        turns = 0
        usage = dict.fromkeys(("input_tokens", "output_tokens", "cached_input_tokens"), 0)
        for event in events(stdout, report):
            kind = event.get("type")
            raw = event.get("item")
            item: dict[str, Any] = raw if isinstance(raw, dict) else {}
            if kind == "item.completed" and item.get("type") == "agent_message":
                report.final = str(item.get("text") or "")
            elif kind == "turn.completed":
                turns += 1
                _add_usage(usage, event.get("usage"))
                report.usage = usage
            elif kind in ("turn.failed", "error"):
                error = event.get("error") if kind == "turn.failed" else event
                message = error.get("message") if isinstance(error, dict) else None
                report.error = str(message or kind)[:500]
        report.turns = turns
        said = next((line.strip() for line in stderr.splitlines() if NO_TOOLS in line), None)
        if said is not None:
            report.servers[SERVER] = "failed"
            report.no_tools = f"Codex: {said[:300]}"
        return report

    def settings(self) -> dict[str, Any]:
        return {"flags": list(FLAGS), "config": {**TABLES, "top": TOP},
                "mcp": {"default_tools_approval_mode": "approve", "required": True},
                "wire_api": "responses"}


def _add_usage(total: dict[str, int], usage: Any) -> None:
    if not isinstance(usage, dict):
        return
    for key in total:
        total[key] += integer(usage.get(key)) or 0


__all__ = ["FLAGS", "TABLES", "TOP", "Codex", "toml"]
