"""A benchmark's tools over the Model Context Protocol: any agent, in any language, scored.

* :mod:`~tooleval_agents.mcp.server`: :class:`ToolServer`, the streamable-HTTP server (on
  127.0.0.1, Host and Origin checked) that serves one
  :class:`~tooleval_agents.contracts.ToolSession` per example at its own URL with its own key
  (:mod:`~tooleval_agents.mcp.keys`), its client's MCP sessions kept by an
  :mod:`~tooleval_agents.mcp.endpoint`, and stdio.
* :mod:`~tooleval_agents.mcp.sdk`: what differs between the ``mcp`` SDK's 1.x and 2.x.
* :mod:`~tooleval_agents.mcp.sessions`: an example's session -- its tools and state, its
  request as a prompt and a resource, every call answered as in a run
  (:func:`~tooleval_agents.tool_execution.run_tool_call`, tool faults included) and logged.
* :mod:`~tooleval_agents.mcp.log`: the durable call log of the run directory
  (``mcp_calls.jsonl``).
* :mod:`~tooleval_agents.mcp.client`: the tools of a served session as LangChain tools
  (``langchain-mcp-adapters``), for the project's own agents (``-O mcp=true``).
* :mod:`~tooleval_agents.mcp.transport`: the client side of streamable HTTP for the run's own
  server -- POST only, JSON answers, kept-alive connections shared by a run's sessions.
* :mod:`~tooleval_agents.mcp.external`: an agent command as the system under test
  (``tooleval run ... --agent-cmd``).

The package knows no benchmark: everything served comes from the split's
:class:`~tooleval_agents.contracts.AgentIO`. Serving (``tooleval serve``, ``--agent-cmd``)
needs the ``mcp`` extra (``pip install 'tooleval-agents[mcp]'``: the official ``mcp`` SDK, 1.x
or 2.x); the project's own agents over MCP (``-O mcp=true``) need ``mcp-adapters`` too
(``langchain-mcp-adapters``, which holds ``mcp`` below 2).
"""

from __future__ import annotations

from importlib.util import find_spec

from tooleval_agents.errors import ToolevalError

INSTALL_HINT = "pip install 'tooleval-agents[mcp]'"
"""How to get what serving needs."""
ADAPTERS_HINT = "pip install 'tooleval-agents[mcp-adapters]'"
"""How to get what ``-O mcp=true`` needs."""


def require_mcp(*, adapters: bool = False) -> None:
    """Raise a one-line :class:`~tooleval_agents.errors.ToolevalError` naming the extra when
    the ``mcp`` SDK (or, with ``adapters``, ``langchain-mcp-adapters``) is not installed."""
    names = ("mcp", "uvicorn", *(("langchain_mcp_adapters",) if adapters else ()))
    missing = [name for name in names if find_spec(name) is None]
    if missing:
        hint = ADAPTERS_HINT if adapters else INSTALL_HINT
        raise ToolevalError(f"MCP needs {', '.join(missing)}: {hint}")
