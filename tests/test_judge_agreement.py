"""``tooleval judge agreement``: a live judge re-scores the plans of recorded judgments and the
two are correlated per dimension (Pearson, Spearman, bootstrap CIs), with scripted judges on a
loopback server: one that agrees, one that gives every plan the same score (n/a, not 0)."""

from __future__ import annotations

import json
import runpy
import statistics
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_judges import DIMENSIONS, VERDICT
from fake_langsmith import openai_on_loopback
from fake_openai import ChatRequest, FakeOpenAI
from typer.testing import CliRunner

from tooleval_agents.cli import app
from tooleval_agents.evaluators.ultratool.judge.agreement import correlate, pearson, spearman

KEYS = {"accuracy": "Accuracy Score", "completeness": "Completeness Score",
        "executability": "Executability Score", "syntactic_soundness": "Syntactic Soundness Score",
        "structural_rationality": "Structural Rationality Score",
        "efficiency": "Efficiency Score", "overall": "Overall Score"}


@pytest.fixture(autouse=True)
def _loopback(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with openai_on_loopback(monkeypatch, "sk-test-agreement"):
        yield


def recorded(path: Path, n: int = 8) -> dict[str, dict[str, int]]:
    """A planning_eval.json in the official format: plan text -> its recorded scores."""
    plans = {}
    lines = []
    for i in range(n):
        plan = f"1. Step one of plan {i}\n2. Step two of plan {i}"
        scores = {k: 1 + (i * (j + 2)) % 10 for j, k in enumerate(KEYS)}
        plans[plan] = scores
        lines.append(json.dumps({
            "data": {"data": {"input": f"Question {i}?", "reference": "1. Do it"},
                     "init output": plan},
            "eval": [{"Reasoning": "r", KEYS[k]: v} for k, v in scores.items()]}))
    path.write_text("\n".join(lines) + "\n")
    return plans


def agreement(path: Path, url: str, *extra: str) -> Any:
    result = CliRunner().invoke(app, ["judge", "agreement", "--judge", "openai:checked",
                                      "--judge-arg", f"base_url={url}", "--judgments",
                                      str(path), "--n-boot", "200", "--json",
                                      *(() if "--lang" in extra else ("--lang", "en")), *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_judge_that_agrees_correlates_1_and_a_constant_one_is_na(tmp_path: Path) -> None:
    """The statistics on known cases: a judge echoing the recorded scores (correlation 1 by
    construction) and one giving 8 to everything (no spread: n/a)."""
    path = tmp_path / "planning_eval.json"
    plans = recorded(path)

    def mirror(req: ChatRequest) -> str:
        scores = next(s for plan, s in plans.items() if plan in req.prompt)
        return json.dumps({d: {"reason": "as recorded", "score": scores[d]} for d in DIMENSIONS})

    with FakeOpenAI(mirror) as server:
        report = agreement(path, server.base_url)
        assert len(server.log) == 8
    assert report["judged"] == 8 and report["live_errors"] == 0
    for key, c in report["dimensions"].items():
        assert c["n"] == 8 and c["mean_abs_diff"] == 0.0, key
        assert c["spearman"] == pytest.approx(1.0) and c["pearson"] == pytest.approx(1.0), key
        assert c["spearman_ci"][0] == pytest.approx(1.0)

    with FakeOpenAI(lambda req: VERDICT) as server:  # 8 for every plan: no spread
        flat = agreement(path, server.base_url, "--limit", "5")
    assert flat["judged"] == 5
    assert all(c["pearson"] is None and c["spearman"] is None
               for c in flat["dimensions"].values())


def test_the_published_gpt4_judgments_are_read_and_paired_with_a_mirroring_judge(
        shared_data: Path) -> None:
    """The plumbing over the published file: each recorded plan reaches the live judge and its
    recorded scores are paired with the live ones. The "live judge" here echoes the recorded
    scores (agreement 1 by construction), so what this proves is the reading and pairing, not
    a judge's agreement."""
    path = shared_data / "ultratool/predictions/English-dataset/gpt-4/eval/planning_eval.json"
    lines = [json.loads(x) for x in path.read_text().splitlines()[:12]]

    def mirror(req: ChatRequest) -> str:
        line = next(x for x in lines if x["data"]["init output"].strip()[:200] in req.prompt)
        scores = {k: next(v for e in line["eval"] for kk, v in e.items() if kk == name)
                  for k, name in KEYS.items()}
        return json.dumps({d: {"reason": "as recorded", "score": scores[d]} for d in DIMENSIONS})

    with FakeOpenAI(mirror) as server:
        report = agreement(path, server.base_url, "--limit", "12")
    assert report["judged"] == 12 and report["live_errors"] == 0
    overall = report["dimensions"]["overall"]
    assert overall["n"] == 12 and overall["mean_abs_diff"] == 0.0


def test_correlations_handle_ties_and_too_few_pairs() -> None:
    assert spearman([1, 1, 2, 3], [5, 5, 6, 9]) == pytest.approx(1.0)
    few = correlate([1, 2], [2, 1], n_boot=10)
    assert few.pearson is None and few.pearson_ci is None and few.n == 2


def test_a_correlation_is_the_same_float_on_every_python() -> None:
    # statistics.correlation gives ...957 on Python 3.11 and ...959 on 3.12 and 3.13 (sumprod);
    # ours is 3.11's formula over exact sums, the same everywhere.
    x, y = [1, 1, 9, 1, 7, 4], [7, 1, 9, 4, 8, 8]
    assert pearson(x, y) == 0.7337840545135957
    assert pearson(x, y) == pytest.approx(statistics.correlation(x, y), rel=1e-15)


def test_official_judge_prompts_reach_the_live_judge(shared_data: Path) -> None:
    # The recorded GPT-4 judgments were made with the official templates: --prompts official
    # sends those (read from the fetched evaluation/config.py) and reads the official layout.
    path = shared_data / "ultratool/predictions/English-dataset/gpt-4/eval/planning_eval.json"
    lines = [json.loads(x) for x in path.read_text().splitlines()[:3]]
    config = runpy.run_path(str(shared_data / "ultratool/evaluation/config.py"))
    head = config["en_prompt_plan"].split("{question}")[0].replace("{{", "{").replace("}}", "}")

    def official(req: ChatRequest) -> str:
        assert req.prompt.startswith(head.strip()) or head.strip() in req.prompt
        line = next(x for x in lines if x["data"]["init output"].strip()[:200] in req.prompt)
        return json.dumps(line["eval"])  # the recorded answer, official keys and all

    with FakeOpenAI(official) as server:
        report = agreement(path, server.base_url, "--limit", "3", "--prompts", "official",
                           "--data-dir", str(shared_data))
        assert len(server.log) == 3
    assert report["judged"] == 3 and report["live_errors"] == 0
    assert report["dimensions"]["overall"]["mean_abs_diff"] == 0.0
