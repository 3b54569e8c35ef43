"""What runs share when they talk to the same provider endpoint: its rate limit.

A run paces its model calls with ``--rps`` (a token bucket per run). Runs that go at once in
one process (``tooleval run --max-runs N``) and reach the same endpoint must not each take the
whole budget: inside :func:`shared_rate_limits`, every run that asks for the limiter of an
endpoint gets the same one. An endpoint is a provider with its explicit ``base_url`` (the
provider's public API when none is given).

Example::

    with shared_rate_limits():
        a = rate_limiter_for(model_a, 5.0)   # both openai, no base_url:
        b = rate_limiter_for(model_b, 5.0)   # the same bucket, 5 requests/s between them
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

from langchain_core.rate_limiters import BaseRateLimiter

from tooleval_agents.models.identity import provider_of
from tooleval_agents.models.retry import make_rate_limiter
from tooleval_agents.models.server_identity import endpoint_of

_SHARED: ContextVar[dict[str, BaseRateLimiter] | None] = ContextVar(
    "tooleval_shared_rate_limits", default=None)


def endpoint_key(model: Any) -> str:
    """``provider|base_url`` of a chat model (``provider|default`` without an explicit
    endpoint)."""
    return f"{provider_of(model)}|{endpoint_of(model) or 'default'}"


@contextlib.contextmanager
def shared_rate_limits() -> Iterator[dict[str, BaseRateLimiter]]:
    """Runs started in this context (and the tasks it starts) share one rate limiter per
    endpoint; yields the limiters by :func:`endpoint_key`."""
    limiters: dict[str, BaseRateLimiter] = {}
    token = _SHARED.set(limiters)
    try:
        yield limiters
    finally:
        _SHARED.reset(token)


def rate_limiter_for(model: Any, requests_per_second: float | None) -> BaseRateLimiter | None:
    """The limiter of ``model``'s endpoint at ``requests_per_second`` (``None``: unlimited):
    the shared one inside :func:`shared_rate_limits` (the first run to ask sets its rate),
    else a run's own."""
    if not requests_per_second:
        return None
    shared = _SHARED.get()
    if shared is None:
        return make_rate_limiter(requests_per_second)
    key = endpoint_key(model)
    if key not in shared:
        shared[key] = make_rate_limiter(requests_per_second)
    return shared[key]


__all__ = ["endpoint_key", "rate_limiter_for", "shared_rate_limits"]
