"""What the gateway's wire formats share: an agent's request as the model is asked it
(:class:`ModelRequest`), the gateway's errors (:class:`GatewayError`, one vocabulary that each
format spells its own way), a request body read as a JSON object (bounded, total), and the
pieces every format is made of -- text of content parts, tool definitions, tool-call
arguments, server-sent events.

The answers and events a format sends are the providers' own typed models (the ``openai`` and
``anthropic`` SDKs'), validated and dumped by :func:`dump`; requests are read leniently, field
by field (a field a route does not use is accepted and recorded, never refused: a newer client
than the SDK installed here must still be served).
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage
from pydantic import BaseModel

from tooleval_agents.data.jsonio import MAX_NESTING, parse_json

ErrorKind = Literal["invalid_request", "authentication", "not_found", "too_large",
                    "rate_limit", "server_error", "timeout", "overloaded"]
"""What went wrong, in the gateway's words (each format names it as its provider does)."""
STATUS: dict[ErrorKind, int] = {
    "invalid_request": 400, "authentication": 401, "not_found": 404, "too_large": 413,
    "rate_limit": 429, "server_error": 500, "timeout": 504, "overloaded": 503}
compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""A value as JSON text the way the gateway writes an answer or an event: compact, UTF-8
characters as they are (one encoder for every call: ``json.dumps`` with these options makes a
new one each time, half of what encoding an event costs)."""
_ARGUMENTS = json.JSONEncoder(ensure_ascii=False).encode
_RECORDED = json.JSONEncoder(ensure_ascii=False, default=str).encode
RECORDED_CHARS = 2000
"""A field the gateway accepted without applying is recorded with its value up to this many
characters of JSON (longer: its size only)."""


class GatewayError(Exception):
    """A request the gateway does not serve: answered in the format's own error shape, with
    ``status``, and counted on the example it came for."""

    def __init__(self, kind: ErrorKind, message: str, *, status: int | None = None,
                 param: str | None = None) -> None:
        super().__init__(message)
        self.kind, self.message, self.param = kind, message, param
        self.status = status if status is not None else STATUS[kind]


def invalid(message: str, param: str | None = None) -> GatewayError:
    """A malformed request (400), naming the field."""
    return GatewayError("invalid_request", f"{param}: {message}" if param else message,
                        param=param)


@dataclass
class ModelRequest:
    """One request of an agent, whatever its wire format: what the model is asked, and what
    was sent besides."""

    format: str
    """``chat.completions``, ``responses`` or ``messages``."""
    model: str
    """The model name the agent sent (the gateway serves the run's model whatever it is)."""
    messages: list[BaseMessage]
    """The conversation, as LangChain messages."""
    tools: list[dict[str, Any]] = field(default_factory=list)
    """The tools the model is bound to, as OpenAI function tools (``bind_tools`` takes
    them for every provider)."""
    tool_choice: str | None = None
    """``none``, ``any`` or a tool's name (LangChain's words); ``None``: the model decides."""
    stop: list[str] | None = None
    """Stop sequences."""
    stream: bool = False
    """Answer as server-sent events."""
    unused: dict[str, Any] = field(default_factory=dict)
    """Fields accepted and not applied (sampling and length settings are the run's), with
    their values (:func:`recorded`)."""
    dropped: dict[str, int] = field(default_factory=dict)
    """Parts of the conversation the model is not shown, by kind (e.g. ``reasoning`` items
    of an earlier answer), counted."""
    options: dict[str, Any] = field(default_factory=dict)
    """Format-specific settings the answer needs (e.g. whether a stream ends with usage)."""

    def record(self) -> dict[str, Any]:
        """What the example's transcript keeps of the request besides messages and tools."""
        out: dict[str, Any] = {"format": self.format, "model": self.model,
                               "stream": self.stream}
        if self.tool_choice is not None:
            out["tool_choice"] = self.tool_choice
        if self.stop:
            out["stop"] = self.stop
        if self.unused:
            out["unused"] = self.unused
        if self.dropped:
            out["dropped"] = self.dropped
        return out


def recorded(value: Any) -> Any:
    """A value as a transcript keeps it: itself when small, else ``"<N chars of JSON>"``."""
    try:
        size = len(_RECORDED(value))
    except (TypeError, ValueError, RecursionError):
        return "<unreadable>"
    return value if size <= RECORDED_CHARS else f"<{size} chars of JSON>"


def unused_fields(body: dict[str, Any], applied: frozenset[str]) -> dict[str, Any]:
    """The fields of ``body`` outside ``applied``, recorded."""
    return {k: recorded(v) for k, v in body.items() if k not in applied}


def not_bound(unused: dict[str, Any], tool: Any) -> None:
    """Record a tool of the request the model is not bound to (a hosted or server tool the
    gateway cannot run), under ``unused["tools"]``."""
    unused.setdefault("tools", []).append(recorded(tool))


def json_object(body: bytes) -> dict[str, Any]:
    """A request body as a JSON object; anything else is a :class:`GatewayError`. Total:
    any body is an answer or this error. Nesting deeper than
    :data:`~tooleval_agents.data.jsonio.MAX_NESTING` is refused on every Python (the reader's
    own limit, where it stops first, is a refusal too); the depth is counted on what was read
    (a request's 33 tool schemas hold hundreds of brackets: counting them in the text cost
    several times the parse)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise invalid(f"the body is not UTF-8 text (byte {exc.start})") from None
    try:
        value = json.loads(text)
    except RecursionError:
        raise invalid(f"the body is not JSON: nested deeper than {MAX_NESTING} levels") from None
    except ValueError as exc:  # JSONDecodeError, or an integer past Python's digit limit
        raise invalid(f"the body is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise invalid(f"the body must be a JSON object, not {type(value).__name__}")
    if deeper(value, MAX_NESTING):
        raise invalid(f"the body is not JSON: nested deeper than {MAX_NESTING} levels")
    return value


def deeper(value: Any, limit: int) -> bool:
    """Whether a JSON value nests deeper than ``limit`` arrays and objects (level by level,
    each container once).

    >>> deeper({"a": [[1]]}, 2), deeper({"a": [[1]]}, 3)
    (True, False)
    """
    level, depth = [value], 1
    while level:
        if depth > limit:
            return True
        inner = []
        for item in level:
            for child in (item.values() if type(item) is dict else item):
                if type(child) is dict or type(child) is list:
                    inner.append(child)
        level, depth = inner, depth + 1
    return False


def new_id(prefix: str) -> str:
    """A fresh id as the provider spells its own (``chatcmpl-…``, ``resp_…``, ``msg_…``)."""
    return prefix + secrets.token_hex(12)


def string(body: dict[str, Any], key: str, default: str | None = None,
           where: str | None = None) -> str:
    """``body[key]`` as a string (``default`` when absent)."""
    value = body.get(key, default)
    if not isinstance(value, str):
        if value is None and default is not None:
            return default
        raise invalid("must be a string", f"{where}.{key}" if where else key)
    return value


def items(body: dict[str, Any], key: str, where: str | None = None) -> list[Any]:
    """``body[key]`` as a list (``[]`` when absent or null)."""
    value = body.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise invalid("must be an array", f"{where}.{key}" if where else key)
    return value


def stops(value: Any, param: str) -> list[str] | None:
    """A stop setting (one string or a list of them)."""
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(s, str) for s in value):
        return list(value) or None
    raise invalid("must be a string or an array of strings", param)


TEXT_PARTS = frozenset({"text", "input_text", "output_text"})


def parts_text(content: Any, param: str, *, images: list[dict[str, Any]] | None = None) -> str:
    """The text of a message's content: a string, or content parts whose text ones are
    joined (their other fields, e.g. ``cache_control``, are not the model's business). An
    image part goes to ``images`` when given (as LangChain's ``image_url`` block); any
    other part is refused."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise invalid("must be a string or an array of content parts", param)
    texts = []
    for i, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if isinstance(part, str):
            texts.append(part)
        elif kind in TEXT_PARTS or kind == "refusal":
            text = part.get("text", part.get("refusal", ""))
            if not isinstance(text, str):
                raise invalid("text must be a string", f"{param}[{i}]")
            texts.append(text)
        elif images is not None and (image := image_block(part)) is not None:
            images.append(image)
        else:
            raise invalid(f"content of type {kind!r} is not served by the gateway (text and "
                          "images are)", f"{param}[{i}]")
    return "".join(texts)


def image_block(part: Any) -> dict[str, Any] | None:
    """An image content part of any of the three formats as an OpenAI ``image_url`` part
    (``None``: not an image)."""
    if not isinstance(part, dict):
        return None
    kind = part.get("type")
    if kind == "image_url" and isinstance(part.get("image_url"), dict | str):
        url = part["image_url"]
        return {"type": "image_url", "image_url": url if isinstance(url, dict) else {"url": url}}
    if kind == "input_image" and isinstance(part.get("image_url"), str):
        return {"type": "image_url", "image_url": {"url": part["image_url"]}}
    source = part.get("source") if kind == "image" else None
    if isinstance(source, dict) and source.get("type") == "base64":
        url = f"data:{source.get('media_type', 'image/png')};base64,{source.get('data', '')}"
        return {"type": "image_url", "image_url": {"url": url}}
    if isinstance(source, dict) and source.get("type") == "url":
        return {"type": "image_url", "image_url": {"url": str(source.get("url", ""))}}
    return None


def content_of(text: str, images: list[dict[str, Any]]) -> str | list[Any]:
    """A message's content: its text alone when it has no image (every model takes a
    string), else LangChain's list of parts."""
    if not images:
        return text
    return [*([{"type": "text", "text": text}] if text else []), *images]


EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


def function_tool(name: Any, description: Any, parameters: Any, param: str) -> dict[str, Any]:
    """A tool as the model is bound to it: an OpenAI function tool."""
    if not isinstance(name, str) or not name:
        raise invalid("a tool needs a name", param)
    if parameters is not None and not isinstance(parameters, dict):
        raise invalid("a tool's parameters must be a JSON schema object", param)
    function: dict[str, Any] = {"name": name, "parameters": parameters or dict(EMPTY_SCHEMA)}
    if isinstance(description, str) and description:
        function["description"] = description
    return {"type": "function", "function": function}


def tool_names(tools: list[dict[str, Any]]) -> list[str]:
    return [t["function"]["name"] for t in tools]


def call_arguments(raw: Any) -> dict[str, Any] | None:
    """A tool call's arguments sent back in a conversation, as an object; ``None`` when they
    are not one (a model may have written broken JSON: kept as an invalid call, not
    refused)."""
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        return None
    try:
        value = parse_json(raw) if raw.strip() else {}
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def arguments_text(args: Any) -> str:
    """A tool call's arguments as the wire sends them: JSON text."""
    return _ARGUMENTS(args if args is not None else {})


@dataclass(frozen=True)
class Call:
    """A tool call of the model's answer."""

    id: str
    name: str
    """The tool's name as it was bound."""
    arguments: str
    """Its arguments as JSON text."""


@dataclass(frozen=True)
class Answer:
    """The model's answer, as every format reads it."""

    text: str
    calls: list[Call]
    input_tokens: int
    """Input tokens, provider-cached ones included."""
    output_tokens: int
    cached_tokens: int
    """Input tokens read from the provider's prompt cache."""
    truncated: bool
    """Cut at the length limit."""

    @classmethod
    def of(cls, message: AIMessage) -> Answer:
        text = message.text if isinstance(message.content, list) else str(message.content)
        calls = [Call(str(c.get("id") or new_id("call_")), c["name"], arguments_text(c["args"]))
                 for c in message.tool_calls]
        # A call the provider sent with broken arguments goes back as it came.
        calls += [Call(str(c.get("id") or new_id("call_")), str(c.get("name") or ""),
                       str(c.get("args") or "")) for c in message.invalid_tool_calls]
        usage: dict[str, Any] = dict(message.usage_metadata or {})
        meta = message.response_metadata or {}
        reason = meta.get("finish_reason") or meta.get("stop_reason")
        return cls(text, calls, int(usage.get("input_tokens", 0) or 0),
                   int(usage.get("output_tokens", 0) or 0),
                   int((usage.get("input_token_details") or {}).get("cache_read", 0) or 0),
                   reason in ("length", "max_tokens"))


STRICT = False
"""Whether :func:`dump` checks each answer against the installed SDK's typed model: on in the
tests (every format, streamed and not), off in a run, where the answers go as made (the
check cost a Responses answer about 2 ms, most of what the gateway spends on a call; and a
later SDK release that types one more field as required must not stop the gateway)."""


def dump(model_type: type[BaseModel], value: dict[str, Any]) -> dict[str, Any]:
    """``value`` as the provider's typed model ``model_type`` sends it: checked by it and
    dumped (only the fields given, by their wire names) when :data:`STRICT`, else as made."""
    if not STRICT:
        return value
    return model_type.model_validate(value).model_dump(mode="json", by_alias=True,
                                                       exclude_unset=True)


def sse(data: dict[str, Any] | str, event: str | None = None) -> bytes:
    """One server-sent event."""
    text = data if isinstance(data, str) else compact(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n".encode()


__all__ = ["STATUS", "Answer", "Call", "ErrorKind", "GatewayError", "ModelRequest",
           "call_arguments", "compact", "content_of", "dump", "function_tool", "invalid",
           "json_object", "new_id", "parts_text", "sse", "unused_fields"]
