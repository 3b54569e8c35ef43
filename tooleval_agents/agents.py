"""Bring your own agent: what an agent is here, how one is named on the command line, and how
its conversation is read back as a trajectory of tool calls.

An agent is built by a *factory* ``factory(model, tools) -> Runnable`` whose runnable takes
``{"messages": [...]}`` and returns a state with ``messages`` -- the signature of
``langchain.agents.create_agent`` and of LangGraph's prebuilt agents, so these work as they are::

    tooleval run appbench --category ss --model reference --agent langchain.agents:create_agent
    tooleval run appbench --agent my_agents.py:build      # a factory in a user's file

From Python, ``run_experiment(..., agent=factory)`` takes the factory itself, or an already
compiled graph (it must then use the benchmark's tools, which the strategy lists). The tools
are the benchmark's executable stubs; what the agent did is read from the messages it returns
(:func:`trajectory`), so any agent that keeps the usual ``AIMessage.tool_calls`` /
``ToolMessage`` pairs in its state can be scored.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from tooleval_agents.data.jsonio import parse_json
from tooleval_agents.errors import ToolevalError
from tooleval_agents.models.tool_calls import SOURCE_KEY
from tooleval_agents.models.tool_calls.counts import AGENT_RECORD
from tooleval_agents.models.tool_calls.parse import looks_like_tool_call

if TYPE_CHECKING:  # annotations only: the CLI names agents without importing LangChain
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage
    from langchain_core.runnables import Runnable
    from langchain_core.tools import BaseTool

AgentFactory = Callable[["BaseChatModel", "Sequence[BaseTool]"], "Runnable[Any, Any]"]
"""``factory(model, tools)`` -> a runnable over ``{"messages": [...]}``."""
AgentSpec = str | Callable[..., Any] | Any
"""``"module.path:factory"``, ``"path/to/file.py:factory"``, a factory, or a compiled graph."""


ERROR_PREFIX = "Error: "
"""How every tool failure the agent sees begins."""


def tool_error_text(error: BaseException) -> str:
    """A tool's own failure as the agent reads it (the ``handle_tool_error`` of the benchmark
    tools): ``Error: <why>`` in a ``ToolMessage`` with status ``error``, so any agent -- ours,
    ``create_agent``, a user's ``ToolNode`` -- gets it back instead of crashing.

    >>> tool_error_text(ValueError("unknown argument 'x'"))
    "Error: unknown argument 'x'"
    """
    return f"{ERROR_PREFIX}{error}"


class AgentLoadError(ToolevalError, ValueError):
    """An ``--agent`` value names nothing that can be loaded."""


def _attribute(obj: Any, dotted: str, where: str) -> Any:
    for part in dotted.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise AgentLoadError(f"agent {where}: {dotted!r} not found") from None
    return obj


def load_agent(spec: str) -> Callable[..., Any]:
    """The factory an ``--agent`` value names: ``module.path:attr`` or ``path/to/file.py:attr``
    (``attr`` may be dotted). A file is loaded as a module of its own name; nothing is run but
    the module's top level.

    >>> load_agent("tooleval_agents.agents:load_agent") is load_agent
    True
    >>> load_agent("no_such_module_x:f")
    Traceback (most recent call last):
    tooleval_agents.agents.AgentLoadError: agent 'no_such_module_x:f': cannot import module \
'no_such_module_x' (No module named 'no_such_module_x')
    """
    where, colon, attr = spec.rpartition(":")
    if not colon or not where or not attr:
        raise AgentLoadError(f"agent {spec!r}: use module.path:factory or "
                             "path/to/file.py:factory")
    if where.endswith(".py"):
        path = Path(where)
        if not path.is_file():
            raise AgentLoadError(f"agent {spec!r}: no file {path}")
        name = f"tooleval_user_agent_{path.stem}"
        module_spec = importlib.util.spec_from_file_location(name, path)
        if module_spec is None or module_spec.loader is None:
            raise AgentLoadError(f"agent {spec!r}: {path} cannot be loaded as Python")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module  # dataclasses and pickling look their module up
        try:
            module_spec.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[name]
            raise AgentLoadError(f"agent {spec!r}: {path} failed to load: "
                                 f"{type(exc).__name__}: {exc}") from exc
    else:
        try:
            module = importlib.import_module(where)
        except Exception as exc:
            raise AgentLoadError(f"agent {spec!r}: cannot import module {where!r} ({exc})"
                                 ) from None
    factory = _attribute(module, attr, repr(spec))
    if not callable(factory):
        raise AgentLoadError(f"agent {spec!r}: {attr} is a {type(factory).__name__}, not a "
                             "factory(model, tools)")
    return factory


def agent_label(agent: AgentSpec) -> str:
    """What an agent is called in run names and ``config.json``: the spec as given (a file
    by its name), a factory's ``module:qualname``, or a compiled graph's name.

    >>> agent_label("langchain.agents:create_agent"), agent_label("../me/agent.py:build")
    ('langchain.agents:create_agent', 'agent.py:build')
    >>> agent_label(load_agent)
    'tooleval_agents.agents:load_agent'
    """
    if isinstance(agent, str):
        where, colon, attr = agent.rpartition(":")
        return f"{Path(where).name}:{attr}" if colon and where.endswith(".py") else agent
    name = getattr(agent, "get_name", None)
    if hasattr(agent, "invoke") and callable(name):
        return str(name())
    module = getattr(agent, "__module__", None) or "agent"
    qualname = getattr(agent, "__qualname__", None) or type(agent).__name__
    return f"{module}:{qualname}"


def resolve_agent(agent: AgentSpec) -> Callable[..., Any]:
    """A factory from any :data:`AgentSpec` (a compiled graph is used as it is)."""
    if isinstance(agent, str):
        return load_agent(agent)
    if hasattr(agent, "ainvoke") and hasattr(agent, "invoke"):
        return lambda model, tools: agent
    if callable(agent):
        return agent
    raise AgentLoadError(f"agent {agent!r}: give a factory(model, tools), a compiled graph or "
                         "'module.path:factory'")


# ---------------------------------------------------------------------------------------------
# Reading an agent's conversation


class ToolCallRecord(BaseModel):
    """One tool call an agent made, with what the tool answered."""

    id: str | None = None
    """The call's id (pairs it with its ``ToolMessage``)."""
    name: str
    """The tool called."""
    args: dict[str, Any] = Field(default_factory=dict)
    """The arguments as the model wrote them."""
    turn: int = 0
    """0-based index of the model answer that made the call (calls of one turn ran in
    parallel: none of them could use another's result)."""
    output: str | None = None
    """The tool's answer (``None``: the agent never ran the call)."""
    error: bool = False
    """The tool answered with an error (``ToolMessage.status == "error"``)."""
    source: Literal["structured", "text"] = "structured"
    """How the call came back: the API's ``tool_calls``, or read from the answer's text
    (:mod:`tooleval_agents.models.tool_calls`)."""

    def result(self) -> dict[str, Any] | None:
        """The tool's answer as a JSON object, when it is one and not an error."""
        if self.error or self.output is None:
            return None
        try:
            value = parse_json(self.output)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


def trajectory(messages: Sequence[BaseMessage]) -> list[ToolCallRecord]:
    """Every tool call of a conversation in order, each paired with its ``ToolMessage`` by id.

    >>> from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    >>> msgs = [HumanMessage("hi"),
    ...         AIMessage("", tool_calls=[{"name": "f", "args": {"x": 1}, "id": "a"}]),
    ...         ToolMessage('{"y": 2}', tool_call_id="a"), AIMessage("done")]
    >>> [(r.name, r.args, r.turn, r.result()) for r in trajectory(msgs)]
    [('f', {'x': 1}, 0, {'y': 2})]
    """
    records: list[ToolCallRecord] = []
    by_id: dict[str, ToolCallRecord] = {}
    turn = 0
    for message in messages:
        kind = getattr(message, "type", None)
        if kind == "ai":
            calls = list(getattr(message, "tool_calls", None) or [])
            meta = getattr(message, "response_metadata", None) or {}
            source: Literal["structured", "text"] = (
                "text" if meta.get(SOURCE_KEY) == "text" else "structured")
            for call in calls:
                record = ToolCallRecord(id=call.get("id"), name=str(call.get("name") or ""),
                                        args=dict(call.get("args") or {}), turn=turn,
                                        source=source)
                records.append(record)
                if record.id:
                    by_id[record.id] = record
            turn += 1
        elif kind == "tool":
            answered = by_id.get(str(getattr(message, "tool_call_id", "")))
            if answered is not None:
                answered.output = content_text(message.content)
                answered.error = getattr(message, "status", "success") == "error"
    return records


def content_text(content: Any) -> str:
    """A tool answer's content as text: a string as it is, a list of text blocks (what MCP
    tools answer through ``langchain-mcp-adapters``) joined, anything else as JSON.

    >>> content_text([{"type": "text", "text": '{"a": 1}'}])
    '{"a": 1}'
    """
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
            isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text")
            for b in content):
        return "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in content)
    return json.dumps(content, ensure_ascii=False)


def agent_record(messages: Sequence[BaseMessage],
                 records: Sequence[ToolCallRecord]) -> dict[str, Any]:
    """The trace record summing up an agent's conversation: its turns, calls and tool errors,
    and how the calls came back -- structured, read from text, or written as text and not read
    (answers without a call that look like one; :mod:`tooleval_agents.models.tool_calls.counts`)."""
    answers = [m for m in messages if getattr(m, "type", None) == "ai"]
    unread = sum(1 for m in answers if not getattr(m, "tool_calls", None)
                 and looks_like_tool_call(str(getattr(m, "text", "") or "")))
    return {"kind": AGENT_RECORD, "turns": len(answers), "tool_calls": len(records),
            "tool_errors": sum(r.error for r in records),
            "structured_calls": sum(r.source == "structured" for r in records),
            "text_calls": sum(r.source == "text" for r in records),
            "unread_text_calls": unread}


def final_answer(messages: Sequence[BaseMessage]) -> str:
    """The text of the agent's last model answer (``""`` when it has none)."""
    for message in reversed(messages):
        if getattr(message, "type", None) == "ai":
            return str(getattr(message, "text", "") or "")
    return ""


def model_texts(messages: Sequence[BaseMessage]) -> list[str]:
    """Each model answer as text: its words, then its tool calls as JSON (what ``raw_outputs``
    keeps of an agent's run)."""
    out = []
    for message in messages:
        if getattr(message, "type", None) != "ai":
            continue
        text = str(getattr(message, "text", "") or "")
        calls = [{"name": c.get("name"), "args": c.get("args")}
                 for c in getattr(message, "tool_calls", None) or []]
        if calls:
            text = (text + "\n" if text else "") + json.dumps(calls, ensure_ascii=False)
        out.append(text)
    return out
