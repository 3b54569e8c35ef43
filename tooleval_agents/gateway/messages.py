"""Anthropic Messages (``POST /v1/messages``, ``?beta=true`` too): the request read into a
:class:`~tooleval_agents.gateway.wire.ModelRequest` (``system`` and its blocks, ``tool_use``
and ``tool_result`` blocks as LangChain tool calls and tool messages, through LangChain's
``convert_to_messages``), the answer as the ``anthropic`` SDK's ``Message``, a stream as its
raw events (``message_start``, each block's start, delta and stop, ``message_delta``,
``message_stop``), an error as ``{"type": "error", "error": {...}}``.

Claude Code sends ``role: "system"`` messages inside ``messages``: they are system messages
here too. ``thinking`` blocks of earlier answers are not shown to the model (counted)."""

from __future__ import annotations

from typing import Any

from anthropic.types import (
    ErrorResponse,
    Message,
    RawContentBlockDeltaEvent,
    RawContentBlockStartEvent,
    RawContentBlockStopEvent,
    RawMessageDeltaEvent,
    RawMessageStartEvent,
    RawMessageStopEvent,
)
from langchain_core.messages import AIMessage, BaseMessage, convert_to_messages

from tooleval_agents.gateway.wire import (
    Answer,
    GatewayError,
    ModelRequest,
    call_arguments,
    content_of,
    dump,
    function_tool,
    image_block,
    invalid,
    items,
    new_id,
    not_bound,
    parts_text,
    sse,
    stops,
    string,
    unused_fields,
)

NAME = "messages"
APPLIED = frozenset({"model", "messages", "system", "tools", "tool_choice", "stop_sequences",
                     "stream"})
"""The fields the gateway applies; every other one (``max_tokens``, ``thinking``,
``context_management``, ``metadata``...) is accepted and recorded."""
DROPPED_BLOCKS = frozenset({"thinking", "redacted_thinking"})
"""Blocks of an earlier answer the model is not shown (its reasoning, not its words)."""


def parse(body: dict[str, Any]) -> ModelRequest:
    """A Messages request as the model is asked it."""
    raw = items(body, "messages")
    if not raw:
        raise invalid("at least one message is needed", "messages")
    dropped: dict[str, int] = {}
    plain = [*([{"role": "system", "content": parts_text(body["system"], "system")}]
               if body.get("system") else []), *_messages(raw, dropped)]
    unused = unused_fields(body, APPLIED)
    return ModelRequest(
        format=NAME, model=string(body, "model", ""), messages=_converted(plain),
        tools=_tools(items(body, "tools"), unused),
        tool_choice=_tool_choice(body.get("tool_choice")),
        stop=stops(body.get("stop_sequences"), "stop_sequences"),
        stream=body.get("stream") is True, unused=unused, dropped=dropped)


def _messages(raw: list[Any], dropped: dict[str, int]) -> list[dict[str, Any]]:
    """Anthropic messages as OpenAI-shaped message dicts: a user message's tool results each
    their own tool message (in order, text between them a user message)."""
    out: list[dict[str, Any]] = []
    for i, message in enumerate(raw):
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            raise invalid("must be an object", where)
        role, content = message.get("role"), message.get("content")
        if role not in ("user", "assistant", "system"):
            raise invalid(f"unknown role {role!r}", f"{where}.role")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            raise invalid("must be a string or an array of content blocks", f"{where}.content")
        if role == "assistant":
            out.append(_assistant(blocks, where, dropped))
        else:
            out.extend(_user(role, blocks, where, dropped))
    return out


def _assistant(blocks: list[Any], where: str, dropped: dict[str, int]) -> dict[str, Any]:
    texts, calls = [], []
    for j, block in enumerate(blocks):
        kind = block.get("type") if isinstance(block, dict) else None
        at = f"{where}.content[{j}]"
        if kind == "text":
            texts.append(parts_text([block], at))
        elif kind == "tool_use":
            name, args = block.get("name"), block.get("input")
            if not isinstance(name, str) or not isinstance(args, dict | None):
                raise invalid("a tool_use block needs a name and an input object", at)
            calls.append({"name": name, "args": args or {}, "id": str(block.get("id") or ""),
                          "type": "tool_call"})
        elif kind in DROPPED_BLOCKS:
            dropped[str(kind)] = dropped.get(str(kind), 0) + 1
        else:
            raise invalid(f"an assistant block of type {kind!r} is not served by the gateway",
                          at)
    return {"role": "assistant", "content": "".join(texts), "tool_calls": calls}


def _user(role: str, blocks: list[Any], where: str,
          dropped: dict[str, int]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    texts: list[str] = []
    images: list[dict[str, Any]] = []

    def flush() -> None:
        if texts or images:
            out.append({"role": role, "content": content_of("".join(texts), images)})
            texts.clear()
            images.clear()

    for j, block in enumerate(blocks):
        kind = block.get("type") if isinstance(block, dict) else None
        at = f"{where}.content[{j}]"
        if kind == "tool_result":
            flush()
            out.append(_tool_result(block, at, dropped))
        elif kind in DROPPED_BLOCKS:
            dropped[str(kind)] = dropped.get(str(kind), 0) + 1
        elif role == "user" and (image := image_block(block)) is not None:
            images.append(image)
        else:
            texts.append(parts_text([block], at))
    flush()
    return out


def _tool_result(block: dict[str, Any], at: str, dropped: dict[str, int]) -> dict[str, Any]:
    """A ``tool_result`` block as a tool message (an error result keeps its status; an image
    in it is not shown, counted)."""
    images: list[dict[str, Any]] = []
    text = parts_text(block.get("content"), f"{at}.content", images=images)
    if images:
        dropped["tool_result_image"] = dropped.get("tool_result_image", 0) + len(images)
    message = {"role": "tool", "content": text,
               "tool_call_id": string(block, "tool_use_id", where=at)}
    if block.get("is_error") is True:
        message["status"] = "error"
    return message


def _converted(plain: list[dict[str, Any]]) -> list[BaseMessage]:
    return convert_to_messages([{k: v for k, v in m.items() if v != [] or k != "tool_calls"}
                                for m in plain])


def _tools(raw: list[Any], unused: dict[str, Any]) -> list[dict[str, Any]]:
    tools = []
    for i, tool in enumerate(raw):
        if not isinstance(tool, dict):
            raise invalid("must be an object", f"tools[{i}]")
        if tool.get("type") not in (None, "custom"):
            not_bound(unused, tool)  # a server tool (web search, bash...): recorded, not bound
            continue
        tools.append(function_tool(tool.get("name"), tool.get("description"),
                                   tool.get("input_schema"), f"tools[{i}]"))
    return tools


def _tool_choice(value: Any) -> str | None:
    if value is None:
        return None
    kind = value.get("type") if isinstance(value, dict) else None
    if kind == "auto":
        return None
    if kind in ("any", "none"):
        return str(kind)
    if kind == "tool" and isinstance(value.get("name"), str):
        return str(value["name"])
    raise invalid("must be {'type': 'auto' | 'any' | 'none'} or {'type': 'tool', 'name': ...}",
                  "tool_choice")


def _stop_reason(answer: Answer) -> str:
    return "max_tokens" if answer.truncated else "tool_use" if answer.calls else "end_turn"


def _usage(answer: Answer) -> dict[str, int]:
    """Anthropic's usage: input tokens apart from those read from the prompt cache."""
    return {"input_tokens": answer.input_tokens - answer.cached_tokens,
            "output_tokens": answer.output_tokens,
            "cache_read_input_tokens": answer.cached_tokens, "cache_creation_input_tokens": 0}


def _blocks(answer: Answer) -> list[dict[str, Any]]:
    text = [{"type": "text", "text": answer.text}] if answer.text else []
    return [*text, *({"type": "tool_use", "id": c.id, "name": c.name,
                      "input": _input(c.arguments)} for c in answer.calls)]


def _input(arguments: str) -> dict[str, Any]:
    return call_arguments(arguments) or {}


def answer(message: AIMessage, request: ModelRequest) -> dict[str, Any]:
    """The model's answer as a ``Message``."""
    reply = Answer.of(message)
    return dump(Message, {"id": new_id("msg_"), "type": "message", "role": "assistant",
                          "model": request.model, "content": _blocks(reply),
                          "stop_reason": _stop_reason(reply), "stop_sequence": None,
                          "usage": _usage(reply)})


def events(message: AIMessage, request: ModelRequest) -> list[bytes]:
    """The model's answer as Anthropic's event stream."""
    reply = Answer.of(message)
    start: dict[str, Any] = {
        "id": new_id("msg_"), "type": "message", "role": "assistant", "model": request.model,
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {**_usage(reply), "output_tokens": 0}}
    out = [sse(dump(RawMessageStartEvent, {"type": "message_start", "message": start}),
               "message_start")]
    opened: list[tuple[dict[str, Any], dict[str, Any]]] = [
        ({"type": "text", "text": ""}, {"type": "text_delta", "text": reply.text})
    ] if reply.text else []
    opened += [({"type": "tool_use", "id": c.id, "name": c.name, "input": {}},
                {"type": "input_json_delta", "partial_json": c.arguments}) for c in reply.calls]
    for index, (block, delta) in enumerate(opened):
        out += [sse(dump(RawContentBlockStartEvent, {"type": "content_block_start",
                                                     "index": index, "content_block": block}),
                    "content_block_start"),
                sse(dump(RawContentBlockDeltaEvent, {"type": "content_block_delta",
                                                     "index": index, "delta": delta}),
                    "content_block_delta"),
                sse(dump(RawContentBlockStopEvent, {"type": "content_block_stop",
                                                    "index": index}), "content_block_stop")]
    out += [sse(dump(RawMessageDeltaEvent, {
        "type": "message_delta", "delta": {"stop_reason": _stop_reason(reply),
                                           "stop_sequence": None},
        "usage": {"output_tokens": reply.output_tokens}}), "message_delta"),
            sse(dump(RawMessageStopEvent, {"type": "message_stop"}), "message_stop")]
    return out


TYPES = {"invalid_request": "invalid_request_error", "authentication": "authentication_error",
         "not_found": "not_found_error", "too_large": "invalid_request_error",
         "rate_limit": "rate_limit_error", "server_error": "api_error",
         "timeout": "timeout_error", "overloaded": "overloaded_error"}


def error(err: GatewayError) -> dict[str, Any]:
    """Anthropic's error body: ``{"type": "error", "error": {"type", "message"}}``."""
    return dump(ErrorResponse, {"type": "error", "error": {"type": TYPES[err.kind],
                                                          "message": err.message}})


__all__ = ["NAME", "answer", "error", "events", "parse"]
