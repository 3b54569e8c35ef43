"""What one example's model calls cost and said: :class:`CallStats` (calls, tries, tokens paid
and replayed, batch answers, each call's transcript), set per example in a context variable by the
runner (:func:`collect_stats`) and read by whatever makes a call (:func:`current_stats`): the
retrying wrapper, the response cache, the batch queue, an outside agent's reported usage."""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult

from tooleval_agents.models.failures import reported_usage

HIT_FLAG = "tooleval_cache_hit"
"""``response_metadata`` flag of an answer served from a response cache."""
USAGE_UNKNOWN = "tooleval_usage_unknown"
"""``response_metadata`` flag of a replayed answer whose cache entry recorded no token usage
(written before the cache kept it): its tokens are not known, and are counted as unknown."""


def _tokens(result: ChatResult) -> tuple[int, int, int]:
    """(input, output, provider-cached input) tokens of an answer's usage metadata."""
    tokens_in = tokens_out = cached = 0
    for gen in result.generations:
        usage = getattr(getattr(gen, "message", None), "usage_metadata", None) or {}
        tokens_in += int(usage.get("input_tokens", 0) or 0)
        tokens_out += int(usage.get("output_tokens", 0) or 0)
        cached += int((usage.get("input_token_details") or {}).get("cache_read", 0) or 0)
    return tokens_in, tokens_out, cached


def _replayed(result: ChatResult) -> bool:
    return any(HIT_FLAG in (getattr(getattr(g, "message", None), "response_metadata", None)
                            or {}) for g in result.generations)


@dataclass
class CallStats:
    """Model calls of one example (the runner sets one per example; see :func:`collect_stats`):
    what this session paid (provider calls and their tokens) apart from the answers replayed
    from a response cache, whose tokens (recorded when made) are the answers' all the same."""

    calls: int = 0
    """Answers received from the provider (paid; cache hits excluded)."""
    failures: int = 0
    """Failed tries."""
    retries: int = 0
    """Tries repeated after a retryable failure."""
    cache_hits: int = 0
    """Answers served by a response cache."""
    input_tokens: int = 0
    """Input tokens paid: of the provider's answers, and of failed tries it bills."""
    output_tokens: int = 0
    cached_input_tokens: int = 0
    """Input tokens served from the provider's prompt cache (part of ``input_tokens``)."""
    replayed_input_tokens: int = 0
    """Tokens of the answers served by a response cache, as recorded when made."""
    replayed_output_tokens: int = 0
    replayed_cached_input_tokens: int = 0
    unknown_usage: int = 0
    """Replayed answers whose cache entry recorded no usage."""
    batched_calls: int = 0
    """Answers that came through a provider batch (``--batch``; part of ``calls``)."""
    batched_input_tokens: int = 0
    batched_output_tokens: int = 0
    batched_cached_input_tokens: int = 0
    """The tokens of those answers (part of the totals above), priced at batch rates."""
    kinds: list[str] = field(default_factory=list)
    """Infrastructure kind of each failed try, in order."""
    epoch: int = 0
    """Which attempt of the example this is (``--epochs``): the response cache and the
    offline noisy model key on it."""
    usage_reported: bool | None = None
    """Set by an agent outside the harness (``--agent-cmd``): whether it reported its usage
    (``None``: the harness counted the calls itself)."""
    transcript: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Chat model calls by run id, in call order: messages, tools, output or error
    (:mod:`tooleval_agents.results.transcripts`)."""
    raised: list[BaseException] = field(default_factory=list)
    """The errors model calls ended with (after retries): an example's failure is the
    model's when it is one of these (or came from one), else its agent's."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def record_call(self, run_id: str, call: dict[str, Any]) -> None:
        with self._lock:
            self.transcript[run_id] = call

    def update_call(self, run_id: str, update: dict[str, Any]) -> None:
        with self._lock:
            if run_id in self.transcript:
                self.transcript[run_id].update(update)

    def answered(self, result: ChatResult) -> None:
        """An answer from the model (one a cache of the model's own served is a replay)."""
        if _replayed(result):
            self.replayed(result)
            return
        tokens_in, tokens_out, cached = _tokens(result)
        with self._lock:
            self.calls += 1
            self.input_tokens += tokens_in
            self.output_tokens += tokens_out
            self.cached_input_tokens += cached

    def replayed(self, result: ChatResult) -> None:
        """An answer served by a response cache: no call, no tokens paid; its recorded tokens
        are the answer's."""
        tokens_in, tokens_out, cached = _tokens(result)
        unknown = any(USAGE_UNKNOWN in (getattr(getattr(g, "message", None),
                                                "response_metadata", None) or {})
                      for g in result.generations)
        with self._lock:
            self.cache_hits += 1
            self.unknown_usage += unknown
            self.replayed_input_tokens += tokens_in
            self.replayed_output_tokens += tokens_out
            self.replayed_cached_input_tokens += cached
    def batched(self, tokens_in: int, tokens_out: int, cached: int) -> None:
        """An answer came through a provider batch, with these tokens."""
        with self._lock:
            self.batched_calls += 1
            self.batched_input_tokens += tokens_in
            self.batched_output_tokens += tokens_out
            self.batched_cached_input_tokens += cached

    def failed(self, kind: str | None, retrying: bool,
               exc: BaseException | None = None) -> None:
        billed = reported_usage(exc) if exc is not None else None
        with self._lock:
            if billed is not None:  # the provider reported (and bills) the failed try's tokens
                self.input_tokens += billed[0]
                self.output_tokens += billed[1]
            self.failures += 1
            self.kinds.append(kind or "model")
            if retrying:
                self.retries += 1

    def gave_up(self, error: BaseException) -> None:
        """A model call ended with ``error`` (no answer)."""
        with self._lock:
            self.raised.append(error)


    def reported(self, usage: tuple[int, int, int, int] | None) -> None:
        """The usage an agent outside the harness reported (input, output, cached input
        tokens, model calls; ``None``: it reported none, :attr:`usage_reported` False)."""
        with self._lock:
            self.usage_reported = usage is not None
            if usage is not None:
                self.input_tokens += usage[0]
                self.output_tokens += usage[1]
                self.cached_input_tokens += usage[2]
                self.calls += usage[3]


_STATS: ContextVar[CallStats | None] = ContextVar("tooleval_call_stats", default=None)


def current_stats() -> CallStats | None:
    """The stats of the example being run in this context, if any."""
    return _STATS.get()


@contextlib.contextmanager
def collect_stats() -> Iterator[CallStats]:
    """Account the model calls made in this context (and the tasks and threads it starts)."""
    stats = CallStats()
    with use_stats(stats):
        yield stats


@contextlib.contextmanager
def use_stats(stats: CallStats | None) -> Iterator[CallStats | None]:
    """Account the model calls made in this context in an example's ``stats`` (``None``: in
    none), e.g. a call the model gateway answers, in its own thread, for an example's outside
    agent."""
    token = _STATS.set(stats)
    try:
        yield stats
    finally:
        _STATS.reset(token)


def message_record(message: BaseMessage) -> dict[str, Any]:
    """A message as a transcript stores it: role, content, and its tool calls or tool-call id
    when any."""
    record: dict[str, Any] = {"role": message.type, "content": message.content}
    calls = getattr(message, "tool_calls", None)
    if calls:
        record["tool_calls"] = [{"name": c.get("name"), "args": c.get("args"),
                                 "id": c.get("id")} for c in calls]
    for key in ("tool_call_id", "name", "status"):
        value = getattr(message, key, None)
        if value:
            record[key] = value
    return record


class Transcript:
    """One model call in the current example's transcript, if an example is being run (the
    call is recorded when it starts, so a call that never ends still shows what was sent)."""

    def __init__(self, stats: CallStats | None, messages: Sequence[BaseMessage],
                 kwargs: dict[str, Any], run_id: Any) -> None:
        self.stats = stats
        self.key = str(run_id if run_id is not None else uuid.uuid4())
        if stats is not None:
            tools = kwargs.get("tools")
            stats.record_call(self.key, {
                "messages": [message_record(m) for m in messages],
                "tools": tools if isinstance(tools, list) and tools else None})

    def sent(self) -> None:
        """The call's first try leaves now (the order a prefix cache saw the requests in)."""
        if self.stats is not None:
            self.stats.update_call(self.key, {"sent_at": time.time()})

    def answered(self, result: ChatResult) -> None:
        if self.stats is not None and result.generations:
            self.stats.update_call(self.key,
                                   {"output": message_record(result.generations[0].message)})

    def failed(self, error: BaseException) -> None:
        if self.stats is not None:
            self.stats.gave_up(error)
            self.stats.update_call(self.key, {"error": f"{type(error).__name__}: {error}"[:500]})
