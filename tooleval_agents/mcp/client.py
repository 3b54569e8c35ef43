"""The tools of a served session as LangChain tools, for the project's own agents (``-O
mcp=true``): the official SDK's ``ClientSession`` on the session's streamable-HTTP URL, each call
made by LangChain's MCP bridge, ``langchain-mcp-adapters``.

:class:`McpToolbox` lists what the session serves (again after a call when the server declares
``listChanged``: an app opened, a tool created) and calls any name -- a tool the session does
not list goes to the server too, which answers it as the run would (no such tool, or why it
is refused). Each answer comes back as the run's tools give it: plain text, ``status="error"``
for an ``isError`` result, the server's error text unchanged. So an agent sees over MCP what it
sees in the run, and scores the same.

A run's toolboxes share an :class:`McpClient`: keep-alive connections to the server
(:mod:`~tooleval_agents.mcp.transport`), and each
listed tool made into a LangChain tool once per definition (name, description, schema) rather
than once per example. Such a tool calls the session of the toolbox open where it runs (a
context variable, as each example's agent runs in its own task), through the bridge's adapter
of that session's tool, made at the first call of it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextvars import ContextVar
from typing import Any

import mcp.types as types
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langchain_mcp_adapters.tools import convert_mcp_tool_to_langchain_tool
from mcp import ClientSession

from tooleval_agents.agents import content_text
from tooleval_agents.mcp.transport import HttpPool, json_http_client, pool_for

TIMEOUT_S = 300.0
"""How long one request to the session may take (a tool answers in milliseconds; this only
bounds a server that stopped answering)."""
TOOL_LIMIT = 4096
"""Definitions an :class:`McpClient` keeps made (per-example toolsets: memory stays bounded)."""

EMPTY: dict[str, Any] = {"type": "object", "properties": {}}

_open: ContextVar[McpToolbox | None] = ContextVar("tooleval_mcp_toolbox", default=None)


def current_toolbox() -> McpToolbox:
    """The toolbox open where this runs (the running example's session).

    Raises:
        RuntimeError: no toolbox is open here.
    """
    box = _open.get()
    if box is None:
        raise RuntimeError("no MCP session is open for this example")
    return box


def _served(name: str, description: str, schema: dict[str, Any]) -> StructuredTool:
    """A tool that calls ``name`` on the current toolbox's session and answers as the run's
    tools answer: plain text, an ``isError`` result an error ``ToolMessage`` with the server's
    text. The bridge's tool runs as its coroutine: this tool is the one LangChain runs (and
    traces), once."""

    async def call(**arguments: Any) -> str:
        adapter = current_toolbox().adapter(name)
        assert adapter.coroutine is not None
        try:  # content and artifact; an isError result raises with the server's text
            content, _ = await adapter.coroutine(**arguments)
        except ToolException as exc:
            raise ToolException(str(exc)) from None
        return content_text(content)

    return StructuredTool(name=name, coroutine=call, description=description,
                          args_schema=schema, handle_tool_error=lambda exc: str(exc))


class McpClient:
    """What the toolboxes of a run share (see the module docstring): connections to the server
    per event loop, the tools made so far (each session's key goes with its own requests)."""

    def __init__(self) -> None:
        self._pools: dict[tuple[int, str], tuple[asyncio.AbstractEventLoop, HttpPool]] = {}
        self._tools: dict[str, BaseTool] = {}

    def pool(self, url: str) -> HttpPool:
        """The connections to ``url``'s server of the running event loop (a connection is
        its loop's)."""
        loop = asyncio.get_running_loop()
        pool = pool_for(url, {}, TIMEOUT_S)
        key = (id(loop), f"{pool.host}:{pool.port}")
        known = self._pools.get(key)
        if known is None or known[0] is not loop:
            known = self._pools[key] = (loop, pool)
        return known[1]

    def close(self) -> None:
        """Close the idle connections."""
        for _, pool in self._pools.values():
            pool.close()
        self._pools.clear()

    def tool(self, listed: types.Tool) -> BaseTool:
        """The LangChain tool of a listed definition (made once)."""
        key = listed.model_dump_json(include={"name", "description", "inputSchema"})
        made = self._tools.get(key)
        if made is None:
            if len(self._tools) >= TOOL_LIMIT:
                self._tools.clear()
            made = self._tools[key] = _served(listed.name, listed.description or "",
                                              listed.inputSchema or EMPTY)
        return made

    @contextlib.asynccontextmanager
    async def connect(self, url: str, key: str) -> AsyncIterator[McpToolbox]:
        """A toolbox on the session at ``url`` (``key``: the session's own), its tools listed,
        open here until the block ends."""
        async with (json_http_client(url, self.pool(url),
                                     {"Authorization": f"Bearer {key}"}) as (read, write),
                    ClientSession(read, write) as session):
            init = await session.initialize()
            tools = init.capabilities.tools
            box = McpToolbox(session, dynamic=bool(tools is not None and tools.listChanged),
                             client=self)
            await box.list_tools()
            token = _open.set(box)
            try:
                yield box
            finally:
                _open.reset(token)


class McpToolbox:
    """One session's tools over MCP (see the module docstring)."""

    def __init__(self, session: ClientSession, dynamic: bool, client: McpClient) -> None:
        self.session = session
        self.dynamic = dynamic
        """The server declared ``listChanged``: :meth:`refresh` lists the tools again."""
        self.client = client
        self._listed: list[BaseTool] = []
        self._defs: dict[str, types.Tool] = {}
        self._adapters: dict[str, StructuredTool] = {}

    @classmethod
    @contextlib.asynccontextmanager
    async def connect(cls, url: str, key: str) -> AsyncIterator[McpToolbox]:
        """A toolbox on the session at ``url`` (``key``: the session's own), its tools
        listed, on a client of its own (a run's toolboxes share one: :class:`McpClient`)."""
        client = McpClient()
        try:
            async with client.connect(url, key) as box:
                yield box
        finally:
            client.close()

    async def list_tools(self) -> list[BaseTool]:
        """List the session's tools now (``tools/list``, every page)."""
        listed: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(1000):  # a server that pages forever is cut off
            page = await self.session.list_tools(
                params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
            listed.extend(page.tools)
            cursor = page.nextCursor
            if not cursor:
                break
        for definition in listed:
            if self._defs.get(definition.name) != definition:
                self._adapters.pop(definition.name, None)
            self._defs[definition.name] = definition
        self._listed = [self.client.tool(d) for d in listed]
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
        known = next((t for t in self._listed if t.name == name), None)
        return known if known is not None else self.client.tool(
            types.Tool(name=name, description="", inputSchema=EMPTY))

    def adapter(self, name: str) -> StructuredTool:
        """The bridge's tool of ``name`` on this session (made at its first call)."""
        made = self._adapters.get(name)
        if made is None:
            definition = self._defs.get(name) or types.Tool(name=name, inputSchema=EMPTY)
            converted = convert_mcp_tool_to_langchain_tool(self.session, definition)
            if not isinstance(converted, StructuredTool):  # what the bridge makes
                raise TypeError(f"langchain-mcp-adapters made a {type(converted).__name__}")
            made = self._adapters[name] = converted
        return made


__all__ = ["McpClient", "McpToolbox", "current_toolbox"]
