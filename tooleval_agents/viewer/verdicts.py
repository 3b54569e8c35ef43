"""The verdict of each example of a run, as the viewer shows it: the benchmark's explanation
(:meth:`~tooleval_agents.registry.Benchmark.explain`), else the core's
:func:`~tooleval_agents.verdict.generic_verdict` judged on the split's headline metric.

Example::

    for result, verdict in run_verdicts("runs/appbench-plan-ss-hierarchical-reference"):
        print(result.index, verdict.passed, verdict.reason)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tooleval_agents.contracts import Split
from tooleval_agents.registry import Benchmark, get_benchmark
from tooleval_agents.results.records import ExampleResult, RunConfig
from tooleval_agents.results.rescore import scorer_for
from tooleval_agents.results.rundir import RunDir
from tooleval_agents.verdict import Verdict, generic_verdict


@dataclass(frozen=True)
class Explainer:
    """What the verdicts of one run are read with: its benchmark and split (``None``: not
    registered here) and the split's headline metrics (empty: the scorer could not be built,
    e.g. a judged task without its judge)."""

    bench: Benchmark | None
    split: Split | None
    headline: tuple[str, ...]

    @classmethod
    def of(cls, config: RunConfig) -> Explainer:
        try:
            bench = get_benchmark(config.benchmark)
            split = bench.split(config.task, config.subset)
        except Exception:  # an unregistered benchmark: the core's verdicts only
            return cls(None, None, ())
        try:  # a judged run's headline is the judge's (its stored scores are read)
            headline = tuple(scorer_for(config, stored_judge=True).headline)
        except Exception:  # a scorer that cannot be built here (its data or judge absent)
            headline = ()
        return cls(bench, split, headline)

    def verdict(self, result: Any) -> Verdict:
        """The benchmark's explanation, else the core's; a hook that fails falls back too (the
        site is still written, the verdict is less specific)."""
        if self.bench is not None and self.split is not None:
            try:
                found = self.bench.explain(self.split, result)
            except Exception:  # a third-party hook's bug must not cost the whole site
                found = None
            if found is not None:
                return found
        return generic_verdict(result, self.headline)


def run_verdicts(path: Path | str) -> Iterator[tuple[ExampleResult, Verdict]]:
    """Each example of the run at ``path`` (every attempt, in split order) with its verdict."""
    rd = RunDir(path)
    explainer = Explainer.of(rd.read_config())
    for result in sorted(rd.results().values(), key=lambda r: (r.index, r.epoch)):
        yield result, explainer.verdict(result)


__all__ = ["Explainer", "run_verdicts"]
