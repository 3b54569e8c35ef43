"""write_report() and ``tooleval report``: Markdown, CSV tables, PNG figures, layouts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from matplotlib.image import imread
from run_dirs import appbench_noisy, empty, kv_gold, make_run
from typer.testing import CliRunner

from tooleval_agents import registry
from tooleval_agents.cli import app
from tooleval_agents.contracts import (
    ExampleFields,
    ExampleScore,
    Located,
    Scorer,
    Split,
)
from tooleval_agents.evaluators.ultratool.judge.judge import Judgment, planning_example_score
from tooleval_agents.evaluators.ultratool.judge.prompts import DIMENSIONS
from tooleval_agents.registry import Benchmark, get_benchmark
from tooleval_agents.results.compare import load_run
from tooleval_agents.results.corpus import as_corpus
from tooleval_agents.results.records import DatasetRef, ExampleResult, RunConfig
from tooleval_agents.results.reports import Layout, write_report
from tooleval_agents.results.rundir import RunDir, RunSummary

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def judged(overall: float) -> Any:
    """Recorded planning judgments: every dimension ``overall - 1``, overall ``overall``."""
    def score(index: int) -> ExampleScore:
        return planning_example_score(Judgment(
            task="planning", lang="en", overall=overall,
            scores={d.key: overall - 1 for d in DIMENSIONS["planning"]}))
    return score


class ToyBenchmark(Benchmark):
    """A third benchmark with no layout: the report must fall back to the generic one."""

    name = "toy"

    def splits(self) -> list[Split]:
        return [Split("toy", "qa", "en")]

    def locate(self, split: Split, data_dir: Path) -> Located:
        raise NotImplementedError

    def load(self, split: Split, data_dir: Path) -> list[Any]:
        raise NotImplementedError

    def to_example(self, split: Split, record: Any) -> ExampleFields:
        raise NotImplementedError

    def scorer(self, split: Split, *, options: dict[str, Any] | None = None) -> Scorer:
        return Scorer(score=lambda i, o, r: ExampleScore(),
                      aggregate=lambda s: {"exact": as_corpus(s).mean("exact")},
                      headline=("exact",))

    def default_strategy(self, split: Split) -> str:
        return "direct"


def toy_run(root: Path, name: str, right: int, n: int = 6) -> Path:
    rd = RunDir(root / name)
    rd.write_config(RunConfig(experiment=f"toy-qa-en-direct-{name}", benchmark="toy", task="qa",
                              subset="en", strategy="direct", model={"spec": name},
                              dataset=DatasetRef(name="toy-qa-en", examples=n, hash="x")))
    for i in range(n):
        rd.append(ExampleResult(example_id=f"toy/{i}", index=i, status="ok",
                                score={"scores": {"exact": 100.0 if i < right else 0.0}}))
    rd.write_summary(RunSummary(experiment=name, metrics={}, counts={}))
    return rd.path


@pytest.fixture
def runs(tmp_path: Path, samples: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    monkeypatch.setitem(registry._REGISTRY, "toy", ToyBenchmark())
    root = tmp_path / "runs"
    out = [make_run(root, f"ref-hier-{c}", subset=c, data_dir=samples) for c in ("ss", "sm")]
    out += [make_run(root, f"noisy-flat-{c}", subset=c, data_dir=samples, strategy="flat",
                     model="noisy-reference:0.5", answer=appbench_noisy(0.5))
            for c in ("ss", "sm")]
    out.append(make_run(root, "empty-hier-ss", data_dir=samples, model="empty", answer=empty))
    out.append(make_run(root, "ut-tua", benchmark="ultratool", task="tool_usage_awareness",
                        subset="en", data_dir=samples, answer=kv_gold, strategy="one_shot"))
    out += [make_run(root, f"ut-plan-{m}", benchmark="ultratool", task="planning", subset="en",
                     data_dir=samples, answer=lambda ex, i: "1. Do it", strategy="one_shot",
                     model=m, judge={"spec": "judge:model"}, extra_score=judged(o))
            for m, o in (("model-a", 8.0), ("model-b", 5.0))]
    out += [toy_run(root, "toy-a", right=5), toy_run(root, "toy-b", right=1)]
    return out


def test_report_writes_tables_and_figures(runs: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "report"
    report = write_report(runs, out, n_boot=100, seed=0, all_figures=True)
    names = {p.name for p in report.csv}
    assert {"runs.csv", "metrics.csv", "differences.csv", "costs.csv", "appbench_table3.csv",
            "appbench_table11_em.csv", "appbench_table4_errors.csv",
            "appbench_scale_success.csv", "ultratool_table2.csv",
            "ultratool_judge_planning.csv", "toy_metrics.csv"} <= names
    assert all(p.is_file() for p in report.csv)

    figures = {p.name for p in report.figures}
    assert "appbench_strategies.png" in figures and "ultratool_judge_planning.png" in figures
    assert "toy_headline.png" in figures
    assert sum(n.startswith("appbench_scale_") for n in figures) == 5  # one heatmap per run
    for path in report.figures:
        data = path.read_bytes()
        assert data[:8] == PNG_MAGIC and len(data) > 1000
        height, width = imread(path).shape[:2]
        assert height > 100 and width > 100

    table3 = pd.read_csv(out / "appbench_table3.csv").set_index("system")
    ref = table3.loc["reference (hierarchical)"]
    assert ref["ss_success"] == 100.0 and ref["sm_app_f1"] == 100.0  # gold answers, strict
    assert table3.loc["empty (hierarchical)", "ss_success"] == 0.0
    assert pd.isna(table3.loc["empty (hierarchical)", "sm_success"])  # not run

    table2 = pd.read_csv(out / "ultratool_table2.csv").set_index("system")
    assert table2.loc["reference (one_shot)", "tool_usage_awareness_global"] == 100.0
    assert pd.isna(table2.loc["reference (one_shot)", "overall"])  # 9 dimensions needed
    assert table2.loc["model-a (one_shot)", "planning"] == pytest.approx(80.0)

    judge = pd.read_csv(out / "ultratool_judge_planning.csv").set_index("system")
    assert judge.loc["model-a (one_shot)", "planning_accuracy"] == pytest.approx(70.0)
    assert judge.loc["model-b (one_shot)", "planning"] == pytest.approx(50.0)

    scale = pd.read_csv(out / "appbench_scale_success.csv")
    assert (scale["samples"] > 0).all() and scale["success"].between(0, 100).all()

    diffs = pd.read_csv(out / "differences.csv")
    toy = diffs[(diffs["metric"] == "exact")].iloc[0]
    assert toy["diff"] == pytest.approx(-100 * 4 / 6) and toy["n_examples"] == 6

    md = (out / "report.md").read_text(encoding="utf-8")
    for needle in ("## AppBench", "AppBench Table 3", "AppBench Table 4", "UltraTool Table 2",
                   "## toy", "## Paired differences", "## Cost per example",
                   "](appbench_strategies.png)", "| reference (hierarchical) |"):
        assert needle in md


def test_tables_come_from_the_benchmark_then_the_generic_layout(runs: list[Path]) -> None:

    appbench = [load_run(r) for r in runs if "appbench" in r.name]
    names = [t.name for t in get_benchmark("appbench").report_tables(appbench)]
    assert names[:3] == ["appbench_table3", "appbench_table11_em", "appbench_table4_errors"]
    assert Layout().tables("appbench", appbench)[0].name == "appbench_metrics"


def test_cli_report_json(runs: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "cli-report"
    result = CliRunner().invoke(app, ["report", *map(str, runs[:2]), "--out", str(out),
                                      "--n-boot", "30", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert Path(data["markdown"]).is_file()
    assert any(p.endswith("appbench_table3.csv") for p in data["csv"])
    assert all(Path(p).read_bytes()[:8] == PNG_MAGIC for p in data["figures"])


def test_runs_sharing_a_system_label_keep_their_own_rows(tmp_path: Path,
                                                          samples: Path) -> None:
    # Deep, equal prefixes: the run labels (paths) agree on their first 80 characters.
    deep = tmp_path / ("x" * 90)
    a_ss = make_run(deep / "a", "appbench-plan-ss", data_dir=samples)
    a_sm = make_run(deep / "a", "appbench-plan-sm", subset="sm", data_dir=samples)
    b_ss = make_run(deep / "b", "appbench-plan-ss", data_dir=samples, answer=empty)
    ut_a = make_run(deep / "a", "ut", benchmark="ultratool", task="tool_usage_awareness",
                    subset="en", data_dir=samples, answer=kv_gold, strategy="one_shot")
    ut_b = make_run(deep / "b", "ut", benchmark="ultratool", task="tool_usage_awareness",
                    subset="en", data_dir=samples, answer=empty, strategy="one_shot")
    report = write_report([a_ss, a_sm, b_ss, ut_a, ut_b], tmp_path / "rep", n_boot=0,
                          all_figures=True)  # the per-run heatmaps
    table3 = pd.read_csv(report.out_dir / "appbench_table3.csv").set_index("system")
    assert sorted(table3.index) == ["reference (hierarchical) [a]",
                                    "reference (hierarchical) [b]"]
    assert table3.loc["reference (hierarchical) [a]", "ss_success"] == 100.0
    assert table3.loc["reference (hierarchical) [a]", "sm_success"] == 100.0  # same row
    assert table3.loc["reference (hierarchical) [b]", "ss_success"] == 0.0
    table2 = pd.read_csv(report.out_dir / "ultratool_table2.csv").set_index("system")
    assert table2.loc["reference (one_shot) [a]", "tool_usage_awareness_global"] == 100.0
    assert table2.loc["reference (one_shot) [b]", "tool_usage_awareness_global"] == 0.0
    runs = pd.read_csv(report.out_dir / "runs.csv")
    assert set(runs["system"]) == {"reference (hierarchical) [a]", "reference (hierarchical) [b]",
                                   "reference (one_shot) [a]", "reference (one_shot) [b]"}
    heatmaps = [p for p in report.figures if p.name.startswith("appbench_scale_")]
    assert len(heatmaps) == 3 and len({p.name for p in heatmaps}) == 3


def test_the_same_run_twice_gets_two_rows(tmp_path: Path, samples: Path) -> None:
    run = make_run(tmp_path, "a", data_dir=samples)
    report = write_report([run, run], tmp_path / "rep", n_boot=0, all_figures=True)
    table3 = pd.read_csv(report.out_dir / "appbench_table3.csv")
    assert len(table3) == 2 and table3["system"].is_unique
    heatmaps = {p.name for p in report.figures if p.name.startswith("appbench_scale_")}
    assert len(heatmaps) == 2
