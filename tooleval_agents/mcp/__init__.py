"""A benchmark's tools over the Model Context Protocol: any agent, in any language, scored.

* :mod:`~tooleval_agents.mcp.server`: :class:`ToolServer`, the streamable-HTTP server (on
  127.0.0.1, with a per-run bearer token, Host and Origin checked) that serves one
  :class:`~tooleval_agents.contracts.ToolSession` per example at its own URL, and stdio.
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
:class:`~tooleval_agents.contracts.AgentIO`. It needs the ``mcp`` extra
(``pip install 'tooleval-agents[mcp]'``): the official ``mcp`` SDK and
``langchain-mcp-adapters``.
"""

from __future__ import annotations

from importlib.util import find_spec

from tooleval_agents.errors import ToolevalError

INSTALL_HINT = "pip install 'tooleval-agents[mcp]'"
"""How to get what this package needs."""


def require_mcp() -> None:
    """Raise a one-line :class:`~tooleval_agents.errors.ToolevalError` naming the extra when
    the ``mcp`` SDK or ``langchain-mcp-adapters`` is not installed."""
    missing = [name for name in ("mcp", "langchain_mcp_adapters", "uvicorn")
               if find_spec(name) is None]
    if missing:
        raise ToolevalError(f"MCP needs {', '.join(missing)}: {INSTALL_HINT}")
