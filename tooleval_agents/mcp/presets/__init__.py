"""The agents people use, prewired: ``tooleval run ... --agent-preset NAME --model SPEC``.

A preset runs a known agent program once per example, as an agent command does
(:mod:`tooleval_agents.mcp.external`), but wired by the harness: its configuration points it
at the example's MCP session and, through the model gateway, at the run's model; it runs in a
fresh HOME and working folder with an environment of its own, quiet and offline (it reaches
127.0.0.1 only); its structured output is read for its final answer, its turns, its own token
usage (a cross-check of the gateway's count) and whether its MCP server connected. Its
version is part of the run's identity.

==================  ==============================================  ===========================
preset              program                                         module
==================  ==============================================  ===========================
``claude-code``     ``claude`` (npm ``@anthropic-ai/claude-code``)  :mod:`.claude_code`
``codex``           ``codex`` (npm ``@openai/codex``)               :mod:`.codex`
``openai-agents``   a Python with PyPI ``openai-agents`` running    :mod:`.openai_agents`
                    ``examples/openai_agents_sdk.py``
==================  ==============================================  ===========================
"""

from __future__ import annotations

from tooleval_agents.mcp.presets.base import (
    Launch,
    Preset,
    PresetMissing,
    Report,
    Resolved,
    Served,
    resolve,
)
from tooleval_agents.mcp.presets.claude_code import ClaudeCode
from tooleval_agents.mcp.presets.codex import Codex
from tooleval_agents.mcp.presets.openai_agents import OpenAIAgents

PRESETS: dict[str, Preset] = {p.name: p for p in (ClaudeCode(), Codex(), OpenAIAgents())}
"""Every preset, by name."""


def preset_named(name: str) -> Preset:
    """The preset called ``name``.

    Raises:
        ValueError: there is none (the message lists them).
    """
    found = PRESETS.get(name)
    if found is None:
        raise ValueError(f"no agent preset {name!r}; presets: {', '.join(PRESETS)}")
    return found


__all__ = ["PRESETS", "Launch", "Preset", "PresetMissing", "Report", "Resolved", "Served",
           "preset_named", "resolve"]
