"""The metrics of a run under seeded tool faults (:mod:`tooleval_agents.tool_faults` injects
them and writes a ``tool_faults`` record into each example's trace): how many examples met a
fault, how many of those still succeeded, the calls wasted, the retries per fault and the calls
made after a persistent one. They are read from the results alone, so a re-score computes them
without the run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tooleval_agents.contracts import ExampleScore, Metrics, Part, Scorer
from tooleval_agents.results.corpus import Scores, as_corpus

METRICS = ("faulted_examples", "recovery_rate", "wasted_calls", "retries_per_fault",
           "calls_after_persistent_fault")
PERCENT = frozenset(METRICS[:3])
"""The metrics that are percentages; the others are counts per fault or per example."""


def _summary(trace: Sequence[Any] | None) -> Mapping[str, Any] | None:
    return next((r for r in trace or () if isinstance(r, Mapping)
                 and r.get("kind") == "tool_faults"), None)


def succeeded(score: ExampleScore, key: str) -> bool:
    """Whether an example reached the headline metric ``key`` in full."""
    if key in score.scores:
        return score.scores[key] >= 100.0
    part = score.parts.get(key)
    return part is not None and part.total > 0 and part.hits >= part.total


def fault_parts(outputs: Mapping[str, Any], score: ExampleScore, headline: str) -> ExampleScore:
    """The fault parts of one example, from its trace's ``tool_faults`` record."""
    summary = _summary(outputs.get("trace")) or {}
    faults = int(summary.get("faults") or 0)
    hit = faults > 0
    persistent = bool(summary.get("persistent"))
    return ExampleScore(parts={
        "faulted_examples": Part(hits=hit, total=1),
        "recovery_rate": Part(hits=hit and succeeded(score, headline), total=hit),
        # A summary written before wasted calls were counted has no "wasted": n/a, not 0.
        "wasted_calls": Part(hits=int(summary.get("wasted") or 0),
                             total=int(summary.get("calls") or 0) if "wasted" in summary else 0),
        "retries_per_fault": Part(hits=int(summary.get("retries") or 0), total=faults),
        "calls_after_persistent_fault": Part(
            hits=int(summary.get("calls_after_persistent") or 0) if persistent else 0,
            total=persistent)})


def fault_metrics(scores: Scores) -> Metrics:
    """``faulted_examples`` (% of examples with a fault), ``recovery_rate`` (% of those that
    still succeed), ``wasted_calls`` (% of the executed calls that did not contribute: the
    faulted ones, and every repeat of a call, same tool and arguments, that had already been
    answered without a fault), ``retries_per_fault`` and ``calls_after_persistent_fault`` (per
    example with a persistent fault). Each pools hits over totals across the examples, and is
    n/a where nothing was counted (no example faulted; for ``wasted_calls``: no call made)."""
    c = as_corpus(scores)
    out: Metrics = {}
    for key in METRICS:
        value = c.pooled(key)
        out[key] = value if key in PERCENT or value is None else value / 100.0
    return out


def with_fault_metrics(scorer: Scorer) -> Scorer:
    """``scorer`` with the fault parts of each example and the fault metrics of the run."""
    headline = scorer.headline[0] if scorer.headline else ""

    def score(inputs: dict[str, Any], outputs: dict[str, Any],
              reference: dict[str, Any]) -> ExampleScore:
        value = scorer.score(inputs, outputs, reference)
        return value.merge(fault_parts(outputs, value, headline))

    async def ascore(inputs: dict[str, Any], outputs: dict[str, Any],
                     reference: dict[str, Any]) -> ExampleScore:
        assert scorer.ascore is not None
        value = await scorer.ascore(inputs, outputs, reference)
        return value.merge(fault_parts(outputs, value, headline))

    def aggregate(scores: Scores) -> Metrics:
        return {**scorer.aggregate(scores), **fault_metrics(scores)}

    return Scorer(score=score, aggregate=aggregate, headline=scorer.headline,
                  ascore=ascore if scorer.ascore is not None else None,
                  count_metrics=(*scorer.count_metrics,
                                 *(m for m in METRICS if m not in PERCENT)),
                  higher_is_better=(*scorer.higher_is_better, "recovery_rate"),
                  lower_is_better=(*scorer.lower_is_better, "wasted_calls"))
