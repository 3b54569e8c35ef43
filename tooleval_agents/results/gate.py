"""A comparison as a gate: is the new run worse than the baseline, beyond the paired interval?

The baseline is the first run of a pair, the new run the second; their paired difference is
``new - baseline`` on the examples both scored, with its bootstrap interval
(:func:`~tooleval_agents.results.compare.compare`). Given a metric's direction
(:meth:`~tooleval_agents.contracts.Scorer.direction`) and a margin in the metric's own units
(points, for a 0-100 rate), the new run is **worse** when the whole interval lies on the worse
side of the margin: for a metric where higher is better, the interval's upper end is below
``-margin`` (even the most favourable difference the examples allow is a loss of more than
the margin); for one where lower is better, its lower end is above ``margin``. Else it is
**not worse**. A gate that cannot tell -- the metric has nothing to count (n/a) in a run, the
runs are not paired, no interval -- is **undecided**, never a pass.

Example::

    verdict = compare([baseline_dir, new_dir]).worse("success", margin=2.0)
    verdict.status, verdict.line    # "worse", "success: new ... is worse than baseline ..."
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import pandas as pd

from tooleval_agents.contracts import Scorer
from tooleval_agents.errors import UnknownNameError, did_you_mean

GateStatus = Literal["worse", "not_worse", "undecided"]
Direction = Literal["higher", "lower"]

EXIT_CODES: dict[GateStatus, int] = {"not_worse": 0, "worse": 1, "undecided": 3}
"""The exit status of ``tooleval compare --fail-if-worse`` for each verdict (2 stays a bad
argument)."""


@dataclass(frozen=True)
class GateVerdict:
    """What :meth:`~tooleval_agents.results.compare.Comparison.worse` found."""

    metric: str
    status: GateStatus
    """``worse``, ``not_worse``, or ``undecided`` (it could not tell: never a pass)."""
    baseline: str
    """The baseline run's label (the first run of the pair)."""
    new: str
    """The new run's label (the second)."""
    direction: Direction
    """Which way the metric is better."""
    margin: float
    """How much worse is tolerated, in the metric's units (points for a 0-100 rate)."""
    diff: float | None = None
    """``new - baseline`` on the examples both scored (``None``: none)."""
    ci_low: float | None = None
    ci_high: float | None = None
    """The difference's bootstrap interval (``None``: none)."""
    confidence: float = 0.95
    n_examples: int = 0
    """Examples both runs scored (the difference is over them)."""
    why: str = ""
    """Why the gate is undecided (empty otherwise)."""
    names: tuple[str, str] = ("", "")
    """The baseline's and the new run's names as the comparison's tables show them (what
    differs between them); the labels when empty."""

    @property
    def worse(self) -> bool:
        """The new run is worse beyond the interval and the margin."""
        return self.status == "worse"

    @property
    def exit_code(self) -> int:
        """0 not worse, 1 worse, 3 undecided (:data:`EXIT_CODES`)."""
        return EXIT_CODES[self.status]

    @property
    def line(self) -> str:
        """The verdict in one line, saying by how much."""
        head = f"{self.metric} ({self.direction} is better, margin {_num(self.margin)})"
        base = f"baseline {self.names[0] or self.baseline}"
        new = f"new {self.names[1] or self.new}"
        if self.status == "undecided":
            return f"{head}: cannot tell whether {new} is worse than {base}: {self.why}"
        interval = (f"{self.confidence:.0%} CI [{_num(self.ci_low)}, {_num(self.ci_high)}], "
                    f"{self.n_examples} examples both scored")
        if self.status == "worse":
            return (f"{head}: {new} is worse than {base} by {_num(abs(self.diff or 0.0))} "
                    f"(new - baseline {_num(self.diff)}, {interval})")
        return (f"{head}: {new} is not worse than {base} beyond the interval "
                f"(new - baseline {_num(self.diff)}, {interval})")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, with ``line`` and ``exit_code``."""
        return {**asdict(self), "line": self.line, "exit_code": self.exit_code}


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _value(row: dict[str, Any], key: str) -> float | None:
    value = row.get(key)
    return None if value is None or (isinstance(value, float) and math.isnan(value)) \
        else float(value)


def gate_pair(labels: Sequence[str], metrics: Sequence[str], metric: str, margin: float,
              baseline: str | None, new: str | None) -> tuple[str, str]:
    """The baseline's and the new run's labels (default: the first run, the second), the
    metric and the margin checked.

    Raises:
        UnknownNameError: a label of no run, or a metric the comparison has not.
        ValueError: fewer than two runs, or a negative margin.
    """
    if len(labels) < 2:
        raise ValueError("a gate compares two runs: the baseline, then the new one")
    a, b = baseline or labels[0], new or labels[1]
    for label in (a, b):
        if label not in labels:
            raise UnknownNameError(f"no run {label!r} in the comparison; its runs: "
                                   f"{list(labels)};{did_you_mean(label, labels)}".rstrip(";"))
    if metric not in metrics:
        raise UnknownNameError(f"unknown metric {metric!r}; the runs report: {list(metrics)};"
                               f"{did_you_mean(metric, metrics)}".rstrip(";"))
    if not margin >= 0 or math.isinf(margin):
        raise ValueError(f"margin {margin}: a tolerance in the metric's units, 0 or more")
    return a, b


def direction_of(metric: str, scorers: Sequence[Scorer], metrics: Sequence[str]) -> Direction:
    """Which way ``metric`` is better, as the runs' scorers say
    (:meth:`~tooleval_agents.contracts.Scorer.direction`).

    Raises:
        ValueError: neither says (a diagnostic or a count: it cannot be worse), or they
            disagree; the message lists the metrics that have a direction.
    """
    found = {d for s in scorers if (d := s.direction(metric)) is not None}
    if len(found) != 1:
        directed = [m for m in metrics if {s.direction(m) for s in scorers} - {None}]
        raise ValueError(f"metric {metric!r} has no direction (neither higher nor lower is "
                         f"better: a diagnostic or a count); gate on one that has: "
                         f"{', '.join(directed) or 'none'}")
    return found.pop()


def pair_row(differences: pd.DataFrame, a: str, b: str, metric: str) -> dict[str, Any] | None:
    """The row of ``b - a`` in a comparison's ``differences`` (a row of ``a - b``, when ``a``
    came later in the comparison, turned round); ``None``: the pair was not compared."""
    rows = differences[differences["metric"] == metric]
    for first, second, sign in ((a, b, 1.0), (b, a, -1.0)):
        match = rows[(rows["run_a"] == first) & (rows["run_b"] == second)]
        if len(match):
            row: dict[str, Any] = match.iloc[0].to_dict()
            if sign < 0:
                row.update(diff=-row["diff"], ci_low=-row["ci_high"], ci_high=-row["ci_low"],
                           a=row["b"], b=row["a"])
            return row
    return None


def unpaired(notes: Sequence[str], a: str, b: str) -> str:
    """Why two runs have no paired difference, from a comparison's notes."""
    said = [n for n in notes if n.startswith((f"{a} vs {b}:", f"{b} vs {a}:"))]
    if said:
        return said[0].split(": ", 1)[1]
    return "they are over different splits (benchmark, task, subset): not paired"


def verdict(row: dict[str, Any] | None, *, metric: str, baseline: str, new: str,
            direction: Direction, margin: float, confidence: float,
            unpaired: str = "", names: tuple[str, str] = ("", "")) -> GateVerdict:
    """The verdict on one row of a comparison's ``differences`` (``run_a`` the baseline,
    ``run_b`` the new run; ``None``: the pair was not compared, ``unpaired`` says why)."""
    base: dict[str, Any] = {"metric": metric, "baseline": baseline, "new": new,
                            "direction": direction, "margin": margin,
                            "confidence": confidence, "names": names}
    if row is None:
        return GateVerdict(status="undecided", why=unpaired or "the runs were not compared "
                           "pairwise", **base)
    diff, low, high = _value(row, "diff"), _value(row, "ci_low"), _value(row, "ci_high")
    n = int(row.get("n_examples") or 0)
    status: GateStatus = "undecided"
    why = ""
    if diff is None:
        na = [name or label for label, name, key in ((baseline, names[0], "a"),
                                                     (new, names[1], "b"))
              if _value(row, key) is None]
        why = (f"{metric} is n/a (nothing to count) in {' and '.join(na)}" if na and n
               else "no example scored by both runs")
    elif low is None or high is None:
        why = "no bootstrap interval (every resample was n/a, or --n-boot 0)"
    else:
        worse = high < -margin if direction == "higher" else low > margin
        status = "worse" if worse else "not_worse"
    return GateVerdict(status=status, why=why, diff=diff, ci_low=low, ci_high=high,
                       n_examples=n, **base)


__all__ = ["EXIT_CODES", "Direction", "GateStatus", "GateVerdict", "direction_of", "gate_pair",
           "pair_row", "unpaired", "verdict"]
