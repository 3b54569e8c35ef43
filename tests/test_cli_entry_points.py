"""The command starts the same three ways: ``tooleval``, ``python -m tooleval_agents`` and
``python -m tooleval_agents.cli``."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).parent / "tooleval"


@pytest.mark.parametrize("command", [
    [sys.executable, "-m", "tooleval_agents"],
    [sys.executable, "-m", "tooleval_agents.cli"],
    [str(SCRIPT) if SCRIPT.exists() else (shutil.which("tooleval") or "tooleval")],
], ids=["-m tooleval_agents", "-m tooleval_agents.cli", "tooleval"])
def test_every_entry_point_is_the_same_command(command: list[str]) -> None:
    done = subprocess.run([*command, "list", "--json"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert '"benchmark": "appbench"' in done.stdout
