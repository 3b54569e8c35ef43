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
    AGENT_USAGE,
    FOREIGN,
    FORMAT_ERRORS,
    CallTally,
    foreign_notes,
    format_notes,
    tool_call_notes,
)
from tooleval_agents.results.corpus import Columns, aggregate_resamples, counts_of
from tooleval_agents.results.costs import run_cost
from tooleval_agents.results.dirlock import (
    LOCK as LOCK,  # the run directory's files, with CONFIG...
)
from tooleval_agents.results.dirlock import RunLockedError as RunLockedError
from tooleval_agents.results.epochs import BinaryTally, epoch_summary
from tooleval_agents.results.intervals import bootstrap_intervals, vectorized_intervals
from tooleval_agents.results.records import ExampleResult, ResultBase, ResultHead, ScoreHead
from tooleval_agents.results.rundir import RunDir, RunSummary

USAGE_KEYS = ("input_tokens", "output_tokens", "cached_input_tokens", "model_calls",
              "unknown_usage", "batched_calls", "batched_input_tokens", "batched_output_tokens",
              "batched_cached_input_tokens")
"""The answers' usage a summary totals (the same on a cold and a warm response cache; how
many came from the cache is in ``spent`` and ``session``)."""
BATCHED = ("batched_calls", "batched_input_tokens", "batched_output_tokens",
           "batched_cached_input_tokens")
"""The usage of calls answered through a provider batch (``--batch``), priced at batch rates."""
SPENT_KEYS = ("model_calls", "input_tokens", "output_tokens", "cached_input_tokens",
              "cache_hits", "judge_calls", "judge_input_tokens", "judge_output_tokens",
              "judge_cached_input_tokens", *BATCHED, *(f"judge_{k}" for k in BATCHED))
"""What was paid for results (:class:`Spend`): provider calls, their tokens, cache hits, and
what of them went through a batch."""
JUDGE_KEYS = {"input_tokens": "judge_input_tokens", "output_tokens": "judge_output_tokens",
              "cached_input_tokens": "judge_cached_input_tokens", "model_calls": "judge_calls",
              **{k: f"judge_{k}" for k in BATCHED}}
"""The judge's usage fields and their keys in a summary's ``usage``."""


class Spend:
    """What was paid for results, added line by line (:attr:`ResultBase.spent`, the judge's
    included): :data:`SPENT_KEYS` totals."""

    def __init__(self) -> None:
        self.totals = dict.fromkeys(SPENT_KEYS, 0)

    def add(self, r: ResultBase) -> None:
        t = self.totals
        for prefix, calls, paid in (("", "model_calls", r.spent),
                                    ("judge_", "judge_calls", r.judge_spent)):
            if paid is not None:
                t[calls] += paid.model_calls
                t[f"{prefix}input_tokens"] += paid.input_tokens
                t[f"{prefix}output_tokens"] += paid.output_tokens
                t[f"{prefix}cached_input_tokens"] += paid.cached_input_tokens
                for k in BATCHED:
                    t[f"{prefix}{k}"] += getattr(paid, k)
        t["cache_hits"] += r.spent.cache_hits if r.spent is not None else 0

    def priced(self, *, model: str | None, judge: str | None) -> dict[str, Any]:
        """The totals with their dollars (``usd``; ``None`` at an unknown price)."""
        cost = run_cost(model=model, judge=judge,
                        usage={k: float(v) for k, v in self.totals.items()}, examples=0,
                        successes=None)
        return {**self.totals, "usd": cost["total_usd"]}


def agent_error_line(result: ResultBase) -> str:
    """An ``agent_error`` in one line: the error and where the user's code raised it."""
    where = f" (at {result.error_at})" if result.error_at else ""
    return f"{result.error or result.error_kind or 'the agent raised'}{where}"


def _agent_usage_notes(counts: dict[str, Any]) -> list[str]:
    """What to know of an agent command's token usage (nothing when it reported it all)."""
    missing = int(counts.get(AGENT_USAGE[False], 0))
    if not missing:
        return []
    total = missing + int(counts.get(AGENT_USAGE[True], 0))
    return [f"the agent reported no token usage for {missing} of {total} examples: their "
            "tokens and cost are not reported (an agent writes them to $TOOLEVAL_USAGE_FILE; "
            "docs/mcp.md)"]


class _Pass:
    """What one pass over a run's results keeps (:func:`summarize`)."""

    def __init__(self, *, epochs: int, headline: Sequence[str]) -> None:
        self.epochs, self.headline = epochs, headline
        self.counts = Counter[str]()
        self.totals = dict.fromkeys([*USAGE_KEYS, *JUDGE_KEYS.values()], 0.0)
        self.spend = Spend()
        self.first_agent_error: str | None = None  # quoted by the note on agent errors
        self.agent_error_kinds = Counter[str]()  # said by it
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
        self.counts["cached"] += 0 < r.usage.cache_hits == r.usage.model_calls
        self.spend.add(r)
        if r.status == "agent_error":
            self.agent_error_kinds[r.error_kind or "unknown"] += 1
            if self.first_agent_error is None:
                self.first_agent_error = agent_error_line(r)
        if r.usage_reported is not None:  # an agent command's: its usage is its to report
            self.counts[AGENT_USAGE[r.usage_reported]] += 1
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
            "model_errors": c["model_error"], "agent_errors": c["agent_error"],
            "infra_errors": c["infra_error"],
            "not_run": examples - self.recorded, "retried": c["retried"],
            "cached": c["cached"], "scoring_errors": c["scoring_errors"],
            FORMAT_ERRORS: c[FORMAT_ERRORS],
            **self.calls.counts(),
            **({**{k: c[k] for k in AGENT_USAGE.values()}, FOREIGN: self.calls.totals.foreign}
               if c[AGENT_USAGE[True]] or c[AGENT_USAGE[False]] else {}),
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
                    successes=won,
                    not_reported=summary_counts.get(AGENT_USAGE[True]) == 0)
    if success_metric is not None:
        cost["success_metric"] = success_metric
    missing = {k: v for k, v in (not_computed or {}).items() if k not in metrics}
    notes = [*tool_call_notes(summary_counts),
             *format_notes(summary_counts, seen.first_format_error),
             *_usage_notes(summary_counts, usage, seen.first_agent_error,
                           seen.agent_error_kinds),
             *_agent_usage_notes(summary_counts), *foreign_notes(summary_counts)]
    return RunSummary(experiment=experiment, metrics=metrics, counts=summary_counts,
                      format_error_rate=(summary_counts[FORMAT_ERRORS] / seen.scored
                                         if seen.scored else None),
                      not_computed=missing, usage=usage, latency_s=seen.latency(wall_s),
                      ci=ci, epochs=spread, cost=cost, notes=notes,
                      spent=seen.spend.priced(model=model, judge=judge))


NO_TOOLS = "agent_no_tools"
"""The error kind of an outside agent that never reached its tools (its MCP session unused,
or its MCP server failed): a failure of its wiring, not of its use of tools."""


def _usage_notes(counts: Mapping[str, Any], usage: Mapping[str, float],
                 first_agent_error: str | None, kinds: Counter[str]) -> list[str]:
    """What the counts cannot say alone: the agent raised (and how: its error kinds, when
    more than one kind of error or one of its own); some tokens are unknown."""
    notes = []
    if first_agent_error is not None:
        said = ", ".join(f"{k} {n}" for k, n in kinds.most_common())
        notes.append(f"{counts['agent_errors']} of {counts['scored']} examples ended in "
                     f"agent_error (the agent or strategy raised; scored as a wrong answer"
                     f"{'; ' + said if any(k.startswith('agent_') for k in kinds) else ''}); "
                     f"first: {first_agent_error}")
    if kinds.get(NO_TOOLS):
        notes.append(f"{kinds[NO_TOOLS]} of {counts['scored']} examples: the agent never "
                     f"reached its tools ({NO_TOOLS}: its MCP server failed to connect, or "
                     "its session was never listed nor called): a wiring failure (a wrong URL "
                     "or token?), not a measure of the agent")
    if usage.get("unknown_usage"):
        notes.append(f"{int(usage['unknown_usage'])} answer(s) were replayed from response cache "
                     "entries written before the cache kept token usage: their tokens are not "
                     "in the counts (run with --no-cache to measure them)")
    return notes


def summarize_dir(run_dir: RunDir, aggregate: Callable[[Any], Metrics], *, experiment: str,
                  examples: int, **options: Any) -> RunSummary:
    """The summary of every result a run directory holds (:func:`summarize`; ``options`` are
    its keywords): the latest line of each attempt in ``(epoch, index)`` order, so a run and
    a reader that recomputes it pool the same examples in the same order; ``examples`` the
    attempts its selection holds (at least those with a result). It records the digest of the
    results it read (:attr:`~RunSummary.results_digest`)."""
    digest = run_dir.results_digest()  # before reading: an append meanwhile makes it stale
    heads = sorted(run_dir.iter_heads(), key=lambda r: (r.epoch, r.index, r.example_id))
    summary = summarize(experiment, aggregate, heads, examples=max(examples, len(heads)),
                        **options)
    return summary.model_copy(update={"results_digest": digest})
