"""Chat requests every OpenAI-compatible server accepts: a rewrite of ``ChatOpenAI``'s JSON body.

LangChain's ``ChatOpenAI`` sends an assistant turn that called tools and wrote no text as
``"content": null``. OpenAI takes it; llama-cpp-python's server answers HTTP 500 (its request
type wants a string), so every second turn of a tool-calling agent failed there. And a
``tool_choice`` given as a model argument is sent with every request, also with those that
bind no tools, which OpenAI refuses ("tool_choice is only allowed when tools are specified").

This module rewrites the body of each ``POST .../chat/completions`` before it leaves, through
httpx's public transport interface (an ``http_client`` / ``http_async_client`` pair handed to
``ChatOpenAI``; nothing of LangChain's is patched):

* an assistant message whose ``content`` is ``null`` gets ``""`` (``null_content="empty"``,
  the default), loses the key (``"omit"``), or is left alone (``"keep"``);
* a ``developer`` message (OpenAI's name for the system role, which an agent's Responses
  request carries to the gateway -- Codex's instructions) is sent as ``system``:
  llama-cpp-python's server answers 500 to a role it does not know;
* ``tool_choice`` is dropped from a request that carries no ``tools`` (and no ``functions``),
  and, with ``tool_choice_rounds=N``, from a request whose conversation already holds ``N``
  assistant turns with tool calls;
* ``tool_choice: "required"`` with a single tool names that tool (the same request in the
  OpenAI API): llama-cpp-python's server ignores ``"required"`` but decodes a named call under
  a grammar of the tool's parameters, so structured output through a forced tool call (what
  ``with_structured_output`` sends through a wrapping model, e.g. a run's judge) comes back
  as a call that parses, not as free text.

:func:`model_arguments` is where :func:`tooleval_agents.models.specs.provider_model` plugs it in:
for models of the ``ChatOpenAI`` family sent to a server of their own (``base_url``), unless
the user passes HTTP clients or a proxy of their own. Model arguments (``--model-arg``) it
reads:

* ``null_content=empty|omit|keep`` (carried as ``tool_choice_rounds`` below);
* ``tool_choice=auto|required|none`` (or a JSON object naming a tool): becomes part of the
  model's ``model_kwargs``, so it is sent with every request that binds tools -- LangChain's
  ``bind_tools`` and ``create_agent`` send none by default, and llama-cpp-python's
  ``chatml-function-calling`` chat format ignores the tools without one. Being a model
  argument, it is part of the run's identity and of the response cache's key;
* ``tool_choice_rounds=N`` (carried in ``extra_body`` under :data:`MARKER`, removed
  before the request leaves; part of the run's identity and cache key): ``tool_choice`` only
  for the first ``N`` rounds of calls. A server whose prompt cannot show tool results (that
  chat format renders no ``tool`` message) gets the same calls again on every turn; after
  ``N`` rounds the request goes without ``tool_choice`` and such a server answers in text,
  which ends the agent's loop (``create_agent`` has no turn limit of its own).

Example::

    from langchain_openai import ChatOpenAI
    from tooleval_agents.models.openai_compat import Compat, compat_clients

    url = "http://127.0.0.1:8765/v1"
    model = ChatOpenAI(model="local", base_url=url, api_key="local",
                       model_kwargs={"tool_choice": "auto"},
                       **compat_clients(url, Compat(tool_choice_rounds=1)))
"""

from __future__ import annotations

import json
import sys
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

import httpx

NullContent = Literal["empty", "omit", "keep"]
"""How an assistant message with ``"content": null`` is sent (see the module docstring)."""
NULL_CONTENTS: tuple[str, ...] = get_args(NullContent)
COMPAT_ARGS = ("null_content", "tool_choice_rounds")
"""Model arguments this module consumes (they are not the model class's)."""
MARKER = "tooleval_compat"
"""Body key carrying a model's :class:`Compat` settings from its ``extra_body`` to the
transport, which removes it: the settings are then part of the model's parameters (the run's
``config.json``, the response cache's key: a cached answer is never replayed under other
settings) and never reach the server."""
SERVER_URLS = ("base_url", "api_base", "openai_api_base")
"""Model arguments that send a model to a server of its own."""
_OWN_TRANSPORT = ("http_client", "http_async_client", "openai_proxy", "client", "async_client")


@dataclass(frozen=True)
class Compat:
    """How chat requests are rewritten (see the module docstring)."""

    null_content: NullContent = "empty"
    """An assistant message's ``"content": null`` becomes ``""``, is dropped, or stays."""
    tool_choice_rounds: int | None = None
    """``tool_choice`` is sent while the conversation holds fewer assistant turns with tool
    calls than this (``None``: always, when the request binds tools)."""


def rewrite_body(body: Mapping[str, Any], compat: Compat = Compat()) -> dict[str, Any]:
    """A chat-completion request body as every server accepts it (a new dict; ``body`` is
    not changed), under ``compat`` or the settings the body carries (:data:`MARKER`).

    >>> rewrite_body({"messages": [{"role": "assistant", "content": None,
    ...                             "tool_calls": [{"id": "a"}]}], "tool_choice": "auto"})
    {'messages': [{'role': 'assistant', 'content': '', 'tool_calls': [{'id': 'a'}]}]}
    >>> rewrite_body({"messages": [{"role": "assistant", "content": None}]}, Compat("omit"))
    {'messages': [{'role': 'assistant'}]}
    >>> rewrite_body({"messages": [{"role": "developer", "content": "Be brief."}]})
    {'messages': [{'role': 'system', 'content': 'Be brief.'}]}
    >>> rewrite_body({"tools": [{"type": "function", "function": {"name": "V"}}],
    ...               "tool_choice": "required"})["tool_choice"]
    {'type': 'function', 'function': {'name': 'V'}}
    """
    out = dict(body)
    given = out.pop(MARKER, None)
    if isinstance(given, dict):
        compat = Compat(**{k: v for k, v in given.items() if k in COMPAT_ARGS})
    messages = out.get("messages")
    messages = messages if isinstance(messages, list) else []
    if compat.null_content != "keep" and messages:
        messages = [_fill_content(m, compat.null_content) for m in messages]
    if any(isinstance(m, dict) and m.get("role") == "developer" for m in messages):
        messages = [{**m, "role": "system"} if isinstance(m, dict)
                    and m.get("role") == "developer" else m for m in messages]
    if messages:
        out["messages"] = messages
    if "tool_choice" in out:
        rounds = sum(isinstance(m, dict) and m.get("role") == "assistant"
                     and bool(m.get("tool_calls")) for m in messages)
        if (not out.get("tools") and not out.get("functions")) or (
                compat.tool_choice_rounds is not None and rounds >= compat.tool_choice_rounds):
            del out["tool_choice"]
        elif out["tool_choice"] == "required":
            out["tool_choice"] = _the_only_tool(out.get("tools")) or "required"
    return out


def _the_only_tool(tools: Any) -> dict[str, Any] | None:
    """``tool_choice`` naming the one tool of a request, if it has exactly one."""
    if isinstance(tools, list) and len(tools) == 1 and isinstance(tools[0], dict):
        name = (tools[0].get("function") or {}).get("name")
        if isinstance(name, str) and name:
            return {"type": "function", "function": {"name": name}}
    return None


def _fill_content(message: Any, null_content: str) -> Any:
    if not (isinstance(message, dict) and message.get("role") == "assistant"
            and "content" in message and message["content"] is None):
        return message
    if null_content == "omit":
        return {k: v for k, v in message.items() if k != "content"}
    return {**message, "content": ""}


def rewrite_request(request: Any, compat: Compat = Compat()) -> Any:
    """``request`` (an ``httpx.Request``, or httpx2's under openai 3: the same interface)
    with its JSON body rewritten by :func:`rewrite_body` when it is a chat completion; any
    other request (or a body that is not a JSON object) as it is."""
    if request.method != "POST" or not request.url.path.endswith("/chat/completions"):
        return request
    try:
        body = json.loads(request.content)
    except Exception:  # not JSON, or a streamed body (RequestNotRead): sent as it is
        return request
    if not isinstance(body, dict):
        return request
    new = rewrite_body(body, compat)
    if new == body:
        return request
    content = json.dumps(new, ensure_ascii=False).encode("utf-8")
    headers = [(k, v) for k, v in request.headers.multi_items()
               if k.lower() != "content-length"]
    return type(request)(request.method, request.url, headers=headers, content=content,
                         extensions=request.extensions)


class CompatTransport(httpx.BaseTransport):
    """A sync transport that rewrites chat requests (:func:`rewrite_request`) and hands them
    to ``inner`` (a transport of httpx or of httpx2)."""

    def __init__(self, inner: Any, compat: Compat = Compat()) -> None:
        self.inner = inner
        self.compat = compat

    def handle_request(self, request: Any) -> Any:
        return self.inner.handle_request(rewrite_request(request, self.compat))

    def close(self) -> None:
        self.inner.close()


class AsyncCompatTransport(httpx.AsyncBaseTransport):
    """The async twin of :class:`CompatTransport`."""

    def __init__(self, inner: Any, compat: Compat = Compat()) -> None:
        self.inner = inner
        self.compat = compat

    async def handle_async_request(self, request: Any) -> Any:
        return await self.inner.handle_async_request(rewrite_request(request, self.compat))

    async def aclose(self) -> None:
        await self.inner.aclose()


def _env_proxy(url: str) -> str | None:
    """The proxy the environment names for ``url`` (``HTTPS_PROXY``, ``NO_PROXY``...): a
    client with its own transport does not read it."""
    parts = urllib.parse.urlsplit(url)
    if not parts.hostname or urllib.request.proxy_bypass(parts.hostname):
        return None
    proxies = urllib.request.getproxies()
    return proxies.get(parts.scheme) or proxies.get("all")


def compat_clients(base_url: str, compat: Compat = Compat()) -> dict[str, Any]:
    """``http_client`` and ``http_async_client`` for a ``ChatOpenAI`` sent to ``base_url``:
    the OpenAI SDK's default clients (its timeouts and connection limits) whose transport
    rewrites chat requests; the environment's proxy for ``base_url`` is kept."""
    import openai  # deferred: the CLI starts without the SDK

    # The SDK's HTTP library: httpx (openai 2) or httpx2 (openai 3), whose clients it wants.
    library = sys.modules[openai.DefaultHttpxClient.__mro__[1].__module__.partition(".")[0]]
    proxy = _env_proxy(base_url)
    sync = CompatTransport(library.HTTPTransport(proxy=proxy), compat)
    async_ = AsyncCompatTransport(library.AsyncHTTPTransport(proxy=proxy), compat)
    # Typed against httpx; under openai 3 the client wants httpx2's (the same interface).
    return {"http_client": openai.DefaultHttpxClient(transport=cast(Any, sync)),
            "http_async_client": openai.DefaultAsyncHttpxClient(transport=cast(Any, async_))}


def split_arguments(kwargs: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(model arguments, ours)``: ``kwargs`` without :data:`COMPAT_ARGS` and ``tool_choice``
    (handed to the model class by :func:`model_arguments`), and those.

    Raises:
        ValueError: ``null_content`` or ``tool_choice_rounds`` is not valid.
    """
    ours = {k: kwargs[k] for k in (*COMPAT_ARGS, "tool_choice") if k in kwargs}
    if ours.get("null_content", "empty") not in NULL_CONTENTS:
        raise ValueError(f"--model-arg null_content={ours['null_content']!r}: use one of "
                         f"{', '.join(NULL_CONTENTS)}")
    rounds = ours.get("tool_choice_rounds")
    if rounds is not None and (not isinstance(rounds, int) or isinstance(rounds, bool)
                               or rounds < 1):
        raise ValueError(f"--model-arg tool_choice_rounds={rounds!r}: use a whole number >= 1")
    return {k: v for k, v in kwargs.items() if k not in ours}, ours


def model_arguments(fields: Mapping[str, Any], kwargs: Mapping[str, Any],
                    ours: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments to add to a model whose class has ``fields``, built from ``kwargs`` (the
    user's, without ours) and ``ours`` (from :func:`split_arguments`).

    ``tool_choice`` joins ``model_kwargs`` when the class has that field (else it is passed
    as given); the rewriting clients are added for a ``ChatOpenAI``-like class sent to a
    ``base_url`` of its own when the user set no client or proxy of their own, and the
    settings given (``null_content``, ``tool_choice_rounds``) join ``extra_body`` under
    :data:`MARKER` for the transport to read.

    Raises:
        ValueError: ``null_content`` or ``tool_choice_rounds`` given for another model.

    >>> model_arguments({"model_kwargs": None}, {"model_kwargs": {"seed": 1}},
    ...                 {"tool_choice": "auto"})
    {'model_kwargs': {'seed': 1, 'tool_choice': 'auto'}}
    """
    extra: dict[str, Any] = {}
    if "tool_choice" in ours and "model_kwargs" in fields:
        extra["model_kwargs"] = {**(kwargs.get("model_kwargs") or {}),
                                 "tool_choice": ours["tool_choice"]}
    elif "tool_choice" in ours:
        extra["tool_choice"] = ours["tool_choice"]
    url = next((kwargs[k] for k in SERVER_URLS if kwargs.get(k)), None)
    settings = {k: ours[k] for k in COMPAT_ARGS if k in ours}
    if (isinstance(url, str) and "extra_body" in fields and "http_client" in fields
            and "http_async_client" in fields
            and not any(kwargs.get(k) for k in _OWN_TRANSPORT)):
        extra.update(compat_clients(url))
        if settings:
            extra["extra_body"] = {**(kwargs.get("extra_body") or {}), MARKER: settings}
    elif settings:
        raise ValueError(f"--model-arg {', '.join(settings)}: applies to an OpenAI-compatible "
                         "model with a base_url and no http_client or openai_proxy of its own")
    return extra
