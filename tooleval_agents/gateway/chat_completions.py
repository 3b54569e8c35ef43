"""OpenAI Chat Completions (``POST /v1/chat/completions``): the request read into a
:class:`~tooleval_agents.gateway.wire.ModelRequest` (its messages through LangChain's
``convert_to_messages``), the answer as the ``openai`` SDK's ``ChatCompletion``, a stream as
its ``ChatCompletionChunk`` events ending ``data: [DONE]``, an error as ``{"error": {...}}``."""

from __future__ import annotations

import time
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, convert_to_messages
from openai.types import ErrorObject
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from tooleval_agents.gateway.wire import (
    Answer,
    GatewayError,
    ModelRequest,
    call_arguments,
    content_of,
    dump,
    function_tool,
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

NAME = "chat.completions"
APPLIED = frozenset({"model", "messages", "tools", "tool_choice", "stop", "stream",
                     "stream_options", "n"})
"""The fields the gateway applies; every other one is accepted and recorded."""
ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})


def parse(body: dict[str, Any]) -> ModelRequest:
    """A Chat Completions request as the model is asked it."""
    if body.get("n") not in (None, 1):
        raise invalid("the gateway answers one choice per request", "n")
    raw = items(body, "messages")
    if not raw:
        raise invalid("at least one message is needed", "messages")
    options = body.get("stream_options")
    unused = unused_fields(body, APPLIED)
    return ModelRequest(
        format=NAME, model=string(body, "model", ""),
        messages=_messages(raw), tools=_tools(items(body, "tools"), unused),
        tool_choice=_tool_choice(body.get("tool_choice")), stop=stops(body.get("stop"), "stop"),
        stream=body.get("stream") is True, unused=unused,
        options={"usage": isinstance(options, dict) and options.get("include_usage") is True})


def _messages(raw: list[Any]) -> list[BaseMessage]:
    """OpenAI message dicts as LangChain messages (text-only content as a string; a call
    whose arguments are not a JSON object kept as an invalid call)."""
    plain: list[dict[str, Any]] = []
    broken: dict[int, list[dict[str, Any]]] = {}
    for i, message in enumerate(raw):
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            raise invalid("must be an object", where)
        role = message.get("role")
        if role not in ROLES:
            raise invalid(f"unknown role {role!r}", f"{where}.role")
        images: list[dict[str, Any]] = []
        text = parts_text(message.get("content"), f"{where}.content",
                          images=images if role == "user" else None)
        one: dict[str, Any] = {"role": role, "content": content_of(text, images)}
        if isinstance(message.get("name"), str) and role != "tool":
            one["name"] = message["name"]
        if role in ("tool", "function"):
            one["role"] = "tool"
            one["tool_call_id"] = string(message, "tool_call_id", message.get("name"), where)
        if role == "assistant":
            one["tool_calls"], broken[len(plain)] = _calls(message.get("tool_calls"), where)
        plain.append(one)
    messages = convert_to_messages(plain)
    for at, calls in broken.items():
        if calls:
            messages[at] = messages[at].model_copy(update={"invalid_tool_calls": calls})
    return messages


def _calls(raw: Any, where: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """An assistant message's tool calls, in LangChain's shape: those that can be read, and
    those whose arguments cannot."""
    good: list[dict[str, Any]] = []
    bad: list[dict[str, Any]] = []
    for j, call in enumerate(raw or []):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise invalid("a tool call needs a function with a name",
                          f"{where}.tool_calls[{j}]")
        cid = str(call.get("id") or "")
        args = call_arguments(function.get("arguments"))
        if args is None:
            bad.append({"name": function["name"], "args": str(function.get("arguments")),
                        "id": cid, "error": "arguments are not a JSON object",
                        "type": "invalid_tool_call"})
        else:
            good.append({"name": function["name"], "args": args, "id": cid,
                         "type": "tool_call"})
    return good, bad


def _tools(raw: list[Any], unused: dict[str, Any]) -> list[dict[str, Any]]:
    tools = []
    for i, tool in enumerate(raw):
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or tool.get("type", "function") != "function":
            not_bound(unused, tool)  # another kind (custom...): recorded, not bound
            continue
        if not isinstance(function, dict):
            raise invalid("a function tool needs its function", f"tools[{i}]")
        tools.append(function_tool(function.get("name"), function.get("description"),
                                   function.get("parameters"), f"tools[{i}].function"))
    return tools


def _tool_choice(value: Any) -> str | None:
    if value in (None, "auto"):
        return None
    if value == "none":
        return "none"
    if value == "required":
        return "any"
    if isinstance(value, dict) and isinstance(value.get("function"), dict):
        name = value["function"].get("name")
        if isinstance(name, str):
            return name
    if isinstance(value, dict):
        return None  # allowed_tools and the like: the model decides among the tools bound
    raise invalid("must be 'none', 'auto', 'required' or a named function", "tool_choice")


def _finish(answer: Answer) -> str:
    return "length" if answer.truncated else "tool_calls" if answer.calls else "stop"


def _usage(answer: Answer) -> dict[str, Any]:
    return {"prompt_tokens": answer.input_tokens, "completion_tokens": answer.output_tokens,
            "total_tokens": answer.input_tokens + answer.output_tokens,
            "prompt_tokens_details": {"cached_tokens": answer.cached_tokens}}


def _tool_calls(answer: Answer) -> list[dict[str, Any]]:
    return [{"id": c.id, "type": "function",
             "function": {"name": c.name, "arguments": c.arguments}} for c in answer.calls]


def answer(message: AIMessage, request: ModelRequest) -> dict[str, Any]:
    """The model's answer as a ``ChatCompletion``."""
    reply = Answer.of(message)
    body: dict[str, Any] = {"role": "assistant",
                            "content": reply.text if reply.text or not reply.calls else None}
    if reply.calls:
        body["tool_calls"] = _tool_calls(reply)
    return dump(ChatCompletion, {
        "id": new_id("chatcmpl-"), "object": "chat.completion", "created": int(time.time()),
        "model": request.model, "choices": [{"index": 0, "message": body,
                                              "finish_reason": _finish(reply),
                                              "logprobs": None}],
        "usage": _usage(reply)})


def events(message: AIMessage, request: ModelRequest) -> list[bytes]:
    """The model's answer as a stream: the role, the text, each tool call, the finish
    reason, the usage when asked (``stream_options.include_usage``), ``[DONE]``."""
    reply = Answer.of(message)
    head = {"id": new_id("chatcmpl-"), "object": "chat.completion.chunk",
            "created": int(time.time()), "model": request.model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return sse(dump(ChatCompletionChunk, {**head, "choices": [
            {"index": 0, "delta": delta, "finish_reason": finish}]}))

    out = [chunk({"role": "assistant", "content": ""})]
    if reply.text:
        out.append(chunk({"content": reply.text}))
    for i, call in enumerate(_tool_calls(reply)):
        out.append(chunk({"tool_calls": [{"index": i, **call}]}))
    out.append(chunk({}, _finish(reply)))
    if request.options.get("usage"):
        out.append(sse(dump(ChatCompletionChunk, {**head, "choices": [],
                                                  "usage": _usage(reply)})))
    out.append(sse("[DONE]"))
    return out


CODES = {"authentication": "invalid_api_key", "not_found": "not_found",
         "rate_limit": "rate_limit_exceeded", "too_large": "request_too_large"}
TYPES = {"rate_limit": "rate_limit_error", "server_error": "server_error",
         "timeout": "server_error", "overloaded": "server_error"}


def error(err: GatewayError) -> dict[str, Any]:
    """OpenAI's error body: ``{"error": {"message", "type", "param", "code"}}``."""
    return {"error": dump(ErrorObject, {"message": err.message,
                                        "type": TYPES.get(err.kind, "invalid_request_error"),
                                        "param": err.param, "code": CODES.get(err.kind)})}


__all__ = ["NAME", "answer", "error", "events", "parse"]
