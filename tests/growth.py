"""Whether a call's time grows linearly with its input: a ratio, not a time limit.

A parser of outside text must be linear-time. A test cannot hold it to a number of seconds (a
loaded machine breaks any such bound; speed targets live in ``benchmarks/``): it compares the
call on an input ten times as long as another of the same shape. A linear call takes about 10
times as long, a quadratic one about 100 times; :data:`MAX_RATIO` lies between.

Times are CPU seconds of the calling thread (``time.thread_time``: other processes and this
process's other threads -- servers and loops left by earlier tests -- do not count), the best
of a few interleaved calls of each size, with the cyclic garbage collector paused (its passes
over a heap that grows with the records a call makes are not the call's doing).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

MAX_RATIO = 25.0
"""How many times longer a call on the large input may take than on the small one: a linear
call on a loaded machine was seen at 19 (the large input's working set suffers more from the
other processes' use of the caches), a quadratic one is at 100."""
FLOOR = 0.002
"""Timings under this many seconds count as this much in the ratio (below it, noise rules)."""
SMALL, LARGE = 10_000, 100_000
"""The two input sizes compared (characters, or whatever the input builder counts)."""


def cpu_seconds(call: Callable[[str], object], text: str,
                failures: tuple[type[BaseException], ...] = ()) -> float:
    """CPU seconds of the calling thread for ``call(text)``, the collector paused; an exception
    in ``failures`` (the call's documented failure) counts as a result, any other propagates."""
    # The objects earlier tests left in this process are frozen: a full collection during the
    # call would walk them too, a cost of the test process, not of the call.
    gc.freeze()
    gc.disable()
    start = time.thread_time()
    try:
        call(text)
    except failures:
        pass
    finally:
        elapsed = time.thread_time() - start
        gc.enable()
        gc.unfreeze()
    return elapsed


def superlinear(call: Callable[[str], object], make: Callable[[int], str], *,
                failures: tuple[type[BaseException], ...] = (), pairs: int = 5) -> str | None:
    """Why ``call`` grows faster than linearly on the inputs ``make(n)`` gives (``None``: it
    does not): the best times of ``make(SMALL)`` and ``make(LARGE)`` over up to ``pairs``
    interleaved calls, stopping at the first pair within :data:`MAX_RATIO`. Interleaved and
    equal in number, the two minimums see the same machine."""
    small, large = make(SMALL), make(LARGE)
    t_small = t_large = float("inf")
    for _ in range(pairs):
        t_small = min(t_small, cpu_seconds(call, small, failures))
        t_large = min(t_large, cpu_seconds(call, large, failures))
        if t_large <= MAX_RATIO * max(t_small, FLOOR):
            return None
    return (f"{t_small * 1000:.1f} ms at {len(small):,} characters, {t_large * 1000:.1f} ms at "
            f"{len(large):,} ({t_large / max(t_small, FLOOR):.0f} times as long)")


def assert_linear(call: Callable[[str], object], make: Callable[[int], str], *,
                  failures: tuple[type[BaseException], ...] = ()) -> None:
    """Fail when ``call`` grows faster than linearly on ``make(n)`` (see :func:`superlinear`)."""
    why = superlinear(call, make, failures=failures)
    assert why is None, f"superlinear on {make(40)[:40]!r}...: {why}"
