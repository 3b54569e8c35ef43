"""A run's summary from its results, in one pass: metrics pooled by the scorer's aggregate, counts,
token usage, latency, confidence intervals, epochs and cost (the runner's and re-scoring's one
computation)."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from tooleval_agents.contracts import ExampleScore, Metrics
from tooleval_agents.models.tool_calls.counts import (
    FORMAT_ERRORS,
    CallTally,
    format_notes,
    tool_call_notes,
)
from tooleval_agents.results.corpus import Columns, aggregate_resamples, counts_of
from tooleval_agents.results.costs import run_cost
from tooleval_agents.results.dirlock import (
    LOCK as LOCK,  # the run directory's files, with CONFIG...
)
from tooleval_agents.results.dirlock import RunLockedError as RunLockedError
from tooleval_agents.results.intervals import bootstrap_intervals, vectorized_intervals
from tooleval_agents.results.rundir import ExampleResult, ResultHead, RunSummary, ScoreHead
from tooleval_agents.run.epochs import BinaryTally, epoch_summary

USAGE_KEYS = ("input_tokens", "output_tokens", "cached_input_tokens", "model_calls",
              "cache_hits", "batched_calls", "batched_input_tokens", "batched_output_tokens",
              "batched_cached_input_tokens")
"""Per-example usage fields summed into a summary's ``usage``."""


BATCHED = ("batched_calls", "batched_input_tokens", "batched_output_tokens",
           "batched_cached_input_tokens")
"""The usage of calls answered through a provider batch (``--batch``), priced at batch rates."""

JUDGE_KEYS = {"input_tokens": "judge_input_tokens", "output_tokens": "judge_output_tokens",
              "cached_input_tokens": "judge_cached_input_tokens", "model_calls": "judge_calls",
              **{k: f"judge_{k}" for k in USAGE_KEYS if k.startswith("batched_")}}
"""The judge's usage fields and their keys in a summary's ``usage``."""


class _Pass:
    """What one pass over a run's results keeps (:func:`summarize`)."""

    def __init__(self, *, epochs: int, headline: Sequence[str]) -> None:
        self.epochs, self.headline = epochs, headline
        self.counts = Counter[str]()
        self.totals = dict.fromkeys([*USAGE_KEYS, *JUDGE_KEYS.values()], 0.0)
        self.latencies: list[float] = []
        self.columns = Columns()  # a few numbers per example, not the scores
        # Per scored attempt: its example and the scores success counting and epochs read.
        self.per_attempt: list[tuple[int, dict[str, float]]] = []
        self.tally = BinaryTally()
        self.scored = self.recorded = 0
        self.groups: dict[int, list[int]] = {}
        self.calls = CallTally()
        self.first_format_error: str | None = None  # quoted by the note on format errors

    def add(self, r: ExampleResult | ResultHead) -> None:
        self.recorded += 1
        self.counts[r.status] += 1
        self.counts["retried"] += r.retries > 0 or r.attempt > 1
        self.counts["cached"] += r.usage.cache_hits > 0 and r.usage.model_calls == 0
        for k in USAGE_KEYS:
            self.totals[k] += getattr(r.usage, k)
        for field, key in JUDGE_KEYS.items():
            self.totals[key] += getattr(r.judge_usage, field)
        if r.status != "infra_error":
            self._score(r)

    def _score(self, r: ExampleResult | ResultHead) -> None:
        self.calls.add(r.tool_calls)
        if r.score is None:
            raise ValueError(f"example {r.example_id} has no stored score: re-score the run")
        score = (r.score.example_score() if isinstance(r.score, ScoreHead)
                 else ExampleScore.model_validate(r.score))
        self.counts["scoring_errors"] += score.error is not None
        if (format_error := r.format_error) is not None:
            self.counts[FORMAT_ERRORS] += 1
            self.first_format_error = self.first_format_error or format_error
        if "judge" in score.labels:
            self.counts[f"verdict_{score.labels['judge']}"] += 1
        self.latencies.append(r.latency_s)
        if self.epochs > 1:  # the intervals resample attempt groups
            self.groups.setdefault(r.index, []).append(self.scored)
        shown = {k: v for k, v in score.scores.items()
                 if not self.headline or k in self.headline}
        self.tally.add(shown)
        self.scored += 1
        if self.epochs > 1:  # pass@k and the spread need each attempt's scores
            self.per_attempt.append((r.index, shown))
        self.columns.add(score)

    def summary_counts(self, examples: int) -> dict[str, Any]:
        c = self.counts
        out: dict[str, Any] = {
            "examples": examples, "scored": self.scored, "ok": c["ok"],
            "model_errors": c["model_error"], "infra_errors": c["infra_error"],
            "not_run": examples - self.recorded, "retried": c["retried"],
            "cached": c["cached"], "scoring_errors": c["scoring_errors"],
            FORMAT_ERRORS: c[FORMAT_ERRORS],
            **self.calls.counts(),
        }
        # Judged scorers label each example ``judge``: ok / error / missing_prediction. A run
        # whose judge answered nothing must not pass for one that scored 0 (``tooleval run``).
        if any(k.startswith("verdict_") for k in c):
            out["judged"] = c["verdict_ok"]
            out["judge_errors"] = c["verdict_error"]
        return out

    def usage(self) -> dict[str, float]:
        n = self.recorded
        return {**self.totals, **{f"{k}_per_example": (self.totals[k] / n if n else 0.0)
                                  for k in ("input_tokens", "output_tokens", "model_calls")}}

    def latency(self, wall_s: float | None) -> dict[str, float]:
        lat = sorted(self.latencies)
        latency: dict[str, float] = {}
        if lat:
            latency = {"mean": statistics.fmean(lat), "p50": lat[len(lat) // 2],
                       "p95": lat[min(len(lat) - 1, int(0.95 * len(lat)))], "max": lat[-1]}
        if wall_s is not None:
            latency["wall"] = wall_s
        return latency

    def intervals(self, aggregate: Callable[[Any], Metrics], metrics: dict[str, Any],
                  binary: list[str]) -> dict[str, list[float]]:
        if not self.scored:
            return {}
        if self.epochs == 1:  # one attempt per example: a group is a row
            return vectorized_intervals(self.columns, aggregate, list(metrics))
        names = list(metrics)

        def pool(drawn: list[int]) -> dict[str, float | None]:
            row = aggregate_resamples(aggregate, self.columns,
                                      [counts_of([drawn], self.scored)], names)[0]
            return {k: None if v != v else float(v) for k, v in zip(names, row, strict=True)}

        def statistic(sample: list[Sequence[int]]) -> dict[str, float | None]:
            out = pool([i for g in sample for i in g])
            if self.epochs > 1:  # pass@k / pass^k of the resampled examples
                out.update(epoch_summary([(j, self.per_attempt[i][1])
                                          for j, g in enumerate(sample) for i in g],
                                         self.epochs, binary)[0])
            return out

        return bootstrap_intervals(list(self.groups.values()), statistic)


def summarize(experiment: str, aggregate: Callable[[Any], Metrics],
              results: Iterable[ExampleResult | ResultHead], *, examples: int,
              wall_s: float | None = None, epochs: int = 1,
              headline: Sequence[str] = (), model: str | None = None,
               judge: str | None = None,
               not_computed: Mapping[str, str] | None = None) -> RunSummary:
    """The one summary computation (the runner's and re-scoring's): metrics pooled by
    ``aggregate`` over the stored scores of every non-infra result; infra errors, examples not
    run yet, retries and cache hits counted apart; token usage (totals and means over every
    recorded result, infra errors included) and latency (over the scored results).
    :func:`tooleval_agents.results.compare.costs` uses the same definitions.

    ``results`` are read once, one at a time (a :class:`ResultHead` is enough: only the
    small fields and the score are read); only a few numbers per example are kept
    (``aggregate`` takes a :class:`~tooleval_agents.results.corpus.Corpus`), and the confidence
    intervals pool every resample at once.
    ``not_computed``: the scorer's metrics it could not compute, with why
    (:attr:`~tooleval_agents.contracts.Scorer.not_computed`).

    Raises:
        ValueError: a non-infra result without a stored score.
    """
    seen = _Pass(epochs=epochs, headline=headline)
    for r in results:
        seen.add(r)
    summary_counts = seen.summary_counts(examples)
    usage = seen.usage()
    # None (n/a: nothing to count) stays None: JSON null, shown as "n/a (0 of N)".
    metrics = ({k: None if v is None else float(v)
                for k, v in aggregate(seen.columns.corpus()).items()}
               if seen.scored else {})
    binary = seen.tally.binary(list(headline or metrics))
    ci = seen.intervals(aggregate, metrics, binary)
    spread: dict[str, Any] = {}
    if epochs > 1:
        summary_counts["epochs"] = epochs
        extra, sd = epoch_summary(seen.per_attempt, epochs, binary)
        metrics.update(extra)
        spread = {"n": epochs, "sd": sd}
    # A success is a 100 on the first success-type headline metric (e.g. AppBench success).
    success_metric, won = seen.tally.successes(list(headline or metrics))
    cost = run_cost(model=model, judge=judge, usage=usage, examples=seen.recorded,
                    successes=won)
    if success_metric is not None:
        cost["success_metric"] = success_metric
    missing = {k: v for k, v in (not_computed or {}).items() if k not in metrics}
    notes = [*tool_call_notes(summary_counts),
             *format_notes(summary_counts, seen.first_format_error)]
    return RunSummary(experiment=experiment, metrics=metrics, counts=summary_counts,
                      format_error_rate=(summary_counts[FORMAT_ERRORS] / seen.scored
                                         if seen.scored else None),
                      not_computed=missing, usage=usage, latency_s=seen.latency(wall_s),
                      ci=ci, epochs=spread, cost=cost, notes=notes)


