"""The retry policy (tooleval_agents/models/retry.py): classification, backoff, the retrying model
wrapper and the rate limiter."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import httpx
import openai
import pytest
from fake_openai import FakeOpenAI, Fault
from helpers import ClockLoop, run_on_clock
from langchain_core.caches import InMemoryCache
from langchain_core.messages import AIMessage
from langchain_core.rate_limiters import BaseRateLimiter
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field

from tooleval_agents.models.accounting import CallStats, collect_stats
from tooleval_agents.models.chat_models import ScriptedChatModel
from tooleval_agents.models.failures import ModelCallTimeout, classify, retry_after
from tooleval_agents.models.retry import RetryingChatModel, RetryPolicy, make_rate_limiter

NO_WAIT = RetryPolicy(max_attempts=4, base_delay=0.0, max_delay=0.0, jitter=False,
                      timeout=None)


def _response(status: int, headers: dict[str, str] | None = None) -> httpx.Response:
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    return httpx.Response(status, headers=headers or {}, request=request)


def _status_error(cls: type[openai.APIStatusError], status: int,
                  headers: dict[str, str] | None = None) -> openai.APIStatusError:
    return cls("boom", response=_response(status, headers), body=None)


# ----------------------------------------------------------------------------- classification

@pytest.mark.parametrize(("exc", "kind"), [
    (_status_error(openai.RateLimitError, 429), "rate_limit"),
    (_status_error(openai.InternalServerError, 500), "server_error"),
    (_status_error(openai.InternalServerError, 503), "server_error"),
    (_status_error(openai.AuthenticationError, 401), "auth"),
    (_status_error(openai.PermissionDeniedError, 403), "auth"),
    (_status_error(openai.NotFoundError, 404), "not_found"),
    (_status_error(openai.BadRequestError, 400), None),
    (openai.APITimeoutError(request=httpx.Request("POST", "http://127.0.0.1")), "timeout"),
    (openai.APIConnectionError(request=httpx.Request("POST", "http://127.0.0.1")),
     "connection"),
    (httpx.ConnectError("refused"), "connection"),
    (httpx.ReadTimeout("slow"), "timeout"),
    (ConnectionResetError(104, "reset by peer"), "connection"),
    (TimeoutError(), "timeout"),
    (ModelCallTimeout("slow"), "timeout"),
    (httpx.HTTPStatusError("x", request=httpx.Request("GET", "http://127.0.0.1"),
                           response=_response(502)), "server_error"),
    (ValueError("malformed JSON"), None),
    (KeyError("prediction"), None),
    (LookupError("reference model: unknown example"), None),
])
def test_classify(exc: BaseException, kind: str | None) -> None:
    assert classify(exc) == kind


def test_classify_looks_through_the_cause_chain() -> None:
    try:
        try:
            raise _status_error(openai.RateLimitError, 429)
        except openai.RateLimitError as inner:
            raise RuntimeError("node failed") from inner
    except RuntimeError as outer:
        assert classify(outer) == "rate_limit"


def test_retry_after_headers() -> None:
    assert retry_after(_status_error(openai.RateLimitError, 429, {"retry-after-ms": "250"})) \
        == 0.25
    assert retry_after(_status_error(openai.RateLimitError, 429, {"retry-after": "3"})) == 3.0
    assert retry_after(_status_error(
        openai.RateLimitError, 429, {"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) is None
    assert retry_after(ValueError()) is None


# ----------------------------------------------------------------------------- backoff

def test_backoff_is_exponential_and_capped_without_jitter() -> None:
    policy = RetryPolicy(base_delay=0.5, max_delay=3.0, jitter=False)
    rng = random.Random(0)
    assert [policy.delay(n, rng) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert policy.delay(1, rng, retry_after=2.0) == 2.0  # the provider's wait wins
    assert policy.delay(1, rng, retry_after=99.0) == 3.0  # but never above the cap


def test_jitter_stays_in_the_upper_half_and_is_seeded() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=60.0, jitter=True, seed=7)
    draws = [policy.delay(n, random.Random(7)) for n in range(1, 6)]
    assert draws == [policy.delay(n, random.Random(7)) for n in range(1, 6)]
    for n, wait in enumerate(draws, start=1):
        full = min(60.0, 2 ** (n - 1))
        assert full / 2 <= wait <= full


def test_policy_validates() -> None:
    with pytest.raises(ValueError):
        RetryPolicy(max_attempts=0)
    with pytest.raises(ValueError):
        RetryPolicy(timeout=0)


# ----------------------------------------------------------------------------- the wrapper

class Failing(ScriptedChatModel):
    """Raises ``errors`` in turn on the first calls, then answers."""

    errors: list[Any] = Field(default_factory=list)

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> Any:
        if self.errors:
            with self._lock:
                self._calls += 1
            raise self.errors.pop(0)
        return super()._generate(messages, stop, run_manager, **kwargs)


def _failing(*errors: BaseException) -> Failing:
    return Failing(rules=[(".", "ok")], errors=list(errors))


def test_retryable_failures_are_retried_and_counted() -> None:
    inner = _failing(_status_error(openai.RateLimitError, 429),
                     _status_error(openai.InternalServerError, 502))
    model = RetryingChatModel(inner=inner, policy=NO_WAIT)

    async def go() -> tuple[AIMessage, CallStats]:
        with collect_stats() as stats:
            return await model.ainvoke("hi"), stats

    answer, stats = asyncio.run(go())
    assert answer.content == "ok"
    assert inner.calls == 3
    assert (stats.calls, stats.failures, stats.retries) == (1, 2, 2)
    assert stats.kinds == ["rate_limit", "server_error"]
    assert stats.input_tokens > 0


def test_gives_up_after_max_attempts() -> None:
    inner = _failing(*[_status_error(openai.InternalServerError, 500) for _ in range(10)])
    model = RetryingChatModel(inner=inner, policy=NO_WAIT)
    with collect_stats() as stats, pytest.raises(openai.InternalServerError):
        model.invoke("hi")
    assert inner.calls == NO_WAIT.max_attempts
    assert stats.retries == NO_WAIT.max_attempts - 1


def test_model_errors_and_auth_are_not_retried() -> None:
    for error in (ValueError("bad output"), _status_error(openai.AuthenticationError, 401),
                  _status_error(openai.BadRequestError, 400)):
        inner = _failing(error)
        with collect_stats() as stats, pytest.raises(type(error)):
            asyncio.run(RetryingChatModel(inner=inner, policy=NO_WAIT).ainvoke("hi"))
        assert inner.calls == 1 and stats.retries == 0


TIMEOUT = 60.0
"""A try's timeout: beyond any real delay, reached only when the test moves the clock."""


def test_slow_calls_time_out_and_are_retried() -> None:
    with FakeOpenAI(default="fine") as server:
        server.fail_next(Fault(200, stall=True))  # held until the server stops
        inner = ChatOpenAI(model="m", base_url=server.base_url, api_key="sk-x-000000",
                           max_retries=0)
        policy = RetryPolicy(max_attempts=2, base_delay=0.0, jitter=False, timeout=TIMEOUT)
        model = RetryingChatModel(inner=inner, policy=policy)

        async def go(clock: ClockLoop) -> tuple[Any, CallStats]:
            with collect_stats() as stats:
                call = asyncio.ensure_future(model.ainvoke("hi"))
                await clock.run_in_executor(None, server.wait_stalled)
                clock.advance(TIMEOUT)  # the stalled try's time is up
                return await call, stats

        answer, stats = run_on_clock(go)
        assert answer.content == "fine"
        assert stats.kinds == ["timeout"] and stats.retries == 1
        # The stalled answer was never sent: the timeout, not the server, ended that try.
        assert [r.status for r in server.log] == [0, 200]


class CountingLimiter(BaseRateLimiter):
    """A rate limiter that lets every call through and counts them."""

    def __init__(self) -> None:
        self.acquired = 0

    def acquire(self, *, blocking: bool = True) -> bool:
        self.acquired += 1
        return True

    async def aacquire(self, *, blocking: bool = True) -> bool:
        return self.acquire(blocking=blocking)


def test_the_rate_limiter_paces_every_provider_call_and_no_cache_hit() -> None:
    # Every try takes a slot (retries too), a cached answer none.
    limiter = CountingLimiter()
    inner = _failing(_status_error(openai.RateLimitError, 429))
    inner.rules = [(".", "ok")]
    model = RetryingChatModel(inner=inner, policy=NO_WAIT, limiter=limiter,
                              response_cache=InMemoryCache())
    assert asyncio.run(model.ainvoke("q1")).content == "ok"
    assert (inner.calls, limiter.acquired) == (2, 2)
    assert model.invoke("q1").content == "ok"  # from the cache
    assert (inner.calls, limiter.acquired) == (2, 2)
    asyncio.run(model.ainvoke("q2"))
    assert (inner.calls, limiter.acquired) == (3, 3)
    # --rps N: N calls a second, no bursts (a bucket of one; LangChain's limiter paces them).
    paced = make_rate_limiter(20.0)
    assert (paced.requests_per_second, paced.max_bucket_size) == (20.0, 1)
    assert paced.check_every_n_seconds <= 1 / 20.0
    with pytest.raises(ValueError):
        make_rate_limiter(0)


class Verdict(BaseModel):
    verdict: str


def test_tool_calls_and_structured_output_go_through_the_wrapper() -> None:
    inner = _failing(_status_error(openai.RateLimitError, 429))
    inner.rules = [(".", {"verdict": "yes"})]
    model = RetryingChatModel(inner=inner, policy=NO_WAIT)
    with collect_stats() as stats:
        result = model.with_structured_output(Verdict).invoke("judge this")
    assert result == Verdict(verdict="yes")
    assert stats.retries == 1
    assert model.calls == 2
