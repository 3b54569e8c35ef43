"""The order in which a run's model requests leave: the one that shares the longest prefix with
the request sent just before goes next, so a prefix cache can serve it.

A server that answers one request at a time (llama.cpp, llama-cpp-python) keeps the prompt it
read last and reads again only what differs after their common prefix; a provider's prompt
cache (OpenAI's automatic one, Anthropic's ``cache_control``) serves a prefix it saw recently.
A run whose examples each make several requests (app selection, then planning; an agent's
turns) interleaves them: one example's planning prompt between two app-selection prompts that
share their whole catalog evicts it. :class:`PrefixScheduler` lets at most ``slots`` requests
be in flight; when one ends, the waiting request whose text shares the longest prefix with the
last one sent takes its place (the oldest among equals). With more examples open than slots,
requests of one stage follow one another (stage-major order), an agent's next turn follows its
previous one, and nothing a model is sent changes: only when it is sent.

Example::

    scheduler = PrefixScheduler(slots=1)
    async with scheduler.slot(request_text(messages, tools)):
        answer = await model.ainvoke(messages)
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from langchain_core.messages import BaseMessage

Prefixed = TypeVar("Prefixed", str, list[int])


def common_prefix(a: Prefixed, b: Prefixed) -> int:
    """Length of the longest common prefix of ``a`` and ``b``, texts or token lists (slice
    comparisons, O(n log n) element compares done in C).

    >>> common_prefix("abcdef", "abcxyz"), common_prefix("", "a"), common_prefix("ab", "ab")
    (3, 0, 2)
    """
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n - 1  # the answer is below n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def request_text(messages: Sequence[BaseMessage], tools: Any = None) -> str:
    """A request as a prompt cache sees it, in the order providers render it: the tool
    definitions, then each message's role and content."""
    parts = [json.dumps(tools, sort_keys=True, ensure_ascii=False, default=str)] if tools else []
    for message in messages:
        content = message.content
        text = content if isinstance(content, str) else json.dumps(
            content, ensure_ascii=False, default=str)
        calls = getattr(message, "tool_calls", None)
        parts.append(f"<{message.type}>{text}" + (json.dumps(calls, ensure_ascii=False,
                                                            default=str) if calls else ""))
    return "\n".join(parts)


class EndpointClosed(Exception):
    """A request that was not sent: the endpoint refused a request the way it refuses every
    one (a rejected key, an unknown model), and the scheduler was closed with that reason."""

    def __init__(self, reason: BaseException) -> None:
        super().__init__(f"not sent: the endpoint refused an earlier request "
                         f"({type(reason).__name__}: {reason})"[:500])
        self.reason = reason


@dataclass(eq=False)
class _Waiter:
    key: str
    order: int
    granted: asyncio.Future[None]


class PrefixScheduler:
    """At most ``slots`` requests in flight; the next is the waiting one sharing the longest
    prefix with the last sent (see the module docstring)."""

    def __init__(self, slots: int = 1) -> None:
        if slots < 1:
            raise ValueError(f"slots must be >= 1, got {slots}")
        self.slots = slots
        """Requests in flight at once (a run's ``--max-concurrency``)."""
        self.sent = 0
        """Requests let through so far."""
        self._free = slots
        self._closed: BaseException | None = None
        self._last = ""
        self._waiting: list[_Waiter] = []
        self._order = itertools.count()

    @contextlib.asynccontextmanager
    async def slot(self, key: str) -> AsyncIterator[None]:
        """Hold one of the slots while the request ``key`` (:func:`request_text`) is sent."""
        await self._acquire(key)
        try:
            yield
        finally:
            self._release()

    def close(self, reason: BaseException) -> None:
        """Send nothing more: every waiting and later request raises :class:`EndpointClosed`
        (``reason``: the failure every request would meet)."""
        self._closed = reason
        for waiter in self._waiting:
            if not waiter.granted.done():
                waiter.granted.set_exception(EndpointClosed(reason))
        self._waiting.clear()

    async def _acquire(self, key: str) -> None:
        if self._closed is not None:
            raise EndpointClosed(self._closed)
        if self._free > 0 and not self._waiting:
            self._free -= 1
            self._sent(key)
            return
        waiter = _Waiter(key, next(self._order), asyncio.get_running_loop().create_future())
        self._waiting.append(waiter)
        try:
            await waiter.granted
        except asyncio.CancelledError:
            if waiter in self._waiting:
                self._waiting.remove(waiter)
            elif waiter.granted.done() and not waiter.granted.cancelled():
                self._release()  # granted as it was cancelled: the slot goes on
            raise

    def _sent(self, key: str) -> None:
        self._last = key
        self.sent += 1

    def _release(self) -> None:
        while self._waiting:
            best = max(self._waiting, key=lambda w: (common_prefix(self._last, w.key), -w.order))
            self._waiting.remove(best)
            if best.granted.done():  # cancelled while waiting
                continue
            self._sent(best.key)
            best.granted.set_result(None)  # the slot passes to it
            return
        self._free += 1


__all__ = ["EndpointClosed", "PrefixScheduler", "common_prefix", "request_text"]
