"""95% confidence intervals of a run's summary metrics: a percentile bootstrap over examples.

Each resample draws the examples with replacement (all attempts of an example together, when
it ran several epochs) and recomputes every metric with the benchmark's own ``aggregate``, so
a pooled micro-F1 is resampled as a micro-F1. Seeded: the same run gives the same interval.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

N_BOOT = 200
"""Resamples per summary (the interval's ends move by well under a point beyond this)."""
LEVEL = 0.95


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
    rng = random.Random(seed)
    draws: dict[str, list[float]] = {}
    for _ in range(n_boot):
        sample = [groups[rng.randrange(len(groups))] for _ in groups]
        for name, value in statistic(sample).items():
            if isinstance(value, int | float):
                draws.setdefault(name, []).append(float(value))
    tail = (1.0 - level) / 2.0
    out: dict[str, list[float]] = {}
    for name, values in draws.items():
        if len(values) < n_boot / 2:
            continue
        values.sort()
        low = values[int(tail * (len(values) - 1))]
        high = values[round((1.0 - tail) * (len(values) - 1))]
        out[name] = [low, high]
    return out


__all__ = ["LEVEL", "N_BOOT", "bootstrap_intervals"]
