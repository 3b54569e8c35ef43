"""``tooleval run --max-runs N``: the runs of a sweep, up to ``N`` at once in this process
(:mod:`tooleval_agents.run.concurrent`), with a progress row per run.

A run that fails (its data, its provider, LangSmith) is that run's outcome, as in a sweep run
one after the other; a bad argument only a split's data shows (:class:`OptionError`) stops the
sweep, as does Ctrl-C (every finished example is on file: the same command resumes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from tooleval_agents.contracts import OptionError
from tooleval_agents.results.rundir import RunSummary
from tooleval_agents.run.concurrent import arun_at_once
from tooleval_agents.run.loop import run_sync
from tooleval_agents.run.runner import arun_experiment
from tooleval_agents.run.spec import RunSpec


def run_at_once(cells: Sequence[tuple[str, RunSpec]], *, max_runs: int,
                progress: bool) -> list[RunSummary | Exception]:
    """Each cell ``(label, run)`` run, at most ``max_runs`` at once: its summary, or the
    exception it ended with.

    Raises:
        OptionError: a cell's arguments were refused (the other cells are stopped).
        KeyboardInterrupt: interrupted (every cell is stopped).
    """

    def job(spec: RunSpec) -> Any:
        async def run() -> RunSummary | Exception:
            try:
                return await arun_experiment(replace(spec, progress=progress))
            except OptionError:
                raise
            except Exception as exc:  # that run's outcome, said with its row
                return exc
        return run

    def note(_: int, result: RunSummary | Exception) -> str:
        return f"error: {type(result).__name__}" if isinstance(result, Exception) else "done"

    return run_sync(arun_at_once([job(spec) for _, spec in cells], max_runs=max_runs,
                                 labels=[label for label, _ in cells] if progress else None,
                                 done=note))


__all__ = ["run_at_once"]
