"""OpenAI Responses (``POST /v1/responses``): the request read into a
:class:`~tooleval_agents.gateway.wire.ModelRequest` (``instructions`` and ``input`` items --
messages, ``function_call`` / ``function_call_output``, ``custom_tool_call`` and its output --
as OpenAI message dicts, through LangChain's ``convert_to_messages``), the answer as the
``openai`` SDK's ``Response``, a stream as its typed events (``response.created`` ...
``response.completed``, each with its ``sequence_number``), an error as ``{"error": {...}}``.

Tools: ``function`` tools are bound as they are; a ``namespace`` tool's functions are bound as
``<namespace>__<name>``, and the model's call of one is answered as a ``function_call`` with
``namespace`` and the tool's own name (what Codex sends MCP tools as, and expects back); a
``custom`` (free-form) tool is bound as a function of one string, ``input``, and answered as a
``custom_tool_call``. Hosted tools (web search, file search...) are recorded, not bound. The
gateway keeps no responses: ``previous_response_id``, ``conversation`` and ``background`` are
refused (send the whole input, as ``store: false`` clients do)."""

from __future__ import annotations

import time
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, convert_to_messages
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseContentPartAddedEvent,
    ResponseContentPartDoneEvent,
    ResponseCreatedEvent,
    ResponseFunctionCallArgumentsDeltaEvent,
    ResponseFunctionCallArgumentsDoneEvent,
    ResponseInProgressEvent,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseTextDeltaEvent,
    ResponseTextDoneEvent,
)

from tooleval_agents.gateway import chat_completions
from tooleval_agents.gateway.wire import (
    Answer,
    Call,
    GatewayError,
    ModelRequest,
    call_arguments,
    content_of,
    dump,
    function_tool,
    invalid,
    new_id,
    not_bound,
    parts_text,
    sse,
    string,
    unused_fields,
)

NAME = "responses"
APPLIED = frozenset({"model", "input", "instructions", "tools", "tool_choice", "stream"})
"""The fields the gateway applies; every other one (``reasoning``, ``include``, ``store``,
``max_output_tokens``...) is accepted and recorded."""
STATEFUL = ("previous_response_id", "conversation", "background")
CUSTOM_SCHEMA = {"type": "object", "properties": {"input": {"type": "string"}},
                 "required": ["input"]}
"""A free-form (``custom``) tool as the model is bound to it."""
Names = dict[str, tuple[str, str | None, str]]
"""Bound name -> (``function`` or ``custom``, namespace, the tool's own name)."""


def flat(namespace: str | None, name: str) -> str:
    """The name a namespaced tool is bound under."""
    return f"{namespace.rstrip('_')}__{name}" if namespace else name


def parse(body: dict[str, Any]) -> ModelRequest:
    """A Responses request as the model is asked it."""
    for key in STATEFUL:
        if body.get(key):
            raise invalid("the gateway keeps no responses: send the whole conversation as "
                          "input (store: false)", key)
    unused = unused_fields(body, APPLIED)
    tools, names = _tools(body.get("tools"), unused)
    dropped: dict[str, int] = {}
    plain = [*([{"role": "system", "content": parts_text(body["instructions"], "instructions")}]
               if body.get("instructions") else []), *_input(body.get("input"), dropped)]
    if not plain:
        raise invalid("the request has no input", "input")
    return ModelRequest(
        format=NAME, model=string(body, "model", ""), messages=_converted(plain), tools=tools,
        tool_choice=_tool_choice(body.get("tool_choice")), stream=body.get("stream") is True,
        unused=unused, dropped=dropped, options={"names": names})


def _tools(raw: Any, unused: dict[str, Any]) -> tuple[list[dict[str, Any]], Names]:
    if raw is not None and not isinstance(raw, list):
        raise invalid("must be an array", "tools")
    tools: list[dict[str, Any]] = []
    names: Names = {}

    def bind(tool: dict[str, Any], namespace: str | None, where: str) -> None:
        own, kind = tool.get("name"), tool.get("type")
        if not isinstance(own, str) or not own:
            raise invalid("a tool needs a name", where)
        bound = flat(namespace, own)
        if bound in names:
            raise invalid(f"two tools are bound as {bound!r}", where)
        names[bound] = ("custom" if kind == "custom" else "function", namespace, own)
        tools.append(function_tool(bound, tool.get("description"),
                                   CUSTOM_SCHEMA if kind == "custom" else tool.get("parameters"),
                                   where))

    for i, tool in enumerate(raw or []):
        kind = tool.get("type") if isinstance(tool, dict) else None
        if kind in ("function", "custom"):
            bind(tool, None, f"tools[{i}]")
        elif kind == "namespace":
            namespace = string(tool, "name", where=f"tools[{i}]")
            for j, inner in enumerate(tool.get("tools") or []):
                if isinstance(inner, dict) and inner.get("type") in ("function", "custom"):
                    bind(inner, namespace, f"tools[{i}].tools[{j}]")
                else:
                    not_bound(unused, inner)
        elif isinstance(tool, dict):
            not_bound(unused, tool)  # a hosted tool (web search...): recorded, not bound
        else:
            raise invalid("must be an object", f"tools[{i}]")
    return tools, names


def _input(raw: Any, dropped: dict[str, int]) -> list[dict[str, Any]]:
    """The input items as OpenAI message dicts: consecutive assistant text and calls are one
    assistant message, each output its tool message."""
    if isinstance(raw, str):
        return [{"role": "user", "content": raw}]
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise invalid("must be a string or an array of items", "input")
    out: list[dict[str, Any]] = []

    def assistant() -> dict[str, Any]:
        if not out or out[-1]["role"] != "assistant":
            out.append({"role": "assistant", "content": "", "tool_calls": []})
        return out[-1]

    for i, item in enumerate(raw):
        where = f"input[{i}]"
        if not isinstance(item, dict):
            raise invalid("must be an object", where)
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            if role not in ("user", "system", "developer", "assistant"):
                raise invalid(f"unknown role {role!r}", f"{where}.role")
            images: list[dict[str, Any]] = []
            text = parts_text(item.get("content"), f"{where}.content",
                              images=images if role == "user" else None)
            if role == "assistant":
                assistant()["content"] += text
            else:
                out.append({"role": role, "content": content_of(text, images)})
        elif kind in ("function_call", "custom_tool_call"):
            assistant()["tool_calls"].append(_call(item, where))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            out.append({"role": "tool", "tool_call_id": string(item, "call_id", where=where),
                        "content": parts_text(item.get("output"), f"{where}.output")})
        elif kind == "reasoning":
            dropped["reasoning"] = dropped.get("reasoning", 0) + 1
        else:
            raise invalid(f"an input item of type {kind!r} is not served by the gateway", where)
    return out


def _call(item: dict[str, Any], where: str) -> dict[str, Any]:
    """A call of an earlier answer, in LangChain's shape (under its bound name)."""
    name = flat(item.get("namespace") if isinstance(item.get("namespace"), str) else None,
                string(item, "name", where=where))
    cid = string(item, "call_id", where=where)
    if item.get("type") == "custom_tool_call":
        return {"name": name, "args": {"input": str(item.get("input", ""))}, "id": cid,
                "type": "tool_call"}
    args = call_arguments(item.get("arguments"))
    if args is None:
        return {"name": name, "args": str(item.get("arguments")), "id": cid,
                "error": "arguments are not a JSON object", "type": "invalid_tool_call"}
    return {"name": name, "args": args, "id": cid, "type": "tool_call"}


def _converted(plain: list[dict[str, Any]]) -> list[BaseMessage]:
    """The message dicts as LangChain messages (a call with broken arguments kept as an
    invalid call)."""
    messages = []
    for one in plain:
        calls = one.pop("tool_calls", None) or []
        good = [c for c in calls if c["type"] == "tool_call"]
        message = convert_to_messages([{**one, **({"tool_calls": good} if good else {})}])[0]
        bad = [c for c in calls if c["type"] == "invalid_tool_call"]
        messages.append(message.model_copy(update={"invalid_tool_calls": bad}) if bad
                        else message)
    return messages


def _tool_choice(value: Any) -> str | None:
    if value in (None, "auto"):
        return None
    if value in ("none", "required"):
        return "none" if value == "none" else "any"
    if isinstance(value, dict) and value.get("type") in ("function", "custom") \
            and isinstance(value.get("name"), str):
        namespace = value.get("namespace")
        return flat(namespace if isinstance(namespace, str) else None, value["name"])
    if isinstance(value, dict):
        return None  # allowed_tools, a hosted tool: the model decides among the tools bound
    raise invalid("must be 'none', 'auto', 'required' or a named tool", "tool_choice")


# ----------------------------------------------------------------------------- the answer


def _items(answer: Answer, request: ModelRequest) -> list[dict[str, Any]]:
    """The answer's output items: its text as a message, each call as its kind of call."""
    out: list[dict[str, Any]] = []
    if answer.text:
        out.append({"type": "message", "id": new_id("msg_"), "role": "assistant",
                    "status": "completed", "content": [
                        {"type": "output_text", "text": answer.text, "annotations": []}]})
    names: Names = request.options.get("names") or {}
    for call in answer.calls:
        out.append(_call_item(call, names.get(call.name)))
    return out


def _call_item(call: Call, bound: tuple[str, str | None, str] | None) -> dict[str, Any]:
    kind, namespace, own = bound or ("function", None, call.name)
    if kind == "custom":
        given = call_arguments(call.arguments) or {}
        return {"type": "custom_tool_call", "id": new_id("ctc_"), "call_id": call.id,
                "name": own, "input": str(given.get("input", "")), "status": "completed"}
    item = {"type": "function_call", "id": new_id("fc_"), "call_id": call.id, "name": own,
            "arguments": call.arguments, "status": "completed"}
    return {**item, "namespace": namespace} if namespace else item


def _usage(answer: Answer) -> dict[str, Any]:
    return {"input_tokens": answer.input_tokens,
            "input_tokens_details": {"cached_tokens": answer.cached_tokens,
                                     "cache_write_tokens": 0},
            "output_tokens": answer.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": answer.input_tokens + answer.output_tokens}


def _response(answer: Answer | None, request: ModelRequest, output: list[dict[str, Any]],
              rid: str, created: float) -> dict[str, Any]:
    """A ``Response`` (``answer`` None: one in progress)."""
    done = answer is not None
    truncated = answer is not None and answer.truncated
    return {"id": rid, "object": "response", "created_at": created, "model": request.model,
            "status": ("incomplete" if truncated else "completed") if done else "in_progress",
            "incomplete_details": {"reason": "max_output_tokens"} if truncated else None,
            "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "error": None, "instructions": None, "metadata": {}, "temperature": None,
            "top_p": None, "usage": _usage(answer) if answer is not None else None}


def answer(message: AIMessage, request: ModelRequest) -> dict[str, Any]:
    """The model's answer as a ``Response``."""
    reply = Answer.of(message)
    return dump(Response, _response(reply, request, _items(reply, request), new_id("resp_"),
                                    time.time()))


def events(message: AIMessage, request: ModelRequest) -> list[bytes]:
    """The model's answer as the Responses event stream."""
    reply = Answer.of(message)
    items = _items(reply, request)
    rid, created = new_id("resp_"), time.time()
    out: list[bytes] = []

    def event(model: Any, body: dict[str, Any]) -> None:
        data = dump(model, {**body, "sequence_number": len(out)})
        out.append(sse(data, data["type"]))

    opened = _response(None, request, [], rid, created)
    event(ResponseCreatedEvent, {"type": "response.created", "response": opened})
    event(ResponseInProgressEvent, {"type": "response.in_progress", "response": opened})
    for index, item in enumerate(items):
        _item_events(event, index, item)
    event(ResponseCompletedEvent, {"type": "response.completed",
                                   "response": _response(reply, request, items, rid, created)})
    return out


def _item_events(event: Any, index: int, item: dict[str, Any]) -> None:
    """One output item's events: added, its content (text or arguments), done."""
    where = {"output_index": index, "item_id": item["id"]}
    if item["type"] == "message":
        text = item["content"][0]["text"]
        part = {"type": "output_text", "text": "", "annotations": []}
        event(ResponseOutputItemAddedEvent, {"type": "response.output_item.added",
                                             "output_index": index, "item": {
                                                 **item, "status": "in_progress", "content": []}})
        event(ResponseContentPartAddedEvent, {"type": "response.content_part.added", **where,
                                              "content_index": 0, "part": part})
        event(ResponseTextDeltaEvent, {"type": "response.output_text.delta", **where,
                                       "content_index": 0, "delta": text, "logprobs": []})
        event(ResponseTextDoneEvent, {"type": "response.output_text.done", **where,
                                      "content_index": 0, "text": text, "logprobs": []})
        event(ResponseContentPartDoneEvent, {"type": "response.content_part.done", **where,
                                             "content_index": 0, "part": {**part, "text": text}})
    elif item["type"] == "function_call":
        event(ResponseOutputItemAddedEvent, {"type": "response.output_item.added",
                                             "output_index": index, "item": {
                                                 **item, "arguments": "",
                                                 "status": "in_progress"}})
        event(ResponseFunctionCallArgumentsDeltaEvent, {
            "type": "response.function_call_arguments.delta", **where,
            "delta": item["arguments"]})
        event(ResponseFunctionCallArgumentsDoneEvent, {
            "type": "response.function_call_arguments.done", **where,
            "arguments": item["arguments"], "name": item["name"]})
    else:
        event(ResponseOutputItemAddedEvent, {"type": "response.output_item.added",
                                             "output_index": index, "item": item})
    event(ResponseOutputItemDoneEvent, {"type": "response.output_item.done",
                                        "output_index": index, "item": item})


def error(err: GatewayError) -> dict[str, Any]:
    """OpenAI's error body (the same as Chat Completions')."""
    return chat_completions.error(err)


__all__ = ["NAME", "answer", "error", "events", "flat", "parse"]
