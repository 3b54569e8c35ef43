"""Re-scoring recorded judgments reproduces the paper; the planning/tool-creation entry points."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from fake_judges import StepJudge

from tooleval_agents.contracts import ExampleScore
from tooleval_agents.errors import DataFormatError
from tooleval_agents.evaluators.ultratool.judge.entry import ultratool_judge
from tooleval_agents.evaluators.ultratool.judge.prompts import DIMENSIONS
from tooleval_agents.evaluators.ultratool.judge.replay import (
    ascore_planning,
    ascore_tool_creation,
    read_judgments,
    replay_planning,
    replay_tool_creation,
    score_planning,
    score_tool_creation,
)
from tooleval_agents.evaluators.ultratool.judge.verdicts import JUDGE_ERROR
from tooleval_agents.ultratool.loaders import load_task
from tooleval_agents.ultratool.records import Lang

# UltraTool paper, Table 2 "Planning / Global" column (GPT-3.5, GPT-4 rows) and Table 4
# (Accuracy, Completeness, Executability, Syntactic Soundness, Structural Rationality,
# Efficiency, Overall), typed from ../shared/papers/ultratool-paper.txt.
PAPER = {
    ("zh", "gpt-3.5"): (76.43, 70.26, 73.14, 80.94, 72.26, 75.10, 69.50),
    ("zh", "gpt-4"): (79.56, 77.53, 78.31, 81.21, 78.19, 78.60, 76.39),
    ("en", "gpt-3.5"): (76.61, 69.25, 72.13, 84.25, 71.52, 72.11, 69.74),
    ("en", "gpt-4"): (77.59, 76.17, 77.00, 85.18, 76.53, 75.14, 74.07),
}
DIRS = {"en": "English-dataset", "zh": "Chinese-dataset"}
METRICS = [f"planning_{d.key}" for d in DIMENSIONS["planning"]] + ["planning"]


def _eval_file(shared_data: Path, lang: str, model: str) -> Path:
    return shared_data / "ultratool" / "predictions" / DIRS[lang] / model / "eval" / \
        "planning_eval.json"


@pytest.mark.parametrize(("lang", "model"), list(PAPER))
def test_published_judgments_reproduce_table_2_and_4(shared_data: Path, lang: str,
                                                     model: str) -> None:
    report = replay_planning(_eval_file(shared_data, lang, model))
    assert report.n == 1000 and report.mode == "replay" and report.lang == lang
    got = tuple(round(report.metrics[m], 2) for m in METRICS)
    assert got == PAPER[(lang, model)]
    assert len(report.examples) == 1000


def test_partly_invalid_published_judgment_is_flagged_but_keeps_its_valid_overall(
        shared_data: Path) -> None:
    # zh GPT-3.5 line 221 scores every dimension 0 (outside 1-10) and overall 1.
    report = replay_planning(_eval_file(shared_data, "zh", "gpt-3.5"))
    assert report.judge_errors == 1 and report.metrics["planning_judge_errors"] == 1
    bad = report.judgments[220]
    assert bad.error is not None and "0 is outside 1-10" in bad.error and bad.overall == 1
    assert bad.scores == {}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_score_planning_replays_official_file_aligned_with_records(shared_data: Path,
                                                                   lang: Lang) -> None:
    records = load_task(shared_data, "planning", lang)
    pred_path = shared_data / "ultratool" / "predictions" / DIRS[lang] / "gpt-4" / \
        "planning.json"
    outputs = [json.loads(line)["init output"] for line in
               pred_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    report = score_planning(records, outputs, judgments_path=_eval_file(shared_data, lang,
                                                                        "gpt-4"), lang=lang)
    assert round(report.metrics["planning"], 2) == PAPER[(lang, "gpt-4")][-1]
    assert "plan_rouge_l" in report.metrics and report.mode == "replay"


def _official_lines(shared_data: Path, n: int) -> list[str]:
    with _eval_file(shared_data, "en", "gpt-4").open(encoding="utf-8") as fh:
        return [next(fh) for _ in range(n)]


def test_misaligned_judgments_are_a_clear_error(shared_data: Path, tmp_path: Path) -> None:
    records = load_task(shared_data, "planning", "en")[:3]
    path = tmp_path / "eval.json"
    path.write_text("".join(_official_lines(shared_data, 2)), encoding="utf-8")
    with pytest.raises(DataFormatError, match="2 recorded judgments for 3 records"):
        score_planning(records, ["1. x"] * 3, judgments_path=path, lang="en")
    shifted = load_task(shared_data, "planning", "en")[1:3]
    with pytest.raises(DataFormatError, match="differs from record 0"):
        score_planning(shifted, ["1. x"] * 2, judgments_path=path, lang="en")


def test_broken_line_counts_zero_and_is_reported(shared_data: Path, tmp_path: Path) -> None:
    lines = _official_lines(shared_data, 2)
    overall = [json.loads(line)["eval"][-1]["Overall Score"] for line in lines]
    path = tmp_path / "eval.json"
    path.write_text(lines[0] + "{not json\n" + lines[1], encoding="utf-8")
    report = replay_planning(path)
    assert report.n == 3 and report.judge_errors == 1
    assert report.metrics["planning"] == pytest.approx(10 * sum(overall) / 3)
    assert report.metrics["planning_judged"] == pytest.approx(10 * sum(overall) / 2)
    assert "eval.json:2: invalid JSON" in (report.judgments[1].error or "")


def test_without_judge_only_structure_metrics(shared_data: Path) -> None:
    records = load_task(shared_data, "planning", "en")[:5]
    report = score_planning(records, [r.reference for r in records], lang="en")
    assert report.mode == "structure_only"
    assert "planning" not in report.metrics and "planning_accuracy" not in report.metrics
    assert report.metrics["plan_rouge_l"] == 100.0
    assert any("absent (not 0)" in note for note in report.notes)


def test_live_planning_judgments_round_trip_through_replay(tmp_path: Path) -> None:
    records = [{"input": f"task {i}", "reference": "1. a\n1.1 b"} for i in range(4)]
    outputs = ["1. GOOD a\n1.1 b", "1. so-so", None, {"output": "1. BROKEN"}]
    out = tmp_path / "judgments.jsonl"
    live = score_planning(records, outputs, judge=StepJudge(), lang="en", max_retries=1,
                          judgments_out=out)
    # 90 + 30 + 0 (no plan) + 0 (judge error), over all 4 samples.
    assert live.metrics["planning"] == pytest.approx((90 + 30) / 4)
    assert live.judge_errors == 1 and live.missing_predictions == 1
    assert live.metrics["planning_efficiency"] == pytest.approx((50 + 50) / 4)
    replayed = score_planning(records, outputs, judgments_path=out, lang="en")
    assert replayed.metrics == live.metrics
    assert replay_planning(out).metrics["planning"] == live.metrics["planning"]
    assert [e.judgment.index for e in read_judgments(out)] == [0, 1, 2, 3]


TOOL = {"name": "t", "description": "d", "arguments": {"type": "object", "properties": {}},
        "results": {"type": "object", "properties": {}}}


def test_tool_creation_live_replay_and_structure_only(tmp_path: Path) -> None:
    records = [{"reference": [{"step": "1.1 make a", "tool": TOOL},
                              {"step": "1.2 make b", "tool": TOOL}]},
               {"reference": [{"step": "2.1 make c", "tool": TOOL}]}]
    outputs = [[{"step": "1.1 make a", "tool": {**TOOL, "name": "GOOD"}}],
               "[{'step': '2.1 make c', 'tool': {'name': 'meh'}}]"]
    out = tmp_path / "tools.jsonl"
    live = score_tool_creation(records, outputs, judge=StepJudge(), lang="en",
                               judgments_out=out)
    # Pooled over the 3 gold steps: 90 (GOOD) + 0 (no tool for 1.2) + 30.
    assert live.metrics["tool_creation"] == pytest.approx(120 / 3)
    assert live.missing_predictions == 1 and live.judge_errors == 0
    replayed = score_tool_creation(records, outputs, judgments_path=out, lang="en")
    assert replayed.metrics == live.metrics
    assert replay_tool_creation(out).metrics["tool_creation"] == pytest.approx(120 / 3)
    offline = score_tool_creation(records, outputs, lang="en")
    assert offline.mode == "structure_only" and "tool_creation" not in offline.metrics
    assert offline.metrics["tool_creation_answered"] == pytest.approx(200 / 3)
    assert offline.metrics["tool_creation_schema_valid"] == pytest.approx(100 / 3)


def test_one_entry_judges_live_replays_or_scores_the_structure(tmp_path: Path) -> None:
    records = [{"input": f"task {i}", "reference": "1. a\n1.1 b"} for i in range(2)]
    outputs = ["1. GOOD a\n1.1 b", "1. so-so"]
    out = tmp_path / "judgments.jsonl"
    live = ultratool_judge("planning", lang="en", model=StepJudge())
    assert live.mode == "judge"
    judged = live.score(records, outputs, judgments_out=out)
    assert judged.metrics["planning"] == pytest.approx((90 + 30) / 2)
    one = live.score_example(records[0], {"prediction": outputs[0]}, records[0])
    assert one.scores["planning"] == 90.0 and one.labels.get("judge") != JUDGE_ERROR
    replayed = ultratool_judge("planning", lang="en", judgments=out)
    assert replayed.mode == "replay" and replayed.score(records, outputs).metrics == \
        judged.metrics
    assert replayed.replay().metrics["planning"] == judged.metrics["planning"]
    offline = ultratool_judge("planning", lang="en")
    assert offline.mode == "structure_only"
    with pytest.raises(ValueError, match="pass a judge model"):
        offline.score_example(records[0], {"prediction": outputs[0]}, records[0])
    with pytest.raises(ValueError, match="planning or tool_creation"):
        ultratool_judge("tool_usage")  # type: ignore[arg-type]


def test_ascore_planning_and_tool_creation() -> None:
    records = [{"input": f"task {i}", "reference": "1. a\n1.1 b"} for i in range(3)]
    plans = asyncio.run(ascore_planning(records, ["1. GOOD a", "1. so-so", None],
                                        judge=StepJudge(), lang="en", max_concurrency=2))
    assert plans.metrics["planning"] == pytest.approx((90 + 30 + 0) / 3)
    assert plans.missing_predictions == 1 and len(plans.judgments) == 3
    tool_records = [{"reference": [{"step": "1.1 make a", "tool": TOOL},
                                   {"step": "1.2 make b", "tool": TOOL}]}]
    tools = asyncio.run(ascore_tool_creation(
        tool_records, [[{"step": "1.1", "tool": {"name": "GOOD"}}]], judge=StepJudge(),
        lang="en"))
    assert tools.metrics["tool_creation"] == pytest.approx(90 / 2)
    assert isinstance(tools.examples[0], ExampleScore)
