"""Which examples of a split a run covers: ``--samples`` (split indices and ranges), then
``--limit`` (the first N of those).

A run directory keeps the results of every example it ever ran, and its selection is the union
of every selection run in it (:func:`union`): growing ``--limit`` (or adding indices) extends
a run; a smaller one runs nothing new. Its summary is over all of it, and says n of N.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, TypeVar, overload

from tooleval_agents.contracts import OptionError

T = TypeVar("T")

_PART = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


def parse_samples(text: str) -> list[tuple[int, int]]:
    """``"10-20,37"`` -> ``[(10, 20), (37, 37)]`` (inclusive ranges of split indices).

    >>> parse_samples("10-20, 37")
    [(10, 20), (37, 37)]
    >>> parse_samples("5-3")
    Traceback (most recent call last):
    ValueError: --samples: range '5-3' runs backwards; write it as 3-5
    """
    ranges = []
    for part in text.split(","):
        match = _PART.match(part)
        if match is None:
            raise ValueError(f"--samples: cannot read {part.strip()!r}; give split indices and "
                             "ranges such as 10-20,37")
        low = int(match.group(1))
        high = int(match.group(2)) if match.group(2) is not None else low
        if high < low:
            raise ValueError(f"--samples: range '{low}-{high}' runs backwards; write it as "
                             f"{high}-{low}")
        ranges.append((low, high))
    return ranges


def _index(example: Any, position: int) -> int:
    metadata = getattr(example, "metadata", None) or {}
    return int(metadata.get("index", position))


class Picked(Sequence[T]):
    """The examples at ``positions`` of ``base``, read through (a lazy split stays lazy: a
    view holds positions, not examples)."""

    def __init__(self, base: Sequence[T], positions: range | list[int]) -> None:
        self._base = base
        self._positions = positions

    def __len__(self) -> int:
        return len(self._positions)

    @property
    def positions(self) -> range | list[int]:
        """Where the picked examples are in the base sequence."""
        return self._positions

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> Picked[T]: ...
    def __getitem__(self, index: int | slice) -> T | Picked[T]:
        if isinstance(index, slice):
            return Picked(self._base, self._positions[index])
        return self._base[self._positions[index]]


def select(examples: Sequence[T], samples: str | None = None,
           limit: int | None = None) -> Picked[T]:
    """The examples ``samples`` names (by split index, in split order), then the first
    ``limit`` of them: a view of ``examples`` (none is made before it is read, except that
    ``samples`` reads each once for its index).

    Raises:
        OptionError: an index the split does not have (naming its range): a usage error.
    """
    positions: range | list[int] = range(len(examples))
    if samples:
        wanted = parse_samples(samples)
        indices = {_index(e, i): i for i, e in enumerate(examples)}
        missing = sorted({n for low, high in wanted for n in range(low, high + 1)
                          if n not in indices})
        if missing:
            top = max(indices) if indices else -1
            raise OptionError(f"--samples: the split has no example {missing[0]} (its indices "
                             f"are 0-{top})")
        keep = {n for low, high in wanted for n in range(low, high + 1)}
        positions = sorted(i for n, i in indices.items() if n in keep)
    return Picked(examples, positions[:limit] if limit is not None else positions)


def format_samples(indices: Iterable[int]) -> str:
    """Split indices as ``--samples`` reads them, runs joined into ranges.

    >>> format_samples([0, 1, 2, 5, 7, 8])
    '0-2,5,7-8'
    """
    ranges: list[list[int]] = []
    for n in sorted(set(indices)):
        if ranges and n == ranges[-1][1] + 1:
            ranges[-1][1] = n
        else:
            ranges.append([n, n])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges)


def union(examples: Sequence[T], held: Picked[T] | None,
          selected: Picked[T]) -> tuple[Picked[T], str | None]:
    """The examples a run directory holds once ``selected`` joins what it ``held`` (in split
    order), and its selection as ``samples`` (``None``: the first N of the split)."""
    positions = sorted(set(held.positions if held is not None else ()) | set(selected.positions))
    if positions == list(range(len(positions))):
        return Picked(examples, range(len(positions))), None
    indices = [_index(examples[p], p) for p in positions]
    return Picked(examples, positions), format_samples(indices)


__all__ = ["Picked", "format_samples", "parse_samples", "select", "union"]
