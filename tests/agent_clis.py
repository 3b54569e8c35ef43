"""The agent programs of the presets' tests (Claude Code, Codex, a Python with the OpenAI
Agents SDK) and strace, found or skipped.

Each program is found at its variable (``TOOLEVAL_CLAUDE_CODE``: the ``claude`` program,
``TOOLEVAL_CODEX``: the ``codex`` program), else on the PATH; the Agents SDK's is this Python
when it has ``openai-agents`` (the ``openai-agents`` extra). Where one is missing its tests
skip with the reason (and the command that installs it); ``TOOLEVAL_REQUIRE_AGENT_CLIS``
(``.ci/run`` installs them all, and strace, and sets it) makes that a failure.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import stat
import sys
from pathlib import Path

import pytest

from tooleval_agents.mcp.presets import PRESETS

REQUIRE = os.environ.get("TOOLEVAL_REQUIRE_AGENT_CLIS", "") not in ("", "0")
VARIABLES = {"claude-code": "TOOLEVAL_CLAUDE_CODE", "codex": "TOOLEVAL_CODEX"}
"""The variable naming each preset's program."""


def _missing(why: str) -> None:
    if REQUIRE:
        pytest.fail(f"TOOLEVAL_REQUIRE_AGENT_CLIS is set but {why}")
    pytest.skip(why)


def agent_program(preset: str) -> Path:
    """The preset's program, or a skip (a failure where it is required)."""
    if preset == "openai-agents":
        if importlib.util.find_spec("agents") is None:
            _missing("the OpenAI Agents SDK is not installed (pip install -e "
                     "'.[openai-agents]')")
        return Path(sys.executable)
    variable = VARIABLES[preset]
    found = os.environ.get(variable) or shutil.which(PRESETS[preset].program)
    if not found or not Path(found).is_file():
        _missing(f"{preset}'s program is not installed ({PRESETS[preset].install}, or "
                 f"{variable}=<its program>)")
    return Path(str(found)).absolute()


def strace() -> Path:
    """strace, or a skip (a failure where the agent programs are required)."""
    found = shutil.which("strace")
    if found is None:
        _missing("strace is not installed (apt-get install strace)")
    return Path(str(found))


def traced(program: Path, folder: Path) -> Path:
    """A program that runs ``program`` under ``strace -f``, its network system calls written
    to ``folder`` (one file per run): a preset takes it as ``--agent-bin``."""
    wrapper = folder / "traced-agent"
    wrapper.write_text(f"#!/bin/sh\nexec {strace()} -f -qq -e trace=connect,sendto,sendmsg "
                       f"-o {folder}/trace.$$ {program} \"$@\"\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return wrapper


def wrong_token(program: Path, folder: Path) -> Path:
    """A program that runs ``program`` with another MCP token than the example's (the
    presets read it from ``TOOLEVAL_MCP_TOKEN``)."""
    wrapper = folder / "wrong-token-agent"
    wrapper.write_text(f"#!/bin/sh\nTOOLEVAL_MCP_TOKEN=not-this-examples exec {program} "
                       "\"$@\"\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return wrapper


_INET = re.compile(r"connect\(\d+, \{sa_family=AF_INET6?, sin6?_port=htons\((\d+)\), "
                   r"(?:sin_addr=inet_addr\(\"([^\"]+)\"\)|inet_pton\(AF_INET6, \"([^\"]+)\")")
_DNS = re.compile(r"(sendto|sendmsg)\(.*htons\(53\)")


def outside_reached(folder: Path) -> tuple[list[str], int]:
    """What the traced programs reached beyond the loopback (``address:port`` of each
    connect), and how many datagrams they sent to a DNS port; also how many trace files."""
    reached: list[str] = []
    files = sorted(folder.glob("trace.*"))
    for path in files:
        text = path.read_text(errors="replace")
        for port, v4, v6 in _INET.findall(text):
            address = v4 or v6
            if address not in ("127.0.0.1", "::1", "::ffff:127.0.0.1"):
                reached.append(f"{address}:{port}")
        reached += [f"DNS query ({m.group(1)})" for m in _DNS.finditer(text)]
    return reached, len(files)
