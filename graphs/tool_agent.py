"""Tool-calling agents as LangGraph graphs, and the node that runs any agent inside a
strategy's workflow.

:func:`react_agent` is the built-in agent: ``model -> tools -> model -> ...`` until the model
answers without a tool call (or ``max_turns`` answers were given). It differs from
``langchain.agents.create_agent`` in two ways a benchmark needs: the tools bound at each turn
may depend on what the agent did so far (``tools_for``: app-then-API hierarchies), and a call
may be refused before it runs (``refuse``: an API of an app that was never opened). Every
tool failure -- unknown tool, arguments that do not fit the schema, a refusal, an error of the
stub -- goes back to the model as a ``ToolMessage`` with ``status="error"`` it can act on;
nothing raises out of the tools node.

:func:`agent_node` runs an agent (ours or a user's, see :mod:`tooleval_agents.agents`) on one
example: the messages in, the final state's messages read back as a trajectory.

Every call is answered by :func:`tooleval_agents.tool_execution.run_tool_call` (under
``--tool-faults`` it draws the call's fault first), as the MCP server answers it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.errors import GraphRecursionError
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.graph.state import CompiledStateGraph
from langgraph.pregel import Pregel

from tooleval_agents.agents import (
    ToolCallRecord,
    agent_record,
    model_texts,
    trajectory,
)
from tooleval_agents.contracts import Options
from tooleval_agents.graphs.common import NodeUpdate
from tooleval_agents.graphs.state import WorkflowState
from tooleval_agents.models.tool_calls import ToolCallMode
from tooleval_agents.models.tool_calls.reader import read_tool_calls
from tooleval_agents.tool_execution import run_tool_call
from tooleval_agents.tool_faults import current_faults

DEFAULT_MAX_TURNS = 12
"""Model answers per example at most (AppBench plans have up to 10 calls; parallel calls
share a turn)."""


class ToolCallOptions(Options):
    """The option every tool-calling strategy has."""

    tool_calls: ToolCallMode = "native"
    """How the model's calls are read (:mod:`tooleval_agents.models.tool_calls.reader`): ``native``
    -- the API's structured calls only; ``auto`` -- tools bound natively, and calls written as
    text read when no structured call came; ``text`` -- the tools described in the prompt and
    the calls read from the text (prompt mode)."""
    mcp: bool = False
    """Take the tools over MCP: each example gets a session of the run's MCP server
    (:mod:`tooleval_agents.mcp`, every call logged in the run directory) and the agent its
    tools through ``langchain-mcp-adapters`` (:mod:`tooleval_agents.graphs.mcp_agent`); the
    ``mcp`` extra. ``False``: the tools run in the process."""


def agent_model(model: BaseChatModel, options: ToolCallOptions) -> BaseChatModel:
    """The model an agent gets under the strategy's options (its text calls read, or not)."""
    return read_tool_calls(model, options.tool_calls)


class AgentState(TypedDict):
    """The built-in agent's state: the conversation (LangGraph's message reducer)."""

    messages: Annotated[list[AnyMessage], add_messages]


ToolsFor = Callable[[Sequence[BaseMessage]], Sequence[BaseTool]]
"""The tools bound for the next model answer, from the conversation so far."""
Refuse = Callable[[str, Sequence[BaseMessage]], str | None]
"""Why a call of this tool may not run now (``None``: it may)."""


class FaultyTool(StructuredTool):
    """A tool under the run's seeded faults (:mod:`tooleval_agents.tool_faults`), for a user's
    agent that runs its tools itself: called with a tool call while an example's faults are
    on, it answers as :func:`run_tool_call` does (a fault, or the tool's answer); otherwise it
    is the tool."""

    inner: BaseTool
    """The tool wrapped."""

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None,
                      **kwargs: Any) -> Any:
        if current_faults() is None or not (isinstance(input, dict)
                                            and input.get("type") == "tool_call"):
            return await self.inner.ainvoke(input, config, **kwargs)
        return await run_tool_call(self.inner, input)


def faulty_tools(tools: Sequence[BaseTool]) -> list[BaseTool]:
    """``tools`` as a user's agent gets them: each a :class:`FaultyTool` (the same name,
    description and schema)."""
    return [FaultyTool(name=t.name, description=t.description,
                       args_schema=t.args_schema or {"type": "object", "properties": {}},
                       func=lambda t=t, **kw: t.invoke(kw), inner=t) for t in tools]


def react_agent(model: BaseChatModel, tools: Sequence[BaseTool], *,
                tools_for: ToolsFor | None = None, refuse: Refuse | None = None,
                max_turns: int = DEFAULT_MAX_TURNS, system_prompt: str | None = None,
                name: str = "agent", lookup: Callable[[str], BaseTool | None] | None = None,
                after_tools: Callable[[], Awaitable[None]] | None = None,
                ) -> CompiledStateGraph[Any, Any, Any, Any]:
    """A tool-calling agent over ``{"messages": [...]}`` (see the module docstring).

    ``tools`` are every tool the agent may call; ``tools_for(messages)`` (default: all of
    them) those bound for the next answer, which may include tools made during the run (they
    are callable once bound). Calls of one answer run concurrently. ``lookup(name)``: the tool
    a call of a name neither list holds runs on (tools over MCP: the server answers any name);
    ``after_tools()``: awaited after each round of calls (tools over MCP: list them again).
    """
    by_name = {t.name: t for t in tools}
    bound: dict[tuple[str, ...], Runnable[Any, Any]] = {}

    def model_for(messages: Sequence[BaseMessage]) -> Runnable[Any, Any]:
        chosen = list(tools_for(messages)) if tools_for is not None else list(tools)
        key = tuple(t.name for t in chosen)
        if key not in bound:  # bind once per tool set: a run asks for the same few sets
            bound[key] = model.bind_tools(chosen) if chosen else model
        return bound[key]

    def prompt(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
        return [SystemMessage(system_prompt), *messages] if system_prompt else list(messages)

    async def call_model(state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        messages = state["messages"]
        answer = await model_for(messages).ainvoke(prompt(messages), config)
        return {"messages": [answer]}

    async def call_tools(state: AgentState) -> dict[str, Any]:
        messages = state["messages"]
        last = messages[-1]
        calls = list(getattr(last, "tool_calls", None) or [])
        # Tools made during the run (created tools) are among the bound ones, not ``tools``.
        known = {**by_name, **{t.name: t for t in tools_for(messages[:-1])}} if tools_for \
            else by_name

        def answer(call: dict[str, Any]) -> Awaitable[ToolMessage]:
            name = str(call.get("name"))
            found = known.get(name)
            if found is None and lookup is not None:  # not listed: the server answers it
                return run_tool_call(lookup(name), call, draw=False)
            return run_tool_call(found, call,
                                 refuse(name, messages) if refuse is not None else None)

        replies = await asyncio.gather(*(answer(c) for c in calls))
        if after_tools is not None:
            await after_tools()
        return {"messages": list(replies)}

    def after_model(state: AgentState) -> str:
        messages = state["messages"]
        last = messages[-1]
        turns = sum(isinstance(m, AIMessage) for m in messages)
        return "tools" if getattr(last, "tool_calls", None) and turns < max_turns else END

    graph = StateGraph(AgentState)
    graph.add_node("model", call_model)
    graph.add_node("tools", call_tools)
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", after_model, ["tools", END])
    graph.add_edge("tools", "model")
    return graph.compile(name=name)


MessagesFor = Callable[[WorkflowState], list[BaseMessage]]
ReadTrajectory = Callable[[WorkflowState, list[ToolCallRecord], list[BaseMessage]], NodeUpdate]


def agent_node(agent: Runnable[Any, Any], messages_for: MessagesFor,
               read: ReadTrajectory, *, recursion_limit: int = 4 * DEFAULT_MAX_TURNS + 10,
               ) -> Callable[..., Any]:
    """A workflow node that runs ``agent`` on ``{"messages": messages_for(state)}`` and turns
    the conversation it returns into the workflow's outputs with ``read(state, trajectory,
    messages)`` (``prediction``, ``parse_error``...). ``raw_outputs`` gets every model answer
    (text and tool calls); ``trace`` one ``tool_call`` record per call (with the tool's answer)
    and a last ``agent`` record (:func:`~tooleval_agents.agents.agent_record`: turns, calls by
    how they came back, tool errors).

    An agent that returns no ``messages`` list is an error of the example (recorded, not
    raised out of the run).
    """

    async def node(state: WorkflowState, config: RunnableConfig) -> NodeUpdate:
        messages, stopped = await agent_messages(agent, messages_for(state), config,
                                                 recursion_limit)
        return stopped_at(agent_outputs(state, messages, read), stopped and recursion_limit)

    return node


async def agent_messages(agent: Runnable[Any, Any], sent: list[BaseMessage],
                         config: RunnableConfig, recursion_limit: int,
                         ) -> tuple[list[BaseMessage], bool]:
    """Run ``agent`` on ``sent``: its final messages, and whether LangGraph stopped it at
    ``recursion_limit``. An agent that returns no ``messages`` list is an error of the example
    (a ``TypeError``, recorded by the runner)."""
    result, stopped = await _run_agent(agent, {"messages": sent},
                                       {**config, "recursion_limit": recursion_limit})
    messages = result.get("messages") if isinstance(result, dict) else None
    if not isinstance(messages, list):
        raise TypeError(f"the agent returned {type(result).__name__} without a 'messages' "
                        "list; an agent must return a state with its messages")
    return messages, stopped


def stopped_at(update: NodeUpdate, limit: int | bool) -> NodeUpdate:
    """``update`` with its agent record marked stopped at recursion ``limit`` (when one):
    scored on the calls it made, as the built-in agent at its turn limit."""
    if limit:
        update["trace"][-1]["stopped_at_recursion_limit"] = limit
    return update


async def _run_agent(agent: Runnable[Any, Any], inputs: dict[str, Any],
                     config: RunnableConfig) -> tuple[Any, bool]:
    """The agent's last state, and whether LangGraph stopped it at its recursion limit. A
    graph is streamed so that the state it had reached then (its calls so far) is kept; any
    other runnable is invoked."""
    if not isinstance(agent, Pregel):
        return await agent.ainvoke(inputs, config), False
    last: Any = None
    try:
        async for state in agent.astream(inputs, config, stream_mode="values"):
            last = state
    except GraphRecursionError:
        if last is None:
            raise
        return last, True
    return last, False


def agent_outputs(state: WorkflowState, messages: list[BaseMessage],
                  read: ReadTrajectory) -> NodeUpdate:
    """An agent's conversation as the workflow's outputs (see :func:`agent_node`): what
    ``read`` makes of its trajectory, ``raw_outputs`` and ``trace``. Also what a split's
    :class:`~tooleval_agents.contracts.AgentIO` reads from an agent run outside a strategy."""
    records = trajectory(messages)
    update = read(state, records, messages)
    record = agent_record(messages, records)
    if update.get("parse_error") and record["unread_text_calls"]:
        update["parse_error"] += (f" ({record['unread_text_calls']} answer(s) hold tool "
                                  "calls written as text: -O tool_calls=auto reads them)")
    trace = [{"kind": "tool_call", **r.model_dump(mode="json")} for r in records]
    return {"raw_outputs": model_texts(messages), **update, "trace": [*trace, record]}
