"""Seeded tool faults against the offline ``reference``: the figures of docs/tool-faults.md.

The ``reference`` model replays the gold calls and never retries, so every injected fault is
fatal to it: its success at fault rate r should be close to the mean over examples of
``(1 - r) ** calls``, taken over the examples it solves without faults. This script runs
AppBench ``tools`` with ``reference`` at rate 0 and at each ``--rate`` (``--seed``, every fault
kind) on each category, reads the runs' traces and prints, per category and for all of them:

* ``examples`` and ``calls/example`` (the tool calls of the rate-0 run);
* ``success, rate 0``;
* per rate: ``measured (predicted)`` success, ``faulted`` calls of all calls made (the
  ``tool_fault`` records against the ``tool_faults`` summaries' calls) and ``faulted_examples``
  (% of examples that met a fault).

Then, per rate, the share of the same calls that seeds 0 to ``--seeds - 1`` fault: the draws
each seed makes (:class:`tooleval_agents.tool_faults.FaultSession`, the one the runs use) over
each example's calls, so a small sample's luck with one seed reads against the rate itself.
The draws of ``--seed`` are checked against the runs' own records first.

    .venv/bin/python benchmarks/fault_rates.py [--data-dir datasets] [--limit N]
        [--rate 0.1 --rate 0.3] [--seed 0] [--seeds 50]

``--data-dir datasets`` (the default) reads the 22 bundled samples; the page's table over the
real data is ``--data-dir $TOOLEVAL_SHARED_DATA --limit 100``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tooleval_agents.results.records import ExampleResult
from tooleval_agents.results.rundir import RunDir
from tooleval_agents.run.runner import run_experiment
from tooleval_agents.tool_faults import FaultSession, ToolFaults, example_key

CATEGORIES = ("ss", "sm", "ms", "mm")
REPO = Path(__file__).resolve().parents[1]


@dataclass
class Measured:
    """One run of one category: per example, its success and its trace's counts."""

    success: list[bool] = field(default_factory=list)
    calls: list[int] = field(default_factory=list)
    """Tool calls made (the ``tool_faults`` summary; at rate 0, the ``tool_call`` records)."""
    faults: list[int] = field(default_factory=list)
    """``tool_fault`` records."""
    keys: list[str] = field(default_factory=list)
    """Each example's key of the fault draws (its inputs' digest and epoch)."""
    made: list[list[tuple[str, dict[str, Any]]]] = field(default_factory=list)
    """Each example's tool calls (name, arguments), in the order made."""


def _read(results: Sequence[ExampleResult]) -> Measured:
    out = Measured()
    for r in sorted(results, key=lambda r: r.index):
        trace = [s for s in (r.outputs.get("trace") or []) if isinstance(s, dict)]
        summary = next((s for s in trace if s.get("kind") == "tool_faults"), None)
        calls = sum(s.get("kind") == "tool_call" for s in trace)
        out.success.append(((r.score or {}).get("scores") or {}).get("success") == 100.0)
        out.calls.append(int(summary["calls"]) if summary else calls)
        out.faults.append(sum(s.get("kind") == "tool_fault" for s in trace))
        out.keys.append(example_key(r.inputs or {}, r.epoch))
        out.made.append([(str(s.get("name")), dict(s.get("args") or {})) for s in trace
                         if s.get("kind") == "tool_call"])
    return out


def run(category: str, rate: float, seed: int, *, data_dir: Path, out: Path,
        limit: int | None) -> Measured:
    """AppBench ``tools`` with ``reference`` over one category at one fault rate."""
    summary = run_experiment("appbench", subset=category, strategy="tools", model="reference",
                             data_dir=data_dir, out=out, limit=limit, upload=False,
                             cache=False, progress=False,
                             tool_faults=f"rate={rate:g},seed={seed}" if rate else None)
    assert summary.run_dir is not None
    return _read(list(RunDir(summary.run_dir).results().values()))


def faulted_calls(clean: Measured, rate: float, seed: int) -> int:
    """The calls a seed faults among the calls of the rate-0 run, made again in the same
    order: the draws :class:`FaultSession` makes for them."""
    hit = 0
    for key, made in zip(clean.keys, clean.made, strict=True):
        session = FaultSession(ToolFaults(rate=rate, seed=seed), key)
        hit += sum(session.draw(name, args) is not None for name, args in made)
    return hit


def predicted(clean: Measured, rate: float) -> float:
    """% success expected at ``rate``: (1 - rate) ** calls over the examples solved at 0."""
    n = len(clean.success)
    return 100.0 * sum((1 - rate) ** c for ok, c in zip(clean.success, clean.calls, strict=True)
                       if ok) / n if n else float("nan")


def _pct(part: float, whole: float) -> str:
    return f"{100.0 * part / whole:.1f}" if whole else "n/a"


def _row(name: str, clean: Measured, faulted: dict[float, Measured]) -> list[str]:
    n = len(clean.success)
    cells = [name, str(n), f"{sum(clean.calls) / n:.2f}" if n else "n/a",
             _pct(sum(clean.success), n)]
    for rate, m in faulted.items():
        cells += [f"{_pct(sum(m.success), n)} ({predicted(clean, rate):.1f})",
                  f"{sum(m.faults)} of {sum(m.calls)}",
                  _pct(sum(f > 0 for f in m.faults), n)]
    return cells


def _merge(parts: Sequence[Measured]) -> Measured:
    out = Measured()
    for p in parts:
        out.success += p.success
        out.calls += p.calls
        out.faults += p.faults
        out.keys += p.keys
        out.made += p.made
    return out


def measure(data_dir: Path, out: Path, rates: Sequence[float], seed: int, seeds: int,
            limit: int | None) -> list[str]:
    """Run every category at rate 0 and at ``rates``; the printed lines."""
    clean = {c: run(c, 0.0, seed, data_dir=data_dir, out=out, limit=limit) for c in CATEGORIES}
    faulted = {c: {r: run(c, r, seed, data_dir=data_dir, out=out, limit=limit) for r in rates}
               for c in CATEGORIES}
    head = ["category", "examples", "calls/example", "success, rate 0"]
    for rate in rates:
        head += [f"rate {rate:g}: measured (predicted)", f"rate {rate:g}: faulted calls",
                 f"rate {rate:g}: faulted_examples"]
    rows = [_row(c, clean[c], faulted[c]) for c in CATEGORIES]
    every = _merge(list(clean.values()))
    rows.append(_row(f"all {len(every.success)}", every,
                     {r: _merge([faulted[c][r] for c in CATEGORIES]) for r in rates}))
    lines = [f"AppBench tools, model reference, seed {seed}, data {data_dir}"
             + (f", the first {limit} examples of each category" if limit else ""),
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head),
             *("| " + " | ".join(r) + " |" for r in rows)]
    for rate in rates:
        made = _merge([faulted[c][rate] for c in CATEGORIES])
        calls = sum(len(m) for m in every.made)
        share = _pct(sum(faulted_calls(every, rate, s) for s in range(seeds)), calls * seeds)
        lines.append(
            f"rate {rate:g}: seeds 0 to {seeds - 1} fault {share}% of the {calls} calls of the "
            f"rate-0 runs; seed {seed}'s draws fault {faulted_calls(every, rate, seed)} of "
            f"them, its runs recorded {sum(made.faults)} faults in {sum(made.calls)} calls")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=REPO / "datasets")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--rate", type=float, action="append", default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=50)
    args: Any = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="fault-rates-") as tmp:
        lines = measure(args.data_dir, Path(tmp), args.rate or [0.1, 0.3], args.seed,
                        args.seeds, args.limit)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
