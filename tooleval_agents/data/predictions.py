"""Scoring answers produced anywhere: a file of predictions for one split, scored by the
benchmark's own scorer (``tooleval score BENCH --predictions FILE``).

The benchmark reads the file (:meth:`~tooleval_agents.registry.Benchmark.read_predictions`),
or else :func:`~tooleval_agents.data.answers.read_answers` does (a JSON array or JSON Lines of
answer texts, or of ``{"index", "output"}`` objects);
an example the file gives no answer for is scored as an empty answer and counted, never
dropped from a denominator.

Example::

    report = score_predictions(get_benchmark("appbench"), split, "answers.jsonl", "data")
    report.metrics["success"], report.counts["missing"]
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from tooleval_agents.contracts import EMPTY_OUTPUTS, ExampleScore, Metrics, ScoringContext, Split
from tooleval_agents.data.answers import read_answers
from tooleval_agents.data.langsmith_datasets import to_examples
from tooleval_agents.registry import Benchmark, build_scorer, scoring_options_of


class PredictionReport(BaseModel):
    """Corpus metrics of a predictions file, and what was in it."""

    benchmark: str
    split: str
    """The split's dataset name, e.g. ``appbench-plan-ss``."""
    predictions: str
    """The file scored."""
    metrics: Metrics
    counts: dict[str, int] = Field(default_factory=dict)
    """``examples``, ``answered``, ``missing`` (scored as empty answers), ``scoring_errors``."""
    scoring_options: dict[str, Any] = Field(default_factory=dict)
    headline: tuple[str, ...] = Field(default=(), exclude=True)
    """The scorer's headline metrics (the columns when several files are scored); not in
    the JSON, which keeps its shape."""


def score_predictions(bench: Benchmark, split: Split, path: str | Path,
                      data_dir: str | Path, *,
                      options: Mapping[str, Any] | None = None) -> PredictionReport:
    """Score ``path`` against ``split`` with the benchmark's scorer (``options``: its scoring
    options, validated). A scorer failure on one example is recorded on it, never raised."""
    checked = scoring_options_of(bench, split, options)
    scorer = build_scorer(bench, split, checked, ScoringContext(data_dir=Path(data_dir)))
    examples = to_examples(split, Path(data_dir))
    answers = bench.read_predictions(split, Path(path), len(examples))
    if answers is None:  # the benchmark reads no format of its own
        answers = read_answers(Path(path), len(examples))
    scores: list[ExampleScore] = []
    for example, answer in zip(examples, answers, strict=True):
        try:
            scores.append(scorer.score(example.inputs or {}, answer or dict(EMPTY_OUTPUTS),
                                       example.outputs or {}))
        except Exception as exc:  # recorded on the example, which keeps its denominators
            scores.append(ExampleScore(error=f"scoring failed: {type(exc).__name__}: {exc}"))
    missing = sum(answer is None for answer in answers)
    return PredictionReport(
        benchmark=bench.name, split=split.name, predictions=str(path),
        metrics=scorer.aggregate(scores),
        counts={"examples": len(examples), "answered": len(examples) - missing,
                "missing": missing, "scoring_errors": sum(s.error is not None for s in scores)},
        scoring_options=checked, headline=tuple(scorer.headline))
