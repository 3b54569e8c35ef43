"""The command starts the same three ways: ``tooleval``, ``python -m tooleval_agents`` and
``python -m tooleval_agents.cli``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from helpers import HANG_GUARD_S

SCRIPT = Path(sys.executable).parent / "tooleval"


@pytest.mark.parametrize("command", [
    [sys.executable, "-m", "tooleval_agents"],
    [sys.executable, "-m", "tooleval_agents.cli"],
    [str(SCRIPT) if SCRIPT.exists() else (shutil.which("tooleval") or "tooleval")],
], ids=["-m tooleval_agents", "-m tooleval_agents.cli", "tooleval"])
def test_every_entry_point_is_the_same_command(command: list[str]) -> None:
    done = subprocess.run([*command, "list", "--json"], capture_output=True, text=True,
                          timeout=HANG_GUARD_S)
    assert done.returncode == 0, done.stderr
    assert '"benchmark": "appbench"' in done.stdout


def test_a_table_sent_to_a_pipe_keeps_its_headers(samples: Path, tmp_path: Path) -> None:
    # Off a terminal rich assumes 80 columns and cut "executed_success" to "executed_…".
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    args = [sys.executable, "-m", "tooleval_agents", "run", "appbench", "--category", "all",
            "--model", "reference", "--limit", "1", "--data-dir", str(samples),
            "--out", str(tmp_path)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=HANG_GUARD_S, env=env)
    assert done.returncode == 0, done.stderr
    assert "executed_success" in done.stdout and "tokens/example" in done.stdout
    assert "…" not in done.stdout
    narrow = subprocess.run(args, capture_output=True, text=True, timeout=HANG_GUARD_S,
                            env={**env, "COLUMNS": "80"})
    table = [line for line in narrow.stdout.splitlines() if line[:1] in "┏┃┡│└"]
    assert table and max(map(len, table)) <= 80  # COLUMNS still decides


def test_the_wider_output_lasts_as_long_as_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    # A command run in-process (as many tests do) must not leave its width to the next one.
    from tooleval_agents.cli.base import OFF_TERMINAL_WIDTH, console, run_cli

    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(sys, "argv", ["tooleval"])
    seen: list[int] = []
    command = typer.Typer()
    command.command()(lambda: seen.append(console.width))
    with pytest.raises(SystemExit) as done:
        run_cli(command)
    assert done.value.code == 0 and seen == [OFF_TERMINAL_WIDTH]
    monkeypatch.setenv("COLUMNS", "100")
    assert console.width == 100
