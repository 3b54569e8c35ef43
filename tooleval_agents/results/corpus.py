"""Sums over a corpus of example scores: what every pooled metric is computed from.

A corpus metric is a function of sums over the examples: a part's hits and totals, a
per-example score, the number of examples and of scoring errors. Every aggregate is written
against :class:`Corpus` (``c = as_corpus(scores)``, then ``c.pooled(key)``, ``c.mean(key)``,
...: the one way to pool), so one definition serves two callers:

* a run: the sums of its scores, in example order (floats; ``None`` for n/a), exact sums
  rounded once (:func:`~tooleval_agents.contracts.exact_sum`, as :func:`math.fsum`): the same
  floats in any example order and on every Python, whose built-in ``sum()`` of floats changed
  in 3.12;
* a bootstrap: :meth:`Columns.resampled` holds the sums of many resamples at once (numpy
  arrays, one value per resample; NaN for n/a), computed as one matrix product of resample
  counts and per-example columns, so a resample costs no pass over Python objects.

Example::

    def aggregate(scores):
        c = as_corpus(scores)
        return {"accuracy": c.mean("correct"), "recall": c.pooled("found")}
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from tooleval_agents.contracts import ExampleScore, exact_sum

if TYPE_CHECKING:
    import numpy as np

Scores: TypeAlias = "Sequence[ExampleScore] | Corpus"
"""What an aggregate takes: the scores of a corpus, or their sums."""
Sum = Any
"""A corpus quantity: a float (one corpus) or a numpy array with one value per resample."""

_N, _ERRORS = ("n", ""), ("errors", "")


class Corpus:
    """Sums over one corpus of example scores (floats; n/a is ``None``)."""

    def __init__(self, columns: Columns) -> None:
        self._columns = columns

    def _sum(self, column: tuple[str, str]) -> Sum:
        return self._columns.total(column)

    @property
    def n(self) -> Sum:
        """Examples in the corpus."""
        return self._sum(_N)

    @property
    def errors(self) -> Sum:
        """Examples whose score has an ``error``."""
        return self._sum(_ERRORS)

    def hits(self, key: str) -> Sum:
        """Sum of the hits of part ``key`` (an example without it adds 0)."""
        return self._sum(("hits", key))

    def total(self, key: str) -> Sum:
        """Sum of the totals of part ``key``."""
        return self._sum(("total", key))

    def score(self, key: str, *, ok_only: bool = False) -> Sum:
        """Sum of per-example score ``key`` (missing: 0); ``ok_only``: over the examples
        without a scoring error."""
        return self._sum(("score_ok" if ok_only else "score", key))

    def ratio(self, numerator: Sum, denominator: Sum) -> Sum:
        """``numerator / denominator``; n/a where the denominator is 0."""
        return numerator / denominator if denominator else None

    def na_where(self, condition: Sum, value: Sum) -> Sum:
        """``value``, n/a where ``condition`` holds."""
        return None if condition else value

    def pooled(self, key: str) -> Sum:
        """100 * sum(hits) / sum(total) of part ``key``; n/a over a total of 0."""
        return self.ratio(100.0 * self.hits(key), self.total(key))

    def computed(self, key: str) -> bool:
        """Whether some example has score ``key``: a metric nobody computed (e.g. one the
        scoring profile skips) is n/a, not 0."""
        return self._columns.has(("score", key))

    def mean(self, key: str) -> Sum:
        """Mean of per-example score ``key`` over every example (an example without it: 0);
        n/a over no example, and where no example has the score (:meth:`computed`)."""
        if not self.computed(key):
            return self.na_where(True, self.score(key))
        return self.ratio(self.score(key), self.n)


class Resampled(Corpus):
    """The sums of many resamples of one corpus at once: every quantity is a numpy array with
    one value per resample (NaN for n/a)."""

    def __init__(self, columns: Columns, sums: np.ndarray, index: Mapping[tuple[str, str], int]):
        super().__init__(columns)
        self._sums, self._index = sums, index

    def _sum(self, column: tuple[str, str]) -> Sum:
        import numpy as np

        at = self._index.get(column)
        return np.zeros(self._sums.shape[0]) if at is None else self._sums[:, at]

    def ratio(self, numerator: Sum, denominator: Sum) -> Sum:
        import numpy as np

        numerator, denominator = np.broadcast_arrays(np.asarray(numerator, dtype=float),
                                                     np.asarray(denominator, dtype=float))
        out = np.full(numerator.shape, np.nan)
        np.divide(numerator, denominator, out=out, where=denominator != 0)
        return out

    def na_where(self, condition: Sum, value: Sum) -> Sum:
        import numpy as np

        return np.where(condition, np.nan, value)


class Columns:
    """Per-example numbers of a corpus, one column per quantity (``("hits", key)``, ...),
    appended as scores arrive: a few floats per example instead of the score objects."""

    def __init__(self, scores: Iterable[ExampleScore] = (), *, values: bool = True) -> None:
        """``values=False``: keep only the running sums (enough for :meth:`corpus`, not for
        :meth:`values` or :meth:`resampled`): constant memory, for a progress headline."""
        self._keep = values
        self._data: dict[tuple[str, str], array[float]] = {}
        # Sums are exact (math.fsum): of the kept values, once per column and length; without
        # values, a running sum per column held as non-overlapping partials (_add_exact).
        self._sums: dict[tuple[str, str], float] = {}
        self._partials: dict[tuple[str, str], list[float]] = {}
        self._seen: set[tuple[str, str]] = set()  # every column some example added to
        self._len = 0
        self._matrix: tuple[dict[tuple[str, str], int], np.ndarray] | None = None
        for score in scores:
            self.add(score)

    @classmethod
    def from_totals(cls, n: int, totals: Mapping[tuple[str, str], float]) -> Columns:
        """A corpus of ``n`` examples whose columns sum to ``totals`` (any other column to 0),
        added up elsewhere (a scorer's own pass over plain numbers): no per-example values,
        so :meth:`corpus` only, no resamples."""
        out = cls(values=False)
        out._partials = {column: [float(value)] for column, value in totals.items()}
        out._seen = set(totals)
        out._len = n
        return out

    def __len__(self) -> int:
        return self._len

    def add(self, score: ExampleScore) -> None:
        """Append one example's numbers (a column first seen here is 0 for earlier ones)."""
        ok = score.error is None
        row: dict[tuple[str, str], float] = {_ERRORS: 0.0 if ok else 1.0}
        for key, part in score.parts.items():
            row["hits", key] = part.hits
            row["total", key] = part.total
        for key, value in score.scores.items():
            row["score", key] = value
            row["score_ok", key] = value if ok else 0.0
        self._seen.update(row)
        for column, value in row.items():
            if self._keep:
                values = self._data.get(column)
                if values is None:
                    values = self._data[column] = array("d", bytes(8 * self._len))
                values.append(value)
            elif value:  # zeros change no sum
                _add_exact(self._partials.setdefault(column, []), value)
        self._sums.clear()
        self._len += 1
        for values in self._data.values():
            if len(values) < self._len:
                values.append(0.0)

    def has(self, column: tuple[str, str]) -> bool:
        """Whether some example added to the column (``n`` always exists)."""
        return column == _N or column in self._seen

    def values(self, column: tuple[str, str]) -> Sequence[float]:
        """One column, in example order (empty when no example has it)."""
        return self._data.get(column, ())

    def total(self, column: tuple[str, str]) -> float:
        """The sum of one column: exact, rounded once (``math.fsum`` of its values)."""
        if column == _N:
            return float(self._len)
        if not self._keep:
            return exact_sum(self._partials.get(column, ()))
        total = self._sums.get(column)
        if total is None:
            total = self._sums[column] = exact_sum(self._data.get(column, ()))
        return total

    def corpus(self) -> Corpus:
        """The sums over every example."""
        return Corpus(self)

    def resampled(self, counts: np.ndarray) -> Resampled:
        """The sums of the resamples given as ``counts`` (resamples x examples: how often
        each example is drawn)."""
        import numpy as np

        if self._matrix is None or self._matrix[1].shape[0] != self._len:
            index = {column: i for i, column in enumerate((_N, *self._data))}
            matrix = np.empty((self._len, len(index)))
            matrix[:, 0] = 1.0
            for column, i in index.items():
                if column != _N:
                    matrix[:, i] = np.frombuffer(self._data[column], dtype=float)
            self._matrix = (index, matrix)  # built once for every block of resamples
        index, matrix = self._matrix
        return Resampled(self, counts @ matrix, index)


def _add_exact(partials: list[float], x: float) -> None:
    """Add ``x`` to a running sum held as non-overlapping partials, smallest first, whose
    exact sum is the exact sum of every value added (Shewchuk's algorithm, the one
    :func:`math.fsum` runs): ``math.fsum(partials)`` is then ``math.fsum`` of the values, in
    constant memory. Integer-valued floats (counts) keep a single partial. An infinite or NaN
    value makes the sum what plain addition gives (inf, or NaN for inf - inf)."""
    if not math.isfinite(x) or (partials and not math.isfinite(partials[-1])):
        partials[:] = [sum(partials, x)]
        return
    i = 0
    for y in partials:
        if abs(x) < abs(y):
            x, y = y, x
        high = x + y
        low = y - (high - x)
        if low:
            partials[i] = low
            i += 1
        x = high
    partials[i:] = [x]
    if math.isinf(x):  # overflow: as plain addition
        partials[:] = [x]


def as_corpus(scores: Scores) -> Corpus:
    """``scores`` as a :class:`Corpus` (one already is one)."""
    return scores if isinstance(scores, Corpus) else Columns(scores).corpus()


CELLS = 1 << 16
"""Counts per block of resamples at most (0.5 MB): blocks get fewer rows as a corpus grows."""


def resample_counts(draws: Iterator[Sequence[int]] | Iterable[Sequence[int]], n: int,
                    chunk: int = 64) -> Iterator[np.ndarray]:
    """Resamples (each a sequence of drawn example positions) as count matrices of at most
    ``chunk`` rows and :data:`CELLS` cells: row ``b``, column ``i`` = how often resample
    ``b`` drew example ``i``. Each draw is packed into an array as it comes (a list of
    20,000 Python ints is 0.7 MB; 64 of them were most of a large run's peak memory)."""
    import numpy as np

    size = max(1, min(chunk, CELLS // max(n, 1)))
    rows: list[np.ndarray] = []
    for draw in draws:
        rows.append(np.asarray(draw, dtype=np.int64))
        if len(rows) == size:
            yield counts_of(np.stack(rows), n)
            rows = []
    if rows:
        yield counts_of(np.stack(rows), n)


def counts_of(draws: Sequence[Sequence[int]] | np.ndarray, n: int) -> np.ndarray:
    """Draws (resamples x positions drawn) as counts (resamples x ``n`` examples)."""
    import numpy as np

    idx = np.asarray(draws, dtype=np.int64)
    idx = idx + (np.arange(idx.shape[0], dtype=np.int64) * n)[:, None]
    return np.bincount(idx.ravel(), minlength=idx.shape[0] * n).reshape(-1, n).astype(float)


def aggregate_resamples(aggregate: Callable[[Any], Mapping[str, Any]], columns: Columns,
                        counts: Iterable[np.ndarray], names: Sequence[str]) -> np.ndarray:
    """``aggregate`` of every resample (vectorised): array (resamples, len(names)), NaN for a
    metric that is n/a or absent."""
    import numpy as np

    blocks = []
    for block in counts:
        metrics = aggregate(columns.resampled(block))
        out = np.full((block.shape[0], len(names)), np.nan)
        for j, name in enumerate(names):
            value = metrics.get(name)
            if value is not None:
                out[:, j] = np.asarray(value, dtype=float)
        blocks.append(out)
    return np.concatenate(blocks) if blocks else np.empty((0, len(names)))


__all__ = ["CELLS", "Columns", "Corpus", "Resampled", "Scores", "Sum", "aggregate_resamples",
           "as_corpus", "counts_of", "resample_counts"]
