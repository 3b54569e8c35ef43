"""Several runs at once in one process (``tooleval run --max-runs N``): a sweep bounded by its
slowest runs rather than by their sum.

Each run is what it would be alone: its own directory, journal, ``--max-concurrency`` and
response cache; only what is the endpoint's is shared -- the ``--rps`` rate limit of runs that
reach the same provider endpoint (:mod:`tooleval_agents.models.endpoints`) -- and the progress
display (one row per run, :mod:`tooleval_agents.run.board`). A run's results do not depend on
what else runs beside it, so a sweep gives the results of its runs one after the other,
example by example. Every finished example is on file as in a single run: Ctrl-C or a killed
process loses nothing, and the same command resumes every run.

Example::

    summaries = run_sync(arun_at_once(
        [lambda: arun_experiment("appbench", subset=s, model="reference")
         for s in ("ss", "sm", "ms", "mm")], max_runs=4))
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from tooleval_agents.models.endpoints import shared_rate_limits
from tooleval_agents.run.board import ProgressBoard, on_board

T = TypeVar("T")


async def arun_at_once(jobs: Sequence[Callable[[], Awaitable[T]]], *, max_runs: int,
                       labels: Sequence[str] | None = None,
                       done: Callable[[int, T], str] | None = None) -> list[T]:
    """Await every job, at most ``max_runs`` at once, in their order as slots free up; their
    results in the jobs' order. With ``labels``, a progress board shows a row per job (its
    last note from ``done(index, result)``). An exception of a job cancels the others (their
    finished examples are on file) and propagates.

    Raises:
        ValueError: ``max_runs`` below 1.
    """
    if max_runs < 1:
        raise ValueError(f"max_runs must be >= 1, got {max_runs}")
    board = ProgressBoard(labels) if labels is not None else None
    gate = asyncio.Semaphore(max_runs)
    results: list[T | None] = [None] * len(jobs)

    async def one(at: int) -> None:
        async with gate:
            result = await on_board(board, at, _awaited(jobs[at]))
        results[at] = result
        if board is not None:
            board.finish(at, done(at, result) if done is not None else "done")

    with shared_rate_limits():
        if board is not None:
            board.__enter__()
        try:
            tasks = [asyncio.ensure_future(one(at)) for at in range(len(jobs))]
            try:
                await asyncio.gather(*tasks)
            except BaseException:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                raise
        finally:
            if board is not None:
                board.__exit__(None, None, None)
    return [r for r in results]  # type: ignore[misc]


async def _awaited(job: Callable[[], Awaitable[T]]) -> T:
    return await job()


__all__ = ["arun_at_once"]
