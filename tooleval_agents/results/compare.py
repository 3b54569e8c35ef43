"""Compare finished runs: corpus metrics side by side, paired bootstrap confidence intervals of
their differences, and token cost per example.

Everything is computed from the runs' stored per-example score dumps (``examples.jsonl``): no
model is called. A pair of runs over the same data (equal dataset hashes: example ids are
positions in a split, so runs over other data files, another order or another ``--limit``
are not paired) is compared on the examples both scored (infra errors are excluded from
either side); a pooled metric is recomputed on every bootstrap resample with the
benchmark's ``Scorer.aggregate``, so a micro-F1 is resampled as a micro-F1, not as a mean of
per-example F1s.

Example::

    comparison = compare(["runs/a", "runs/b"], n_boot=2000, seed=0)
    print(comparison)                   # headline metrics, paired differences, cost
    comparison.table                    # metric x run
    comparison.differences              # run_a, run_b, metric, diff (b - a), ci_low, ci_high...
    comparison.costs                    # mean tokens and model calls per example, per run
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tooleval_agents.contracts import ExampleScore, Metrics, Scorer, exact_sum
from tooleval_agents.errors import UnknownNameError, did_you_mean
from tooleval_agents.results.compare_view import (
    comparison_markdown,
    comparison_text,
    short_labels,
)
from tooleval_agents.results.corpus import Columns, aggregate_resamples, counts_of
from tooleval_agents.results.costs import run_cost
from tooleval_agents.results.epochs import successes
from tooleval_agents.results.gate import (
    GateVerdict,
    direction_of,
    gate_pair,
    pair_row,
    unpaired,
    verdict,
)
from tooleval_agents.results.records import (
    UNSEALED_NOTE,
    ExampleResult,
    ResultBase,
    ResultHead,
    RunConfig,
    ScoreHead,
)
from tooleval_agents.results.rescore import rescore_results, scorer_for
from tooleval_agents.results.rundir import RunDir, RunSummary
from tooleval_agents.results.summary import BATCHED, Spend


@dataclass
class RunData:
    """One run loaded for comparison: its config, latest results and per-example scores."""

    label: str
    """Column name in the tables (the experiment name, made unique)."""
    config: RunConfig
    results: dict[str, ExampleResult]
    """Latest result per example id, every status, without its bulky fields (outputs, inputs,
    references, model calls and score dump are emptied: a comparison reads none of them, and
    a large run would not fit twice)."""
    scores: dict[str, ExampleScore]
    """Score per example id of every example that is not an infra error (without comments
    and evidence)."""
    scorer: Scorer
    """The benchmark's scorer (its ``aggregate`` pools the stored scores)."""
    path: Path | None = None
    rescored: bool = False
    """Scores were recomputed from the stored outputs, not read from the dumps."""
    notes: list[str] = field(default_factory=list)
    format_errors: int = 0
    """Finished answers that could not be read in the task's format (scored as they are)."""
    _metrics: dict[str, float] | None = None
    _columns: tuple[tuple[str, ...], Columns] | None = None

    @property
    def infra_errors(self) -> int:
        """Examples left out of every metric (provider failures)."""
        return sum(r.status == "infra_error" for r in self.results.values())

    def metrics(self) -> dict[str, float]:
        """Corpus metrics over all scored examples (cached); NaN for a metric with nothing to
        count (n/a), so tables and differences carry it as missing."""
        if self._metrics is None:  # no scored example: no metric (not a row of zeros)
            self._metrics = (_floats(self.scorer.aggregate(list(self.scores.values())))
                             if self.scores else {})
        return self._metrics

    def columns(self, ids: Sequence[str]) -> Columns:
        """The scores of ``ids`` as columns (the last ones built are kept: a pair's point
        values and its resamples pool the same examples)."""
        key = tuple(ids)
        if self._columns is None or self._columns[0] != key:
            self._columns = (key, Columns(self.scores[i] for i in key))
        return self._columns[1]

    def point(self, ids: Sequence[str]) -> dict[str, float]:
        """Corpus metrics over ``ids``."""
        return _floats(self.scorer.aggregate(self.columns(ids).corpus()))


_BULKY: dict[str, Any] = {"outputs": {}, "inputs": {}, "reference_outputs": {},
                          "model_calls": [], "score": None}
"""What a loaded run drops of each result."""


def _small_fields(result: ExampleResult | ResultHead) -> dict[str, Any]:
    return {name: getattr(result, name) for name in ResultBase.model_fields}


def _light_score(result: ExampleResult | ResultHead, path: Path) -> ExampleScore | None:
    """The stored score without comments and evidence (None when absent)."""
    if isinstance(result, ResultHead):
        return None if result.score is None else result.score.example_score()
    try:  # a re-scored result: its fresh dump
        head = None if result.score is None else ScoreHead.model_validate(result.score)
    except ValueError as exc:
        raise ValueError(f"{path}: example {result.example_id}: malformed score dump: "
                         f"{str(exc).splitlines()[0]}") from exc
    return None if head is None else head.example_score()


def load_run(run: Path | str | RunDir | RunSummary | RunData, *, label: str | None = None,
             rescore: bool = False, scoring_options: Mapping[str, Any] | None = None,
             judge: Any = None, data_dir: Path | str | None = None) -> RunData:
    """Load a run directory for comparison.

    With ``rescore`` the stored outputs are scored again with the run's scoring options
    overridden by ``scoring_options`` (see :func:`~tooleval_agents.results.rescore.rescore_results`;
    the returned ``config.scoring_options`` are the merged ones), else the stored score dumps
    are used.

    Raises:
        FileNotFoundError: not a run directory.
        ValueError: ``scoring_options`` without ``rescore`` (stored scores were computed with
            the run's own options, so they would be silently ignored); an example that is not
            an infra error has no stored score (use ``rescore``), or a score dump is malformed.
    """
    if scoring_options and not rescore:
        raise ValueError("scoring options (-O/--option, --scoring) apply only when the stored "
                         "outputs are scored again: add --rescore (rescore=True); the stored "
                         "scores were computed with the run's own options")
    if isinstance(run, RunData):
        return run
    if isinstance(run, RunSummary):
        if run.run_dir is None:
            raise ValueError(f"the summary of {run.experiment} has no run directory: pass "
                             "the run's directory")
        run = run.run_dir
    rd = run if isinstance(run, RunDir) else RunDir(run)
    notes: list[str] = []
    stream: Iterable[ExampleResult | ResultHead]
    if rescore:
        config, rescored, scorer, notes = rescore_results(
            rd.path, judge=judge, scoring_options=scoring_options, data_dir=data_dir)
        stream = rescored.values()
    else:
        config = rd.read_config()
        stream = rd.iter_heads()  # one at a time, bulky fields skipped: light copies kept
        scorer = scorer_for(config, judge=judge, scoring_options=scoring_options,
                            stored_judge=True)
    results: dict[str, ExampleResult] = {}
    scores: dict[str, ExampleScore] = {}
    missing: list[str] = []
    format_errors = 0
    for result in stream:
        example_id = result.example_id
        format_errors += result.format_error is not None
        results[example_id] = ExampleResult.model_construct(**_small_fields(result), **_BULKY)
        if result.status == "infra_error":
            continue
        score = _light_score(result, rd.path)
        if score is None:
            missing.append(example_id)
        else:
            scores[example_id] = score
    if missing:
        raise ValueError(f"{rd.path}: {len(missing)} example(s) without a stored score (e.g. "
                         f"{missing[0]}): compare with rescore=True (--rescore) to score "
                         "their stored outputs")
    return RunData(label=label or config.experiment, config=config, results=results,
                   scores=scores, scorer=scorer, path=rd.path, rescored=rescore, notes=notes,
                   format_errors=format_errors)


@dataclass(repr=False)
class Comparison:
    """The result of :func:`compare`: pandas tables, a readable ``repr`` (the headline
    metrics, their paired differences with CIs, the cost per example) and
    :meth:`to_markdown`."""

    runs: list[RunData]
    table: pd.DataFrame
    """Metric (index) x run label (columns), each run over all its scored examples."""
    differences: pd.DataFrame
    """One row per run pair and metric: ``run_a``, ``run_b``, ``metric``, ``a``, ``b``,
    ``diff`` (b - a on the common examples), ``ci_low``, ``ci_high``, ``significant`` (the CI
    excludes 0), ``n_examples`` (common), ``only_a``, ``only_b``."""
    costs: pd.DataFrame
    """Per run (index): see :func:`costs`."""
    notes: list[str]
    n_boot: int
    seed: int
    confidence: float
    headline: list[str] = field(default_factory=list)
    """The metrics a person reads first: the runs' headline metrics (the ones asked for, when
    ``metrics`` was given). The ``repr``, :meth:`to_markdown` and ``tooleval compare`` show
    these unless asked for all; :attr:`table` and :attr:`differences` hold every one."""
    count_metrics: list[str] = field(default_factory=list)
    """Metrics that count something per example (tool calls, agent turns), not 0-100 rates
    (:attr:`~tooleval_agents.contracts.Scorer.count_metrics`)."""

    def __repr__(self) -> str:
        return comparison_text(self)

    def to_markdown(self, *, all_metrics: bool = False) -> str:
        """The tables as Markdown (the headline metrics, or every one), the runs and notes
        listed under them."""
        return comparison_markdown(self, all_metrics=all_metrics)

    def _repr_markdown_(self) -> str:  # a notebook shows the Markdown tables
        return self.to_markdown()

    def worse(self, metric: str, margin: float = 0.0, *, baseline: str | None = None,
              new: str | None = None) -> GateVerdict:
        """Whether the new run is worse than the baseline on ``metric``, beyond the paired
        interval and ``margin`` (in the metric's units; :mod:`tooleval_agents.results.gate`);
        ``baseline``, ``new``: run labels (default: the first run, the second). Raises
        :class:`UnknownNameError` for a metric or label the comparison has not, ``ValueError``
        for fewer than two runs, a negative margin or a metric without a direction."""
        labels = [r.label for r in self.runs]
        a, b = gate_pair(labels, list(self.table.index), metric, margin, baseline, new)
        scorers = [self.runs[labels.index(x)].scorer for x in (a, b)]
        short = short_labels(self.runs)
        return verdict(pair_row(self.differences, a, b, metric), metric=metric, baseline=a,
                       new=b, direction=direction_of(metric, scorers, list(self.table.index)),
                       margin=float(margin), confidence=self.confidence,
                       unpaired=unpaired(self.notes, a, b), names=(short[a], short[b]))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (NaN -> None)."""
        return {
            "runs": [{"label": r.label, "path": str(r.path) if r.path else None,
                      "experiment": r.config.experiment, "benchmark": r.config.benchmark,
                      "task": r.config.task, "subset": r.config.subset,
                      "strategy": r.config.strategy, "model": r.config.model.get("spec"),
                      "scoring_options": r.config.scoring_options,
                      "scored": len(r.scores), "infra_errors": r.infra_errors,
                      "format_errors": r.format_errors,
                      "rescored": r.rescored} for r in self.runs],
            "metrics": {m: {c: _clean(v) for c, v in row.items()}
                        for m, row in self.table.to_dict(orient="index").items()},
            "differences": [{k: _clean(v) for k, v in row.items()}
                            for row in self.differences.to_dict(orient="records")],
            "costs": {str(run): {k: _clean(v) for k, v in row.items()}
                      for run, row in self.costs.to_dict(orient="index").items()},
            "bootstrap": {"n_boot": self.n_boot, "seed": self.seed,
                          "confidence": self.confidence},
            "notes": self.notes,
        }


def _clean(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _unique_labels(runs: Sequence[RunData]) -> None:
    """Labels are table columns: runs of one experiment name get their path (else a number)."""
    counts = Counter(r.label for r in runs)
    used: set[str] = set()
    for run in runs:
        if counts[run.label] > 1:
            base = run.label
            candidate = f"{base} [{run.path}]" if run.path is not None else f"{base} [1]"
            n = 2
            while candidate in used:
                candidate = f"{base} [{n}]"
                n += 1
            run.label = candidate
        used.add(run.label)


def run_interval(run: RunData, metric: str, *, n_boot: int = 1000, seed: int = 0,
                 confidence: float = 0.95) -> tuple[float, float] | None:
    """Percentile bootstrap interval of one run's ``metric`` over its scored examples (pooled
    again per resample, as in :func:`compare`); ``None`` without resamples or a value."""
    ids = list(run.scores)
    if not ids or n_boot < 1:
        return None
    draws = _boot_metrics(run, ids, seed, n_boot, [metric])[:, 0]
    draws = draws[~np.isnan(draws)]
    if not len(draws):
        return None
    alpha = (1 - confidence) / 2
    return float(np.quantile(draws, alpha)), float(np.quantile(draws, 1 - alpha))


def _metric_order(runs: Sequence[RunData]) -> list[str]:
    names: dict[str, None] = {}
    for run in runs:
        names.update(dict.fromkeys(m for m in run.scorer.headline if m in run.metrics()))
    for run in runs:
        names.update(dict.fromkeys(run.metrics()))
    return list(names)


def _floats(metrics: Metrics) -> dict[str, float]:
    """Metrics as floats, n/a (``None``) as NaN: a difference with an n/a side is n/a."""
    return {k: np.nan if v is None else float(v) for k, v in metrics.items()}


BLOCK = 64
"""Resamples drawn and pooled at a time (memory: BLOCK x examples counts)."""


def _draws(seed: int, n_boot: int, n: int) -> Iterator[np.ndarray]:
    """The resamples' drawn positions, ``BLOCK`` rows at a time: the same numbers as one
    ``default_rng(seed).integers(0, n, size=(n_boot, n))`` draw, without holding it whole."""
    rng = np.random.default_rng(seed)
    for start in range(0, n_boot, BLOCK):
        yield rng.integers(0, n, size=(min(BLOCK, n_boot - start), n))


def _boot_metrics(run: RunData, ids: Sequence[str], seed: int, n_boot: int,
                  names: Sequence[str]) -> np.ndarray:
    """``aggregate`` of every resample: array (n_boot, len(names)), NaN for absent metrics;
    each block of resamples pooled as one matrix product."""
    return aggregate_resamples(run.scorer.aggregate, run.columns(ids),
                               (counts_of(block, len(ids))
                                for block in _draws(seed, n_boot, len(ids))), names)


def compare(runs: Sequence[Path | str | RunDir | RunSummary | RunData], *,
            metrics: Sequence[str] | None = None, n_boot: int = 2000, seed: int = 0,
            confidence: float = 0.95) -> Comparison:
    """Compare runs: metric table, paired bootstrap CIs of every pair's differences, costs.

    Each pair ``(a, b)`` of runs over the same split (``a`` before ``b`` in ``runs``) is
    compared on the examples both scored: ``n_boot`` resamples of those example ids (with
    replacement, numpy ``default_rng(seed)``, the same draws for every pair of the same size),
    each pooled again with the runs' ``Scorer.aggregate``; the CI is the percentile interval
    at ``confidence``.
    Pairs over different splits, or over one split with different data (dataset hashes
    differ: other data files, another order of the samples or another ``--limit``, so one
    example id names different samples), are not compared (noted); a pair with no example
    scored by both gets NaN rows (``n_examples`` 0, noted).

    Args:
        runs: run directories, the summaries :func:`~tooleval_agents.run_experiment` returns,
            or loaded :class:`RunData`.
        metrics: metrics to compare (default: every metric, headline metrics first; the
            ``repr`` and :meth:`Comparison.to_markdown` show the headline ones).
        n_boot: bootstrap resamples (0: point differences only).
        seed: seed of the resampling.
        confidence: CI level.

    Raises:
        KeyError: a requested metric no run reports. ValueError: fewer than one run.
    """
    if not runs:
        raise ValueError("compare needs at least one run")
    data = [load_run(r) for r in runs]
    _unique_labels(data)
    names = _chosen_metrics(data, metrics)
    table = pd.DataFrame({r.label: [r.metrics().get(m, np.nan) for m in names] for r in data},
                         index=pd.Index(names, name="metric"))
    notes: list[str] = []
    for r in data:
        notes += [f"{r.label}: {n}" for n in r.notes]
        if r.config.unsealed:
            notes.append(f"{r.label}: {UNSEALED_NOTE}")
        if r.infra_errors:
            notes.append(f"{r.label}: {r.infra_errors} infra error(s) excluded from every "
                         "metric")
        if r.format_errors:
            notes.append(f"{r.label}: {r.format_errors} of {len(r.scores)} answers could not "
                         "be read in the task's format (format_errors)")
    pairs = _Pairs(names, n_boot=n_boot, seed=seed, alpha=(1 - confidence) / 2, notes=notes)
    other_splits = 0
    for i, a in enumerate(data):
        for b in data[i + 1:]:
            if _split_key(a) != _split_key(b):
                other_splits += 1
            else:
                pairs.add(a, b)
    if other_splits:
        notes.append(f"{other_splits} pair(s) of runs over different splits (benchmark, task, "
                     "subset) are not compared pairwise")
    differences = pd.DataFrame(pairs.rows, columns=DIFFERENCE_COLUMNS)
    headline = list(metrics) if metrics else [
        m for m in names if any(m in r.scorer.headline for r in data)]
    counted = {m for r in data for m in r.scorer.count_metrics}
    return Comparison(runs=data, table=table, differences=differences, costs=costs(data),
                      notes=notes, n_boot=n_boot, seed=seed, confidence=confidence,
                      headline=headline, count_metrics=[m for m in names if m in counted])


DIFFERENCE_COLUMNS = ["run_a", "run_b", "metric", "a", "b", "diff", "ci_low", "ci_high",
                      "significant", "n_examples", "only_a", "only_b"]


def _chosen_metrics(data: Sequence[RunData], metrics: Sequence[str] | None) -> list[str]:
    known = _metric_order(data)
    if not metrics:
        return known
    unknown = [m for m in metrics if m not in known]
    if unknown:
        raise UnknownNameError(f"unknown metric(s) {unknown}; the runs report: {known};"
                               f"{did_you_mean(unknown[0], known)}".rstrip(";"))
    return list(metrics)


class _Pairs:
    """The paired differences of runs over one split, pair by pair (:func:`compare`)."""

    def __init__(self, names: list[str], *, n_boot: int, seed: int, alpha: float,
                 notes: list[str]) -> None:
        self.names, self.n_boot, self.seed, self.alpha = names, n_boot, seed, alpha
        self.notes = notes
        self.rows: list[dict[str, Any]] = []
        self.cache: dict[tuple[str, tuple[str, ...]], np.ndarray] = {}

    def add(self, a: RunData, b: RunData) -> None:
        if a.config.dataset.hash != b.config.dataset.hash:
            self.notes.append(
                f"{a.label} vs {b.label}: not compared pairwise: same split but different "
                f"data (dataset hash {a.config.dataset.hash[:12]} != "
                f"{b.config.dataset.hash[:12]}: other data files, another order of the "
                "samples or another --limit), so an example id names different samples in "
                "the two runs")
            return
        common = sorted(set(a.scores) & set(b.scores))
        only_a, only_b = len(a.scores) - len(common), len(b.scores) - len(common)
        base = {"run_a": a.label, "run_b": b.label, "n_examples": len(common),
                "only_a": only_a, "only_b": only_b}
        if not common:
            self.notes.append(f"{a.label} vs {b.label}: no example scored by both: no paired "
                              "difference")
            self.rows += [{**base, "metric": m, "a": np.nan, "b": np.nan, "diff": np.nan,
                           "ci_low": np.nan, "ci_high": np.nan, "significant": False}
                          for m in self.names if m in a.metrics() or m in b.metrics()]
            return
        if only_a or only_b:
            self.notes.append(_pairing_note(a, b, common))
        self._differences(a, b, common, base)

    def _differences(self, a: RunData, b: RunData, common: list[str],
                     base: dict[str, Any]) -> None:
        point_a, point_b = a.point(common), b.point(common)
        diffs = self._boot(b, common) - self._boot(a, common) if self.n_boot > 0 else None
        for j, m in enumerate(self.names):
            if m not in point_a and m not in point_b:
                continue
            va, vb = point_a.get(m, np.nan), point_b.get(m, np.nan)
            low = high = np.nan
            defined = diffs[:, j][~np.isnan(diffs[:, j])] if diffs is not None \
                else np.empty(0)
            if defined.size and not math.isnan(va) and not math.isnan(vb):
                # Resamples where the metric had nothing to count (n/a) are left out.
                low, high = (float(x) for x in
                             np.quantile(defined, [self.alpha, 1 - self.alpha]))
            self.rows.append({**base, "metric": m, "a": va, "b": vb, "diff": vb - va,
                              "ci_low": low, "ci_high": high,
                              "significant": bool(low > 0 or high < 0)})

    def _boot(self, run: RunData, common: list[str]) -> np.ndarray:
        key = (run.label, tuple(common))
        if key not in self.cache:
            self.cache[key] = _boot_metrics(run, common, self.seed, self.n_boot, self.names)
        return self.cache[key]


def _pairing_note(a: RunData, b: RunData, common: Sequence[str]) -> str:
    """What a pair was compared on, in the runs' own counts: the examples only one run scored,
    and the later attempts of an ``--epochs`` run (examples both scored, not paired), apart."""
    paired = set(common)
    shared = {a.results[i].index for i in paired if i in a.results}

    def left(run: RunData) -> tuple[int, int]:
        rest = [run.results[i].index for i in run.scores if i not in paired
                and i in run.results]
        later = sum(index in shared for index in rest)
        return len(rest) - later, later

    (only_a, later_a), (only_b, later_b) = left(a), left(b)
    note = f"{a.label} vs {b.label}: compared on the {len(common)} examples both scored"
    if only_a or only_b:
        note += f" ({only_a} only in {a.label}, {only_b} only in {b.label})"
    note += "".join(f"; the other {later} attempts of {run.label} (--epochs "
                    f"{run.config.epochs}) are not paired" for run, later in ((a, later_a),
                                                                              (b, later_b))
                    if later)
    return note


def _split_key(run: RunData) -> tuple[str, str, str]:
    return (run.config.benchmark, run.config.task, run.config.subset)


def costs(runs: Sequence[RunData]) -> pd.DataFrame:
    """Token cost per example of each run, as ``summary.json`` counts it
    (:func:`tooleval_agents.results.summary.summarize`).

    Columns: ``examples`` (recorded results, infra errors included), ``scored`` (not infra
    errors), ``infra_errors``, ``format_errors`` (answers that could not be read);
    ``mean_input_tokens``, ``mean_output_tokens``,
    ``mean_model_calls`` and the totals over every recorded result (infra errors included:
    their tokens were spent); ``mean_latency_s`` over the scored results; ``cost_usd`` (the
    model's and the judge's tokens at :mod:`tooleval_agents.results.costs` prices),
    ``cost_per_example_usd`` and ``cost_per_success_usd`` (a success: a 100 on the first
    success-type headline metric). A mean over no result, and a cost at an unknown price, is
    NaN.

    What was paid to produce the results, apart (:attr:`~tooleval_agents.results.rundir.
    ResultBase.spent`, every session that wrote them; the figures above are the answers',
    the same on a cold and a warm response cache): ``paid_calls`` (provider calls, the
    judge's included), ``paid_input_tokens``, ``paid_output_tokens``, ``cache_hits`` and
    ``paid_usd``.
    """
    rows = {}
    for run in runs:
        recorded = list(run.results.values())
        scored = [r for r in recorded if r.status != "infra_error"]

        def mean(values: Sequence[float]) -> float:
            return exact_sum(values) / len(values) if values else np.nan

        usage = {"input_tokens": sum(r.usage.input_tokens for r in recorded),
                 "output_tokens": sum(r.usage.output_tokens for r in recorded),
                 "cached_input_tokens": sum(r.usage.cached_input_tokens for r in recorded),
                 "judge_input_tokens": sum(r.judge_usage.input_tokens for r in recorded),
                 "judge_output_tokens": sum(r.judge_usage.output_tokens for r in recorded),
                 "judge_cached_input_tokens": sum(r.judge_usage.cached_input_tokens
                                                  for r in recorded),
                 "judge_calls": sum(r.judge_usage.model_calls for r in recorded),
                 **{f"{who}{k}": sum(getattr(getattr(r, part), k) for r in recorded)
                    for who, part in (("", "usage"), ("judge_", "judge_usage"))
                    for k in BATCHED}}  # priced at batch rates
        _, won = successes([dict(s.scores) for s in run.scores.values()],
                           list(run.scorer.headline))
        cost = run_cost(model=run.config.model.get("spec"),
                        judge=(run.config.judge or {}).get("spec"),
                        usage={k: float(v) for k, v in usage.items()},
                        examples=len(recorded), successes=won)

        def usd(value: float | None) -> float:
            return np.nan if value is None else float(value)

        spend = Spend()
        for r in recorded:
            spend.add(r)
        paid = spend.priced(model=run.config.model.get("spec"),
                            judge=(run.config.judge or {}).get("spec"))
        rows[run.label] = {
            "examples": len(recorded),
            "scored": len(scored),
            "infra_errors": run.infra_errors,
            "format_errors": run.format_errors,
            "mean_input_tokens": mean([r.usage.input_tokens for r in recorded]),
            "mean_output_tokens": mean([r.usage.output_tokens for r in recorded]),
            "mean_model_calls": mean([r.usage.model_calls for r in recorded]),
            "mean_latency_s": mean([r.latency_s for r in scored]),
            "total_input_tokens": sum(r.usage.input_tokens for r in recorded),
            "total_output_tokens": sum(r.usage.output_tokens for r in recorded),
            "judge_input_tokens": usage["judge_input_tokens"],
            "judge_output_tokens": usage["judge_output_tokens"],
            "cost_usd": usd(cost["total_usd"]),
            "cost_per_example_usd": usd(cost["per_example_usd"]),
            "cost_per_success_usd": usd(cost["per_success_usd"]),
            "paid_calls": paid["model_calls"] + paid["judge_calls"],
            "paid_input_tokens": paid["input_tokens"] + paid["judge_input_tokens"],
            "paid_output_tokens": paid["output_tokens"] + paid["judge_output_tokens"],
            "cache_hits": paid["cache_hits"], "paid_usd": usd(paid["usd"]),
        }
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = "run"
    return frame
