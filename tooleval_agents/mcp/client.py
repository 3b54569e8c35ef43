"""The tools of a served session as LangChain tools, for the project's own agents (``-O
mcp=true``): LangChain's MCP bridge, ``langchain-mcp-adapters``, over the session's streamable
HTTP URL.

:class:`McpToolbox` lists what the session serves (again after a call when the server declares
``listChanged``: an app opened, a tool created) and calls any name -- a tool the session does
not list goes to the server too, which answers it as the run would (no such tool, or why it
is refused). Each answer comes back as the run's tools give it: plain text, ``status="error"``
for an ``isError`` result, the server's error text unchanged. So an agent sees over MCP what it
sees in the run, and scores the same.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
import mcp.types as types
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langchain_mcp_adapters.tools import convert_mcp_tool_to_langchain_tool, load_mcp_tools
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tooleval_agents.agents import content_text

TIMEOUT_S = 300.0
"""How long one request to the session may take (a tool answers in milliseconds; this only
bounds a server that stopped answering)."""


EMPTY: dict[str, Any] = {"type": "object", "properties": {}}


def _plain(adapter: BaseTool, description: str | None = None,
           schema: dict[str, Any] | None = None) -> StructuredTool:
    """``adapter`` (an MCP tool of ``langchain-mcp-adapters``) answering as the run's tools
    answer: plain text, an ``isError`` result an error ``ToolMessage`` with the server's
    text."""

    async def call(**arguments: Any) -> str:
        try:
            answer = await adapter.ainvoke({"type": "tool_call", "id": "mcp",
                                            "name": adapter.name, "args": arguments})
        except ToolException as exc:  # an adapter that raises isError results
            raise ToolException(str(exc)) from None
        if isinstance(answer, ToolMessage):
            if answer.status == "error":
                raise ToolException(content_text(answer.content))
            return content_text(answer.content)
        return content_text(answer)

    return StructuredTool(
        name=adapter.name, coroutine=call,
        description=adapter.description if description is None else description,
        args_schema=schema if schema is not None else adapter.args_schema or EMPTY,
        handle_tool_error=lambda exc: str(exc))


class McpToolbox:
    """One session's tools over MCP (see the module docstring)."""

    def __init__(self, session: ClientSession, dynamic: bool) -> None:
        self.session = session
        self.dynamic = dynamic
        """The server declared ``listChanged``: :meth:`refresh` lists the tools again."""
        self._listed: list[BaseTool] = []
        self._made: dict[str, BaseTool] = {}

    @classmethod
    @contextlib.asynccontextmanager
    async def connect(cls, url: str, token: str) -> AsyncIterator[McpToolbox]:
        """A toolbox on the session at ``url`` (the run's bearer ``token``), its tools
        listed."""
        # Plain HTTP to the run's own server: verify=False only spares loading the CA bundle
        # (100 ms per client), there is no TLS.
        async with (httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                      timeout=TIMEOUT_S, verify=False) as http,
                    streamable_http_client(url, http_client=http,
                                           terminate_on_close=False) as (read, write, _),
                    ClientSession(read, write) as session):
            init = await session.initialize()
            tools = init.capabilities.tools
            box = cls(session, dynamic=bool(tools is not None and tools.listChanged))
            await box.list_tools()
            yield box

    async def list_tools(self) -> list[BaseTool]:
        """List the session's tools now (``tools/list``)."""
        adapters = await load_mcp_tools(self.session)
        self._listed = []
        for adapter in adapters:
            known = self._made.get(adapter.name)
            if known is None or known.description != adapter.description:
                known = self._made[adapter.name] = _plain(adapter)
            self._listed.append(known)
        return self._listed

    async def refresh(self) -> None:
        """List the tools again if they can change (after each round of calls)."""
        if self.dynamic:
            await self.list_tools()

    def listed(self) -> list[BaseTool]:
        """The tools the session listed last."""
        return list(self._listed)

    def tool(self, name: str) -> BaseTool:
        """A tool for any name: a listed one, or one the server answers (no such tool, or a
        refusal) as the run does."""
        known = self._made.get(name)
        if known is None:
            unlisted = types.Tool(name=name, inputSchema=EMPTY)
            known = self._made[name] = _plain(
                convert_mcp_tool_to_langchain_tool(self.session, unlisted), "", None)
        return known


__all__ = ["McpToolbox"]
