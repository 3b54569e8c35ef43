"""Repeated sampling: ``--epochs N`` runs every example N times.

Epoch 0 is the example itself; epoch ``e > 0`` is a copy with its own id (so results,
resumes and comparisons keep working per attempt), the same index, and the epoch in its
inputs under :data:`EPOCH_KEY`, which the runner takes out before the workflow sees them and
sets on the example's :class:`~tooleval_agents.models.accounting.CallStats`: the response
cache keys on it
(a repeated attempt is a new sample, not a replay) and ``noisy-reference`` folds it into its
seed (other corruptions per epoch, the same on every rerun).

Summaries pool every attempt (a mean over epochs is pass^1) and add, per binary headline
metric ``m`` (per-example scores 0 or 100), ``m_pass@k`` (at least one of k attempts
succeeds) and ``m_pass^k`` (all k do; tau-bench's reliability measure) for k = 1..N, estimated
without bias from each example's c successes in n attempts; and the mean per-example standard
deviation of every per-example score across attempts (:func:`epoch_summary`).
"""

from __future__ import annotations

import statistics
import uuid
from collections import defaultdict
from collections.abc import Mapping, Sequence
from math import comb
from typing import Any

from tooleval_agents.data.jsonio import LazySequence

EPOCH_KEY = "__tooleval_epoch__"
_NAMESPACE = uuid.UUID("5f0c7a52-3b9e-4a4b-9d0e-7f3a1c2b6e10")


def epoch_id(example_id: str, epoch: int) -> str:
    """The id of an example's ``epoch``-th attempt (epoch 0: the example's own id)."""
    return example_id if epoch == 0 else str(uuid.uuid5(_NAMESPACE, f"{example_id}/{epoch}"))


def with_epochs(examples: Sequence[Any], epochs: int) -> Sequence[Any]:
    """Every example once per epoch, epoch by epoch (LangSmith ``Example`` objects): a view,
    each attempt made when read."""
    if epochs < 1:
        raise ValueError(f"epochs must be >= 1, got {epochs}")
    if epochs == 1:
        return examples
    n = len(examples)
    return LazySequence(n * epochs, lambda p: attempt(examples[p % n], p // n), keep=False)


def attempt(example: Any, epoch: int) -> Any:
    """The ``epoch``-th attempt of ``example`` (epoch 0: the example itself)."""
    if epoch == 0:
        return example
    return example.model_copy(update={
        "id": uuid.UUID(epoch_id(str(example.id), epoch)),
        "inputs": {**(example.inputs or {}), EPOCH_KEY: epoch},
        "metadata": {**(example.metadata or {}), "epoch": epoch}})


def split_epoch(inputs: Mapping[str, Any] | None) -> tuple[dict[str, Any], int]:
    """The inputs without :data:`EPOCH_KEY`, and the epoch it held (0 when absent)."""
    clean = dict(inputs or {})
    epoch = clean.pop(EPOCH_KEY, 0)
    return clean, int(epoch) if isinstance(epoch, int) else 0


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of ``k`` attempts drawn from ``n`` (``c`` successful)
    succeeds.

    >>> round(pass_at_k(3, 1, 1), 4), pass_at_k(3, 1, 3)
    (0.3333, 1.0)
    """
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Probability that all ``k`` attempts drawn from ``n`` (``c`` successful) succeed.

    >>> pass_hat_k(3, 2, 1), pass_hat_k(3, 2, 3)
    (0.6666666666666666, 0.0)
    """
    return comb(c, k) / comb(n, k)


def epoch_summary(attempts: Sequence[tuple[int, dict[str, float]]], epochs: int,
                  binary: Sequence[str]) -> tuple[dict[str, float | None], dict[str, float]]:
    """pass@k / pass^k metrics (0-100) of the ``binary`` metrics, and the mean per-example
    standard deviation of every score across attempts, from ``(index, scores)`` per attempt.
    Examples with fewer than ``epochs`` scored attempts are left out of pass@k / pass^k (an
    unfinished run); a metric no example has every attempt of is n/a.

    >>> rows = [(0, {"ok": 100.0}), (0, {"ok": 0.0}), (1, {"ok": 100.0}), (1, {"ok": 100.0})]
    >>> metrics, sd = epoch_summary(rows, 2, ["ok"])
    >>> metrics["ok_pass@2"], metrics["ok_pass^2"], sd["ok"]
    (100.0, 50.0, 25.0)
    """
    by_example: dict[int, list[dict[str, float]]] = defaultdict(list)
    for index, scores in attempts:
        by_example[index].append(scores)
    metrics: dict[str, float | None] = {}
    for name in binary:
        counts = [(len(v), sum(s[name] >= 100.0 for s in v)) for v in by_example.values()
                  if len(v) >= epochs and all(name in s for s in v)]
        for k in range(1, epochs + 1):
            for label, fn in (("pass@", pass_at_k), ("pass^", pass_hat_k)):
                metrics[f"{name}_{label}{k}"] = (100.0 * statistics.fmean(
                    fn(n, c, k) for n, c in counts) if counts else None)
    spread: dict[str, list[float]] = defaultdict(list)
    for attempts_of in by_example.values():
        if len(attempts_of) < 2:
            continue
        for name in {k for s in attempts_of for k in s}:
            values = [s[name] for s in attempts_of if isinstance(s.get(name), int | float)]
            if len(values) >= 2:
                spread[name].append(statistics.pstdev(values))
    return metrics, {k: statistics.fmean(v) for k, v in spread.items()}


def binary_metrics(scores: Sequence[Mapping[str, Any]], names: Sequence[str]) -> list[str]:
    """Those of ``names`` whose per-example scores are all 0 or 100 (success-type)."""
    out = []
    for name in names:
        values = [s[name] for s in scores if isinstance(s.get(name), int | float)]
        if values and all(v in (0.0, 100.0) for v in values):
            out.append(name)
    return out


def successes(scores: Sequence[Mapping[str, Any]],
              headline: Sequence[str]) -> tuple[str | None, int | None]:
    """The metric a success is counted on -- the first success-type one of ``headline`` -- and
    how many of ``scores`` reached 100 on it (``(None, None)``: no such metric).

    >>> successes([{"success": 100.0, "f1": 50.0}, {"success": 0.0, "f1": 80.0}], ["f1", "success"])
    ('success', 1)
    """
    binary = binary_metrics(scores, headline)
    if not binary:
        return None, None
    return binary[0], sum(s.get(binary[0]) == 100.0 for s in scores)


class BinaryTally:
    """:func:`binary_metrics` and :func:`successes` counted as scores stream past (a few
    numbers per metric, not the scores)."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}
        self._binary: dict[str, bool] = {}
        self._hits: dict[str, int] = {}

    def add(self, scores: Mapping[str, Any]) -> None:
        for name, value in scores.items():
            if isinstance(value, int | float):
                self._seen[name] = self._seen.get(name, 0) + 1
                self._binary[name] = self._binary.get(name, True) and value in (0.0, 100.0)
                self._hits[name] = self._hits.get(name, 0) + (value == 100.0)

    def binary(self, names: Sequence[str]) -> list[str]:
        """As :func:`binary_metrics` of every score added."""
        return [n for n in names if self._seen.get(n) and self._binary[n]]

    def successes(self, headline: Sequence[str]) -> tuple[str | None, int | None]:
        """As :func:`successes` of every score added."""
        binary = self.binary(headline)
        return (binary[0], self._hits[binary[0]]) if binary else (None, None)


__all__ = ["EPOCH_KEY", "BinaryTally", "binary_metrics", "epoch_id", "epoch_summary", "pass_at_k",
           "pass_hat_k", "split_epoch", "successes", "with_epochs"]
