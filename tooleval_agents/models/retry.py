"""The one retry policy of a run: which failures are the provider's (retried with exponential
backoff and jitter), which are the model's (never retried: scored as wrong), and the rate limit.

* :func:`classify` sorts an exception into an infrastructure kind -- ``rate_limit`` (429),
  ``server_error`` (5xx), ``timeout``, ``connection`` (resets, refused connections),
  ``bad_response`` (an answer that could not be read: not JSON, no choices, a reply without
  the fields the client reads; see :func:`unreadable_reply`), or the
  non-retryable ``auth`` (401/403), ``not_found`` (404) and ``context_overflow`` (a 400/413
  saying the prompt does not fit the model's context window: the set-up's limit, not a wrong
  answer, so a resume after raising it runs the example again) -- or ``None`` for a model error
  (malformed output, another 400 for a prompt the model rejects, a bug in a workflow...).
* :class:`RetryingChatModel` wraps the chat model under test: every provider call is retried
  under :class:`RetryPolicy`, paced by an optional rate limiter, and accounted in the
  :class:`CallStats` of the example being run (a context variable set by the runner). Cache
  hits are answered first, so they cost no retry, no rate-limit slot and no tokens. A failed
  try whose error carries the provider's token usage (e.g. an answer cut at the length limit)
  adds those tokens too: the provider bills them. Each call is also written into the example's
  transcript (what was sent, the tools bound, the answer or the error; cache hits too), so
  whatever strategy or agent makes the call, the viewer shows it. It uses LangChain's public
  interfaces only (tests/test_public_api.py checks the whole project for private names).

Provider clients have retries of their own (``ChatOpenAI(max_retries=2)`` by default); the
runner builds provider models with ``max_retries=0`` so this module is the only policy.

Example::

    model = RetryingChatModel(inner=ChatOpenAI(model="gpt-4o-mini", max_retries=0),
                              policy=RetryPolicy(max_attempts=5),
                              limiter=make_rate_limiter(2.0))
    with collect_stats() as stats:
        await model.ainvoke("hi")
    stats.retries  # provider retries spent on this call
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.caches import BaseCache
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.globals import get_llm_cache
from langchain_core.language_models import BaseChatModel, LangSmithParams, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult, Generation, LLMResult
from langchain_core.rate_limiters import BaseRateLimiter, InMemoryRateLimiter
from langchain_core.runnables import Runnable, RunnableBinding
from langsmith import tracing_context
from langsmith.utils import tracing_is_enabled
from pydantic import ConfigDict, Field, PrivateAttr

from tooleval_agents.models.accounting import (
    HIT_FLAG,
    CallStats,
    Transcript,
    current_stats,
)
from tooleval_agents.models.failures import (
    BadResponseError,
    ModelCallTimeout,
    classify,
    retry_after,
    unreadable_reply,
)
from tooleval_agents.models.identity import (
    answers_key,
    call_key,
    model_name_of,
    prompt_key,
    provider_of,
)
from tooleval_agents.models.scheduling import PrefixScheduler, request_text

REFUSES_ALL: frozenset[str] = frozenset({"auth", "not_found"})
"""Kinds an endpoint answers every request with (a rejected key, an unknown model)."""
RETRYABLE: frozenset[str] = frozenset({"rate_limit", "server_error", "timeout", "connection",
                                       "bad_response"})
"""Kinds worth another try; ``auth``, ``not_found`` and ``context_overflow`` fail the same way
every time."""


@dataclass(frozen=True)
class RetryPolicy:
    """How provider failures are retried (one policy for the whole run).

    The wait before retry ``n`` (1-based) is ``min(max_delay, base_delay * 2**(n-1))``; with
    ``jitter`` a uniform draw in its upper half (so concurrent examples spread out), never less
    than a ``Retry-After`` the provider sent (capped at ``max_delay``).
    """

    max_attempts: int = 6
    """Tries per model call, the first included (1: no retry)."""
    base_delay: float = 1.0
    """Seconds before the first retry."""
    max_delay: float = 60.0
    """Longest wait between tries."""
    jitter: bool = True
    """Randomise waits (off: exact exponential waits, for tests)."""
    seed: int | None = None
    """Seed of the jitter draws (``None``: unpredictable)."""
    timeout: float | None = 300.0
    """Seconds one async model call may take before it counts as a ``timeout`` failure."""

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {self.max_attempts}")
        if self.base_delay < 0 or self.max_delay < 0:
            raise ValueError("retry delays must be >= 0")
        if self.timeout is not None and self.timeout <= 0:
            raise ValueError(f"timeout must be > 0 seconds, got {self.timeout}")

    def delay(self, retry: int, rng: random.Random,
              retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (1-based)."""
        wait = min(self.max_delay, self.base_delay * 2 ** (retry - 1))
        if self.jitter:
            wait = wait / 2 + rng.uniform(0.0, wait / 2)
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.max_delay))
        return wait


# ----------------------------------------------------------------------------- classification


# ----------------------------------------------------------------------------- the model wrapper

def make_rate_limiter(requests_per_second: float) -> InMemoryRateLimiter:
    """A token bucket allowing ``requests_per_second`` model calls per second, no bursts."""
    if requests_per_second <= 0:
        raise ValueError(f"--rps must be > 0, got {requests_per_second}")
    return InMemoryRateLimiter(requests_per_second=requests_per_second,
                               check_every_n_seconds=min(0.1, 0.5 / requests_per_second),
                               max_bucket_size=1)


class RetryingChatModel(BaseChatModel):
    """``inner`` with :class:`RetryPolicy` retries, a rate limiter, a response cache and
    per-example accounting, through LangChain's public interfaces alone.

    Each try is ``inner.agenerate`` (``inner.generate`` from sync code): ``inner``'s own
    parameters, and the tools and structured-output settings bound through this wrapper
    (``bind_tools``, ``with_structured_output``), apply as when ``inner`` is called directly.
    The try runs with no callbacks and no tracing: the call is traced once, as this wrapper's
    run, whatever the number of tries (a nested model run would be a second record of the call
    in transcripts, and LangSmith would add its tokens to the wrapper's).

    ``response_cache`` (any LangChain ``BaseCache``) is asked by the wrapper itself, through
    ``alookup``/``aupdate``, under its own key (:mod:`tooleval_agents.models.identity`: the
    inner model's class and public parameters without credentials, transport or connection
    settings; the call's parameters; the messages): a hit is answered before any retry,
    rate-limit slot or provider call. LangChain's own ``cache=`` stays off on the wrapper.
    ``inner``'s own rate limiter and cache, if its owner set them, apply to each try.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: BaseChatModel
    """The chat model under test."""
    policy: RetryPolicy = Field(default_factory=RetryPolicy)
    """The retry policy."""
    limiter: BaseRateLimiter | None = None
    """Paces provider calls (retries included, cache hits excluded)."""
    response_cache: BaseCache | None = None
    """Answers already given, by request (see the class doc)."""
    cache: BaseCache | bool | None = Field(default=False, exclude=True)
    """LangChain's cache machinery stays off: a cache given here (or ``True``: LangChain's
    global one) becomes :attr:`response_cache`, keyed as the class doc says."""
    server_identity: str | None = None
    """Digest of what the model's server reports about itself
    (:mod:`tooleval_agents.models.server_identity`): part of the cache key, so a changed server
    (model file, chat template, build) never replays the old one's answers."""
    scheduler: PrefixScheduler | None = None
    """Bounds the tries in flight and orders them so that a request sharing its prefix with
    the last one sent goes next (:mod:`tooleval_agents.models.scheduling`; async calls)."""
    _rng: random.Random = PrivateAttr(default_factory=random.Random)
    _rng_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _answers_key: str | None = PrivateAttr(default=None)
    _inner_name: str = PrivateAttr(default="")
    _provider: str = PrivateAttr(default="")

    def model_post_init(self, context: Any) -> None:
        super().model_post_init(context)
        self._rng = random.Random(self.policy.seed)
        self._inner_name = model_name_of(self.inner) or type(self.inner).__name__
        self._provider = provider_of(self.inner)
        if self.response_cache is None:
            if isinstance(self.cache, BaseCache):
                self.response_cache = self.cache
            elif self.cache is True:
                self.response_cache = get_llm_cache()
        self.cache = False

    # --- LangChain's documented hooks for a custom chat model, from public data ----------
    @property
    def _llm_type(self) -> str:
        return self._provider

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self._inner_name, "provider": self._provider}

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        """The trace's provider, model, temperature and token cap: the inner model's."""
        params = LangSmithParams(ls_provider=self._provider, ls_model_type="chat",
                                 ls_model_name=self._inner_name)
        if isinstance(kwargs.get("model"), str):
            params["ls_model_name"] = kwargs["model"]
        temperature = kwargs.get("temperature", getattr(self.inner, "temperature", None))
        if isinstance(temperature, int | float) and not isinstance(temperature, bool):
            params["ls_temperature"] = temperature
        max_tokens = kwargs.get("max_tokens", getattr(self.inner, "max_tokens", None))
        if isinstance(max_tokens, int) and not isinstance(max_tokens, bool):
            params["ls_max_tokens"] = max_tokens
        if stop:
            params["ls_stop"] = stop
        return params

    @property
    def model_name(self) -> str:
        """The inner model's name (what reports and judgments record)."""
        return self._inner_name

    @property
    def calls(self) -> int | None:
        """The inner model's call counter, when it keeps one (the offline models do)."""
        value = getattr(self.inner, "calls", None)
        return value if isinstance(value, int) else None

    @staticmethod
    def _checked(result: ChatResult) -> ChatResult:
        """``result``, unless the provider answered nothing (an empty ``choices`` list)."""
        if not result.generations:
            raise BadResponseError("the provider's reply has no choices (no answer at all)")
        return result

    # --- the cache ------------------------------------------------------------------------
    def cache_key(self, messages: Sequence[BaseMessage], stop: list[str] | None = None,
                  **kwargs: Any) -> tuple[str, str]:
        """``(prompt, llm_string)`` of a call in :attr:`response_cache`: the messages, and the
        inner model's answers key with the call's parameters."""
        if self._answers_key is None:  # the same for every call: computed once
            self._answers_key = answers_key(self.inner)
        server = f"---server={self.server_identity}" if self.server_identity else ""
        return (prompt_key(messages),
                f"{self._answers_key}---{call_key(stop, kwargs)}{server}")

    # --- one try, then the retry loop -----------------------------------------------------
    def _retrying(self, attempt: int, exc: BaseException, stats: CallStats | None) -> bool:
        """Account a failed try; whether another one follows (the one rule, sync and async)."""
        kind = classify(exc)
        retrying = kind in RETRYABLE and attempt < self.policy.max_attempts
        if stats is not None:
            stats.failed(kind, retrying, exc)
        return retrying

    def _after_failure(self, attempt: int, exc: Exception, stats: CallStats | None) -> float:
        """The wait before the next try after ``exc``; raises when none follows (an answer
        that could not be read as the error that says so, chained to the provider's)."""
        failure = unreadable_reply(exc) or exc
        if not self._retrying(attempt, failure, stats):
            if failure is exc:
                raise exc
            raise failure from exc
        with self._rng_lock:
            return self.policy.delay(attempt, self._rng, retry_after(failure))

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        record = Transcript(current_stats(), messages, kwargs,
                             run_manager.run_id if run_manager is not None else None)
        try:
            result = self._answer(messages, stop, kwargs, record)
        except BaseException as exc:
            record.failed(exc)
            raise
        record.answered(result)
        return result

    async def _agenerate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                         run_manager: AsyncCallbackManagerForLLMRun | None = None,
                         **kwargs: Any) -> ChatResult:
        record = Transcript(current_stats(), messages, kwargs,
                             run_manager.run_id if run_manager is not None else None)
        try:
            result = await self._aanswer(messages, stop, kwargs, record)
        except BaseException as exc:
            record.failed(exc)
            raise
        record.answered(result)
        return result

    def _answer(self, messages: list[BaseMessage], stop: list[str] | None,
                kwargs: dict[str, Any], record: Transcript) -> ChatResult:
        """The answer from the cache, else from ``inner`` under the retry policy."""
        stats = record.stats
        cache = self.response_cache
        key = self.cache_key(messages, stop, **kwargs) if cache is not None else None
        if cache is not None and key is not None:
            hit = cache.lookup(*key)
            if hit is not None:
                return _replay(hit, stats)
        attempt = 0
        while True:
            attempt += 1
            if self.limiter is not None:
                self.limiter.acquire()
            if attempt == 1:
                record.sent()
            try:
                with _untraced():
                    answer = self.inner.generate([messages], stop=stop, callbacks=[], **kwargs)
                result = self._checked(_first(answer))
            except Exception as exc:
                time.sleep(self._after_failure(attempt, exc, stats))
                continue
            if stats is not None:
                stats.answered(result)
            if cache is not None and key is not None:
                cache.update(*key, result.generations)
            return result

    async def _aanswer(self, messages: list[BaseMessage], stop: list[str] | None,
                       kwargs: dict[str, Any], record: Transcript) -> ChatResult:
        """:meth:`_answer`, asynchronously (each try in a :attr:`scheduler` slot)."""
        stats = record.stats
        cache = self.response_cache
        key = self.cache_key(messages, stop, **kwargs) if cache is not None else None
        if cache is not None and key is not None:
            hit = await cache.alookup(*key)
            if hit is not None:
                return _replay(hit, stats)
        order = (request_text(messages, kwargs.get("tools")) if self.scheduler is not None
                 else "")
        attempt = 0
        while True:
            attempt += 1
            failure: Exception | None = None
            async with self._slot(order):
                if self.limiter is not None:
                    await self.limiter.aacquire()
                if attempt == 1:
                    record.sent()
                try:
                    result = self._checked(await self._atry(messages, stop, kwargs))
                except Exception as exc:
                    failure = exc
                    if self.scheduler is not None and classify(exc) in REFUSES_ALL:
                        self.scheduler.close(exc)  # the requests waiting would fail alike
            if failure is not None:  # the wait before the next try holds no slot
                await asyncio.sleep(self._after_failure(attempt, failure, stats))
                continue
            if stats is not None:
                stats.answered(result)
            if cache is not None and key is not None:
                await cache.aupdate(*key, result.generations)
            return result

    def _slot(self, order: str) -> contextlib.AbstractAsyncContextManager[None]:
        return (self.scheduler.slot(order) if self.scheduler is not None
                else contextlib.nullcontext())

    async def _atry(self, messages: list[BaseMessage], stop: list[str] | None,
                    kwargs: dict[str, Any]) -> ChatResult:
        """One call of the inner model, within :attr:`RetryPolicy.timeout`."""
        timeout = self.policy.timeout
        with _untraced():
            call = self.inner.agenerate([messages], stop=stop, callbacks=[], **kwargs)
            if timeout is None:
                return _first(await call)
            try:
                async with asyncio.timeout(timeout):
                    return _first(await call)
            except TimeoutError as exc:
                raise ModelCallTimeout(f"model call took longer than {timeout:g} s") from exc

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None,
                   **kwargs: Any) -> Runnable[LanguageModelInput, AIMessage]:
        """Tools formatted by the inner model, calls made through this wrapper."""
        return bind_through(self, self.inner, tools, tool_choice=tool_choice, **kwargs)


def bind_through(wrapper: BaseChatModel, inner: BaseChatModel, tools: Sequence[Any], *,
                 tool_choice: Any = None,
                 **kwargs: Any) -> Runnable[LanguageModelInput, AIMessage]:
    """``wrapper`` bound with the tools as ``inner`` formats them (a wrapping chat model's
    ``bind_tools``: the provider's tool format, the calls made through the wrapper)."""
    if tool_choice is not None:
        kwargs["tool_choice"] = tool_choice
    bound = inner.bind_tools(tools, **kwargs)
    if not isinstance(bound, RunnableBinding) or bound.bound is not inner:
        raise NotImplementedError(
            f"{type(inner).__name__}.bind_tools does not return a plain binding; its tool "
            f"calls cannot go through a wrapper ({type(wrapper).__name__})")
    return wrapper.bind(**bound.kwargs)


def _untraced() -> contextlib.AbstractContextManager[Any]:
    """No LangSmith tracing inside (a context variable of this task: the try is traced as the
    wrapper's run already); nothing to switch off when tracing is off."""
    return tracing_context(enabled=False) if tracing_is_enabled() else contextlib.nullcontext()


def _first(result: LLMResult) -> ChatResult:
    """The answer to the one prompt of a ``generate`` call, as a ``ChatResult``."""
    generations = [g for g in result.generations[0] if isinstance(g, ChatGeneration)]
    return ChatResult(generations=generations, llm_output=result.llm_output)


def _replay(cached: Sequence[Generation], stats: CallStats | None) -> ChatResult:
    """A cached answer as LangChain serves one: a chat generation marked :data:`HIT_FLAG`
    whose usage costs nothing (``total_cost`` 0: nothing is paid for it again), with the
    tokens recorded when it was made (they are the answer's); accounted as a replay."""
    generations = []
    for gen in cached:
        if not isinstance(gen, ChatGeneration):
            gen = ChatGeneration(message=AIMessage(content=gen.text),
                                 generation_info=gen.generation_info)
        if isinstance(gen.message, AIMessage):
            usage = {**(gen.message.usage_metadata or {}), "total_cost": 0}
            gen = ChatGeneration(message=gen.message.model_copy(update={
                "usage_metadata": usage,
                "response_metadata": {**gen.message.response_metadata, HIT_FLAG: True}}),
                generation_info=gen.generation_info)
        generations.append(gen)
    result = ChatResult(generations=generations)
    if stats is not None:
        stats.replayed(result)
    return result
