"""Answers that could not be read in the task's format are counted (issue 24, "Results that say
what they are"): a model that answered AppBench as ``Restaurants: [] = reserverestaurant(...)``
scored 0 everywhere with ``ok=6 ... scoring_errors=0`` and exit 0, its stored ``parse_error``
counted nowhere. Now ``format_errors`` and its rate are in ``summary.json``, the run's printed
counts, ``compare`` and the viewer; a run in which no answer could be read says so with the
likely fix and exits 3; some unread answers are a note; an old run directory still loads."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_langsmith import loopback_only
from fake_openai import ChatRequest, FakeOpenAI
from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.contracts import EMPTY_OUTPUTS, ExampleScore
from tooleval_agents.models.tool_calls.counts import (
    NO_CALL,
    STRUCTURED,
    TEXT,
    UNREAD,
    format_notes,
    format_unmeasured,
)
from tooleval_agents.results.compare import compare
from tooleval_agents.results.records import ExampleResult, ResultHead
from tooleval_agents.results.rundir import SUMMARY, RunDir
from tooleval_agents.results.summary import summarize
from tooleval_agents.viewer import build_site

WRONG = "Restaurants: [] = reserverestaurant(restaurant_name='X')"
"""The issue's answer: no ``App: [...]`` call line in it."""
READABLE = "Weather: [forecast = getweather(#city='Seattle', #date='2019-03-07')]"
"""A call line (the gold call of the first SS sample)."""
UNREAD_NOTE = "no answer could be read in the task's format (6 of 6 format errors"


@pytest.fixture(autouse=True)
def _loopback(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-format-errors")
    with loopback_only(monkeypatch) as refused:
        yield
    assert refused == [], f"tried to reach {refused}"


def some_readable(request: ChatRequest) -> str:
    """A call line for the two questions about Seattle's weather and a payment, else
    :data:`WRONG` (chosen by the example's question, so concurrency changes nothing)."""
    last = str(request.messages[-1].get("content"))
    return READABLE if "Seattle" in last or "Jessica" in last else WRONG


def run(samples: Path, out: Path, server: FakeOpenAI, *extra: str) -> Any:
    return CliRunner().invoke(app, [
        "run", "appbench", "--category", "ss", "--model", "openai:wrongfmt", "--model-arg",
        f"base_url={server.base_url}", "--data-dir", str(samples), "--out", str(out),
        "--no-upload", "--no-progress", "--no-cache", "--max-concurrency", "1", *extra])


def only_run(out: Path) -> RunDir:
    [path] = [p for p in out.iterdir() if (p / SUMMARY).is_file()]
    return RunDir(path)


@pytest.fixture(scope="module")
def unread_run(tmp_path_factory: pytest.TempPathFactory, samples: Path) -> tuple[Any, RunDir]:
    """The issue's run: every answer in the wrong format (the CLI's result and the run)."""
    out = tmp_path_factory.mktemp("unread")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_API_KEY", "sk-test-format-errors")
        with loopback_only(mp), FakeOpenAI(default=WRONG) as server:
            result = run(samples, out, server)
    return result, only_run(out)


def test_no_readable_answer_is_counted_said_with_the_fix_and_exits_3(
        unread_run: tuple[Any, RunDir]) -> None:
    result, run_dir = unread_run
    assert result.exit_code == 3, result.output
    flat = " ".join(result.output.split())  # Rich wraps the counts line
    assert "scoring_errors=0, format_errors=6" in flat
    [line] = [t for t in result.output.splitlines() if UNREAD_NOTE in t]  # one line
    assert 'the first: "no call line in the answer"' in line
    assert "tooleval view" in line and "--jinja" in line and "--strategy" in line
    stored = json.loads((run_dir.path / SUMMARY).read_text(encoding="utf-8"))
    assert stored["counts"]["ok"] == stored["counts"]["format_errors"] == 6
    assert stored["format_error_rate"] == 1.0
    assert any(UNREAD_NOTE in n for n in stored["notes"])
    assert stored["metrics"]["success"] == 0.0  # still scored: a wrong answer, never dropped


def test_compare_counts_format_errors_per_run(unread_run: tuple[Any, RunDir], samples: Path,
                                              tmp_path: Path) -> None:
    _, unread = unread_run
    gold = CliRunner().invoke(app, [
        "run", "appbench", "--category", "ss", "--model", "reference", "--data-dir",
        str(samples), "--out", str(tmp_path), "--no-upload", "--no-progress"])
    assert gold.exit_code == 0, gold.output
    reference = only_run(tmp_path)
    table = CliRunner().invoke(app, ["compare", str(reference.path), str(unread.path),
                                     "--n-boot", "20"])
    assert table.exit_code == 0, table.output
    flat = " ".join(table.output.split())
    assert "6 of 6 answers could not be read in the task's format" in flat
    assert "reference: 0 of" not in flat  # a run without format errors has no such note
    as_json = CliRunner().invoke(app, ["compare", str(reference.path), str(unread.path),
                                       "--n-boot", "20", "--json"])
    runs = json.loads(as_json.output)["runs"]
    assert [r["format_errors"] for r in runs] == [0, 6]
    assert compare([reference.path, unread.path], n_boot=0).costs["format_errors"].tolist() \
        == [0, 6]


def test_the_viewer_shows_format_errors(unread_run: tuple[Any, RunDir], tmp_path: Path) -> None:
    _, run_dir = unread_run
    build_site([run_dir.path], tmp_path / "site")
    [folder] = [p for p in (tmp_path / "site" / "data").iterdir() if p.is_dir()]
    rows = _put((folder / "index.js").read_text(encoding="utf-8"))
    assert {(r["status"], r["error_kind"], r["error"]) for r in rows} == {
        ("ok", "format_error", "no call line in the answer")}
    [meta] = _put((tmp_path / "site" / "data" / "runs.js").read_text(encoding="utf-8"))
    assert meta["counts"]["format_errors"] == 6
    assert any(UNREAD_NOTE in n for n in meta["notes"])


def _put(script: str) -> Any:
    """The value of a site data file (``TOOLEVAL.put("key", value);``)."""
    return json.loads(script[script.index(",") + 1:script.rindex(");")])


def test_some_unread_answers_are_a_note_and_exit_0(samples: Path, tmp_path: Path) -> None:
    with FakeOpenAI(some_readable) as server:
        result = run(samples, tmp_path, server)
    assert result.exit_code == 0, result.output
    summary = only_run(tmp_path).read_summary()
    assert summary.counts["format_errors"] == 4 and summary.counts["scored"] == 6
    assert summary.format_error_rate == pytest.approx(4 / 6)
    note = "4 of 6 answers (67%) could not be read in the task's format"
    assert any(n.startswith(note) for n in summary.notes)
    assert note in " ".join(result.output.split())
    assert UNREAD_NOTE[:30] not in result.output


def test_an_old_run_directory_loads_and_its_format_errors_are_counted(
        unread_run: tuple[Any, RunDir], tmp_path: Path) -> None:
    """A summary written before ``format_errors`` existed: read, and counted again from the
    stored results by the viewer, ``compare`` and re-scoring."""
    _, run_dir = unread_run
    old = tmp_path / run_dir.path.name
    old.mkdir()
    for f in run_dir.path.iterdir():
        if f.is_file() and f.name != ".lock":
            (old / f.name).write_bytes(f.read_bytes())
    stored = json.loads((old / SUMMARY).read_text(encoding="utf-8"))
    del stored["counts"]["format_errors"], stored["format_error_rate"], stored["not_computed"]
    (old / SUMMARY).write_text(json.dumps(stored), encoding="utf-8")
    summary = RunDir(old).read_summary()
    assert "format_errors" not in summary.counts and summary.format_error_rate is None
    build_site([old], tmp_path / "site")
    [meta] = _put((tmp_path / "site" / "data" / "runs.js").read_text(encoding="utf-8"))
    assert meta["counts"]["format_errors"] == 6
    assert compare([old], n_boot=0).runs[0].format_errors == 6
    rescored = CliRunner().invoke(app, ["score", "--run", str(old), "--json"])
    assert rescored.exit_code == 0, rescored.output
    assert json.loads(rescored.output)["summary"]["counts"]["format_errors"] == 6


def _result(index: int, status: str, parse_error: str | None) -> ExampleResult:
    outputs = dict(EMPTY_OUTPUTS) if status != "ok" else {"prediction": "x",
                                                          "parse_error": parse_error}
    return ExampleResult(example_id=f"e{index}", index=index, status=status,  # type: ignore[arg-type]
                         outputs=outputs, score=None if status == "infra_error" else
                         ExampleScore(scores={"m": 0.0}).model_dump())


def test_only_finished_answers_that_did_not_parse_are_format_errors() -> None:
    """A model error (its outputs are the empty answer) and an infra error are counted apart;
    the head a summary reads holds the parse error as the whole result does."""
    results = [_result(0, "ok", "no call line in the answer"), _result(1, "ok", None),
               _result(2, "model_error", None), _result(3, "infra_error", None)]
    heads = [ResultHead.model_validate_json(r.model_dump_json()) for r in results]
    assert [h.format_error for h in heads] == [r.format_error for r in results] == [
        "no call line in the answer", None, None, None]
    for given in (results, heads):
        summary = summarize("x", lambda s: {"m": 0.0}, given, examples=4)
        assert summary.counts["format_errors"] == 1 and summary.counts["scored"] == 3
        assert summary.format_error_rate == pytest.approx(1 / 3)


def test_a_tool_calling_run_without_calls_is_the_tool_call_notes_to_judge() -> None:
    """"the agent called no tool" is a format error too, but when no call came back at all the
    tool-call note says why (and decides the exit status): no second note."""
    no_call = {"scored": 6, "format_errors": 6, STRUCTURED: 0, TEXT: 0, UNREAD: 0, NO_CALL: 6}
    assert not format_unmeasured(no_call) and format_notes(no_call) == []
    some = {**no_call, STRUCTURED: 2, "format_errors": 4}
    assert format_notes(some, "the agent called no tool") == [
        "4 of 6 answers (67%) could not be read in the task's format (format_errors; the "
        'first: "the agent called no tool"): scored as they are, mostly 0.']
    assert format_unmeasured({"scored": 2, "format_errors": 2})
    assert not format_unmeasured({"scored": 0, "format_errors": 0})
