"""What differs between the official MCP SDK's two majors that this package serves on (``mcp``
1.24 and later 1.x, and 2.x): how a low-level server is made.

1.x registers a server's handlers with decorators (``@server.list_tools()``) that take and
return bare values; 2.x takes them as constructor arguments (``on_list_tools=...``), each called
with a request context and the request's params, returning the full result. The protocol
types (``mcp.types``: camelCase names in 1.x, snake_case fields with camelCase aliases in 2.x,
which accept either) and the pieces the HTTP server is built on -- the streamable-HTTP
transport, ``TransportSecuritySettings``, ``Server.run`` on a pair of streams, the stdio
transport -- are the same on both. :func:`low_level_server` is the one place that tells them
apart; the session's handlers (:class:`Handlers`) are written once, in plain values.
"""

from __future__ import annotations

import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cache
from importlib.metadata import version
from typing import Any

import mcp.types as types
from mcp.server.lowlevel import NotificationOptions, Server

MAJOR = int(version("mcp").split(".")[0])
"""The installed SDK's major version (1 or 2)."""


@dataclass(frozen=True)
class Handlers:
    """A session's MCP methods, in plain values (each SDK's calling convention is made from
    them by :func:`low_level_server`)."""

    list_tools: Callable[[], Awaitable[list[types.Tool]]]
    call_tool: Callable[[str, dict[str, Any]], Awaitable[tuple[types.CallToolResult, bool]]]
    """The result, and whether the session's tools changed (``listChanged`` is then sent)."""
    list_prompts: Callable[[], Awaitable[list[types.Prompt]]]
    get_prompt: Callable[[str, dict[str, str] | None], Awaitable[types.GetPromptResult]]
    """Raises ``ValueError`` for a prompt it does not have (a protocol error to the client)."""
    list_resources: Callable[[], Awaitable[list[types.Resource]]]
    read_resource: Callable[[str], Awaitable[str]]
    """The text of a resource; raises ``ValueError`` for one it does not have."""


def low_level_server(name: str, server_version: str, instructions: str, handlers: Handlers,
                     ) -> Server[Any, Any]:
    """The SDK's low-level ``Server`` answering with ``handlers``."""
    if MAJOR >= 2:
        return _server_2(name, server_version, instructions, handlers)
    return _server_1(name, server_version, instructions, handlers)


def initialization_options(server: Server[Any, Any], tools_changed: bool) -> Any:
    """What ``initialize`` answers: the server's capabilities, ``listChanged`` on tools
    declared when they can change."""
    return server.create_initialization_options(NotificationOptions(tools_changed=tools_changed))


@cache
def client_methods() -> frozenset[str]:
    """The request methods a client may send (the SDK's ``ClientRequest`` union: a
    ``RootModel`` of it in 1.x, the union itself in 2.x). 1.x answers a method outside it as
    bad params (-32602); the server answers it -32601 itself, on both."""
    root = getattr(types.ClientRequest, "model_fields", {}).get("root")
    members = typing.get_args(root.annotation if root is not None else types.ClientRequest)
    methods: set[str] = set()
    for member in members:
        fields = getattr(member, "model_fields", {})
        if "method" in fields:
            methods.update(a for a in typing.get_args(fields["method"].annotation)
                           if isinstance(a, str))
    return frozenset(methods)


def _server_1(name: str, server_version: str, instructions: str,
              handlers: Handlers) -> Server[Any, Any]:
    server: Server[Any, Any] = Server(name, version=server_version, instructions=instructions)

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        return await handlers.list_tools()

    @server.call_tool(validate_input=False)  # the session answers bad arguments as the run
    async def call_tool(tool: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        result, changed = await handlers.call_tool(tool, dict(arguments or {}))
        if changed:
            await server.request_context.session.send_tool_list_changed()
        return result

    @server.list_prompts()
    async def list_prompts() -> list[types.Prompt]:
        return await handlers.list_prompts()

    @server.get_prompt()
    async def get_prompt(prompt: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
        return await handlers.get_prompt(prompt, arguments)

    @server.list_resources()
    async def list_resources() -> list[types.Resource]:
        return await handlers.list_resources()

    @server.read_resource()
    async def read_resource(uri: Any) -> str:
        return await handlers.read_resource(str(uri))

    return server


def _server_2(name: str, server_version: str, instructions: str,
              handlers: Handlers) -> Server[Any, Any]:
    # 2.x's constructor and result types, typed against 1.x where mypy runs: reached as Any.
    kinds: Any = types

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        return kinds.ListToolsResult(tools=await handlers.list_tools())

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        result, changed = await handlers.call_tool(params.name, dict(params.arguments or {}))
        if changed:
            await ctx.session.send_tool_list_changed()
        return result

    async def on_list_prompts(ctx: Any, params: Any) -> Any:
        return kinds.ListPromptsResult(prompts=await handlers.list_prompts())

    async def on_get_prompt(ctx: Any, params: Any) -> Any:
        return await handlers.get_prompt(params.name, params.arguments)

    async def on_list_resources(ctx: Any, params: Any) -> Any:
        return kinds.ListResourcesResult(resources=await handlers.list_resources())

    async def on_read_resource(ctx: Any, params: Any) -> Any:
        uri = str(params.uri)
        text = await handlers.read_resource(uri)
        return kinds.ReadResourceResult(contents=[
            kinds.TextResourceContents(uri=uri, text=text, mimeType="text/plain")])

    make: Any = Server
    made: Server[Any, Any] = make(
        name, version=server_version, instructions=instructions, on_list_tools=on_list_tools,
        on_call_tool=on_call_tool, on_list_prompts=on_list_prompts,
        on_get_prompt=on_get_prompt, on_list_resources=on_list_resources,
        on_read_resource=on_read_resource)
    return made


__all__ = ["MAJOR", "Handlers", "client_methods", "initialization_options",
           "low_level_server"]
