"""The text protocol of tool calling (prompt mode): what a model is told about its tools when
they are not bound through the API, and how a conversation holding calls the model wrote as
text is sent back to it.

* :func:`with_tool_prompt` -- the tools, one JSON object a line in a ``<tools>`` block of the
  system message, and how to call them (``<tool_call>`` tags, in our own words);
* :func:`history_as_text` -- the conversation as the model wrote it: an answer whose calls were
  read from its text is sent as that text (no API ``tool_calls``), and the tools' answers to
  those calls as one user message of ``<tool_response>`` blocks. Calls made through the API keep
  their ``ToolMessage``\\ s. So nothing reaches the model in a form it did not use, and a server
  without tool support accepts every message;
* :func:`history_from_text` and :func:`tools_in_prompt` -- the other way round, for the offline
  models, which play the same protocol (``--model reference -O tool_calls=text``).

>>> from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
>>> ask = AIMessage('<tool_call>{"name": "f", "arguments": {}}</tool_call>',
...                 tool_calls=[{"name": "f", "args": {}, "id": "t1"}],
...                 response_metadata={"tool_calls_source": "text"})
>>> sent = history_as_text([HumanMessage("go"), ask, ToolMessage('{"y": 2}', tool_call_id="t1")])
>>> [m.type for m in sent]
['human', 'ai', 'human']
>>> print(sent[2].content)
<tool_response>
{"name": "f", "id": "t1", "content": {"y": 2}}
</tool_response>
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from tooleval_agents.models.tool_calls import SOURCE_KEY
from tooleval_agents.models.tool_calls.parse import parse_tool_calls

TOOLS_OPEN, TOOLS_CLOSE = "<tools>", "</tools>"
RESPONSE_OPEN, RESPONSE_CLOSE = "<tool_response>", "</tool_response>"
_TOOLS_BLOCK = re.compile(r"<tools>\n(.*?)\n</tools>", re.S)
_RESPONSE = re.compile(r"<tool_response>\n(.*?)\n</tool_response>", re.S)

_INTRO = "You can use the tools below."
_HOW_TO_CALL = _INTRO + """ Each line describes one tool as a JSON object: its name, what \
it does, and the JSON schema of its arguments.
{open}
{tools}
{close}
To call a tool, write a JSON object with the tool's name and the values of its arguments \
between <tool_call> and </tool_call>, like this:
<tool_call>
{{"name": "<tool name>", "arguments": {{"<argument name>": "<value>"}}}}
</tool_call>
One answer may hold several calls; they run at once. Their results come back in the next \
message, each between {response_open} and {response_close}. When no more calls are needed, \
answer without a tool call."""


def _function(tool: dict[str, Any]) -> dict[str, Any]:
    """A tool definition (OpenAI format, or a bare function object) as a function object."""
    function = tool.get("function")
    return function if isinstance(function, dict) else tool


def tool_prompt(tools: Sequence[dict[str, Any]]) -> str:
    """How the model is told about ``tools`` (OpenAI tool format) and how to call them."""
    lines = "\n".join(json.dumps(_function(t), ensure_ascii=False) for t in tools)
    return _HOW_TO_CALL.format(open=TOOLS_OPEN, close=TOOLS_CLOSE, tools=lines,
                               response_open=RESPONSE_OPEN, response_close=RESPONSE_CLOSE)


def with_tool_prompt(messages: Sequence[BaseMessage],
                     tools: Sequence[dict[str, Any]]) -> list[BaseMessage]:
    """``messages`` with :func:`tool_prompt` at the end of their first system message (one is
    put first when there is none: some chat templates take a system message only there)."""
    text = tool_prompt(tools)
    out = list(messages)
    if out and isinstance(out[0], SystemMessage):
        content = out[0].content
        merged: str | list[Any] = (f"{content}\n\n{text}" if isinstance(content, str)
                                   else [*content, {"type": "text", "text": text}])
        out[0] = SystemMessage(merged)
        return out
    return [SystemMessage(text), *out]


def _response(message: ToolMessage, name: str) -> str:
    content: Any = message.content
    if isinstance(content, str):
        try:
            parsed = json.loads(content)
        except (ValueError, RecursionError):
            parsed = None
        content = parsed if isinstance(parsed, dict | list) else content
    body: dict[str, Any] = {"name": message.name or name, "id": message.tool_call_id,
                            "content": content}
    if message.status == "error":
        body["error"] = True
    return f"{RESPONSE_OPEN}\n{json.dumps(body, ensure_ascii=False)}\n{RESPONSE_CLOSE}"


def is_text_answer(message: BaseMessage) -> bool:
    """Whether ``message`` is a model answer whose calls were read from its text."""
    return (isinstance(message, AIMessage) and bool(message.tool_calls)
            and message.response_metadata.get(SOURCE_KEY) == "text")


def history_as_text(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The conversation as sent to a model that writes its calls as text (see the module
    docstring); a conversation without such calls is returned as it is."""
    names: dict[str, str] = {}
    out: list[BaseMessage] = []
    answers: list[str] = []

    def flush() -> None:
        if answers:
            out.append(HumanMessage("\n".join(answers)))
            answers.clear()

    for message in messages:
        if isinstance(message, ToolMessage) and message.tool_call_id in names:
            answers.append(_response(message, names[message.tool_call_id]))
            continue
        flush()
        if is_text_answer(message):
            assert isinstance(message, AIMessage)
            names.update({str(c.get("id")): c["name"] for c in message.tool_calls})
            out.append(AIMessage(content=message.content))
        else:
            out.append(message)
    flush()
    return out


def tools_in_prompt(messages: Sequence[BaseMessage]) -> list[dict[str, Any]] | None:
    """The tools :func:`with_tool_prompt` described in the system message (OpenAI format), or
    ``None`` when there is no such description."""
    for message in messages:
        if not isinstance(message, SystemMessage):
            continue
        text = message.text
        found = _TOOLS_BLOCK.search(text) if _INTRO in text else None
        if found is None:
            continue
        tools = []
        for line in found.group(1).splitlines():
            try:
                function = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(function, dict) and isinstance(function.get("name"), str):
                tools.append({"type": "function", "function": function})
        return tools or None
    return None


def _tool_messages(text: str) -> list[ToolMessage] | None:
    out = []
    for block in _RESPONSE.findall(text):
        try:
            body = json.loads(block)
        except (ValueError, RecursionError):
            return None
        if not isinstance(body, dict) or not isinstance(body.get("id"), str):
            return None
        content = body.get("content")
        out.append(ToolMessage(
            content if isinstance(content, str) else json.dumps(content, ensure_ascii=False),
            tool_call_id=body["id"], name=body.get("name"),
            status="error" if body.get("error") else "success"))
    return out or None


def history_from_text(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The inverse of :func:`history_as_text`: answers holding calls written as text get them
    as ``tool_calls``, user messages of ``<tool_response>`` blocks become ``ToolMessage``\\ s."""
    out: list[BaseMessage] = []
    for message in messages:
        if isinstance(message, AIMessage) and not message.tool_calls:
            calls = parse_tool_calls(message.text)
            if calls:
                message = AIMessage(content=message.content, tool_calls=[
                    {"name": c.name, "args": c.args, "id": c.id or f"text_{i}",
                     "type": "tool_call"} for i, c in enumerate(calls)])
        elif isinstance(message, HumanMessage) and message.text.startswith(RESPONSE_OPEN):
            replies = _tool_messages(message.text)
            if replies is not None:
                out.extend(replies)
                continue
        out.append(message)
    return out


def render_calls(message: AIMessage) -> str:
    """An answer's text, then its tool calls written as the protocol asks (what an offline
    model answers in prompt mode)."""
    blocks: list[str] = [message.text] if message.text else []
    for call in message.tool_calls:
        body = {"name": call["name"], "arguments": call["args"], "id": call.get("id")}
        blocks.append(f"<tool_call>\n{json.dumps(body, ensure_ascii=False)}\n</tool_call>")
    return "\n".join(blocks)


__all__ = ["RESPONSE_CLOSE", "RESPONSE_OPEN", "TOOLS_CLOSE", "TOOLS_OPEN", "history_as_text",
           "history_from_text", "is_text_answer", "render_calls", "tool_prompt",
           "tools_in_prompt", "with_tool_prompt"]
