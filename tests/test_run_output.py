"""What ``tooleval run`` says when it ends: a resume's stored results told apart from this
session's work, examples told apart from attempts with ``--epochs``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.cli.run_output import counts_line, session_line

DATA = Path(__file__).resolve().parents[1] / "datasets"


@pytest.fixture(autouse=True)
def _wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # one line per message, whatever the terminal


def run(out: Path, *args: str) -> Any:
    result = CliRunner().invoke(app, [
        "run", "appbench", "--task", "plan", "--subset", "ss", "--model", "reference",
        "--data-dir", str(DATA), "--out", str(out), "--no-cache", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_a_resume_counts_this_sessions_work_apart_from_the_stored(tmp_path: Path) -> None:
    first = run(tmp_path, "--limit", "3")
    assert "resumed" not in first  # a new run: every count is this session's
    assert "model calls: 6, cache hits: 0;" in first
    again = run(tmp_path, "--limit", "3")
    assert "resumed 3, ran 0 new, 0 errors; this session: model calls 0, cache hits 0" in again
    assert "model calls: 6, cache hits: 0 (all sessions)" in again
    more = run(tmp_path, "--limit", "5")
    assert "resumed 3, ran 2 new, 0 errors; this session: model calls 4, cache hits 0" in more
    assert "model calls: 10, cache hits: 0 (all sessions)" in more


def test_epochs_tell_examples_from_attempts(tmp_path: Path) -> None:
    output = run(tmp_path, "--limit", "5", "--epochs", "3")
    assert "5 examples × 3 epochs = 15 attempts, scored=15" in output
    assert "examples=15" not in output and "epochs=3" not in output


def test_the_lines_from_a_row() -> None:
    row: dict[str, Any] = {"counts": {"examples": 8, "scored": 7, "epochs": 2},
                           "epochs": {"n": 2}}
    assert counts_line(row) == "4 examples × 2 epochs = 8 attempts, scored=7"
    assert counts_line({"counts": {"examples": 4, "scored": 4}}) == "examples=4, scored=4"
    assert session_line({"session": {"resumed": 0, "ran": 4}}) == ""
    said = session_line({"session": {"resumed": 2, "ran": 2, "errors": 1, "model_calls": 5,
                                     "cache_hits": 1}})
    assert said == "resumed 2, ran 2 new, 1 error; this session: model calls 5, cache hits 1"
