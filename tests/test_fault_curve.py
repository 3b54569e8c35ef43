"""The report's robustness curve: the headline metric against the tool-fault rate, per system,
for runs that differ by ``--tool-faults`` rate (both benchmarks)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.results.compare import load_run
from tooleval_agents.results.reports import write_report
from tooleval_agents.results.robustness import fault_curve
from tooleval_agents.run.runner import run_experiment

SWEEP = ["--tool-faults", "rate=0", "--tool-faults", "rate=0.1,seed=0",
         "--tool-faults", "rate=0.3,seed=0"]


@pytest.fixture(scope="module")
def sweep(samples: Path, tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, object]]:
    """``reference`` and ``noisy-reference`` on the AppBench mm samples at rates 0, 0.1, 0.3,
    as the command of docs/tool-faults.md makes them."""
    out = tmp_path_factory.mktemp("runs")
    with pytest.MonkeyPatch.context() as env:  # the autouse isolation is per test
        env.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "user-cache"))
        for key in ("TOOLEVAL_DATA_DIR", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY"):
            env.delenv(key, raising=False)
        result = CliRunner().invoke(app, [
            "run", "appbench", "--category", "mm", "--strategy", "tools", "--model",
            "reference", "--model", "noisy-reference", "--data-dir", str(samples), "--out",
            str(out), "--no-upload", "--no-cache", "--json", *SWEEP])
    assert result.exit_code == 0, result.output
    rows: list[dict[str, object]] = json.loads(result.stdout)
    assert len(rows) == 6
    for row in rows:
        row["path"] = out / str(row["experiment"])
    return rows


def test_report_draws_success_against_the_fault_rate(sweep: list[dict[str, object]],
                                                     tmp_path: Path) -> None:
    report = write_report([Path(str(r["path"])) for r in sweep], tmp_path / "report", n_boot=200)
    figure = tmp_path / "report" / "appbench_fault_curve.png"
    assert figure in report.figures and figure.stat().st_size > 0
    points = pd.read_csv(tmp_path / "report" / "appbench_fault_curve.csv")
    assert sorted(zip(points["system"], points["fault_rate"], strict=True)) == [
        (s, r) for s in ("noisy-reference", "reference") for r in (0.0, 0.1, 0.3)]
    assert set(points["metric"]) == {"success"} and set(points["n"]) == {5}
    # Each point is its run's summary value, inside its interval.
    by_run = {str(r["experiment"]): r["metrics"]["success"] for r in sweep}  # type: ignore[index]
    for row in points.itertuples():
        assert row.value == pytest.approx(by_run[row.directory])
        assert row.ci_low <= row.value <= row.ci_high
    reference = points[points["system"] == "reference"].sort_values("fault_rate")
    assert list(reference["value"]) == [100.0, 60.0, 40.0]  # every fault is fatal to it
    markdown = report.markdown.read_text(encoding="utf-8")
    assert "![appbench: success against the tool-fault rate](appbench_fault_curve.png)" \
        in markdown
    assert "| reference | 0.10 | 60.00 | [" in markdown


def test_report_rows_name_the_fault_rate(sweep: list[dict[str, object]],
                                        tmp_path: Path) -> None:
    # The rate, in compare's words, not a "[dir]" or "#2" left to the reader to decode.
    report = write_report([Path(str(r["path"])) for r in sweep], tmp_path / "report", n_boot=0)
    runs = pd.read_csv(report.out_dir / "runs.csv")
    assert sorted(set(runs["system"])) == sorted(
        f"{model} (tools{rate})" for model in ("reference", "noisy-reference")
        for rate in ("", ", faults=0.1", ", faults=0.3"))


def test_no_curve_without_a_second_fault_rate(sweep: list[dict[str, object]],
                                              tmp_path: Path) -> None:
    clean = [Path(str(r["path"])) for r in sweep if r.get("tool_faults") == "rate=0"]
    report = write_report(clean, tmp_path / "report", n_boot=50)
    assert not (tmp_path / "report" / "appbench_fault_curve.png").exists()
    assert "tool-fault rate" not in report.markdown.read_text(encoding="utf-8")


def test_a_clean_run_is_the_first_point_of_every_seed(sweep: list[dict[str, object]],
                                                      samples: Path, tmp_path: Path) -> None:
    other = run_experiment("appbench", subset="mm", strategy="tools", model="reference",
                           data_dir=samples, out=tmp_path, upload=False, progress=False,
                           cache=False, tool_faults="rate=0.3,seed=1")
    runs = [load_run(Path(str(r["path"]))) for r in sweep if r["model"] == "reference"
            and r.get("tool_faults") in ("rate=0", "rate=0.3,seed=0")]
    points = fault_curve([*runs, load_run(tmp_path / other.experiment)], n_boot=50)
    assert points is not None
    lines = {str(s): list(zip(g["fault_rate"], g["fault_seed"].astype(object), strict=True))
             for s, g in points.groupby("system")}
    assert lines == {"seed=0": [(0.0, pd.NA), (0.3, 0)], "seed=1": [(0.0, pd.NA), (0.3, 1)]}


def test_ultratool_gets_the_curve_of_its_own_headline(samples: Path, tmp_path: Path) -> None:
    kw = {"task": "tool_usage", "subset": "en", "strategy": "tools", "model": "reference",
          "data_dir": samples, "upload": False, "progress": False, "cache": False,
          "out": tmp_path}
    names = [run_experiment("ultratool", tool_faults=f, **kw).experiment
             for f in (None, "rate=0.3,seed=0")]
    # Another task, another headline metric: left out of the tool_usage curve.
    names.append(run_experiment("ultratool", **{**kw, "task": "tool_selection",
                                                "strategy": "one_shot"}).experiment)
    write_report([tmp_path / n for n in names], tmp_path / "report", n_boot=50)
    points = pd.read_csv(tmp_path / "report" / "ultratool_fault_curve.csv")
    assert list(points["fault_rate"]) == [0.0, 0.3]
    assert set(points["task"]) == {"tool_usage"}
    assert set(points["metric"]) == {"tool_usage"}
    assert points["value"].iloc[1] < points["value"].iloc[0] == 100.0


def test_each_ultratool_task_under_faults_gets_its_own_curve(samples: Path,
                                                            tmp_path: Path) -> None:
    kw = {"subset": "en", "strategy": "tools", "model": "reference", "data_dir": samples,
          "upload": False, "progress": False, "cache": False, "out": tmp_path}
    names = [run_experiment("ultratool", task=task, tool_faults=faults, **kw).experiment
             for task in ("tool_usage", "tool_selection") for faults in (None, "rate=0.3,seed=0")]
    report = write_report([tmp_path / n for n in names], tmp_path / "report", n_boot=50)
    curves = sorted(p.name for p in report.figures if "fault_curve" in p.name)
    # Named after each task's headline metric.
    assert curves == ["ultratool_fault_curve_tool_selection_global.png",
                      "ultratool_fault_curve_tool_usage.png"]
    for task, metric in (("tool_usage", "tool_usage"), ("tool_selection", "tool_selection_global")):
        points = pd.read_csv(tmp_path / "report" / f"ultratool_fault_curve_{metric}.csv")
        assert set(points["task"]) == {task} and list(points["fault_rate"]) == [0.0, 0.3]
        assert set(points["metric"]) == {metric}
    markdown = report.markdown.read_text(encoding="utf-8")
    assert markdown.count("against the tool-fault rate](ultratool_fault_curve_") == 2
