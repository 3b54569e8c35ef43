"""The synchronous entry point's event loop: one loop per thread, reused (LangSmith's background
threads outlive a call), and a bounded wind-down of what is left when a run ends."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_THREAD_NAME = "tooleval-runner"
_WIND_DOWN_S = 10.0
WAKE_S = 0.2
"""How often a caller waiting for the loop wakes: a signal the kernel delivered to another
thread (Ctrl-C, SIGTERM) is handled only once the main thread runs."""


class LoopThread:
    """An event loop running in a daemon thread, started on first use, for synchronous
    callers: :meth:`run` waits for a coroutine scheduled on it, and Ctrl-C cancels every task
    of the loop. The process has one (:func:`run_sync`); a test may start its own."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The running loop (started here the first time)."""
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=loop.run_forever, name=_THREAD_NAME,
                                                daemon=True)
                self._thread.start()
                self._loop = loop
            return self._loop

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the loop and wait for it (Ctrl-C cancels it)."""
        if threading.current_thread().name == _THREAD_NAME:
            coro.close()
            raise RuntimeError("run_experiment called from inside a run: await arun_experiment")
        loop = self.loop
        try:  # scheduled inside: an interrupt that lands as the run starts winds it down too
            return _result(asyncio.run_coroutine_threadsafe(coro, loop))
        except KeyboardInterrupt:
            # Cancelling the future alone returns at once while LangSmith's own tasks run on;
            # they then die at interpreter shutdown with tracebacks. Wind every task down first.
            winding = asyncio.run_coroutine_threadsafe(_cancel_tasks(_WIND_DOWN_S), loop)
            with contextlib.suppress(Exception):
                winding.result(timeout=_WIND_DOWN_S + 1)
            raise

    def close(self) -> None:
        """Stop the loop and its thread (the process-wide one runs until the process ends)."""
        with self._lock:
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()


# One event loop for every sync call in this process: LangChain's provider clients keep async
# HTTP pools bound to the loop that made them, so a second ``asyncio.run`` would find them closed.
_RUNNER = LoopThread()


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine on the runner's event loop and wait for it (Ctrl-C cancels it)."""
    return _RUNNER.run(coro)


def _result(future: concurrent.futures.Future[T]) -> T:
    """The future's result, waking every :data:`WAKE_S` until it is done."""
    while True:
        try:
            return future.result(timeout=WAKE_S)
        except TimeoutError:
            if future.done():  # the coroutine's own TimeoutError
                raise


async def _cancel_tasks(timeout: float) -> None:
    """Cancel every other task on the runner loop and wait (up to ``timeout`` s) for them to
    end; their errors are read here, so none is reported later as never retrieved."""
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=timeout)
    for task in tasks:
        if task.done() and not task.cancelled():
            task.exception()
