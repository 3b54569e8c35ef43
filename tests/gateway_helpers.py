"""Shared pieces of the model gateway's tests: a scripted model that calls a tool and then
answers with its result, a gateway serving it for one example, and raw HTTP."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
from langchain_core.messages import AIMessage

from tooleval_agents.gateway import wire
from tooleval_agents.gateway.grants import Grant
from tooleval_agents.gateway.server import ModelGateway
from tooleval_agents.models.accounting import CallStats
from tooleval_agents.models.chat_models import ScriptedChatModel
from tooleval_agents.models.retry import RetryingChatModel, RetryPolicy

WEATHER = {"name": "get_weather", "description": "The weather in a city.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                          "required": ["city"]}}
"""The one tool of these tests, as an OpenAI function."""
CALLS = AIMessage("", tool_calls=[
    {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_paris", "type": "tool_call"},
    {"name": "get_weather", "args": {"city": "Rome"}, "id": "call_rome", "type": "tool_call"}])
"""The scripted model's first answer: two calls at once."""
FINAL = "Paris is sunny, Rome is rainy."
"""Its answer once both results are in the conversation."""
QUESTION = "What is the weather in Paris and in Rome?"


def scripted(calls: AIMessage = CALLS) -> RetryingChatModel:
    """Makes ``calls`` (the weather tool for two cities), then answers from the two results
    (its answers estimate their tokens, so usage is known), wrapped as a run wraps a model."""
    inner = ScriptedChatModel(rules=[(r"sunny.*rainy", FINAL)], default=calls)
    return RetryingChatModel(inner=inner, policy=RetryPolicy(max_attempts=1))


@dataclass
class Served:
    """A gateway serving one example."""

    gateway: ModelGateway
    grant: Grant
    stats: CallStats

    @property
    def openai_url(self) -> str:
        return self.gateway.openai_url(self.grant)

    @property
    def url(self) -> str:
        return self.gateway.url(self.grant)

    def post(self, path: str, body: Any, *, key: str | None = None,
             **headers: str) -> httpx.Response:
        """One raw POST to ``<grant url>/v1<path>`` with the grant's key (or ``key``; ""
        sends none)."""
        sent = {"content-type": "application/json", **{k.replace("_", "-"): v
                                                       for k, v in headers.items()}}
        key = self.grant.key if key is None else key
        if key:
            sent["authorization"] = f"Bearer {key}"
        content = body if isinstance(body, bytes) else httpx.Request(
            "POST", "http://x", json=body).content
        return httpx.post(f"{self.url}/v1{path}", content=content, headers=sent, timeout=60)


@contextlib.contextmanager
def served(model: Any = None, name: str = "scripted") -> Iterator[Served]:
    """A gateway serving ``model`` (default :func:`scripted`) to one example, every answer
    it makes checked by the installed SDK's typed model (:data:`wire.STRICT`)."""
    gateway = ModelGateway(model if model is not None else scripted(), name=name)
    stats = CallStats()
    strict, wire.STRICT = wire.STRICT, True
    try:
        yield Served(gateway, gateway.grant("example 0", stats), stats)
    finally:
        wire.STRICT = strict
        gateway.stop()


def transcript(stats: CallStats) -> list[dict[str, Any]]:
    """The example's recorded model calls, in order."""
    return list(stats.transcript.values())
