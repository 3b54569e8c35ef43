"""A metric that measured nothing never reads as a result (issue 21 items 4 and 5).

* An agent that made no call, or a text answer that did not parse, matches no reference
  trajectory in any mode (agentevals' ``subset`` of an empty trajectory is vacuously true:
  here it is a wrong prediction, as ``success`` counts it), and an agent run's headline is its
  success metric, not a trajectory match.
* A metric the scoring profile does not compute is n/a -- absent from every example, ``None``
  in the summary, "n/a" in the run table, ``compare``, ``report`` and the viewer -- never 0.00:
  checked for every profile of both benchmarks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from tooleval_agents import ScoringContext, build_scorer
from tooleval_agents.cli import app
from tooleval_agents.contracts import ExampleScore
from tooleval_agents.evaluators.trajectory import (
    MATCH_MODES,
    create_trajectory_match_evaluator,
    score_trajectory,
    trajectory_match,
)
from tooleval_agents.models.chat_models import ScriptedChatModel
from tooleval_agents.registry import get_benchmark
from tooleval_agents.results.compare import compare
from tooleval_agents.results.corpus import Columns, as_corpus, counts_of
from tooleval_agents.results.reports import write_report
from tooleval_agents.results.rundir import RunDir
from tooleval_agents.run.runner import run_experiment
from tooleval_agents.viewer import _headline, build_site
from tooleval_agents.viewer.verdicts import Explainer

CALL = {"name": "findevents", "args": {"city": "Paris"}}
TEXT_CALL = ('```json\n{"name": "Events__findevents", "arguments": {"category": "Music", '
             '"city": "Paris"}}\n```')
"""A tool call written as text, as Qwen2.5-Coder-1.5B wrote every one in the issue."""
GRAPH = ("node_f1", "edge_f1", "graph_em", "pred_topological")


# --- item 4: no call is no match ---------------------------------------------------------------

def test_an_empty_trajectory_matches_a_non_empty_reference_in_no_mode() -> None:
    assert [trajectory_match([], [CALL], mode=m) for m in MATCH_MODES] == [False] * 4
    assert [trajectory_match([], [], mode=m) for m in MATCH_MODES] == [True] * 4
    assert trajectory_match([CALL], [CALL, {"name": "g", "args": {}}], mode="subset")
    assert set(score_trajectory([], [CALL]).scores.values()) == {0.0}
    evaluator = create_trajectory_match_evaluator(mode="subset")
    assert evaluator(outputs={"messages": []}, reference_outputs=[CALL])["score"] is False


@pytest.mark.parametrize(("strategy", "agent"), [
    ("tools", None), ("tools", "langchain.agents:create_agent"), ("hierarchical", None)])
def test_no_call_scores_0_on_every_trajectory_metric_and_the_headline_is_success(
        samples: Path, tmp_path: Path, strategy: str, agent: str | None) -> None:
    """The issue's runs: every answer a tool call written as text (``tools``, ``--agent``:
    no structured call; ``hierarchical``: a text answer that does not parse)."""
    summary = run_experiment("appbench", subset="ss", strategy=strategy, agent=agent,
                             model=ScriptedChatModel(rules=[(".", TEXT_CALL)]),
                             data_dir=samples, out=tmp_path, upload=False, cache=False,
                             progress=False)
    m = summary.metrics
    assert summary.counts["scored"] == summary.counts["examples"] > 0
    assert [m[f"trajectory_{mode}"] for mode in MATCH_MODES] == [0.0] * 4
    assert m["success"] == m["executed_success"] == 0.0
    assert summary.cost["success_metric"] == "success"
    config = RunDir(summary.run_dir).read_config()
    assert _headline(Explainer.of(config), m)[:2] == ["success", "executed_success"]
    assert list(compare([summary.run_dir]).table.index[:2]) == ["success", "executed_success"]


def test_an_unparsed_ultratool_answer_matches_no_trajectory() -> None:
    bench = get_benchmark("ultratool")
    split = bench.split("tool_usage", "en")
    reference = {"reference": [{"step": "1", "tool": "weather", "param": {"city": "Paris"}}]}
    score = bench.scorer(split).score({"question": "q"}, {"prediction": "not a list"},
                                      reference)
    assert score.scores["trajectory_subset"] == 0.0


def test_the_run_table_shows_the_success_metric_first(samples: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, [
        "run", "appbench", "--category", "ss", "--model", "reference", "--agent",
        "langchain.agents:create_agent", "--data-dir", str(samples), "--out", str(tmp_path),
        "--no-upload"])
    assert result.exit_code == 0, result.output
    rows = [line.split("│")[1].strip() for line in result.output.splitlines()
            if line.startswith("│")]
    assert rows[:4] == ["success", "executed_success", "app_f1", "api_f1"]
    assert "trajectory_subset" in rows[4:]


# --- item 5: a metric nobody computed is n/a ---------------------------------------------------

def test_a_mean_over_examples_without_the_score_is_na() -> None:
    scores = [ExampleScore(scores={"a": 100.0}), ExampleScore(scores={"b": 0.0})]
    corpus = as_corpus(scores)
    assert corpus.mean("a") == 50.0  # an example without it counts 0 ...
    assert corpus.mean("c") is None and not corpus.computed("c")  # ... nobody has it: n/a
    assert as_corpus(scores).mean("a") == 50.0 and as_corpus(scores).mean("c") is None
    resampled = Columns(scores).resampled(counts_of([[0, 1], [1, 1]], 2))
    assert np.isnan(resampled.mean("c")).all()
    assert list(resampled.mean("a")) == [50.0, 0.0]


def _profiles() -> list[tuple[str, str, str, dict[str, Any]]]:
    out: list[tuple[str, str, str, dict[str, Any]]] = []
    appbench = get_benchmark("appbench")
    split = appbench.splits()[0]
    for scoring in ("paper", "strict"):
        for graph in ({}, {"graph": True}, {"graph": False}):
            out.append(("appbench", split.task, split.subset, {"scoring": scoring, **graph}))
    for split in get_benchmark("ultratool").splits():
        if split.subset != "en":
            continue
        judged = split.task in ("planning", "tool_creation")
        for judge in ([object()] if judged else []) + \
                ([None] if split.task != "tool_creation" else []):
            out.append(("ultratool", split.task, split.subset, {"judge": judge}))
    return out


COUNTS = {"planning_judge_errors", "tool_creation_judge_errors"}
"""Counts of examples (a count of 0 is a result), not metrics."""


@pytest.mark.parametrize(("benchmark", "task", "subset", "options"), _profiles())
def test_no_metric_of_any_profile_is_a_number_when_nothing_was_computed(
        benchmark: str, task: str, subset: str, options: dict[str, Any]) -> None:
    """Examples that computed nothing (every score and part absent): each aggregate, over the
    score list, over the corpus sums and over resamples, gives n/a for every metric."""
    bench = get_benchmark(benchmark)
    options = dict(options)
    context = ScoringContext(judge=options.pop("judge", None))
    scorer = build_scorer(bench, bench.split(task, subset), options, context)
    empty = [ExampleScore() for _ in range(3)]
    for scores in (empty, Columns(empty).corpus()):
        metrics = scorer.aggregate(scores)
        assert metrics and {k: v for k, v in metrics.items()
                            if v is not None and k not in COUNTS} == {}
    resampled = scorer.aggregate(Columns(empty).resampled(counts_of([[0, 1, 2]], 3)))
    assert all(k in COUNTS or np.isnan(np.asarray(v, dtype=float)).all()
               for k, v in resampled.items() if v is not None)


def test_the_paper_profile_shows_uncomputed_graph_metrics_as_na(
        shared_data: Path, tmp_path: Path) -> None:
    """``tooleval run appbench --category mm --model reference --scoring paper --limit 5``:
    success 100, the graph metrics it does not compute n/a (were 0.00), in the run table, the
    summary, ``compare``, ``report`` and the viewer."""
    runs = tmp_path / "runs"
    base = ["run", "appbench", "--category", "mm", "--model", "reference", "--limit", "5",
            "--data-dir", str(shared_data), "--out", str(runs), "--no-upload"]
    result = CliRunner().invoke(app, [*base, "--scoring", "paper"])
    assert result.exit_code == 0, result.output
    table = {cells[1].strip(): cells[2].strip() for line in result.output.splitlines()
             if line.startswith("│") and len(cells := line.split("│")) > 3}
    assert table["success"] == "100.00"
    assert all(table[m].startswith("n/a") for m in GRAPH), table
    assert CliRunner().invoke(app, base).exit_code == 0  # strict computes them
    paper, strict = sorted(runs.iterdir(), key=lambda p: "paper" not in
                           json.loads((p / "config.json").read_text())["scoring_options"]
                           .get("scoring", ""))
    summary = RunDir(paper).read_summary()
    assert all(summary.metrics[m] is None for m in GRAPH)
    assert RunDir(strict).read_summary().metrics["graph_em"] == 100.0

    comparison = compare([strict, paper]).to_dict()
    for m in GRAPH:
        row = comparison["metrics"][m]
        assert sorted(row.values(), key=lambda v: v is None) == [100.0, None], (m, row)
        assert all(d["diff"] is None for d in comparison["differences"] if d["metric"] == m)

    write_report([strict, paper], tmp_path / "report")
    report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "| graph_em | 100.00 | n/a |" in report or "| graph_em | n/a | 100.00 |" in report

    build_site([paper], tmp_path / "site")
    runs_js = (tmp_path / "site" / "data" / "runs.js").read_text(encoding="utf-8")
    meta = json.loads(runs_js[runs_js.index(",") + 1:runs_js.rindex(")")])[0]
    assert all(meta["metrics"][m] is None for m in GRAPH)
    assert meta["headline"][0] == "success"


# --- a judged metric without its judge: not computed, never 0 (issue 24) ------------------------

def test_the_judged_planning_score_without_a_judge_is_listed_as_not_computed(
        samples: Path, tmp_path: Path) -> None:
    """``tooleval run ultratool --task planning`` without ``--judge``: the paper's judged
    score is named "not computed (no --judge)" in the run table, ``summary.json`` and the
    viewer (it printed ROUGE-L only, silently); with a judge nothing is left out."""
    result = CliRunner().invoke(app, [
        "run", "ultratool", "--task", "planning", "--lang", "en", "--model", "reference",
        "--data-dir", str(samples), "--out", str(tmp_path / "runs"), "--no-upload",
        "--no-progress"])
    assert result.exit_code == 0, result.output
    table = {cells[1].strip(): cells[2].strip() for line in result.output.splitlines()
             if line.startswith("│") and len(cells := line.split("│")) > 3}
    assert table["planning"] == "not computed (no --judge)"
    assert table["plan_rouge_l"] == "100.00"
    [run_dir] = (tmp_path / "runs").iterdir()
    stored = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    assert stored["not_computed"] == {"planning": "no --judge"}
    assert "planning" not in stored["metrics"]
    build_site([run_dir], tmp_path / "site")
    runs_js = (tmp_path / "site" / "data" / "runs.js").read_text(encoding="utf-8")
    meta = json.loads(runs_js[runs_js.index(",") + 1:runs_js.rindex(")")])[0]
    assert meta["not_computed"] == {"planning": "no --judge"}
    bench = get_benchmark("ultratool")
    judged = build_scorer(bench, bench.split("planning", "en"),
                          context=ScoringContext(judge=ScriptedChatModel(rules=[])))
    assert judged.not_computed == {} and judged.headline == ("planning",)
