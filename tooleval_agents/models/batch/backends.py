"""The providers' batch interfaces, each behind :class:`BatchBackend`: OpenAI's Batch API (and
every server that implements it: files, batches, output and error files) through the ``openai``
SDK. (Anthropic's Message Batches are not supported: ``langchain-anthropic`` offers no public
way to reach ``ChatAnthropic``'s HTTP requests; see docs/cost.md.)

A backend sends a batch of request bodies, reports its status, and reads its results back as
one :class:`Outcome` per ``custom_id``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from tooleval_agents.data.jsonio import parse_json

FINAL = frozenset({"completed", "failed", "expired", "cancelled", "ended", "canceled"})
"""Statuses after which a batch changes no more."""


@dataclass(frozen=True)
class Outcome:
    """One request's result in a batch."""

    status: int
    """The HTTP status the provider gave it (0: none, the request did not run)."""
    body: dict[str, Any]
    """The response body (the completion, or the provider's error object)."""
    kind: str | None = None
    """For a request that did not run: ``batch_expired``, ``batch_failed`` or
    ``batch_cancelled``."""


@dataclass(frozen=True)
class Submitted:
    """A batch the provider accepted."""

    id: str
    status: str


@dataclass(frozen=True)
class Polled:
    """A batch's status, and once final its files."""

    status: str
    output_file: str | None = None
    error_file: str | None = None
    errors: str | None = None
    """Why the whole batch failed (validation), when it did."""


class BatchBackend(Protocol):
    """A provider's batch interface."""

    provider: str
    endpoint: str
    """The path each request of a batch goes to (``/v1/chat/completions``)."""

    async def upload(self, lines: list[dict[str, Any]]) -> str:
        """Store the requests (``custom_id``, ``body``); the input's id."""
        ...

    async def create(self, file: str, metadata: dict[str, str]) -> Submitted: ...

    async def find(self, file: str) -> Submitted | None:
        """The batch made from the input ``file``, if the provider has one."""
        ...

    async def poll(self, batch: str) -> Polled: ...

    async def results(self, polled: Polled, ids: list[str]) -> dict[str, Outcome]:
        """Every request of a final batch (``ids``: all of them): its outcome."""
        ...

    def usage(self, body: dict[str, Any]) -> tuple[int, int, int]:
        """``(input, output, cached input)`` tokens of a response body."""
        ...


def _missing(polled: Polled, ids: list[str], seen: dict[str, Outcome]) -> dict[str, Outcome]:
    """The requests a final batch gave no line for: expired, cancelled or failed with it."""
    kind = {"expired": "batch_expired", "cancelled": "batch_cancelled",
            "canceled": "batch_cancelled"}.get(polled.status, "batch_failed")
    why = polled.errors or f"the batch ended {polled.status} before this request ran"
    return {cid: seen.get(cid) or Outcome(0, {"error": {"message": why}}, kind) for cid in ids}


class OpenAIBatches:
    """OpenAI's Batch API through an ``openai.AsyncOpenAI`` client (the model's own: same
    endpoint, key and headers)."""

    provider = "openai"
    endpoint = "/v1/chat/completions"

    def __init__(self, client: Any) -> None:
        self.client = client.with_options(max_retries=4)

    async def upload(self, lines: list[dict[str, Any]]) -> str:
        data = "".join(json.dumps({"custom_id": line["custom_id"], "method": "POST",
                                   "url": self.endpoint, "body": line["body"]},
                                  ensure_ascii=False) + "\n" for line in lines)
        made = await self.client.files.create(
            file=("tooleval-batch.jsonl", data.encode("utf-8"), "application/jsonl"),
            purpose="batch")
        return str(made.id)

    async def create(self, file: str, metadata: dict[str, str]) -> Submitted:
        batch = await self.client.batches.create(input_file_id=file, endpoint=self.endpoint,
                                                 completion_window="24h", metadata=metadata)
        return Submitted(str(batch.id), str(batch.status))

    async def find(self, file: str) -> Submitted | None:
        page = await self.client.batches.list(limit=100)
        for batch in page.data:
            if batch.input_file_id == file:
                return Submitted(str(batch.id), str(batch.status))
        return None

    async def poll(self, batch: str) -> Polled:
        found = await self.client.batches.retrieve(batch)
        errors = getattr(found, "errors", None)
        text = "; ".join(str(getattr(e, "message", e)) for e in getattr(errors, "data", None)
                         or []) or None
        return Polled(str(found.status), found.output_file_id, found.error_file_id, text)

    async def _lines(self, file: str | None) -> list[dict[str, Any]]:
        if not file:
            return []
        content = await self.client.files.content(file)
        out = []
        for line in content.text.splitlines():
            try:
                row = parse_json(line)
            except ValueError:
                continue
            if isinstance(row, dict) and "custom_id" in row:
                out.append(row)
        return out

    async def results(self, polled: Polled, ids: list[str]) -> dict[str, Outcome]:
        seen: dict[str, Outcome] = {}
        for row in [*await self._lines(polled.output_file),
                    *await self._lines(polled.error_file)]:
            seen[str(row["custom_id"])] = _openai_outcome(row)
        return _missing(polled, ids, seen)

    def usage(self, body: dict[str, Any]) -> tuple[int, int, int]:
        return _openai_usage(body)


def _count(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _openai_usage(body: dict[str, Any]) -> tuple[int, int, int]:
    usage: dict[str, Any] = body["usage"] if isinstance(body.get("usage"), dict) else {}
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else 0
    return (_count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")),
            _count(cached))


def _openai_outcome(row: dict[str, Any]) -> Outcome:
    """One output or error line of an OpenAI batch."""
    response: dict[str, Any] = row["response"] if isinstance(row.get("response"), dict) else {}
    if isinstance(response.get("status_code"), int):
        body = response.get("body")
        return Outcome(int(response["status_code"]), body if isinstance(body, dict) else {})
    error: dict[str, Any] = row["error"] if isinstance(row.get("error"), dict) else {}
    code = str(error.get("code") or "")
    kind = "batch_expired" if "expired" in code else (
        "batch_cancelled" if "cancel" in code else "batch_failed")
    return Outcome(0, {"error": error}, kind)


__all__ = ["FINAL", "BatchBackend", "OpenAIBatches", "Outcome", "Polled", "Submitted"]
