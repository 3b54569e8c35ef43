"""What a preset is: an agent people use (a command-line program), how it is started for one
example, and how its structured output is read.

A :class:`Preset` knows its program (found on the PATH, or given), how to ask it its version,
the files and environment that wire it to the example's MCP session and to the model gateway
(:meth:`Preset.launch`), and how to read what it printed (:meth:`Preset.read`): its final
answer, its turns, its own token usage and whether its MCP server connected.
:func:`resolve` finds the program and its version once per run (:class:`Resolved`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tooleval_agents.errors import ToolevalError

SERVER = "bench"
"""The name the example's MCP server has in a preset's configuration (its tools are
``mcp__bench__<name>`` to Claude Code and Codex)."""
VERSION_TIMEOUT_S = 60.0
"""Seconds ``<program> --version`` may take."""
KEPT_ENV = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ", "TERM")
"""The variables of the harness's environment a preset's agent keeps; everything else it gets
is set for it (its own HOME, the example's session and model). A variable of the user's own
setup (``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``, ``OTEL_*``, a proxy, a provider's key) would
change what is measured or where it goes."""


class PresetMissing(ToolevalError):
    """A preset's program cannot be found or run (said with the command that installs it)."""


@dataclass(frozen=True)
class Launch:
    """How one example's agent process starts."""

    argv: list[str]
    """The program and its arguments."""
    env: dict[str, str]
    """Its whole environment."""
    cwd: Path
    """Its working directory (fresh per example: no project file of the user's is read)."""


@dataclass
class Report:
    """What a preset's agent said about its run, read from its structured output."""

    final: str | None = None
    """Its final answer (``None``: its output held none)."""
    turns: int | None = None
    """The turns it counted (``None``: it does not say)."""
    usage: dict[str, int] | None = None
    """Its own token usage (``input_tokens``, ``output_tokens``, ``cached_input_tokens``):
    a cross-check of what the gateway counted (``None``: it reported none)."""
    servers: dict[str, str] = field(default_factory=dict)
    """Its MCP servers' states as it reported them (``connected``, ``failed``...)."""
    no_tools: str | None = None
    """Why it never had its tools (its MCP server failed to connect); ``None``: it said
    nothing of the kind."""
    error: str | None = None
    """An error it reported about its run (``None``: none)."""
    unread: int = 0
    """Lines of its output that were not events it could be read from."""

    def record(self) -> dict[str, Any]:
        """The trace's record of it (besides the final answer, which is the example's)."""
        out: dict[str, Any] = {"turns": self.turns, "mcp_servers": self.servers}
        if self.usage is not None:
            out["agent_usage"] = self.usage
        if self.error is not None:
            out["agent_error"] = self.error
        if self.unread:
            out["unread_lines"] = self.unread
        return out


@dataclass(frozen=True)
class Served:
    """What one example hands its agent: its MCP session and the gateway's model."""

    mcp_url: str
    model: str
    """The model name to send (the gateway serves one)."""
    openai_base_url: str
    anthropic_base_url: str
    api_key: str
    """The example's key at the gateway."""
    variables: dict[str, str]
    """The ``TOOLEVAL_*`` variables of an agent command (``TOOLEVAL_MCP_TOKEN`` among them:
    a preset's configuration names the variable, never writes the token to a file)."""


class Preset(ABC):
    """An agent people use, wired by the harness (see the module docstring)."""

    name: str
    """The preset's name (``--agent-preset``; the run's agent name by default)."""
    program: str
    """Its program's name on the PATH."""
    install: str
    """The command that installs it."""

    def default_program(self, path: str | None = None) -> str | None:
        """Its program when none is given: :attr:`program` on the PATH (``None``: none)."""
        return shutil.which(self.program, path=path)

    def version(self, program: Path) -> str:
        """Its version, as ``<program> --version`` prints it (the first number in it)."""
        return version_of(program, [str(program), "--version"])

    @abstractmethod
    def launch(self, program: Path, work: Path, served: Served) -> Launch:
        """Its process for one example, its configuration written under ``work`` (a fresh
        folder of the example's, removed afterwards)."""

    @abstractmethod
    def read(self, stdout: str, stderr: str) -> Report:
        """What it printed, read (total: any text gives a report)."""

    @abstractmethod
    def settings(self) -> dict[str, Any]:
        """What of its wiring changes what it does (flags, configuration): part of the run's
        identity, with its version."""


@dataclass(frozen=True)
class Resolved:
    """A preset with its program found and its version read (once per run)."""

    preset: Preset
    program: Path
    version: str

    def identity(self) -> dict[str, Any]:
        """What the run's identity knows of it (its program's path is not part of it: the
        same version elsewhere is the same agent)."""
        return {"name": self.preset.name, "version": self.version,
                "settings": self.preset.settings()}

    def describe(self) -> str:
        """One line: the preset, its version and program."""
        return f"{self.preset.name} {self.version} ({self.program})"


def environment(env: dict[str, str], home: Path, served: Served,
                extra: dict[str, str]) -> dict[str, str]:
    """A preset's environment: :data:`KEPT_ENV` of ``env``, its own HOME and temporary folder,
    the example's variables and ``extra``."""
    kept = {k: v for k, v in env.items() if k in KEPT_ENV}
    tmp = home / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    return {**kept, "HOME": str(home), "TMPDIR": str(tmp), "NO_PROXY": "127.0.0.1,localhost",
            **served.variables, **extra}


def find_program(preset: Preset, given: str | Path | None,
                 path: str | None = None) -> Path:
    """The preset's program: ``given`` (a path, or a name on the PATH), else its name on the
    PATH.

    Raises:
        PresetMissing: not found, or not executable (the message says how to install it).
    """
    hint = f"install it with: {preset.install} (or give its path: --agent-bin PATH)"
    if given is not None:
        found = shutil.which(str(given), path=path) if os.sep not in str(given) else str(given)
        target = Path(found) if found else None
        if target is None or not target.is_file() or not os.access(target, os.X_OK):
            raise PresetMissing(f"--agent-preset {preset.name}: {given} is not an executable "
                                f"program; {hint}")
        return target.absolute()
    found = preset.default_program(path)
    if found is None:
        raise PresetMissing(f"--agent-preset {preset.name}: {preset.program} is not on the "
                            f"PATH; {hint}")
    return Path(found).absolute()


def version_of(program: Path, argv: list[str], hint: str = "") -> str:
    """The first version number ``argv`` prints (``2.1.337`` of ``2.1.337 (Claude Code)``).

    Raises:
        PresetMissing: it did not run, failed, or printed no version (``hint`` added).
    """
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=VERSION_TIMEOUT_S,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PresetMissing(f"{program} did not run ({' '.join(argv[1:])}): {exc}") from None
    words = (done.stdout or "").split()
    number = next((w for w in words if w[:1].isdigit() and "." in w), None)
    if done.returncode != 0 or number is None:
        said = (done.stderr or done.stdout or "").strip().splitlines()[-1:] or ["nothing"]
        raise PresetMissing(f"{program} {' '.join(argv[1:])} gave no version (exit "
                            f"{done.returncode}: {said[0][:200]}){hint}")
    return number


def resolve(preset: Preset, given: str | Path | None = None) -> Resolved:
    """The preset's program and version (:func:`find_program`, :meth:`Preset.version`).

    Raises:
        PresetMissing: the program cannot be found or run.
    """
    program = find_program(preset, given)
    return Resolved(preset, program, preset.version(program))


__all__ = ["KEPT_ENV", "SERVER", "Launch", "Preset", "PresetMissing", "Report", "Resolved",
           "Served", "environment", "find_program", "resolve", "version_of"]
