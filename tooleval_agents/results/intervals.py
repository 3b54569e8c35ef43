"""95% confidence intervals of a run's summary metrics: a percentile bootstrap over examples.

Each resample draws the examples with replacement (all attempts of an example together, when
it ran several epochs) and recomputes every metric with the benchmark's own ``aggregate``, so
a pooled micro-F1 is resampled as a micro-F1. Seeded: the same run gives the same interval.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from tooleval_agents.results.corpus import Columns, Corpus, aggregate_resamples, resample_counts

N_BOOT = 200
"""Resamples per summary (the interval's ends move by well under a point beyond this)."""
LEVEL = 0.95


def group_draws(n_groups: int, n_boot: int = N_BOOT, seed: int = 0) -> Iterator[list[int]]:
    """The groups each resample draws (positions, with replacement), seeded."""
    rng = random.Random(seed)
    for _ in range(n_boot):
        yield [rng.randrange(n_groups) for _ in range(n_groups)]


def percentile_interval(values: Sequence[float], n_boot: int = N_BOOT,
                        level: float = LEVEL) -> list[float] | None:
    """``[low, high]`` of a metric's resampled values (the n/a ones left out); ``None`` when
    it is n/a on more than half the resamples."""
    if len(values) < n_boot / 2:
        return None
    ordered = sorted(values)
    tail = (1.0 - level) / 2.0
    return [ordered[int(tail * (len(ordered) - 1))],
            ordered[round((1.0 - tail) * (len(ordered) - 1))]]


def bootstrap_intervals(groups: Sequence[Sequence[Any]],
                        statistic: Callable[[list[Sequence[Any]]], dict[str, float | None]], *,
                        n_boot: int = N_BOOT, seed: int = 0,
                        level: float = LEVEL) -> dict[str, list[float]]:
    """``metric -> [low, high]`` for every metric ``statistic`` (of a resample of the
    groups) gives a number on at least half the resamples; none for a single group.

    >>> mean = lambda gs: {"m": 100.0 * sum(x for g in gs for x in g) / len(gs)}
    >>> bootstrap_intervals([[1], [0], [1], [1]], mean, n_boot=100)["m"][1]
    100.0
    """
    if len(groups) < 2 or n_boot < 1:
        return {}
    draws: dict[str, list[float]] = {}
    for drawn in group_draws(len(groups), n_boot, seed):
        for name, value in statistic([groups[i] for i in drawn]).items():
            if isinstance(value, int | float):
                draws.setdefault(name, []).append(float(value))
    return _intervals(draws, n_boot, level)


def vectorized_intervals(columns: Columns, aggregate: Callable[[Corpus], Mapping[str, Any]],
                         names: Sequence[str], *, n_boot: int = N_BOOT, seed: int = 0,
                         level: float = LEVEL) -> dict[str, list[float]]:
    """:func:`bootstrap_intervals` of one example per group for an aggregate that takes a
    :class:`~tooleval_agents.results.corpus.Corpus`: the same draws, every resample pooled by one
    matrix product (the ends agree up to the order floats are added in)."""
    if len(columns) < 2 or n_boot < 1:
        return {}
    table = aggregate_resamples(aggregate, columns,
                                resample_counts(group_draws(len(columns), n_boot, seed),
                                                len(columns)), names)
    draws = {name: [float(v) for v in table[:, j] if v == v] for j, name in enumerate(names)}
    return _intervals(draws, n_boot, level)


def _intervals(draws: Mapping[str, Sequence[float]], n_boot: int,
               level: float) -> dict[str, list[float]]:
    out = {}
    for name, values in draws.items():
        bounds = percentile_interval(values, n_boot, level)
        if bounds is not None:
            out[name] = bounds
    return out


__all__ = ["LEVEL", "N_BOOT", "bootstrap_intervals", "group_draws", "percentile_interval",
           "vectorized_intervals"]
