"""What a failed model call was, read from the exception a provider raised: its kind (rate limit,
server error, timeout, connection, an unreadable reply, or none: the caller's own error), the
usage a provider reported with it, and how long it asked to wait (Retry-After)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, Literal, cast

InfraKind = Literal["rate_limit", "server_error", "timeout", "connection", "bad_response",
                    "auth", "not_found", "context_overflow", "batch_expired", "batch_failed",
                    "batch_cancelled"]
"""Provider failures: not the model's fault, counted apart from wrong answers. The ``batch_``
kinds are requests a provider batch did not run (``--batch``): it expired, was cancelled, or
was refused as a whole."""

BATCH_KINDS: frozenset[str] = frozenset({"batch_expired", "batch_failed", "batch_cancelled"})


# What providers and local servers say when a prompt exceeds the context window: OpenAI
# (``context_length_exceeded``), vLLM / llama.cpp / llama-cpp-python, Anthropic, Gemini.
_CONTEXT_OVERFLOW = re.compile(
    r"context_length_exceeded|maximum context length|context window|context length|"
    r"exceeds? the available context size|prompt is too long|input is too long|"
    r"too many (?:input )?tokens|exceeds? the maximum number of tokens", re.I)


_CONNECTION_NAMES = frozenset({
    "APIConnectionError", "ConnectError", "ConnectionError", "RemoteProtocolError", "ReadError",
    "WriteError", "NetworkError", "ProtocolError", "IncompleteRead", "ServerDisconnectedError",
    "ClientConnectionError",
})


_SERVER_NAMES = frozenset({"InternalServerError", "ServiceUnavailable", "ServiceUnavailableError",
                           "OverloadedError", "APIServerError"})


class ModelCallTimeout(TimeoutError):
    """A model call took longer than :attr:`~tooleval_agents.models.retry.RetryPolicy.timeout`."""


class BadResponseError(Exception):
    """The provider answered (typically HTTP 200) with a reply that could not be read: not
    JSON, no choices, or without the fields its client reads (raised from what the client
    raised). An infrastructure failure (``bad_response``), retried: the model never
    answered."""


# What LangChain's OpenAI client says of a reply it cannot read (a TypeError or ValueError).
_UNREADABLE = re.compile(r"null value for 'choices'|Unexpected response type|"
                         r"indices must be integers|not subscriptable|not iterable", re.I)


def _status_of(exc: BaseException) -> int | None:
    for holder in (exc, getattr(exc, "response", None)):
        for attr in ("status_code", "status", "http_status", "code"):
            value = getattr(holder, attr, None)
            if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
                return value
    return None


def _classify_one(exc: BaseException) -> InfraKind | None:
    if isinstance(exc, TimeoutError):
        return "timeout"
    if isinstance(exc, BadResponseError):
        return "bad_response"
    status = _status_of(exc)
    if status is not None:
        if status == 429:
            return "rate_limit"
        if status == 408:
            return "timeout"
        if status >= 500:
            return "server_error"
        if status in (401, 403):
            return "auth"
        if status == 404:
            return "not_found"
        if status in (400, 413) and _says_context_overflow(exc):
            return "context_overflow"
        return None  # 400, 422...: the request the workflow built was refused
    names = {cls.__name__ for cls in type(exc).__mro__}
    if any("ContextOverflow" in name or "ContextWindow" in name for name in names):
        return "context_overflow"
    if any("Timeout" in name for name in names):
        return "timeout"
    if "RateLimitError" in names:
        return "rate_limit"
    if names & _SERVER_NAMES:
        return "server_error"
    if names & _CONNECTION_NAMES or isinstance(exc, ConnectionError):
        return "connection"
    return None


def _says_context_overflow(exc: BaseException) -> bool:
    code = getattr(exc, "code", None)
    body = getattr(exc, "body", None)
    texts = [str(exc), code if isinstance(code, str) else "", str(body) if body else ""]
    return any(_CONTEXT_OVERFLOW.search(text) for text in texts)


def _chain(exc: BaseException, depth: int = 6) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and depth > 0 and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__
        depth -= 1


def classify(exc: BaseException) -> InfraKind | None:
    """The infrastructure kind of a failure, looking through ``raise ... from`` chains;
    ``None`` when it is the model's (or the workflow's) fault.

    >>> classify(TimeoutError())
    'timeout'
    >>> classify(ValueError("bad JSON")) is None
    True
    """
    chain = list(_chain(exc))
    for item in chain:  # a batch's verdict, however the client wrapped it
        kind = getattr(item, "kind", None)
        if kind in BATCH_KINDS and type(item).__name__ == "BatchRequestError":
            return cast(InfraKind, kind)
    for item in chain:
        kind = _classify_one(item)
        if kind is not None:
            return kind
    return None


def unreadable_reply(exc: BaseException) -> BadResponseError | None:
    """What a provider call raised, as a :class:`BadResponseError` when it says the reply
    could not be read; ``None`` for anything else (an HTTP error, already classified; a
    refusal or a structured answer that does not validate: the model's).

    Unreadable: a body that is not JSON (``JSONDecodeError`` anywhere in the chain); a
    reply missing what the client indexes (``KeyError``, ``IndexError``, an attribute of
    ``None``); a ``TypeError`` or ``ValueError`` LangChain raises for a reply of the wrong
    shape (``choices`` null or not a list, a reply that is not an object, an ``error`` object
    in a 200); a reply LangChain's own message classes reject.

    >>> type(unreadable_reply(IndexError("list index out of range"))).__name__
    'BadResponseError'
    >>> unreadable_reply(ValueError("the model's JSON does not match the schema")) is None
    True
    """
    if classify(exc) is not None:
        return None
    chain = list(_chain(exc))
    unreadable = (
        any(isinstance(item, json.JSONDecodeError) for item in chain)
        or isinstance(exc, KeyError | IndexError)
        or (isinstance(exc, AttributeError) and exc.name is not None and exc.obj is None)
        or (isinstance(exc, TypeError | ValueError) and bool(_UNREADABLE.search(str(exc))))
        or (isinstance(exc, ValueError) and bool(exc.args) and isinstance(exc.args[0], dict))
        or (type(exc).__name__ == "ValidationError"
            and str(getattr(exc, "title", "")).endswith(("Message", "MessageChunk"))))
    if not unreadable:
        return None
    return BadResponseError(f"the provider's reply could not be read: "
                            f"{type(exc).__name__}: {exc}"[:500])


def _token_pair(usage: Any) -> tuple[int, int] | None:
    """``(input, output)`` tokens of a usage record: LangChain's ``usage_metadata`` keys or the
    OpenAI wire format (a dict or the SDK's ``CompletionUsage``)."""
    def get(name: str) -> Any:
        return usage.get(name) if isinstance(usage, dict) else getattr(usage, name, None)

    for keys in (("input_tokens", "output_tokens"), ("prompt_tokens", "completion_tokens")):
        tokens_in, tokens_out = get(keys[0]), get(keys[1])
        if isinstance(tokens_in, int) or isinstance(tokens_out, int):
            return int(tokens_in or 0), int(tokens_out or 0)
    return None


def reported_usage(exc: BaseException) -> tuple[int, int] | None:
    """Tokens the provider reported for a failed try, when its error carries them: the
    OpenAI SDK's ``LengthFinishReasonError.completion.usage``, an error ``body`` with a
    ``usage`` object, or an attached ``usage_metadata``; ``None`` when nothing was reported
    (a timed-out or refused request: whatever it cost is unknown to the client)."""
    for item in _chain(exc):
        holders = (getattr(getattr(item, "completion", None), "usage", None),
                   (getattr(item, "body", None) or {}).get("usage")
                   if isinstance(getattr(item, "body", None), dict) else None,
                   getattr(item, "usage_metadata", None))
        for usage in holders:
            if usage is not None and (pair := _token_pair(usage)) is not None:
                return pair
    return None


def retry_after(exc: BaseException) -> float | None:
    """Seconds the provider asked us to wait (``retry-after-ms`` / ``retry-after`` headers)."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    try:
        if (ms := headers.get("retry-after-ms")) is not None:
            return max(0.0, float(ms) / 1000)
        if (s := headers.get("retry-after")) is not None:
            return max(0.0, float(s))
    except (TypeError, ValueError):  # an HTTP date: use our own backoff
        return None
    return None


