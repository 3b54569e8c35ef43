"""How far a live judge agrees with recorded judgments of the same plans (UltraTool planning).

The paper checked GPT-4 as a judge against human ratings (§4.4, Fig. 6). Here the recorded
GPT-4 judgments shipped with UltraTool's predictions (``eval/planning_eval.json``: question, gold
plan, judged plan and the seven scores per line) are the reference: a live judge scores the same
(question, gold plan, judged plan) triples and each dimension's scores are correlated --
Pearson and Spearman, with percentile bootstrap 95% intervals over the plans (seeded).

Example::

    report = await judge_agreement(path, judge, limit=50)
    report.dimensions["overall"].spearman, report.dimensions["overall"].spearman_ci
"""

from __future__ import annotations

import asyncio
import math
import random
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, Field

from tooleval_agents.evaluators.ultratool.judge.judge import ajudge_plan
from tooleval_agents.evaluators.ultratool.judge.prompts import DIMENSIONS, OVERALL, JudgePrompt
from tooleval_agents.evaluators.ultratool.judge.replay import RecordedJudgment, read_judgments
from tooleval_agents.evaluators.ultratool.judge.verdicts import Judgment
from tooleval_agents.ultratool.records import Lang


class Correlation(BaseModel):
    """Agreement on one dimension."""

    n: int
    """Plans both judges scored on this dimension."""
    pearson: float | None = None
    """``None``: fewer than 3 pairs, or a judge gave one score to every plan."""
    spearman: float | None = None
    pearson_ci: list[float] | None = None
    spearman_ci: list[float] | None = None
    mean_abs_diff: float | None = None
    """Mean absolute difference of the 1-10 scores."""


class AgreementReport(BaseModel):
    """A live judge against recorded judgments."""

    judged: int
    """Plans sent to the live judge."""
    live_errors: int
    """Of those, how many got no usable judgment (left out of every correlation)."""
    dimensions: dict[str, Correlation] = Field(default_factory=dict)
    """Dimension key (and ``overall``) -> agreement."""


def _ranks(values: Sequence[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):  # ties share their mean rank
            ranks[order[k]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return ranks


def pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Pearson's r, ``None`` when undefined (fewer than 3 pairs, or no spread).

    >>> pearson([1, 2, 3], [2, 4, 7]) > 0.99, pearson([1, 1, 1], [1, 2, 3])
    (True, None)
    """
    if len(x) < 3 or len(set(x)) < 2 or len(set(y)) < 2:
        return None
    # Written out (statistics.correlation as of Python 3.11): 3.12 moved it to sumprod and
    # another square root, which changes the last digits, so a figure would move with Python.
    n = len(x)
    x_bar, y_bar = math.fsum(x) / n, math.fsum(y) / n
    dx, dy = [v - x_bar for v in x], [v - y_bar for v in y]
    sxy = math.fsum(a * b for a, b in zip(dx, dy, strict=True))
    return sxy / math.sqrt(math.fsum(a * a for a in dx) * math.fsum(b * b for b in dy))


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rho (Pearson's r of the ranks, ties averaged).

    >>> spearman([1, 2, 3, 4], [10, 20, 30, 1000])
    1.0
    """
    return pearson(_ranks(x), _ranks(y))


def _interval(x: Sequence[float], y: Sequence[float], fn: object, n_boot: int,
              seed: int) -> list[float] | None:
    rng = random.Random(seed)
    draws = []
    for _ in range(n_boot):
        idx = [rng.randrange(len(x)) for _ in x]
        value = fn([x[i] for i in idx], [y[i] for i in idx])  # type: ignore[operator]
        if value is not None:
            draws.append(value)
    if not draws or len(draws) < n_boot / 2:
        return None
    draws.sort()
    return [draws[int(0.025 * (len(draws) - 1))], draws[round(0.975 * (len(draws) - 1))]]


def correlate(x: Sequence[float], y: Sequence[float], *, n_boot: int = 1000,
              seed: int = 0) -> Correlation:
    """Pearson, Spearman, their intervals and the mean absolute difference of paired scores."""
    return Correlation(
        n=len(x), pearson=pearson(x, y), spearman=spearman(x, y),
        pearson_ci=_interval(x, y, pearson, n_boot, seed) if len(x) >= 3 else None,
        spearman_ci=_interval(x, y, spearman, n_boot, seed) if len(x) >= 3 else None,
        mean_abs_diff=statistics.fmean(abs(a - b) for a, b in zip(x, y, strict=True))
        if x else None)


def _score(judgment: Judgment, key: str) -> float | None:
    value = judgment.overall if key == OVERALL else judgment.scores.get(key)
    return float(value) if isinstance(value, int | float) else None


def agreement(recorded: Sequence[Judgment], live: Sequence[Judgment], *, n_boot: int = 1000,
              seed: int = 0) -> AgreementReport:
    """Per-dimension agreement of paired judgments (``recorded[i]`` and ``live[i]`` judge the
    same plan); a pair where either side has no usable score for a dimension is left out of
    that dimension only.

    >>> def j(score):
    ...     keys = [d.key for d in DIMENSIONS["planning"] if d.key != OVERALL]
    ...     return Judgment(task="planning", lang="en", overall=score,
    ...                     scores=dict.fromkeys(keys, score))
    >>> r = agreement([j(8), j(5), j(3), j(9)], [j(7), j(6), j(2), j(9)], n_boot=50)
    >>> r.dimensions["overall"].spearman, r.dimensions["overall"].n
    (1.0, 4)
    """
    keys = [d.key for d in DIMENSIONS["planning"] if d.key != OVERALL] + [OVERALL]
    out: dict[str, Correlation] = {}
    for key in keys:
        pairs = [(a, b) for old, new in zip(recorded, live, strict=True)
                 if (a := _score(old, key)) is not None and (b := _score(new, key)) is not None]
        out[key] = correlate([a for a, _ in pairs], [b for _, b in pairs], n_boot=n_boot,
                             seed=seed)
    return AgreementReport(judged=len(live), live_errors=sum(bool(j.error) for j in live),
                           dimensions=out)


async def judge_agreement(path: Path, judge: BaseChatModel, *, limit: int = 50,
                          lang: Lang | None = None, concurrency: int = 4,
                          n_boot: int = 1000, seed: int = 0,
                          prompt_set: JudgePrompt | None = None,
                          on_judged: Callable[[int, int], None] | None = None,
                          ) -> AgreementReport:
    """Live-judge the first ``limit`` usable recorded plans of ``path`` and correlate
    (``prompt_set``: the live judge's prompts, default ours; the published GPT-4 judgments
    were made with the official ones, :mod:`tooleval_agents.evaluators.ultratool.judge.official`;
    ``on_judged(done, total)`` after each live judgment, e.g. for a progress bar)."""
    usable: list[RecordedJudgment] = [
        r for r in read_judgments(path, "planning", lang)
        if r.judgment.error is None and r.question and r.reference is not None
        and r.prediction][:limit]
    if not usable:
        raise ValueError(f"{path}: no usable recorded planning judgment (with question, gold "
                         "plan and judged plan) to compare with")
    gate = asyncio.Semaphore(concurrency)
    done = 0

    async def one(r: RecordedJudgment) -> Judgment:
        nonlocal done
        async with gate:
            judgment = await ajudge_plan(judge, question=r.question or "",
                                         reference=r.reference or "", prediction=r.prediction,
                                         lang=r.judgment.lang, index=r.judgment.index,
                                         prompt_set=prompt_set)
        done += 1
        if on_judged is not None:
            on_judged(done, len(usable))
        return judgment

    live = await asyncio.gather(*(one(r) for r in usable))
    return agreement([r.judgment for r in usable], live, n_boot=n_boot, seed=seed)


__all__ = ["OVERALL", "AgreementReport", "Correlation", "agreement", "correlate",
           "judge_agreement", "pearson", "spearman"]
