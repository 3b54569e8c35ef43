"""One example served over MCP: its tools and state, its request, its calls.

An :class:`ExampleSession` wraps the example's :class:`~tooleval_agents.contracts.ToolSession`
(from the split's :class:`~tooleval_agents.contracts.AgentIO`). Every call is answered by
:func:`~tooleval_agents.tool_execution.run_tool_call`, as an agent in the run is answered --
the same error texts, the example's tool faults drawn the same way -- and logged as it is
answered. :func:`mcp_server` makes the MCP server of one session (the official SDK's low-level
``Server``): ``tools/list`` and ``tools/call``, the request as the prompt ``task`` and the
resource ``tooleval://example/request``, ``listChanged`` for a session whose tools change.

What is served comes from the session alone: the tools (stubs), the request, the answers and
errors of calls. A gold answer is never part of it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import mcp.types as types
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from mcp.server.lowlevel import Server

from tooleval_agents.agents import content_text
from tooleval_agents.contracts import ToolSession
from tooleval_agents.mcp.log import CallLog, CallRecord
from tooleval_agents.mcp.sdk import Handlers, low_level_server
from tooleval_agents.results.records import now
from tooleval_agents.tool_execution import run_tool_call, tool_error
from tooleval_agents.tool_faults import FaultSession

PROMPT = "task"
"""The name of the prompt that holds the example's request."""
RESOURCE = "tooleval://example/request"
"""The URI of the resource that holds it as text."""
SERVER_NAME = "tooleval"
INSTRUCTIONS = ("The tools of one benchmark example. The request to carry out is the prompt "
                f"'{PROMPT}' (also the resource {RESOURCE}). Call the tools it needs, then "
                "give your final answer.")


def call_id(seq: int) -> str:
    """The id a session's call gets in its trajectory (and in the fault draws)."""
    return f"mcp_{seq}"


def request_text(messages: list[BaseMessage]) -> str:
    """An example's request messages as one text."""
    return "\n\n".join(content_text(m.content) for m in messages)


class ToolSchemas:
    """Each tool's MCP definition, made once per tool object: its name, description and
    parameters exactly as a model bound to the tool in the run gets them (LangChain's
    ``convert_to_openai_tool``)."""

    LIMIT = 4096

    def __init__(self) -> None:
        self._made: dict[int, tuple[BaseTool, types.Tool]] = {}

    def of(self, tool: BaseTool) -> types.Tool:
        found = self._made.get(id(tool))
        if found is not None and found[0] is tool:
            return found[1]
        function = convert_to_openai_tool(tool)["function"]
        made = types.Tool(name=tool.name, description=function.get("description") or "",
                          inputSchema=function.get("parameters")
                          or {"type": "object", "properties": {}})
        if len(self._made) >= self.LIMIT:  # per-example toolsets: keep memory bounded
            self._made.clear()
        self._made[id(tool)] = (tool, made)
        return made


@dataclass
class ExampleSession:
    """One example's tools served over MCP (see the module docstring)."""

    id: str
    """Random, part of the session's URL."""
    label: str
    """What the log calls the example (e.g. its split and index)."""
    tools: ToolSession
    messages: list[BaseMessage]
    """The example's request, as the agent is sent it."""
    log: CallLog
    faults: FaultSession | None = None
    """The example's tool faults, drawn on the server (``None``: none here)."""
    calls: list[CallRecord] = field(default_factory=list)
    """Every call answered, in the order the answers left."""
    listed: int = 0
    """``tools/list`` requests answered: with :attr:`calls`, whether its agent ever reached
    its tools."""
    open: bool = True
    foreign: int = 0
    """Requests sent with this session's key to another session's URL (refused, logged as
    ``foreign_call``): its agent reached beyond its own example."""
    _next: int = 0

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """Answer one call: its text and whether it is an error (logged before it returns)."""
        seq, self._next = self._next, self._next + 1
        at, started = now(), time.perf_counter()
        tool = next((t for t in self.tools.tools() if t.name == name), None)
        refused = None if tool is not None else self.tools.refusal(name)
        cid = call_id(seq)
        if refused is not None:  # a tool the session does not list now (an app not open)
            answer = tool_error(cid, name, refused)
        else:
            answer = await run_tool_call(tool, {"id": cid, "name": name, "args": arguments},
                                         faults=self.faults, inline=True)
        text, error = content_text(answer.content), answer.status == "error"
        if tool is not None:
            self.tools.answered(name, error)
        fault = None
        if self.faults is not None and cid in self.faults.faulted_ids:
            fault = next(f.kind for f in reversed(self.faults.faults) if f.tool == name)
        record = CallRecord(session=self.id, seq=seq, tool=name, arguments=arguments,
                            output=text, error=error, fault=fault, at=at,
                            ms=round(1000 * (time.perf_counter() - started), 3))
        self.calls.append(record)
        self.log.call(record)
        return text, error

    def conversation(self, final: str) -> list[BaseMessage]:
        """What the agent did as a conversation: the request, each call (its own turn: the
        server sees calls one after another) with its answer, then ``final``, its answer."""
        out = list(self.messages)
        for record in sorted(self.calls, key=lambda r: r.seq):
            cid = call_id(record.seq)
            out.append(AIMessage("", tool_calls=[{"id": cid, "name": record.tool,
                                                  "args": dict(record.arguments)}]))
            out.append(ToolMessage(record.output, tool_call_id=cid, name=record.tool,
                                   status="error" if record.error else "success"))
        out.append(AIMessage(final))
        return out


def mcp_server(session: ExampleSession, schemas: ToolSchemas, version: str) -> Server[Any, Any]:
    """The MCP server of ``session`` (its handlers, on either SDK major; any transport runs it
    with :func:`~tooleval_agents.mcp.sdk.initialization_options`)."""
    text = request_text(session.messages)

    async def list_tools() -> list[types.Tool]:
        session.listed += 1
        return [schemas.of(t) for t in session.tools.tools()]

    async def call_tool(name: str, arguments: dict[str, Any]) -> tuple[types.CallToolResult,
                                                                       bool]:
        before = _names(session) if session.tools.dynamic else None
        answer, error = await session.call(name, arguments)
        result = types.CallToolResult(content=[types.TextContent(type="text", text=answer)],
                                      isError=error)
        return result, before is not None and _names(session) != before

    async def list_prompts() -> list[types.Prompt]:
        return [types.Prompt(name=PROMPT, description="The request to carry out")]

    async def get_prompt(name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
        if name != PROMPT:
            raise ValueError(f"there is no prompt named {name!r} (there is {PROMPT!r})")
        return types.GetPromptResult(description="The request to carry out", messages=[
            types.PromptMessage(role="assistant" if m.type == "ai" else "user",
                                content=types.TextContent(type="text",
                                                          text=content_text(m.content)))
            for m in session.messages])

    async def list_resources() -> list[types.Resource]:
        # A plain URI string: 1.x reads it as its AnyUrl, 2.x keeps it as its str.
        return [types.Resource.model_validate({"uri": RESOURCE, "name": "request",
                                               "mimeType": "text/plain",
                                               "description": "The request to carry out"})]

    async def read_resource(uri: str) -> str:
        if uri != RESOURCE:
            raise ValueError(f"there is no resource {uri!r} (there is {RESOURCE})")
        return text

    return low_level_server(SERVER_NAME, version, INSTRUCTIONS, Handlers(
        list_tools=list_tools, call_tool=call_tool, list_prompts=list_prompts,
        get_prompt=get_prompt, list_resources=list_resources, read_resource=read_resource))


def _names(session: ExampleSession) -> list[str]:
    return [t.name for t in session.tools.tools()]


__all__ = ["INSTRUCTIONS", "PROMPT", "RESOURCE", "ExampleSession", "ToolSchemas", "call_id",
           "mcp_server", "request_text"]
