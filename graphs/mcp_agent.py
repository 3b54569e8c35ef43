"""A strategy's agent with its tools over MCP (``-O mcp=true``).

Per example, :func:`mcp_agent_node` opens a session of the run's MCP server
(:class:`~tooleval_agents.mcp.server.ToolServer`) on the strategy's own
:class:`~tooleval_agents.contracts.ToolSession` -- the one ``tooleval serve`` and
``--agent-cmd`` serve -- connects to it with ``langchain-mcp-adapters``
(:class:`~tooleval_agents.mcp.client.McpToolbox`), builds the agent on those tools and runs it.
The conversation the agent returns is read by the session, as the strategy reads it in the
process; every call reached the server and is in the run's call log. Tool faults are drawn
where the agent runs its calls, as in the process (the server draws none for these sessions).

The ``mcp`` modules are imported when a session is opened: the extra is needed only then.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable, RunnableConfig
from langgraph.graph.state import CompiledStateGraph

from tooleval_agents.contracts import AgentIO, SessionHost, StrategyContext
from tooleval_agents.graphs.common import NodeUpdate
from tooleval_agents.graphs.state import WorkflowState
from tooleval_agents.graphs.tool_agent import (
    DEFAULT_MAX_TURNS,
    agent_messages,
    react_agent,
    stopped_at,
)
from tooleval_agents.mcp import require_mcp
from tooleval_agents.tool_faults import example_key

if TYPE_CHECKING:
    from tooleval_agents.mcp.client import McpToolbox
    from tooleval_agents.mcp.server import ToolServer

MakeAgent = Callable[["McpToolbox"], Runnable[Any, Any]]
"""Builds the example's agent on the tools of its session."""
RECURSION_LIMIT = 4 * DEFAULT_MAX_TURNS + 10


def session_agent(model: BaseChatModel, *, max_turns: int = DEFAULT_MAX_TURNS,
                  name: str = "agent") -> CompiledStateGraph[Any, Any, Any, Any]:
    """The built-in agent on the tools of whichever example's session is open where it runs
    (built once for a split whose tools are the same for every example: binding them is then
    done once, as in the process): it binds what the session lists, any call goes to the
    server, the tools are listed again after each round of calls when they can change."""
    from tooleval_agents.mcp.client import current_toolbox  # deferred: the optional mcp extra

    async def refresh() -> None:
        await current_toolbox().refresh()

    return react_agent(model, [], tools_for=lambda messages: current_toolbox().listed(),
                       lookup=lambda tool: current_toolbox().tool(tool), after_tools=refresh,
                       max_turns=max_turns, name=name)

_own: list[ToolServer] = []
_own_lock = threading.Lock()


def _server(ctx: StrategyContext) -> SessionHost:
    """The run's MCP server, or one of this process for a workflow built outside a run
    (nothing logged)."""
    if ctx.tool_server is not None:
        return ctx.tool_server()
    from tooleval_agents.mcp.server import ToolServer

    require_mcp()
    with _own_lock:
        if not _own:
            _own.append(ToolServer())
        return _own[0]


def mcp_agent_node(ctx: StrategyContext, io: AgentIO, make_agent: MakeAgent, *,
                   recursion_limit: int = RECURSION_LIMIT) -> Callable[..., Any]:
    """The workflow node that runs one example's agent on its tools over MCP (see the module
    docstring); ``make_agent(toolbox)`` builds the agent."""
    require_mcp(adapters=True)
    from tooleval_agents.mcp.client import McpClient  # deferred: the optional mcp extra

    server = _server(ctx)
    client = McpClient()  # the examples' connection pool and tools, made once

    async def node(state: WorkflowState, config: RunnableConfig) -> NodeUpdate:
        inputs = state["inputs"]
        tools, sent = io.open(inputs), io.messages(inputs)
        session = await server.open(tools, sent, label=example_key(inputs, None))
        try:
            async with client.connect(server.url(session), server.key(session)) as box:
                messages, stopped = await agent_messages(make_agent(box), sent, config,
                                                         recursion_limit)
        finally:
            await server.close(session)
        update = stopped_at(tools.outputs(messages), stopped and recursion_limit)
        # First: the agent's own record stays last, as in the process.
        update["trace"] = [{"kind": "mcp_session", "session": session.id,
                            "calls": len(session.calls)}, *update["trace"]]
        return update

    return node


__all__ = ["MakeAgent", "mcp_agent_node", "session_agent"]
