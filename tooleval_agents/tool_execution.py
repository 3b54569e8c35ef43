"""Running one tool call the way every agent of the project sees it, in the run or over MCP.

:func:`run_tool_call` answers a call with a ``ToolMessage``: the tool's answer, or an error the
agent can act on (no such tool, a refusal, arguments that do not fit the schema, a failure of
the stub). Nothing raises out of it. Under ``--tool-faults`` (:mod:`tooleval_agents.tool_faults`)
it draws the call's fault first: an error, timeout or rate limit answers as a tool error
without running the tool; a malformed or empty fault runs it and cuts its answer. The built-in
agent (:mod:`tooleval_agents.graphs.tool_agent`) and the MCP server
(:mod:`tooleval_agents.mcp`) both answer through it, so a call over MCP gets the very text it
gets in the run.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import ValidationError

from tooleval_agents.agents import ERROR_PREFIX
from tooleval_agents.tool_faults import MESSAGES as FAULT_ERRORS
from tooleval_agents.tool_faults import FaultSession, current_faults


def tool_error(call_id: str, name: str, text: str) -> ToolMessage:
    """A tool failure as the model sees it."""
    return ToolMessage(f"{ERROR_PREFIX}{text}", tool_call_id=call_id, name=name, status="error")


def no_such_tool(name: str) -> str:
    """What a call of a tool that does not exist is answered (after :data:`ERROR_PREFIX`)."""
    return f"there is no tool named {name!r}"


def error_text(exc: BaseException) -> str:
    """A tool's failure in words: each schema violation with where it is, else the error."""
    if isinstance(exc, ValidationError):
        parts = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
            parts.append(f"{where}: {err.get('msg')}")
        return "invalid arguments: " + "; ".join(parts)
    return f"{type(exc).__name__}: {exc}"


async def run_tool_call(tool: BaseTool | None, call: dict[str, Any],
                        refused: str | None = None, *, faults: FaultSession | None = None,
                        draw: bool = True, inline: bool = False) -> ToolMessage:
    """One call run (or refused) as a ``ToolMessage``: the tool's JSON answer, or an error.
    ``faults``: the example's faults (default: :func:`~tooleval_agents.tool_faults.
    current_faults`, the running example's); ``draw`` ``False``: none for this call (a tool
    that is not listed, answered by a server as having no such tool or refused: in the run
    neither is drawn for); ``inline``: a tool with a synchronous function only (a stub: pure
    and fast) runs in this thread rather than in an executor's (the MCP server: the hop to
    a thread cost more than the stub)."""
    cid, name = str(call.get("id") or ""), str(call.get("name") or "")
    if tool is None:
        return tool_error(cid, name, no_such_tool(name))
    if refused is not None:
        return tool_error(cid, name, refused)
    session = (faults if faults is not None else current_faults()) if draw else None
    args = dict(call.get("args") or {})
    fault = session.draw(name, args, cid) if session is not None else None
    if fault is not None and fault.kind in FAULT_ERRORS:  # the service answered with an error
        return tool_error(cid, name, fault.message)
    try:
        # Invoked with the whole call, a tool answers with a ToolMessage that keeps the status
        # of errors it handles itself (schema violations a stub reports as text).
        request = {"type": "tool_call", "id": cid, "name": name, "args": args}
        value = tool.invoke(request) if inline and isinstance(tool, StructuredTool) \
            and tool.coroutine is None else await tool.ainvoke(request)
    except Exception as exc:  # every failure goes back to the model
        return tool_error(cid, name, error_text(exc))
    if isinstance(value, ToolMessage) and (fault is None or value.status == "error"):
        return value  # the tool's own error comes first
    content = value.text if isinstance(value, ToolMessage) else value if isinstance(value, str) \
        else json.dumps(value, ensure_ascii=False)
    if fault is not None:  # a malformed or empty payload came back
        content = fault.payload(content)
    return ToolMessage(content, tool_call_id=cid, name=name)


__all__ = ["error_text", "no_such_tool", "run_tool_call", "tool_error"]
