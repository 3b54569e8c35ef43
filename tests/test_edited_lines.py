"""A result line changed after it was written (issue 22, "Also"): a resume runs its example
again, ``tooleval score --run`` refuses the run; both say which lines."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from toy_benchmark import echo_answer, register_toy, write_toy
from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.data.journal import SEAL_KEY, seal_state
from tooleval_agents.models.chat_models import ScriptedChatModel
from tooleval_agents.results.rescore import EditedResultsError, rescore_run
from tooleval_agents.results.rundir import EXAMPLES, RunDir
from tooleval_agents.run.runner import run_experiment


@pytest.fixture(autouse=True)
def _toy(monkeypatch: pytest.MonkeyPatch) -> None:
    register_toy(monkeypatch)


def wrong_on_1() -> ScriptedChatModel:
    """Answers toy prompts, item 1 wrongly (a score of 0 to tamper with)."""
    return ScriptedChatModel(rules=[(r"item \d+", lambda p: "no idea" if "item 1?" in p
                                     else echo_answer(p))])


def first_run(tmp_path: Path) -> tuple[dict[str, Any], Path]:
    data = write_toy(tmp_path / "data")
    kwargs: dict[str, Any] = {"out": tmp_path / "runs", "data_dir": data, "progress": False,
                              "cache": False, "max_concurrency": 1}
    summary = run_experiment("toy", subset="en", model=wrong_on_1(), **kwargs)
    assert summary.metrics["accuracy"] == pytest.approx(500 / 6)
    return kwargs, tmp_path / "runs" / summary.experiment


def edit(file: Path, index: int, change: Any) -> int:
    """Apply ``change`` to the line of example ``index``; its 1-based line number."""
    lines = file.read_bytes().splitlines(keepends=True)
    at = next(n for n, ln in enumerate(lines) if json.loads(ln)["index"] == index)
    lines[at] = change(lines[at])
    file.write_bytes(b"".join(lines))
    return at + 1


def score_100(line: bytes) -> bytes:  # as a text editor would: only those bytes change
    return line.replace(b'"accuracy":0.0', b'"accuracy":100.0')


def other_question(line: bytes) -> bytes:  # as a script would: load, change, dump
    record = json.loads(line)
    record["inputs"]["question"] = "What is item 99?"
    return json.dumps(record).encode() + b"\n"


def test_a_resume_runs_edited_lines_again_and_says_which(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    kwargs, run_dir = first_run(tmp_path)
    file = run_dir / EXAMPLES
    scored = edit(file, 1, score_100)
    asked = edit(file, 3, other_question)
    assert seal_state(file.read_bytes().splitlines()[scored - 1]) == "edited"
    lines = file.read_bytes().splitlines()
    assert RunDir(run_dir).edited() == [(n, json.loads(lines[n - 1])["example_id"])
                                        for n in sorted((scored, asked))]
    model = wrong_on_1()
    with caplog.at_level(logging.WARNING, logger="tooleval_agents.run.runner"):
        summary = run_experiment("toy", subset="en", model=model, **kwargs)
    assert model.calls == 2  # the two edited examples, and only them (was: 0, trusted)
    assert summary.metrics["accuracy"] == pytest.approx(500 / 6)  # not the edited 100
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 2 and not any("\n" in w for w in warned)
    assert f"2 result lines were changed after they were written (line {min(scored, asked)}"\
        in warned[0] and warned[0].endswith("their examples run again")
    assert "resumed 4 of 6 examples" in warned[1] and warned[1].endswith("(2 to run)")
    latest = RunDir(run_dir).results()
    assert sorted(r.index for r in latest.values() if r.attempt == 2) == [1, 3]
    assert RunDir(run_dir).edited() == []  # superseded by the lines just written

    again = wrong_on_1()
    run_experiment("toy", subset="en", model=again, **kwargs)
    assert again.calls == 0


def test_score_run_refuses_edited_lines_until_resumed(tmp_path: Path) -> None:
    kwargs, run_dir = first_run(tmp_path)
    line = edit(run_dir / EXAMPLES, 1, score_100)
    with pytest.raises(EditedResultsError, match=rf"line {line}: example [0-9a-f-]+\)"):
        rescore_run(run_dir, write=False)
    result = CliRunner().invoke(app, ["score", "--run", str(run_dir), "--data-dir",
                                      str(kwargs["data_dir"]), "--no-write"])
    assert result.exit_code == 1
    errors = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1
    assert "1 result line was changed after it was written" in errors[0]
    assert f"line {line}: example" in errors[0] and "not re-scored" in errors[0]
    run_experiment("toy", subset="en", model=wrong_on_1(), **kwargs)  # the resume re-runs it
    rescored = rescore_run(run_dir, write=False, data_dir=kwargs["data_dir"])
    assert rescored.metrics["accuracy"] == pytest.approx(500 / 6)


def test_lines_written_before_seals_are_trusted(tmp_path: Path) -> None:
    kwargs, run_dir = first_run(tmp_path)
    file = run_dir / EXAMPLES
    old = [json.loads(ln) for ln in file.read_text().splitlines()]
    for record in old:
        record.pop(SEAL_KEY)
    file.write_text("".join(json.dumps(r) + "\n" for r in old))
    assert RunDir(run_dir).edited() == []
    model = wrong_on_1()
    run_experiment("toy", subset="en", model=model, **kwargs)
    assert model.calls == 0
