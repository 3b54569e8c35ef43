"""Batching for OpenAI-compatible chat models, below LangChain: their HTTP requests.

A ``ChatOpenAI`` (or any model of its family) is given HTTP clients whose async transport hands
each ``POST .../chat/completions`` to a :class:`~tooleval_agents.models.batch.queue.BatchQueue`
and answers it with the response its batch gave -- the body LangChain would have read from
the provider, so whatever the workflow or agent, its calls are batched without a change, and
LangChain reads the answers (tool calls, usage) as it always does. Everything else (the batch
interface's own file and batch requests, streaming) goes out as usual. Requests are rewritten
as :mod:`tooleval_agents.models.openai_compat` rewrites them for every server.
"""

from __future__ import annotations

import json
import sys
from typing import Any, cast

import httpx

from tooleval_agents.models.batch.backends import OpenAIBatches
from tooleval_agents.models.batch.queue import BatchQueue, BatchRequestError
from tooleval_agents.models.openai_compat import AsyncCompatTransport, CompatTransport, _env_proxy

OPENAI_URL = "https://api.openai.com/v1"


class BatchTransport(httpx.AsyncBaseTransport):
    """An async transport that sends chat completions through ``queue`` and anything else
    through ``inner`` (a transport of httpx, or of httpx2 under openai 3)."""

    def __init__(self, inner: Any, queue: BatchQueue, library: Any) -> None:
        self.inner = inner
        self.queue = queue
        self.library = library

    async def handle_async_request(self, request: Any) -> Any:
        if request.method == "POST" and request.url.path.endswith("/chat/completions"):
            try:
                body = json.loads(request.content)
            except Exception:  # a streamed body: not batched
                body = None
            if isinstance(body, dict) and not body.get("stream"):
                outcome = await self.queue.send(body)
                if outcome.kind is not None:
                    error = outcome.body.get("error") or {}
                    raise BatchRequestError(outcome.kind, str(error.get("message") or error))
                return self.library.Response(outcome.status, json=outcome.body,
                                             request=request)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def batch_clients(queue: BatchQueue, base_url: str | None) -> dict[str, Any]:
    """``http_client`` and ``http_async_client`` for a ``ChatOpenAI`` whose async chat calls
    go through ``queue`` (sync calls go out one by one)."""
    import openai  # deferred: the CLI starts without the SDK

    library = sys.modules[openai.DefaultHttpxClient.__mro__[1].__module__.partition(".")[0]]
    proxy = _env_proxy(base_url or OPENAI_URL)
    sync = CompatTransport(library.HTTPTransport(proxy=proxy))
    async_ = AsyncCompatTransport(BatchTransport(library.AsyncHTTPTransport(proxy=proxy), queue,
                                                 library))
    return {"http_client": openai.DefaultHttpxClient(transport=cast(Any, sync)),
            "http_async_client": openai.DefaultAsyncHttpxClient(transport=cast(Any, async_))}


def openai_backend(model: Any) -> OpenAIBatches | None:
    """The Batch API of an OpenAI-compatible model (its own client: endpoint, key, headers),
    or ``None`` for another kind of model."""
    client = getattr(model, "root_async_client", None)
    if client is None or not hasattr(client, "batches"):
        return None
    return OpenAIBatches(client)


__all__ = ["BatchTransport", "batch_clients", "openai_backend"]
