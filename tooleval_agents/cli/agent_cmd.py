"""``tooleval run --agent-cmd`` and ``--agent-preset``'s options: what they allow with the
others, the runs' models, and what an agent command that failed on every example is told
(:mod:`tooleval_agents.mcp.external`, :mod:`tooleval_agents.mcp.presets`; docs/mcp.md)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from tooleval_agents.mcp.presets import PresetMissing, preset_named, resolve
from tooleval_agents.mcp.sandbox import AgentSandbox, check_sandbox, check_workdir
from tooleval_agents.results.rundir import RunDir
from tooleval_agents.results.summary import NO_TOOLS


def command_settings(agent_cmd: str | None, agent_name: str | None, agent_timeout: float,
                     agent_version: str | None = None, agents: list[str] | None = None,
                     sealed: AgentSandbox | None = None, agent_preset: str | None = None,
                     agent_bin: str | None = None,
                     models: list[str] | None = None) -> dict[str, Any]:
    """The run settings of an agent command or preset (none without either), and
    ``--agent-version`` (of an agent command or an ``--agent``); a preset's program is found
    and run (its version) now, once its other options hold.

    Raises:
        ValueError: ``--agent-name`` without either, an empty command or version, both,
            ``--agent-version`` without an agent command or ``--agent`` (a preset's version
            is its program's), ``--agent-bin`` without a preset, an unknown preset, a preset
            without ``--model``, or its program missing (the message says how to install it).
    """
    if agent_bin is not None and agent_preset is None:
        raise ValueError("--agent-bin is a preset's program: give --agent-preset")
    version: dict[str, Any] = {}
    if agent_version is not None:
        if not agent_version.strip():
            raise ValueError("--agent-version is empty")
        if agent_cmd is None and not agents:
            raise ValueError("--agent-version is the version of an agent: give --agent-cmd "
                             "or --agent (a preset's version is its program's)")
        version = {"agent_version": agent_version}
    if agent_preset is not None:
        if agent_cmd is not None:
            raise ValueError("give --agent-cmd (a command) or --agent-preset (an agent the "
                             "harness wires), not both")
        models_of(models, None, None, None, agent_preset)
        try:
            found = resolve(preset_named(agent_preset), agent_bin)
        except PresetMissing as exc:
            raise ValueError(str(exc)) from None
        return {"agent_preset": agent_preset, "agent_bin": str(found.program),
                "agent_name": agent_name, "agent_timeout": agent_timeout}
    if agent_cmd is None:
        if agent_name is not None:
            raise ValueError("--agent-name names an agent command: give --agent-cmd")
        return version
    if not agent_cmd.strip():
        raise ValueError("--agent-cmd is empty")
    return {"agent_cmd": agent_cmd, "agent_name": agent_name, "agent_timeout": agent_timeout,
            "agent_sandbox": sealed or False, **version}


def sandbox_of(agent_cmd: str | None, sandbox: bool, hosts: list[str] | None,
               read: list[Path] | None) -> AgentSandbox | None:
    """The agent sandbox asked for (``None``: unsealed), checked before anything runs: it can
    be made here, and shows the agent nothing of the user's home.

    Raises:
        ValueError: ``--agent-sandbox`` without ``--agent-cmd``; ``--agent-host`` or
            ``--agent-read`` without ``--agent-sandbox``; a bad host;
            :class:`~tooleval_agents.mcp.sandbox.SandboxUnavailable`: no sandbox here (the
            fix said).
    """
    opened = "--agent-host" if hosts else "--agent-read" if read else None
    if not sandbox:
        if opened:
            raise ValueError(f"{opened} opens the agent sandbox: give --agent-sandbox")
        return None
    if agent_cmd is None:
        raise ValueError("--agent-sandbox seals an agent command: give --agent-cmd")
    sealed = AgentSandbox(hosts=tuple(hosts or ()), read=tuple(read or ()))
    check_sandbox()
    check_workdir(Path.cwd(), sealed)
    return sealed


def models_of(models: list[str] | None, agent_cmd: str | None, agents: list[str] | None,
              model_args: list[str] | None, agent_preset: str | None = None
              ) -> list[str | None]:
    """The runs' models (their specs are checked with the rest of the grid); with
    ``--agent-cmd``, the model the gateway serves the agent (none: it brings its own); with
    ``--agent-preset``, the model the gateway serves it (required)."""
    if agent_preset is not None:
        if agents:
            raise ValueError("give --agent (a factory run in the process) or --agent-preset, "
                             "not both")
        if not models:
            raise ValueError(f"--agent-preset {agent_preset} runs on the run's model, served "
                             "to it by the gateway: give --model (e.g. --model reference)")
        return list(dict.fromkeys(models))
    if agent_cmd is None:
        if not models:
            raise ValueError("give --model (or --agent-cmd: an agent that brings its own)")
        return list(dict.fromkeys(models))
    if agents:
        raise ValueError("give --agent (a factory run in the process) or --agent-cmd (a "
                         "command), not both")
    if model_args and not models:
        raise ValueError("--model-arg configures the model the harness serves (give "
                         "--model): an agent command that brings its own configures it")
    return list(dict.fromkeys(models)) if models else [None]


def command_failures(row: dict[str, Any]) -> str | None:
    """What to say when every example of a run ended in ``agent_error`` and an agent command
    played it (exit 1: it failed on each, nothing of it was measured); ``None``: no command
    played the run."""
    run_dir = RunDir(row["run_dir"])
    if run_dir.read_config().agent_cmd is None:
        return None
    kinds = Counter(r.error_kind or "unknown" for r in run_dir.results().values()
                    if r.status == "agent_error")
    said = ", ".join(f"{k} {n}" for k, n in kinds.most_common())
    if set(kinds) == {NO_TOOLS}:
        return (f"the agent never reached its tools on any example ({said}): its MCP "
                f"connection failed (a wrong URL or token?), so nothing of it was measured. "
                f"See each error in {row['run_dir']}/examples.jsonl")
    return (f"the agent command failed on every example ({said}): nothing of it was measured. "
            f"Run it by hand on one example (tooleval serve), and see each error in "
            f"{row['run_dir']}/examples.jsonl")
