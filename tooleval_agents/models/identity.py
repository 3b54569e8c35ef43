"""What a chat model is, read from public data alone: its provider and name (for labels and
traces) and the parameters that decide its answers (the response cache's key).

LangChain keeps these behind private names (``_llm_type``, ``_identifying_params``,
``_get_llm_string``, ``_get_ls_params``) that may change in any release; here they come from
what it documents instead: the model's class and package, its public fields and its serialised
form (``langchain_core.load``, through :func:`~tooleval_agents.redaction.model_params`, which
also drops credentials and transport settings).

Example::

    provider_of(ChatOpenAI(model="gpt-4o-mini"))      # "openai"
    model_name_of(ChatOpenAI(model="gpt-4o-mini"))    # "gpt-4o-mini"
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.load import dumps
from langchain_core.messages import BaseMessage

from tooleval_agents.redaction import model_params

CONNECTION_FIELDS = frozenset({
    "timeout", "request_timeout", "max_retries", "streaming", "stream_usage", "verbose",
})
"""Model fields about the connection, not the answers: left out of :func:`answers_key` (the
credentials, headers, clients and proxies are already left out of
:func:`~tooleval_agents.redaction.model_params`)."""

_NAME_FIELDS = ("model_name", "model", "model_id", "deployment_name")


def provider_of(model: Any) -> str:
    """The provider a chat model talks to: its integration package's name for LangChain's
    ``langchain_<provider>`` packages (as ``init_chat_model`` names them: ``openai``,
    ``anthropic``, ``google_genai``...), else its class name without ``Chat``, lower case."""
    cls = type(model)
    root = cls.__module__.partition(".")[0]
    if root.startswith("langchain_") and root not in ("langchain_core", "langchain_community"):
        return root.removeprefix("langchain_")
    name = cls.__name__
    name = name.removeprefix("Chat") if name.startswith("Chat") else name.removesuffix("Chat")
    return name.lower() or "chat"


def model_name_of(model: Any) -> str | None:
    """The model's name (``model_name``, ``model``, ``model_id`` or ``deployment_name``), if
    it has one."""
    for field in _NAME_FIELDS:
        value = getattr(model, field, None)
        if isinstance(value, str) and value:
            return value
    return None


def answers_key(model: Any) -> str:
    """Everything about ``model`` that decides its answers, as one JSON text: its class and
    its public parameters without credentials, transport or connection settings (two models
    that differ only in API key, timeout or retries answer alike)."""
    params = {k: v for k, v in model_params(model).items() if k not in CONNECTION_FIELDS}
    cls = type(model)
    return json.dumps({"class": f"{cls.__module__}.{cls.__qualname__}", "params": params},
                      sort_keys=True, ensure_ascii=False, default=str)


def prompt_key(messages: Sequence[BaseMessage]) -> str:
    """The messages of a call as one JSON text (LangChain's serialisation), without their ids
    (a message id names a run, not what was asked)."""
    return dumps([m.model_copy(update={"id": None}) if m.id is not None else m
                  for m in messages])


def call_key(stop: Sequence[str] | None, kwargs: Mapping[str, Any]) -> str:
    """The per-call parameters (bound tools, tool choice, response format, stop words...) as
    one JSON text."""
    return json.dumps({"stop": list(stop) if stop else None, **kwargs}, sort_keys=True,
                      ensure_ascii=False, default=str)


__all__ = ["CONNECTION_FIELDS", "answers_key", "call_key", "model_name_of", "prompt_key",
           "provider_of"]
