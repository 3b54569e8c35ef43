"""A pooled metric with nothing to count is n/a: ``None`` in Python, ``null`` in JSON and
``n/a (0 of N)`` in tables -- never 0 and never 100."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.contracts import ExampleScore, Part, format_metric
from tooleval_agents.evaluators.ultratool.execution import aggregate_ultratool_execution
from tooleval_agents.results.compare import compare
from tooleval_agents.results.corpus import as_corpus
from tooleval_agents.results.rundir import RunDir


def test_pooled_and_mean_over_nothing_are_none() -> None:
    empty = [ExampleScore(parts={"k": Part(hits=0, total=0)})]
    assert as_corpus(empty).pooled("k") is None and as_corpus([]).pooled("k") is None
    assert as_corpus([ExampleScore(parts={"k": Part(hits=0, total=2)})]).pooled("k") == 0.0
    assert as_corpus([]).mean("k") is None
    assert format_metric(None, 200) == "n/a (0 of 200)" and format_metric(0.0, 200) == "0.00"


def test_execution_metrics_with_no_call_are_not_applicable() -> None:
    nothing = ExampleScore(scores={"tool_set_f1": 100.0, "executable": 100.0},
                           parts={k: Part() for k in ("valid_calls", "strict_calls",
                                                      "resolved_references")})
    metrics = aggregate_ultratool_execution([nothing, nothing])
    assert metrics["valid_calls"] is None and metrics["resolved_references"] is None
    assert metrics["executable"] == 100.0


def _run(samples: Path, out: Path, model: str) -> dict:
    result = CliRunner().invoke(app, [
        "run", "appbench", "--category", "ss", "--model", model, "--strategy", "flat",
        "--data-dir", str(samples), "--out", str(out), "--no-cache", "--no-progress", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_an_ss_run_reports_edge_f1_as_not_applicable(samples: Path, tmp_path: Path) -> None:
    row = _run(samples, tmp_path, "reference")
    assert row["metrics"]["edge_f1"] is None  # SS: no dependency expected or predicted
    stored = json.loads(Path(row["run_dir"], "summary.json").read_text(encoding="utf-8"))
    assert stored["metrics"]["edge_f1"] is None  # JSON null, read back as None
    assert RunDir(row["run_dir"]).read_summary().metrics["edge_f1"] is None
    shown = CliRunner().invoke(app, [
        "run", "appbench", "--category", "ss", "--model", "reference", "--strategy", "flat",
        "--data-dir", str(samples), "--out", str(tmp_path), "--no-cache", "--no-progress"])
    n = row["counts"]["scored"]
    assert shown.exit_code == 0 and f"n/a (0 of {n})" in shown.stdout


def test_compare_and_report_carry_not_applicable(samples: Path, tmp_path: Path) -> None:
    gold = _run(samples, tmp_path / "a", "reference")["run_dir"]
    noisy = _run(samples, tmp_path / "b", "noisy-reference:0.5")["run_dir"]
    result = compare([gold, noisy], n_boot=50, seed=0)
    edge = result.differences[result.differences["metric"] == "edge_f1"].iloc[0]
    assert edge["a"] != edge["a"] and edge["diff"] != edge["diff"]  # NaN: n/a, not 0 or 100
    shown = CliRunner().invoke(app, ["compare", gold, noisy, "--n-boot", "20", "--all-metrics"])
    assert shown.exit_code == 0, shown.output
    assert "n/a" in shown.stdout
    report = CliRunner().invoke(app, ["report", gold, noisy, "--out", str(tmp_path / "r"),
                                      "--n-boot", "20"])
    assert report.exit_code == 0, report.output
    assert "| n/a |" in (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
