"""``tooleval export run --format inspect``: a run written as an inspect_ai eval log by inspect's
own writer, read back with inspect's own reader (same samples, scores, metrics, usage)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import needs_inspect, run
from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.results.rundir import RunDir


@pytest.fixture
def read_log() -> Callable[[Path], Any]:
    """inspect_ai's reader; skips (fails under TOOLEVAL_REQUIRE_INSPECT) without the extra."""
    needs_inspect()
    from inspect_ai.log import read_eval_log

    return read_eval_log  # type: ignore[no-any-return]


def _run(samples: Path, out: Path, benchmark: str, **kw: Any) -> Path:
    summary = run(benchmark, samples, out, **kw)
    assert summary.run_dir is not None
    return Path(summary.run_dir)


def _export(run: Path, out: Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["export", "run", str(run), "--format", "inspect",
                                      "--out", str(out)])
    return result.exit_code, result.output


def _same_as_run(run: Path, log: Any) -> None:
    """The log holds every example of the run with its scores, and the run's metrics."""
    rd = RunDir(run)
    results = sorted(rd.results().values(), key=lambda r: (r.index, r.epoch))
    summary = rd.read_summary()
    assert log.status == "success"
    assert len(log.samples) == len(results) == summary.counts["examples"]
    for sample, result in zip(log.samples, results, strict=True):
        assert (sample.id, sample.epoch) == (result.index, result.epoch + 1)
        assert sample.metadata["example_id"] == result.example_id
        ours = {k: v for k, v in (result.score or {})["scores"].items() if v is not None}
        assert {k: s.value for k, s in (sample.scores or {}).items()} == ours
        assert sample.model_usage[log.eval.model].total_tokens == (
            result.usage.input_tokens + result.usage.output_tokens)
    exported = {s.name: s.metrics["value"].value for s in log.results.scores}
    assert exported == {k: v for k, v in summary.metrics.items() if v is not None}
    assert set(log.results.metadata["not_computed"]) >= {
        k for k, v in summary.metrics.items() if v is None}
    assert log.stats.model_usage[log.eval.model].output_tokens == summary.usage["output_tokens"]


def test_an_appbench_agent_run_reads_back_with_its_samples_scores_and_messages(
        samples: Path, tmp_path: Path, read_log: Callable[[Path], Any]) -> None:
    # noisy answers: the scores differ from example to example, so a mix-up shows
    run = _run(samples, tmp_path / "runs", "appbench", subset="ss", strategy="tools",
               model="noisy-reference:0.5", limit=3)
    code, output = _export(run, tmp_path / "run.eval")
    assert code == 0, output
    assert "wrote 3 samples" in output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.eval", "runs"]  # nothing partial
    log = read_log(tmp_path / "run.eval")
    _same_as_run(run, log)
    assert log.eval.task == "appbench-plan-ss" and log.eval.solver == "tools"
    assert log.results.headline.scorer == "success"
    first = log.samples[0]
    result = RunDir(run).results()[first.metadata["example_id"]]
    assert first.input == (result.inputs or {})["input"]
    roles = [m.role for m in first.messages]
    assert roles[0] == "user" and "tool" in roles and roles[-1] == "assistant"
    assert any(m.role == "assistant" and m.tool_calls for m in first.messages)
    assert len(first.events) == len(result.model_calls) >= 2  # one model event per call
    assert all(e.event == "model" and e.tools for e in first.events)


def test_an_ultratool_run_reads_back_as_json(samples: Path, tmp_path: Path,
                                             read_log: Callable[[Path], Any]) -> None:
    run = _run(samples, tmp_path / "runs", "ultratool", task="tool_usage", subset="en",
               model="noisy-reference:0.5")
    code, output = _export(run, tmp_path / "log.json")
    assert code == 0, output
    assert json.loads((tmp_path / "log.json").read_text(encoding="utf-8"))["status"] == "success"
    log = read_log(tmp_path / "log.json")
    _same_as_run(run, log)
    sample = log.samples[0]
    assert json.loads(sample.input) == RunDir(run).results()[sample.metadata[
        "example_id"]].inputs  # more than one input: all of them, as JSON
    assert json.loads(sample.target)  # the gold answer, as JSON
    assert [m.role for m in sample.messages] == ["user", "assistant"]


def test_without_inspect_ai_the_command_names_the_extra(
        samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = _run(samples, tmp_path / "runs", "appbench", subset="ss", model="reference", limit=1)
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # import fails as if absent
    code, output = _export(run, tmp_path / "run.eval")
    assert code == 1
    assert 'pip install -e ".[inspect]"' in output and "Traceback" not in output
    assert len(output.strip().splitlines()) == 1
    assert not (tmp_path / "run.eval").exists()


def test_a_bad_suffix_or_an_unfinished_run_is_a_usage_error(samples: Path,
                                                            tmp_path: Path) -> None:
    run = _run(samples, tmp_path / "runs", "appbench", subset="ss", model="reference", limit=1)
    code, output = _export(run, tmp_path / "run.zip")
    assert code == 2 and ".eval or .json" in output
    (run / "summary.json").unlink()
    code, output = _export(run, tmp_path / "run.eval")
    assert code == 2 and "no summary.json yet" in output
    code, output = _export(tmp_path, tmp_path / "run.eval")
    assert code == 2 and "not a run directory" in output
