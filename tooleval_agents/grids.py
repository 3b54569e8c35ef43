"""A grid of runs from Python: models x strategies x options (x agents, tool faults, splits),
then their comparison -- what ``tooleval run`` does with repeated ``--model`` / ``--strategy``
and ``-O k=1,3,5``, planned by the same code (:mod:`tooleval_agents.run.grid`).

Example::

    grid = run_grid("appbench", subset="mm", models=["noisy-reference:0.3"],
                    strategies=["flat", "hierarchical"], options={"tool_calls": ["native"]})
    print(grid.comparison)        # headline metrics, paired differences with CIs, cost
    grid.runs[0].metrics          # each run's summary
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tooleval_agents.data.datadir import data_dir_or_samples
from tooleval_agents.registry import Benchmark
from tooleval_agents.results.compare import Comparison, compare
from tooleval_agents.results.rundir import RunSummary
from tooleval_agents.run.grid import cell_spec, plan_grid
from tooleval_agents.run.runner import run_experiment

log = logging.getLogger(__name__)

HELD = ("model_kwargs", "judge_kwargs", "retry")
"""Run settings the grid holds and gives every run (:class:`~tooleval_agents.run.grid.Sweep`)."""
CHECKED = ("samples", "prompts", "judge")
"""Run settings the planner checks before anything runs (then given to each run as they are)."""


@dataclass(frozen=True)
class GridResult:
    """The runs of :func:`run_grid`, in the order they ran, and their comparison."""

    runs: list[RunSummary]
    """Each run's summary (``run_dir`` says where its results are)."""
    comparison: Comparison
    """:func:`~tooleval_agents.compare` of the runs (runs over different splits are not
    paired: its notes say so)."""

    def __repr__(self) -> str:
        return f"{len(self.runs)} run(s):\n\n{self.comparison!r}"


def option_sets(options: Mapping[str, Sequence[Any]] | None) -> list[dict[str, Any]]:
    """Every combination of the swept values (``{"k": [1, 3], "tool_calls": ["auto"]}`` ->
    two option sets), as ``-O k=1,3 -O tool_calls=auto`` sweeps them.

    >>> option_sets({"k": [1, 3], "base": ["flat"]})
    [{'k': 1, 'base': 'flat'}, {'k': 3, 'base': 'flat'}]
    """
    axes = list((options or {}).items())
    for key, values in axes:
        if isinstance(values, str | bytes) or not isinstance(values, Sequence):
            raise TypeError(f"options[{key!r}] must list the values to run, e.g. "
                            f"{{{key!r}: [{values!r}]}}")
    return [dict(zip([k for k, _ in axes], combo, strict=True))
            for combo in itertools.product(*(values for _, values in axes))]


def run_grid(benchmark: str | Benchmark, *, models: Sequence[Any],
             strategies: Sequence[str] | None = None,
             options: Mapping[str, Sequence[Any]] | None = None,
             agents: Sequence[Any] | None = None, task: str | None = None,
             subset: str | None = None, scoring: str | None = None,
             tool_faults: Sequence[str] | None = None, n_boot: int = 1000, seed: int = 0,
             **settings: Any) -> GridResult:
    """Run every combination of ``models``, ``strategies``, ``options``, ``agents`` and
    ``tool_faults`` over the split(s), one run each, one after the other, then compare them.

    Every argument is checked before the first run starts (a bad strategy, option, agent or
    model spec raises then). Each run is an ordinary :func:`~tooleval_agents.run_experiment`:
    it resumes what its directory holds, and a failed one raises (the runs before it are
    kept, and running the grid again resumes them).

    Args:
        benchmark: a registered benchmark.
        models: model specs (``"reference"``, ``"openai:gpt-4o-mini"``) or chat models.
        strategies: strategies to run (default: the benchmark's protocol for each split).
        options: option name -> the values to sweep, e.g. ``{"k": [1, 3, 5]}``; strategy and
            scoring options alike (each goes where the split declares it, as ``-O`` does).
        agents: your agents (``factory(model, tools)``, ``"module:factory"``,
            ``"file.py:factory"``), each played by a tool-calling strategy.
        task: the split's task (may be left out when the benchmark has only one).
        subset: the split's subset; ``"all"`` runs every subset of the task.
        scoring: the scoring profile (e.g. ``"paper"``).
        tool_faults: tool-fault settings (e.g. ``"rate=0.2"``), one run each.
        n_boot: the comparison's bootstrap resamples.
        seed: the seed of the comparison's bootstrap.
        settings: the other fields of :class:`~tooleval_agents.RunSpec` (``limit``,
            ``data_dir``, ``out``, ``judge``, ``model_kwargs``...), the same for every run.
    """
    taken = {"strategy_options", "scoring_options", "model", "strategy", "agent"} & set(settings)
    if taken:
        raise TypeError(f"run_grid takes {', '.join(sorted(taken))} as its axes: models=, "
                        "strategies=, agents=, options= (strategy and scoring options alike)")
    sweep = plan_grid(benchmark, models=list(models), strategy_names=strategies,
                      agents=agents, grid=option_sets(options), task=task, subset=subset,
                      scoring=scoring, tool_faults=tool_faults,
                      model_kwargs=settings.get("model_kwargs"),
                      judge_kwargs=settings.get("judge_kwargs"), policy=settings.get("retry"),
                      **{k: settings.get(k) for k in CHECKED})
    if settings.get("data_dir") is None:  # one source for every run, as `tooleval run`
        data, note = data_dir_or_samples(sweep.bench, dict.fromkeys(s for s, _ in sweep.plan))
        if note:
            log.warning("%s", note)
            settings = {**settings, "data_dir": data}
    base = {**{k: v for k, v in settings.items() if k not in HELD},
            "scoring_options": {"scoring": scoring} if scoring else None}
    summaries = [run_experiment(cell_spec(sweep, cell, {**base, "tool_faults": faults}))
                 for faults in sweep.faults for cell in sweep.runs()]
    return GridResult(summaries, compare(summaries, n_boot=n_boot, seed=seed))
