"""Claude Code (npm ``@anthropic-ai/claude-code``, 2.1.x) as a preset.

Per example it runs ``claude -p`` (the request on standard input) in a fresh HOME and working
folder, with:

* ``--mcp-config`` naming one HTTP server, the example's session, whose bearer token the
  configuration takes from ``TOOLEVAL_MCP_TOKEN`` (Claude Code expands ``${VAR}`` there: the
  token is in no file), and ``--strict-mcp-config`` (no other server);
* ``--allowedTools mcp__bench__*``: the session's tools run without a permission prompt;
  ``--tools ""``: none of its built-in tools (a shell, files, the web), so it works with the
  example's tools alone and its requests list those only;
* ``--output-format stream-json --verbose``: one JSON event a line -- the ``init`` event with
  each MCP server's ``status``, each message, and the ``result`` with the final text,
  ``num_turns`` and its own ``usage``;
* ``--setting-sources ""`` and ``--no-session-persistence``: no settings file of the user's,
  nothing kept;
* the model: ``ANTHROPIC_BASE_URL`` and ``ANTHROPIC_API_KEY`` of the example's gateway grant,
  ``--model`` the served name; ``ENABLE_TOOL_SEARCH=false`` (else MCP tools are deferred
  behind a ``ToolSearch`` tool and the request lists none of them);
  ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`` and ``DISABLE_TELEMETRY=1``: no update check,
  telemetry or error report (checked: it then connects to 127.0.0.1 only).

An MCP server that failed to connect (a wrong token, a closed session) shows only in the
``init`` event: Claude Code then runs without tools and exits 0; here it is ``no_tools``.
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

FLAGS = ("-p", "--output-format", "stream-json", "--verbose", "--strict-mcp-config",
         "--allowedTools", f"mcp__{SERVER}__*", "--tools", "", "--setting-sources", "",
         "--no-session-persistence")
"""Its command line besides ``--mcp-config`` and ``--model``."""
ENV = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
       "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
       "ENABLE_TOOL_SEARCH": "false"}
"""Its environment besides HOME, the example's variables and the gateway's."""


class ClaudeCode(Preset):
    """Claude Code, ``claude -p`` (see the module docstring)."""

    name = "claude-code"
    program = "claude"
    install = "npm install -g @anthropic-ai/claude-code"

    def launch(self, program: Path, work: Path, served: Served) -> Launch:
        config = work / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {SERVER: {
            "type": "http", "url": served.mcp_url,
            "headers": {"Authorization": "Bearer ${TOOLEVAL_MCP_TOKEN}"}}}}), encoding="utf-8")
        cwd = work / "work"
        cwd.mkdir(exist_ok=True)
        env = environment({}, work / "home", served, {
            **ENV, "ANTHROPIC_BASE_URL": served.anthropic_base_url,
            "ANTHROPIC_API_KEY": served.api_key})
        return Launch([str(program), *FLAGS, "--mcp-config", str(config), "--model",
                       served.model], env, cwd)

    def read(self, stdout: str, stderr: str) -> Report:
        report = Report()
        for event in events(stdout, report):
            kind = event.get("type")
            if kind == "system" and event.get("subtype") == "init":
                _servers(event, report)
            elif kind == "result":
                _result(event, report)
        return report

    def settings(self) -> dict[str, Any]:
        return {"flags": list(FLAGS), "env": ENV}


def _servers(init: dict[str, Any], report: Report) -> None:
    """Each MCP server's state; the example's not connected: it never had its tools."""
    for server in init.get("mcp_servers") or []:
        if isinstance(server, dict) and isinstance(server.get("name"), str):
            report.servers[server["name"]] = str(server.get("status"))
    status = report.servers.get(SERVER)
    if status != "connected":
        report.no_tools = (f"Claude Code reports its MCP server {SERVER!r} as "
                           f"{status or 'absent'} (its init event)")


def _result(result: dict[str, Any], report: Report) -> None:
    """The final text, turns and usage of the ``result`` event (an error result's text is
    its error, not an answer)."""
    text = result.get("result")
    if result.get("is_error") is True or result.get("subtype") not in (None, "success"):
        report.error = str(text or result.get("subtype") or "an error result")[:500]
    elif isinstance(text, str):
        report.final = text
    report.turns = integer(result.get("num_turns"))
    usage = result.get("usage")
    if isinstance(usage, dict):
        tokens_in, cached = integer(usage.get("input_tokens")), integer(
            usage.get("cache_read_input_tokens"))
        report.usage = {"input_tokens": (tokens_in or 0) + (cached or 0),
                        "output_tokens": integer(usage.get("output_tokens")) or 0,
                        "cached_input_tokens": cached or 0}


__all__ = ["ENV", "FLAGS", "ClaudeCode"]
