"""Output a person reads: ``compare`` shows the headline metrics unless asked for all, and a
run's table keeps the counts per example (tool calls, agent turns) apart from the 0-100 rates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tooleval_agents.cli import app

DATA = Path(__file__).resolve().parents[1] / "datasets"


@pytest.fixture(autouse=True)
def _wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # one line per table row, whatever the terminal


def invoke(*args: str | Path) -> Any:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def four_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs")
    invoke("run", "appbench", "--subset", "ss", "--model", "reference", "--model",
           "noisy-reference:0.5", "--strategy", "flat", "--strategy", "hierarchical",
           "--data-dir", DATA, "--out", out, "--no-cache", "--json")
    assert len(list(out.iterdir())) == 4
    return out


def metric_rows(output: str) -> set[str]:
    """The metric names that head a row of the metrics table (or of the differences)."""
    return {cell for line in output.splitlines() for cell in line.replace("│", "|").split("|")
            if cell.strip() in ALL}


ALL = {"success", "executed_success", "app_f1", "api_f1", "app_em", "api_em", "node_f1",
       "edge_f1", "graph_em", "key_error_independent", "trajectory_strict", "calls_ok"}


def test_compare_shows_the_headline_metrics_unless_asked_for_all(four_runs: Path) -> None:
    short = invoke("compare", four_runs, "--n-boot", "50").stdout
    every = invoke("compare", four_runs, "--n-boot", "50", "--all-metrics").stdout
    headline = ["success", "executed_success", "app_f1", "api_f1"]  # AppBench's
    assert {m.strip() for m in metric_rows(short)} == set(headline)
    assert {m.strip() for m in metric_rows(every)} == ALL
    assert len(short.splitlines()) < 70 < 200 < len(every.splitlines())
    assert "more metric(s) not shown (--all-metrics shows every one)" in short
    assert "not shown" not in every
    # 6 pairs x the 4 headline metrics, not x every metric
    assert sum(" success " in line.replace("│", " ") for line in short.splitlines()) == 1 + 6
    markdown = invoke("compare", four_runs, "--n-boot", "50", "--format", "markdown").stdout
    assert "| edge_f1 |" not in markdown and "| success |" in markdown
    chosen = invoke("compare", four_runs, "--n-boot", "50", "-m", "edge_f1").stdout
    assert {m.strip() for m in metric_rows(chosen)} == {"edge_f1"}
    data = json.loads(invoke("compare", four_runs, "--n-boot", "50", "--json").stdout)
    assert set(data["metrics"]) >= ALL  # the machine-readable form keeps every metric


def test_a_run_table_keeps_counts_apart_from_percentages(tmp_path: Path) -> None:
    output = invoke("run", "appbench", "--subset", "ss", "--model", "reference", "--agent",
                    "langchain.agents:create_agent", "--data-dir", DATA, "--out", tmp_path,
                    "--no-cache").stdout
    tables = output.split("┏")
    rates = next(t for t in tables if "executed_success" in t)
    counts = next(t for t in tables if "per example (count)" in t)
    assert "tool_calls" not in rates and "agent_turns" not in rates
    assert "tool_error_rate" in rates  # a rate (0-100) stays with the rates
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip()
            for line in counts.splitlines() if line.startswith("│")}
    assert rows == {"tool_calls": "1.00", "agent_turns": "2.00"}  # one gold call, two turns


def test_compare_keeps_counts_apart_from_percentages(tmp_path: Path) -> None:
    for strategy in ("tools", "tools_hierarchical"):
        invoke("run", "appbench", "--subset", "ss", "--model", "reference", "--strategy",
               strategy, "--data-dir", DATA, "--out", tmp_path, "--no-cache", "--json")
    output = invoke("compare", tmp_path, "--n-boot", "20", "--all-metrics").stdout
    rates, counts = output.split("Counts per example")
    assert "tool_calls" not in rates.split("Paired differences")[0]
    assert "tool_calls" in counts.split("Paired differences")[0]
