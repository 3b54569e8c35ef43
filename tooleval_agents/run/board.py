"""One progress display for runs that go at once (``tooleval run --max-runs N``): a row per run
of the sweep, waiting, running or done.

A run draws its own bar (:class:`~tooleval_agents.run.experiment._Progress`) unless it is started
under :func:`on_board`: then it takes over the row the sweep made for it (its title, total and
examples already done) and the board stays up for the other runs.

Example::

    board = ProgressBoard(["ss hierarchical reference", "ss flat reference"])
    with board:
        async with asyncio.TaskGroup() as group:
            for row, cell in enumerate(cells):
                group.create_task(on_board(board, row, cell()))
"""

from __future__ import annotations

import contextvars
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

from tooleval_agents.terminal import shown

T = TypeVar("T")

_ROW: contextvars.ContextVar[tuple[ProgressBoard, int] | None] = contextvars.ContextVar(
    "tooleval_progress_row", default=None)


class ProgressBoard:
    """A rich progress display on stderr with one row per label (see the module docstring)."""

    def __init__(self, labels: Sequence[str]) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.progress = Progress(TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TimeElapsedColumn(),
                                 TextColumn("{task.fields[headline]}"),
                                 console=Console(stderr=True), transient=False)
        self.rows = [self.progress.add_task(shown(label), total=None, start=False,
                                            headline="waiting") for label in labels]

    def __enter__(self) -> ProgressBoard:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def start(self, row: int, title: str, total: int, done: int) -> Any:
        """Row ``row`` becomes a run's bar; its rich task id."""
        task = self.rows[row]
        self.progress.update(task, description=shown(title), total=total, completed=done,
                             headline="")
        self.progress.start_task(task)
        return task

    def advance(self, task: Any, headline: str | None) -> None:
        if headline is None:
            self.progress.update(task, advance=1)
        else:
            self.progress.update(task, advance=1, headline=shown(headline))

    def finish(self, row: int, note: str) -> None:
        """Row ``row``'s run ended (``note``: its headline, or why it stopped)."""
        task = self.rows[row]
        self.progress.update(task, headline=shown(note))
        self.progress.stop_task(task)


def current_row() -> tuple[ProgressBoard, int] | None:
    """The board and row of the run started in this context, if any."""
    return _ROW.get()


async def on_board(board: ProgressBoard | None, row: int, run: Coroutine[Any, Any, T]) -> T:
    """Await ``run`` with its progress on ``board``'s row ``row`` (its own bar without one)."""
    token = _ROW.set((board, row) if board is not None else None)
    try:
        return await run
    finally:
        _ROW.reset(token)


__all__ = ["ProgressBoard", "current_row", "on_board"]
