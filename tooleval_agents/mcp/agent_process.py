"""How the harness starts an agent command so that nothing of it outlives its example, nor
the harness.

* **Sealed** (``--agent-sandbox``): ``bwrap`` (:mod:`tooleval_agents.mcp.sandbox`): its PID
  namespace ends every process the agent started once the agent's process ends, and
  ``--die-with-parent`` ends the sandbox with the harness.
* **Unsealed**, on Linux: a per-agent reaper (``launch.py reap``, :mod:`tooleval_agents.mcp.
  launch`) runs the command as a child subreaper: a process that left the agent's process
  group (``setsid``) still ends with the example, and its parent-death signal ends the agent
  when the harness is killed (``kill -9``). The subreaper setting is the reaper's own: the
  harness's process is left as it was (a library changes no process-wide setting).
* Elsewhere: the command's process group, as before (a process that leaves it runs on).

Each agent's environment holds :data:`HARNESS_ENV`, the harness's PID: a run that takes over
the lock of a harness that was killed finds what of it still runs (:func:`left_running`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from pathlib import Path

from tooleval_agents.mcp.sandbox import LAUNCHER

HARNESS_ENV = "TOOLEVAL_HARNESS_PID"
"""Set in every agent's environment: the PID of the harness that started it."""


def reaps() -> bool:
    """Whether unsealed agents run under the per-agent reaper here (Linux, with an
    interpreter to run it)."""
    return sys.platform.startswith("linux") and bool(sys.executable)


def unsealed_argv(command: str, grace: float) -> list[str]:
    """How an unsealed agent command is started: under the reaper (``grace``: seconds between
    its ``SIGTERM`` and ``SIGKILL`` on a timeout), or a plain shell where there is none."""
    shell = ["/bin/sh", "-c", command]
    if not reaps():
        return shell
    return [sys.executable, "-I", "-S", str(LAUNCHER), "reap", str(os.getpid()), f"{grace:g}",
            "--", *shell]


def left_running(harness: int) -> list[int]:
    """The live processes whose environment names ``harness`` as theirs (:data:`HARNESS_ENV`):
    what a killed harness's agents left (Linux; elsewhere none can be found)."""
    marker = f"{HARNESS_ENV}={harness}".encode()
    found = []
    proc = Path("/proc")
    if not proc.is_dir():
        return []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):  # ended, or another user's
            continue
        if state != b"Z" and marker in environ.split(b"\0"):
            found.append(int(entry.name))
    return sorted(found)


def end_all(pids: list[int]) -> None:
    """``SIGKILL`` each of ``pids`` that still runs."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


__all__ = ["HARNESS_ENV", "end_all", "left_running", "reaps", "unsealed_argv"]
