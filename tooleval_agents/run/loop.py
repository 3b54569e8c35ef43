"""The synchronous entry point's event loop: one loop per thread, reused (LangSmith's background
threads outlive a call), and a bounded wind-down of what is left when a run ends."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def _runner_loop() -> asyncio.AbstractEventLoop:
    """One event loop for every sync call in this process, in a daemon thread: LangChain's
    provider clients keep async HTTP pools bound to the loop that made them, so a second
    ``asyncio.run`` would find them closed."""
    global _loop
    with _loop_lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="tooleval-runner",
                                      daemon=True)
            thread.start()
            _loop = loop
        return _loop


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine on the runner's event loop and wait for it (Ctrl-C cancels it)."""
    loop = _runner_loop()
    if threading.current_thread().name == "tooleval-runner":
        coro.close()
        raise RuntimeError("run_experiment called from inside a run: await arun_experiment")
    try:  # scheduled inside: an interrupt that lands as the run starts winds it down too
        return asyncio.run_coroutine_threadsafe(coro, loop).result()
    except KeyboardInterrupt:
        # Cancelling the future alone returns at once while LangSmith's own tasks run on; they
        # then die at interpreter shutdown with tracebacks. Wind every task down first.
        winding = asyncio.run_coroutine_threadsafe(_cancel_tasks(_WIND_DOWN_S), loop)
        with contextlib.suppress(Exception):
            winding.result(timeout=_WIND_DOWN_S + 1)
        raise


_WIND_DOWN_S = 10.0


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


